"""energy_distance on a semimetric matrix (metric='precomputed' with labels=), R edist's
``dist`` form."""
import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

import energystats as es

# R 4.x, energy 1.7-11:
#   X <- matrix(c(0.1, 1.3, 2.2, -0.7, 0.5, 3.1, 1.9, -1.2, 0.8, 2.5, 0.0, 1.1, 1.7, -0.4), ncol = 2)
#   format(edist(dist(X), sizes = c(3, 4), distance = TRUE), digits = 17)              "0.97573482863018612"
#   format(edist(dist(X), sizes = c(3, 4), distance = TRUE, alpha = 0.5), digits = 17)  "1.0241067167770257"
X = np.array([0.1, 1.3, 2.2, -0.7, 0.5, 3.1, 1.9, -1.2, 0.8, 2.5, 0.0, 1.1, 1.7, -0.4]).reshape(2, 7).T
LABELS = [0, 0, 0, 1, 1, 1, 1]


def _ref(D, labels, u=False):
    # the definition with plain loops
    lab = np.asarray(labels)
    a, b = np.flatnonzero(lab == 0), np.flatnonzero(lab == 1)
    n, m = a.size, b.size
    ab = sum(D[i, j] for i in a for j in b) / (n * m)
    aa = sum(D[i, k] for i in a for k in a) / (n * (n - 1) if u else n * n)
    bb = sum(D[j, k] for j in b for k in b) / (m * (m - 1) if u else m * m)
    return 2 * ab - aa - bb


def test_equals_r_edist_on_a_dist():
    D = squareform(pdist(X))
    got = es.energy_distance(D, labels=LABELS, metric="precomputed")
    assert got * 12 / 7 == pytest.approx(0.97573482863018612, rel=1e-14)
    half = es.energy_distance(D ** 0.5, labels=LABELS, metric="precomputed")
    assert half * 12 / 7 == pytest.approx(1.0241067167770257, rel=1e-14)


def test_equals_the_data_form_and_the_reference():
    D = squareform(pdist(X))
    got = es.energy_distance(D, labels=LABELS, metric="precomputed")
    assert got == pytest.approx(es.energy_distance(X[:3], X[3:]), rel=1e-13)
    assert got == pytest.approx(_ref(D, LABELS), rel=1e-13)
    u = es.energy_distance(D, labels=LABELS, metric="precomputed", estimator="U")
    assert u == pytest.approx(_ref(D, LABELS, u=True), rel=1e-13)
    # the condensed vector, labels in any order, at any magnitude
    assert es.energy_distance(pdist(X), labels=LABELS, metric="precomputed") == got
    perm = np.random.default_rng(0).permutation(7)
    shuffled = es.energy_distance(D[np.ix_(perm, perm)], labels=np.asarray(LABELS)[perm],
                                  metric="precomputed")
    assert shuffled == pytest.approx(got, rel=1e-13)
    for k in (2.0 ** 900, 2.0 ** -900, 1e300, 1e-300):
        assert es.energy_distance(D * k, labels=LABELS, metric="precomputed") == pytest.approx(
            got * k, rel=1e-13)


def test_refusals():
    D = squareform(pdist(X))
    with pytest.raises(TypeError, match="needs the n×n semimetric matrix .* `labels=`"):
        es.energy_distance(D, metric="precomputed")
    with pytest.raises(ValueError, match="exactly 2 groups; got 3"):
        es.energy_distance(D, labels=[0, 0, 1, 1, 2, 2, 2], metric="precomputed")
    with pytest.raises(TypeError, match="`labels=` is for metric='precomputed'"):
        es.energy_distance(X, labels=LABELS)
    with pytest.raises(TypeError, match="`weights` is not available"):
        es.energy_distance(D, labels=LABELS, metric="precomputed", weights=np.ones(7))
    with pytest.raises(ValueError, match="`x`"):
        es.energy_distance(D[:, :5], labels=LABELS, metric="precomputed")
