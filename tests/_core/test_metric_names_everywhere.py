"""SciPy's metric names reach every public entry point that takes ``metric=`` correctly (issue 34).

Every call with a name ('cityblock', 'canberra', 'hamming' on integer-valued data, 'euclidean',
'sqeuclidean', and the names with a SciPy parameter given as a pair: 'seuclidean' with V,
'mahalanobis' with VI, 'minkowski' with p = 1.5) either equals the same call with ``metric='precomputed'`` on SciPy's ``cdist``
matrix (to rounding; randomised calls with the same seed), or, where a function has no
precomputed form, a reference formed from that matrix with plain NumPy (or the same call with a
callable that calls ``cdist`` per pair), or it raises a ValueError/TypeError that names the metric
and says why; never NaN, never a silently different number.  The refusals are listed
(:data:`REFUSED`): a refusal that is not listed fails, and so does a listed one that answers.

The entry points are found from ``energystats.__all__`` by their signature: a new function with
``metric=`` (with ``weights=``, with ``backend=``) fails :func:`test_every_metric_entry_point_is_covered`
until it has its forms here.
"""
import inspect
import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import energystats as es

from ..changepoint.reference import best_split
from .registry import public_entry_points

#: the names with their SciPy parameter (issue 43): V, VI for the 3 features of :func:`_data`
_A = np.array([[1.0, 0.4, -0.2], [0.0, 0.8, 0.3], [0.0, 0.0, 1.5]])
PAIRS = [("seuclidean", {"V": np.array([0.5, 2.0, 1.5])}), ("mahalanobis", {"VI": _A @ _A.T}),
         ("minkowski", {"p": 1.5})]
NAMES = ["cityblock", "canberra", "hamming", "euclidean", "sqeuclidean"] + PAIRS
NR = 19
RTOL, ATOL = 1e-9, 1e-12
LAB2 = np.repeat([0, 1], 8)
LAB3 = np.repeat([0, 1, 2], [5, 5, 6])
W16 = np.arange(16) % 3 + 1.0          # integer weights 1, 2, 3
#: extra arguments of the calls with a metric name (``check_negative_type`` in its own test)
_CK = {}


def _data(metric, n=16, d=3, seed=0):
    """Continuous data (shifted: no 0/0 in canberra), integer-valued for 'hamming'."""
    rng = np.random.default_rng(seed)
    if metric == "hamming":
        return rng.integers(0, 3, size=(n, d)).astype(float)
    return rng.normal(size=(n, d)) + 0.3


def _key(metric):
    """The name of a metric given as a name or as a (name, params) pair."""
    return metric if isinstance(metric, str) else metric[0]


def _cd(A, B, metric):
    """SciPy's cdist, with the parameters of a (name, params) pair."""
    if isinstance(metric, tuple):
        return cdist(A, B, metric[0], **metric[1])
    return cdist(A, B, metric)


def _D(A, metric):
    return _cd(A, A, metric)


def _per_pair(metric):
    """A callable computing rho by SciPy, one pair at a time (the 'callable' path)."""
    def rho(a, b):
        if np.array_equal(a, b):        # cdist's 'cosine' of a row with itself: 1 − 1 rounded
            return 0.0
        return float(_cd(a[None, :], b[None, :], metric)[0, 0])
    return rho


def _fields(res, names):
    return {f: np.asarray(res if f == "" else getattr(res, f), dtype=float) for f in names}


def _edist_ref(A, B, metric, estimator="V", wa=None, wb=None):
    """The energy distance from the cdist blocks: V, U or weighted V (masses w / sum w)."""
    Dab, Daa, Dbb = _cd(A, B, metric), _D(A, metric), _D(B, metric)
    if wa is not None:
        u, v = wa / wa.sum(), wb / wb.sum()
        return 2 * u @ Dab @ v - u @ Daa @ u - v @ Dbb @ v
    n, m = len(A), len(B)
    if estimator == "U":
        return 2 * Dab.mean() - Daa.sum() / (n * (n - 1)) - Dbb.sum() / (m * (m - 1))
    return 2 * Dab.mean() - Daa.mean() - Dbb.mean()


# -- the forms: name -> {form: f(metric) -> (result with the name, expected)} ------------------

def _homogeneity():
    def edist(est="V", weighted=False):
        def f(m):
            X = _data(m)
            A, B = X[:8], X[8:]
            kw = dict(weights=W16[:8], weights_y=W16[8:]) if weighted else dict(estimator=est)
            got = es.energy_distance(A, B, metric=m, **_CK, **kw)
            exp = _edist_ref(A, B, m, est, *((W16[:8], W16[8:]) if weighted else ()))
            return {"": got}, {"": exp}
        return f

    def test(fn, labels, fields, **kw):
        def f(m):
            X = _data(m)
            got = fn(X, labels=labels, metric=m, **_CK, n_resamples=NR, rng=3, **kw)
            exp = fn(_D(X, m), labels=labels, metric="precomputed", n_resamples=NR, rng=3, **kw)
            return _fields(got, fields), _fields(exp, fields)
        return f

    def dispersion(weights=None):
        def f(m):
            X = _data(m)
            got = es.dispersion(X, LAB3, metric=m, **_CK, weights=weights)
            exp = es.dispersion(_D(X, m), LAB3, metric="precomputed", weights=weights)
            return _fields(got, "FWST"), _fields(exp, "FWST")
        return f

    tf = ["statistic", "pvalue", "null_distribution"]
    return {
        "energy_distance": {"V": edist("V"), "U": edist("U"), "weights": edist(weighted=True)},
        "energy_test": {"V": test(es.energy_test, LAB2, tf),
                        "U": test(es.energy_test, LAB2, tf, estimator="U"),
                        "k=3": test(es.energy_test, LAB3, tf)},
        "disco": {"": test(es.disco, LAB3, tf + ["between", "within"])},
        "dispersion": {"": dispersion(), "weights": dispersion(W16)},
    }


def _distance():
    def pairwise(m):
        X, Y = _data(m), _data(m, n=5, seed=1)
        return ({"XX": es.pairwise(X, metric=m, **_CK),
                 "XY": es.pairwise(X, Y, metric=m, **_CK)},
                {"XX": _D(X, m), "XY": _cd(X, Y, m)})

    def gram(m):
        X = _data(m)
        return ({"": es.gram_matrix(X, metric=m, **_CK, x0=X[2])},
                {"": es.gram_matrix(_D(X, m), metric="precomputed", x0=2)})

    return {"pairwise": {"": pairwise}, "gram_matrix": {"": gram}}


def _xyz(m):
    return _data(m, d=3, seed=1), _data(m, d=3, seed=2), _data(m, d=3, seed=3)


def _dependence():
    def two(fn, fields, **kw):
        def f(m):
            x, y, _ = _xyz(m)
            got = fn(x, y, metric=m, **_CK, **kw)
            exp = fn(_D(x, m), _D(y, m), metric="precomputed", **kw)
            return _fields(got, fields), _fields(exp, fields)
        return f

    def three(fn, fields, **kw):
        def f(m):
            x, y, z = _xyz(m)
            got = fn(x, y, z, metric=m, **_CK, **kw)
            exp = fn(_D(x, m), _D(y, m), _D(z, m), metric="precomputed", **kw)
            return _fields(got, fields), _fields(exp, fields)
        return f

    def with_weights(fn, fields):
        return {"": two(fn, fields), "weights": two(fn, fields, weights=W16)}

    rnd = dict(n_resamples=NR, rng=3)
    return {
        "distance_covariance": with_weights(es.distance_covariance, [""]),
        "distance_covariance_sqr": {**with_weights(es.distance_covariance_sqr, [""]),
                                    "U": two(es.distance_covariance_sqr, [""], estimator="U")},
        "distance_correlation": with_weights(es.distance_correlation, [""]),
        "distance_correlation_sqr": {**with_weights(es.distance_correlation_sqr, [""]),
                                     "U": two(es.distance_correlation_sqr, [""], estimator="U")},
        "distance_stats": with_weights(es.distance_stats, ["dcov", "dcov_sqr", "dcor", "dvar_x"]),
        "distance_correlation_ttest": {"": two(es.distance_correlation_ttest,
                                               ["statistic", "pvalue", "estimate"])},
        "independence_test": {"": two(es.independence_test,
                                      ["statistic", "pvalue", "null_distribution"], **rnd)},
        "partial_distance_covariance": {"": three(es.partial_distance_covariance, [""])},
        "partial_distance_correlation": {"": three(es.partial_distance_correlation, [""])},
        "partial_distance_correlation_test": {
            "": three(es.partial_distance_correlation_test, ["statistic", "pvalue"], **rnd)},
    }


def _clustering():
    def clustering(**kw):
        def f(m):
            X = _data(m)
            got = es.energy_clustering(X, 2, metric=m, **_CK, rng=3, **kw)
            exp = es.energy_clustering(_D(X, m), 2, metric="precomputed", rng=3)
            return _fields(got, ["labels", "W", "S"]), _fields(exp, ["labels", "W", "S"])
        return f

    def estimator(m):
        X = _data(m)
        got = es.EnergyClustering(2, metric=m, **_CK, random_state=3).fit(X)
        exp = es.EnergyClustering(2, metric="precomputed", random_state=3).fit(_D(X, m))
        return _fields(got, ["labels_", "W_"]), _fields(exp, ["labels_", "W_"])

    def linkage(m):
        X = _data(m)
        return ({"": es.energy_linkage(X, metric=m, **_CK)},
                {"": es.energy_linkage(_D(X, m), metric="precomputed")})

    def cluster_test(m):
        # no precomputed form (the reference data sets are drawn): a callable calling cdist
        X = _data(m)
        fields = ["statistic", "pvalue", "labels"]
        got = es.cluster_test(X, 2, n_resamples=9, n_init=2, metric=m, **_CK, rng=3)
        exp = es.cluster_test(X, 2, n_resamples=9, n_init=2, metric=_per_pair(m), rng=3)
        return _fields(got, fields), _fields(exp, fields)

    return {
        "energy_clustering": {"": clustering(), "nystrom": clustering(approximation="nystrom",
                                                                      n_components=16)},
        "EnergyClustering": {"": estimator},
        "energy_linkage": {"": linkage},
        "cluster_test": {"": cluster_test},
    }


def _changepoint():
    def e_divisive(m):
        # no precomputed form: the best split by the plain-loop reference on the cdist matrix
        Z = _data(m, d=2)
        Z[8:] += 1.5
        res = es.e_divisive(Z, min_size=3, n_changepoints=1, metric=m, **_CK)
        q, tau, _ = best_split(Z, 3, D=_D(Z, m))
        return ({"Q": res.statistics, "tau": res.changepoints}, {"Q": [q], "tau": [tau]})

    def estimator(m):
        # the ruptures-style estimator runs e_divisive: the same reference
        Z = _data(m, d=2)
        Z[8:] += 1.5
        est = es.EDivisive(min_size=3, n_changepoints=1, metric=m, **_CK)
        est.fit(Z).predict()
        q, tau, _ = best_split(Z, 3, D=_D(Z, m))
        return ({"Q": est.result_.statistics, "tau": est.result_.changepoints},
                {"Q": [q], "tau": [tau]})

    return {"e_divisive": {"": e_divisive}, "EDivisive": {"": estimator}}


def _dependence_issue43():
    """The time-series, conditional and screening entry points: each call with a name against
    the same call with a callable that calls ``cdist`` per pair (the series and the screen have
    no precomputed form)."""
    def by_callable(fn, fields, nargs, **kw):
        def f(m):
            args = _xyz(m)[:nargs]
            got = fn(*args, metric=m, **_CK, **kw)
            exp = fn(*args, metric=_per_pair(m), **kw)
            return _fields(got, fields), _fields(exp, fields)
        return f

    def selector(m):
        x, y, _ = _xyz(m)
        fields = ["scores_", "pvalues_", "ranking_"]
        got = es.DistanceCorrelationSelector(k=1, metric=m, **_CK).fit(x, y)
        exp = es.DistanceCorrelationSelector(k=1, metric=_per_pair(m)).fit(x, y)
        return _fields(got, fields), _fields(exp, fields)

    rnd, lags = dict(n_resamples=NR, rng=3), dict(lags=2)
    return {
        "auto_distance_correlation": {"": by_callable(es.auto_distance_correlation, [""], 1, **lags)},
        "cross_distance_correlation": {"": by_callable(es.cross_distance_correlation, [""], 2,
                                                       **lags)},
        "adcf_test": {"": by_callable(es.adcf_test, ["statistic", "pvalue", "dcor"], 1, **lags,
                                      **rnd)},
        "cross_distance_correlation_test": {
            "": by_callable(es.cross_distance_correlation_test, ["statistic", "pvalue", "dcor"], 2,
                            **lags, **rnd)},
        "conditional_distance_correlation": {
            "": by_callable(es.conditional_distance_correlation, ["statistic", "test_statistic"], 3)},
        "conditional_independence_test": {
            "": by_callable(es.conditional_independence_test, ["statistic", "pvalue"], 3, **rnd)},
        "distance_correlation_screen": {
            "": by_callable(es.distance_correlation_screen, ["statistic", "ranking"], 2)},
        "DistanceCorrelationSelector": {"": selector},
    }


FORMS = {**_homogeneity(), **_distance(), **_dependence(), **_dependence_issue43(), **_clustering(),
         **_changepoint()}

#: (function, metric) -> words the refusal must contain (besides the metric's name)
REFUSED = {**{(f, m): "change-point searches" for f in ("e_divisive", "EDivisive")
              for m in ("cityblock", "canberra", "hamming", "cosine", "chebyshev")},
           # exponent 2: the divergence compares means only (as `exponent=2` is refused)
           **{(f, "sqeuclidean"): "compares means only" for f in ("e_divisive", "EDivisive")},
           **{(f, m): "change-point searches" for f in ("e_divisive", "EDivisive")
              for m, _ in PAIRS},
           # the screen computes dCor column by column: one V, VI for 3 features cannot apply
           **{(f, m): "but the data have 1 feature"
              for f in ("distance_correlation_screen", "DistanceCorrelationSelector")
              for m in ("seuclidean", "mahalanobis")}}


def _metric_entry_points(param="metric"):
    out = set()
    for name in public_entry_points():
        try:
            params = inspect.signature(getattr(es, name)).parameters
        except (TypeError, ValueError):
            continue
        if "metric" in params and param in params:
            out.add(name)
    return out


def test_every_metric_entry_point_is_covered():
    takes = _metric_entry_points()
    assert takes, "no public function with `metric=` found: the signature scan is broken"
    assert not takes - set(FORMS), f"public functions with `metric=` not covered: {sorted(takes - set(FORMS))}"
    assert not set(FORMS) - takes, f"stale entries: {sorted(set(FORMS) - takes)}"
    unweighted = _metric_entry_points("weights") - {n for n, f in FORMS.items() if "weights" in f}
    assert not unweighted, f"`weights=` forms missing: {sorted(unweighted)}"
    no_dask = _metric_entry_points("backend") - {d[0] for d in DASK}
    assert not no_dask, f"Dask forms missing: {sorted(no_dask)}"
    unchecked = takes - _metric_entry_points("check_negative_type")
    assert not unchecked, f"`check_negative_type=` missing: {sorted(unchecked)}"


def _cases():
    for name in sorted(FORMS):
        for form in FORMS[name]:
            for m in NAMES:
                yield pytest.param(name, form, m, id=f"{name}{'-' + form if form else ''}-{_key(m)}")


def _check_refusal(err, name, m):
    msg = str(err.value)
    assert repr(_key(m)) in msg, msg
    assert REFUSED[(name, _key(m))] in msg, msg


@pytest.mark.parametrize("name, form, metric", list(_cases()))
def test_name_equals_precomputed_or_is_refused(name, form, metric):
    f = FORMS[name][form]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # degenerate-statistic and column-scale notes
        if (name, _key(metric)) in REFUSED:
            with pytest.raises(ValueError) as err:
                f(metric)
            _check_refusal(err, name, metric)
            return
        got, exp = f(metric)
    assert got.keys() == exp.keys()
    for key in got:
        g, e = np.asarray(got[key], float), np.asarray(exp[key], float)
        assert not np.isnan(g).any(), f"{name} {form} {key}: NaN with metric={_key(metric)!r}"
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL, err_msg=f"{name} {form} {key}")


# -- check_negative_type ------------------------------------------------------------------------

def _forms():
    return [pytest.param(n, f, id=f"{n}{'-' + f if f else ''}") for n in sorted(FORMS) for f in FORMS[n]]


#: refused (chebyshev and minkowski with p > 2: with 3 features), usable with check_negative_type=False
NOT_NEGATIVE = [pytest.param(m, id=_key(m)) for m in ["cosine", "chebyshev", ("minkowski", {"p": 3})]]


@pytest.mark.parametrize("name, form", _forms())
@pytest.mark.parametrize("metric", NOT_NEGATIVE)
def test_not_negative_type_is_refused_naming_check_negative_type(name, form, metric):
    with warnings.catch_warnings(), pytest.raises(ValueError) as err:
        warnings.simplefilter("ignore")
        FORMS[name][form](metric)
    msg = str(err.value)
    if name in ("e_divisive", "EDivisive") and _key(metric) != "cosine":  # refused before
        assert REFUSED[(name, _key(metric))] in msg, msg
        return
    assert f"metric={_key(metric)!r}" in msg and "refused" in msg, msg
    assert "check_negative_type=False" in msg, msg


@pytest.mark.parametrize("name, form", _forms())
@pytest.mark.parametrize("metric", NOT_NEGATIVE)
def test_check_negative_type_false_equals_precomputed(monkeypatch, name, form, metric):
    """Every function passes ``check_negative_type=False`` on: the refused name then gives the
    precomputed call's numbers (the change-point searches still refuse: no compiled search)."""
    monkeypatch.setitem(_CK, "check_negative_type", False)
    test_name_equals_precomputed_or_is_refused(name, form, metric)


# -- the Dask backend ---------------------------------------------------------------------------

def _dask_call(fn, kind, **kw):
    def f(m, backend):
        if kind == "edist":
            X = _data(m)
            return fn(X[:8], X[8:], metric=m, backend=backend, **kw)
        if kind == "grouped":
            return fn(_data(m), labels=LAB3, metric=m, backend=backend, **kw)
        x, y, z = _xyz(m)
        args = (x, y) if kind == "two" else (x, y, z)
        return fn(*args, metric=m, backend=backend, **kw)
    return f


_RND = dict(n_resamples=NR, rng=3)


def _e_divisive_dask(m, backend):
    # the first test rejects (p >= 1/20 > sig_level): its statistic and p-value; block
    # permutations, so that the step left in the residuals is no autocorrelation warning
    Z = _data(m, d=2)
    Z[8:] += 1.5
    return es.e_divisive(Z, min_size=3, metric=m, sig_level=0.01, resampling="block",
                         block_size=2, backend=backend, **_RND)


def _e_divisive_estimator_dask(m, backend):
    Z = _data(m, d=2)
    Z[8:] += 1.5
    est = es.EDivisive(min_size=3, metric=m, sig_level=0.01, resampling="block", block_size=2,
                       backend=backend, n_resamples=NR, random_state=3)
    est.fit(Z).predict()
    return est.result_


DASK = [
    ("energy_distance", _dask_call(es.energy_distance, "edist"), [""]),
    ("energy_test", _dask_call(es.energy_test, "grouped", **_RND), ["statistic", "pvalue"]),
    ("disco", _dask_call(es.disco, "grouped", **_RND), ["statistic", "pvalue"]),
    ("dispersion", _dask_call(es.dispersion, "grouped"), ["F", "W"]),
    ("distance_covariance", _dask_call(es.distance_covariance, "two"), [""]),
    ("distance_covariance_sqr", _dask_call(es.distance_covariance_sqr, "two"), [""]),
    ("distance_correlation", _dask_call(es.distance_correlation, "two"), [""]),
    ("distance_correlation_sqr", _dask_call(es.distance_correlation_sqr, "two"), [""]),
    ("distance_stats", _dask_call(es.distance_stats, "two"), ["dcov", "dcor"]),
    ("distance_correlation_ttest", _dask_call(es.distance_correlation_ttest, "two"),
     ["statistic", "pvalue"]),
    ("independence_test", _dask_call(es.independence_test, "two", **_RND), ["statistic", "pvalue"]),
    ("partial_distance_covariance", _dask_call(es.partial_distance_covariance, "three"), [""]),
    ("partial_distance_correlation", _dask_call(es.partial_distance_correlation, "three"), [""]),
    ("partial_distance_correlation_test",
     _dask_call(es.partial_distance_correlation_test, "three", **_RND), ["statistic", "pvalue"]),
    ("energy_clustering",
     lambda m, backend: es.energy_clustering(_data(m), 2, metric=m, rng=3, backend=backend),
     ["labels", "W"]),
    ("EnergyClustering",
     lambda m, backend: es.EnergyClustering(2, metric=m, random_state=3, backend=backend).fit(_data(m)),
     ["labels_", "W_"]),
    ("e_divisive", _e_divisive_dask, ["rejected_statistic", "rejected_pvalue"]),
    ("EDivisive", lambda m, backend: _e_divisive_estimator_dask(m, backend),
     ["rejected_statistic", "rejected_pvalue"]),
    ("distance_correlation_screen", _dask_call(es.distance_correlation_screen, "two"),
     ["statistic", "ranking"]),
    ("adcf_test", lambda m, backend: es.adcf_test(_xyz(m)[0], metric=m, lags=2, backend=backend,
                                                  **_RND), ["statistic", "pvalue", "dcor"]),
    ("cross_distance_correlation_test",
     lambda m, backend: es.cross_distance_correlation_test(*_xyz(m)[:2], metric=m, lags=2,
                                                           backend=backend, **_RND),
     ["statistic", "pvalue", "dcor"]),
    ("conditional_independence_test", _dask_call(es.conditional_independence_test, "three", **_RND),
     ["statistic", "pvalue"]),
]
#: the Dask tiles run the compiled kernels only: SciPy's cdist metrics are refused, naming them
DASK_REFUSED = {"canberra", "hamming", "seuclidean", "mahalanobis", "minkowski"}
#: ... except where the Dask tasks run the threads backend's code on blocks of columns
DASK_ANY_METRIC = {"distance_correlation_screen", "adcf_test", "cross_distance_correlation_test",
                   "conditional_independence_test"}   # (and where the matrices stay in memory)


@pytest.mark.dask
@pytest.mark.parametrize("metric", [pytest.param(m, id=_key(m)) for m in NAMES])
@pytest.mark.parametrize("name, call, fields", [pytest.param(*d, id=d[0]) for d in DASK])
def test_dask_equals_threads_or_is_refused(name, call, fields, metric):
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.array")
    if (name, _key(metric)) in REFUSED:   # no compiled search: refused on either backend alike
        for backend in ("dask", None):
            with pytest.raises(ValueError, match=REFUSED[(name, _key(metric))]):
                call(metric, backend)
        return
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if _key(metric) in DASK_REFUSED and name not in DASK_ANY_METRIC:
            with pytest.raises((ValueError, TypeError)) as err:
                call(metric, "dask")
            msg = str(err.value)
            assert repr(_key(metric)) in msg and "dask" in msg.lower() and "cityblock" in msg, msg
            return
        got = _fields(call(metric, "dask"), fields)
    exp = _fields(call(metric, None), fields)     # itself checked against precomputed above
    for key in got:
        assert not np.isnan(got[key]).any()
        np.testing.assert_allclose(got[key], exp[key], rtol=RTOL, atol=ATOL, err_msg=key)
