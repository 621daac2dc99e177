"""permanova: DISCO with index 2 under scikit-bio's name and fields (issue 34).

References: Anderson's sums of squares in exact rational arithmetic (plain loops over
Fractions), scipy's one-way ANOVA, and scikit-bio itself on its own test matrices, quoted from
scikit-bio 0.7.4, ``skbio/stats/distance/tests/test_permanova.py`` (``PERMANOVATestData.setUp``
and ``PERMANOVATests``; "All results were verified with R (vegan::adonis)"):
dm_ties → F 2.0, p ≈ 0.68; dm_no_ties → F 4.4, p ≈ 0.345; dm_unequal → F 0.578848, p ≈ 0.655
(999 permutations, seed 42, "pstat can change slightly, depending on random source used").
"""
import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import energystats as es

IDS4 = ["s1", "s2", "s3", "s4"]
GROUPING_EQUAL = ["Control", "Control", "Fast", "Fast"]
DM_TIES = [[0, 1, 1, 4], [1, 0, 3, 2], [1, 3, 0, 3], [4, 2, 3, 0]]
DM_NO_TIES = [[0, 1, 5, 4], [1, 0, 3, 2], [5, 3, 0, 3], [4, 2, 3, 0]]
IDS6 = ["s1", "s2", "s3", "s4", "s5", "s6"]
GROUPING_UNEQUAL = ["Control", "Treatment1", "Treatment2", "Treatment1", "Control", "Control"]
DM_UNEQUAL = [[0.0, 1.0, 0.1, 0.5678, 1.0, 1.0],
              [1.0, 0.0, 0.002, 0.42, 0.998, 0.0],
              [0.1, 0.002, 0.0, 1.0, 0.123, 1.0],
              [0.5678, 0.42, 1.0, 0.0, 0.123, 0.43],
              [1.0, 0.998, 0.123, 0.123, 0.0, 0.5],
              [1.0, 0.0, 1.0, 0.43, 0.5, 0.0]]
CASES = [  # matrix, grouping, scikit-bio's pseudo-F and p-value (999 random permutations)
    (DM_TIES, GROUPING_EQUAL, 2.0, 0.68),
    (DM_NO_TIES, GROUPING_EQUAL, 4.4, 0.345),
    (DM_UNEQUAL, GROUPING_UNEQUAL, 0.578848, 0.655),
]


def anderson_f(D, grouping):
    """Anderson's (2001) pseudo-F in exact arithmetic: SS_T, SS_W over pairs i < j."""
    n = len(D)
    d2 = [[Fraction(D[i][j]) ** 2 for j in range(n)] for i in range(n)]
    groups = sorted(set(grouping), key=str)
    k = len(groups)
    ss_t = sum(d2[i][j] for i in range(n) for j in range(i + 1, n)) / n
    ss_w = Fraction(0)
    for g in groups:
        idx = [i for i in range(n) if grouping[i] == g]
        ss_w += sum(d2[i][j] for i, j in itertools.combinations(idx, 2)) / len(idx)
    return ((ss_t - ss_w) / (k - 1)) / (ss_w / (n - k))


def all_relabellings(grouping):
    """Every distinct arrangement of the group labels over the objects."""
    return set(itertools.permutations(grouping))


@pytest.mark.parametrize("D, grouping, F_skbio, p_skbio", CASES)
def test_pseudo_f_on_scikit_bio_matrices(D, grouping, F_skbio, p_skbio):
    res = es.permanova(D, grouping)
    exact_f = anderson_f(D, grouping)
    assert res.statistic == pytest.approx(float(exact_f), rel=1e-14)
    assert round(res.statistic, 6) == F_skbio  # scikit-bio's (and vegan's) published value
    assert (res.method_name, res.test_statistic_name) == ("PERMANOVA", "pseudo-F")
    assert res.sample_size == len(D) and res.n_groups == len(set(grouping))


@pytest.mark.parametrize("D, grouping, F_skbio, p_skbio", CASES)
def test_exact_pvalue_and_scikit_bio_within_its_monte_carlo_error(D, grouping, F_skbio, p_skbio):
    """Few objects: every relabelling is enumerated (exact p-value, checked against exact
    arithmetic); scikit-bio's published p-value, from 999 random permutations, lies within
    4 binomial standard errors of it."""
    res = es.permanova(D, grouping, n_resamples=999)
    arrangements = all_relabellings(grouping)
    assert res.exact and res.n_permutations == len(arrangements)
    F = anderson_f(D, grouping)
    p_exact = Fraction(sum(anderson_f(D, list(a)) >= F for a in arrangements), len(arrangements))
    assert res.pvalue == pytest.approx(float(p_exact), abs=1e-15)
    se = math.sqrt(float(p_exact) * (1 - float(p_exact)) / 999)
    assert abs(p_skbio - float(p_exact)) <= 4 * se + 1 / 1000


@pytest.mark.parametrize("D, grouping, F_skbio, p_skbio", CASES)
def test_against_scikit_bio_with_its_own_permutations(D, grouping, F_skbio, p_skbio):
    """scikit-bio itself: its pseudo-F, and its p-value from its own permutations
    (``get_rng(seed).permutation`` of the integer grouping, its Monte Carlo loop) with our
    pseudo-F on each."""
    skbio = pytest.importorskip("skbio")
    from skbio.stats.distance import permanova as sk_permanova
    from skbio.util import get_rng

    ids = IDS4 if len(D) == 4 else IDS6
    dm = skbio.DistanceMatrix(D, ids)
    sk = sk_permanova(dm, grouping, permutations=99, seed=42, engine="cython")
    res = es.permanova(dm, grouping, n_resamples=0)
    assert res.statistic == pytest.approx(float(sk["test statistic"]), rel=1e-12)
    assert res.pvalue is None
    _, codes = np.unique(grouping, return_inverse=True)
    rng = get_rng(42)
    null = np.array([es.permanova(D, rng.permutation(codes), n_resamples=0).statistic
                     for _ in range(99)])
    # ties (the 4-object cases have 3 distinct values) are counted as >=, as scikit-bio does
    count = np.sum(null >= res.statistic * (1 - 1e-12))
    assert (count + 1) / 100 == pytest.approx(float(sk["p-value"]), abs=1e-15)


def test_to_frame_is_scikit_bio_table():
    skbio = pytest.importorskip("skbio")
    from skbio.stats.distance import permanova as sk_permanova

    dm = skbio.DistanceMatrix(DM_NO_TIES, IDS4)
    ours = es.permanova(dm, GROUPING_EQUAL, n_resamples=0).to_frame()["PERMANOVA results"]
    theirs = sk_permanova(dm, GROUPING_EQUAL, permutations=0)
    assert list(ours.index) == list(theirs.index)
    for a, b in zip(ours, theirs):
        if isinstance(b, float) and math.isnan(b):
            assert math.isnan(a)
        else:
            assert a == pytest.approx(b, rel=1e-12) if isinstance(b, float) else a == b


def test_dataframe_grouping_matched_by_ids_as_scikit_bio():
    """scikit-bio's fixture: a DataFrame indexed in another order, with an extra id (s5)."""
    skbio = pytest.importorskip("skbio")
    df = pd.DataFrame({"Group": ["Control", "Fast", "Fast", "Control", "Control"]},
                      index=pd.Index(["s2", "s3", "s4", "s5", "s1"], name="ID"))
    dm = skbio.DistanceMatrix(DM_TIES, IDS4)
    a = es.permanova(dm, df, column="Group", rng=0)
    b = es.permanova(DM_TIES, GROUPING_EQUAL, rng=0)
    assert (a.statistic, a.pvalue) == (b.statistic, b.pvalue)
    c = es.permanova(pd.DataFrame(DM_TIES, index=IDS4, columns=IDS4), df["Group"], rng=0)
    assert (c.statistic, c.pvalue) == (b.statistic, b.pvalue)


def test_scikit_bio_frame_series_data():
    """scikit-bio's ``frameSeries_dm.tsv`` / ``frameSeries_grouping.tsv`` (its issue 1877):
    the same pseudo-F from the DataFrame column and from the Series, equal to scikit-bio's."""
    pytest.importorskip("skbio")
    import os

    import skbio.stats.distance.tests as sk_tests
    from skbio import DistanceMatrix
    from skbio.stats.distance import permanova as sk_permanova

    here = os.path.join(os.path.dirname(sk_tests.__file__), "data")
    if not os.path.exists(os.path.join(here, "frameSeries_dm.tsv")):
        pytest.skip("scikit-bio's test data are not installed")
    dm = DistanceMatrix.read(os.path.join(here, "frameSeries_dm.tsv"))
    grouping = pd.read_csv(os.path.join(here, "frameSeries_grouping.tsv"), sep="\t", index_col=0)
    sk = sk_permanova(dm, grouping, column="tumor", permutations=0)
    a = es.permanova(dm, grouping, column="tumor", n_resamples=0)
    b = es.permanova(dm, grouping["tumor"], n_resamples=0)
    assert a.statistic == b.statistic == pytest.approx(float(sk["test statistic"]), rel=1e-12)
    assert a.sample_size == 42 and a.n_groups == 2


def test_is_one_way_anova_on_euclidean_distances():
    """Index 2 on |x_i - x_j| in 1-D: the pseudo-F is the classical ANOVA F (scipy)."""
    from scipy import stats

    rng = np.random.default_rng(0)
    xs = [rng.normal(loc=m, size=n) for m, n in ((0.0, 7), (0.5, 5), (1.0, 9))]
    x = np.concatenate(xs)
    D = np.abs(x[:, None] - x[None, :])
    res = es.permanova(D, np.repeat([0, 1, 2], [7, 5, 9]), n_resamples=0)
    assert res.statistic == pytest.approx(stats.f_oneway(*xs).statistic, rel=1e-12)


def test_is_disco_with_index_two():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    g = np.repeat([0, 1], 10)
    D = es.pairwise(X)
    p = es.permanova(D, g, n_resamples=99, rng=5)
    d = es.disco(D * D, labels=g, metric="precomputed", n_resamples=99, rng=5)
    assert (p.statistic, p.pvalue, p.seed) == (d.statistic, d.pvalue, d.seed) == (
        p.disco.statistic, p.disco.pvalue, 5)
    assert p.disco.between == pytest.approx(d.between)


@pytest.mark.parametrize("k", [-600, -300, 300, 600])
def test_any_magnitude(k):
    """Dissimilarities of 2**±600 (squares out of the double range): the same pseudo-F and
    p-value, bit for bit, and the sums of squares scaled by 2**(2k) where representable."""
    D = np.array(DM_UNEQUAL)
    base = es.permanova(D, GROUPING_UNEQUAL, rng=3)
    with np.errstate(over="ignore"):
        res = es.permanova(D * 2.0**k, GROUPING_UNEQUAL, rng=3)
    assert (res.statistic, res.pvalue) == (base.statistic, base.pvalue)
    if abs(k) <= 300:
        assert res.disco.within == base.disco.within * 2.0 ** (2 * k)


# -- bad input -----------------------------------------------------------------

def test_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"`column` is required with a DataFrame `grouping`"):
        es.permanova(DM_TIES, pd.DataFrame({"g": GROUPING_EQUAL}))
    with pytest.raises(ValueError, match=r"`column` \('g'\) needs a DataFrame `grouping`"):
        es.permanova(DM_TIES, GROUPING_EQUAL, column="g")
    with pytest.raises(ValueError, match=r"`column` 'h' is not a column of `grouping`"):
        es.permanova(pd.DataFrame(DM_TIES, index=IDS4, columns=IDS4),
                     pd.DataFrame({"g": GROUPING_EQUAL}, index=IDS4), column="h")
    with pytest.raises(ValueError, match=r"`grouping` has no group for 1 object"):
        es.permanova(pd.DataFrame(DM_TIES, index=IDS4, columns=IDS4),
                     pd.Series(GROUPING_EQUAL[:3], index=IDS4[:3]))
    with pytest.raises(ValueError, match=r"matched to the objects' names, so `D` must name them"):
        es.permanova(DM_TIES, pd.Series(GROUPING_EQUAL))
    with pytest.raises(ValueError, match=r"`grouping` must give one group per row of `D` \(4\)"):
        es.permanova(DM_TIES, GROUPING_EQUAL[:3])
    with pytest.raises(ValueError, match=r"`D` must be symmetric"):
        es.permanova([[0, 1, 2, 3], [1, 0, 1, 1], [2, 1, 0, 1], [9, 1, 1, 0]], GROUPING_EQUAL)
    with pytest.raises(ValueError, match=r"same labels.*index and its columns"):
        es.permanova(pd.DataFrame(DM_TIES, index=IDS4, columns=IDS4[::-1]), GROUPING_EQUAL)
    with pytest.raises(ValueError, match=r"at least 2 groups"):
        es.permanova(DM_TIES, ["a"] * 4)
    for bad in (-1, 2.5, 10**12):
        with pytest.raises(ValueError, match=r"`n_resamples` must be an integer in \[0, 10\*\*9\]"):
            es.permanova(DM_TIES, GROUPING_EQUAL, n_resamples=bad)


def test_permutations_is_a_deprecated_alias():
    """``n_resamples=`` as every other test; scikit-bio's ``permutations=`` still works, with a
    DeprecationWarning, and gives the same answer; both at once is an error (issue 52)."""
    new = es.permanova(DM_TIES, GROUPING_EQUAL, n_resamples=0)
    with pytest.warns(DeprecationWarning, match="use `n_resamples=`"):
        old = es.permanova(DM_TIES, GROUPING_EQUAL, permutations=0)
    assert old.statistic == new.statistic and old.pvalue is None
    with pytest.raises(TypeError, match="old name of `n_resamples`"):
        es.permanova(DM_TIES, GROUPING_EQUAL, n_resamples=5, permutations=5)
