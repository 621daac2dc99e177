r"""Change-point estimators in the style of ruptures and scikit-learn: :class:`EDivisive`,
:class:`EAgglo` and :class:`ECp3o`, the estimator twins of :func:`~energystats.e_divisive`,
:func:`~energystats.e_agglo` and :func:`~energystats.e_cp3o`.

``fit(signal)`` stores the series and returns the estimator; ``predict()`` runs the function
and returns its change points as *breakpoints*, ruptures' convention: a sorted list of Python
ints, each the first row (0-based) of a new segment, followed by ``n_samples``.  The functions
return the change points as the same 0-based first rows, so the conversion only appends
``n_samples``; the full result is kept in ``result_``.  Neither ruptures nor scikit-learn is
needed.
"""
from __future__ import annotations

import inspect

import numpy as np

from .._core._input import time_series
from .._core._params import Params
from .._core._validation import is_int
from .e_agglo import e_agglo
from .e_cp3o import e_cp3o
from .e_divisive import e_divisive

__all__ = ["EDivisive", "EAgglo", "ECp3o", "NotFittedError"]


class NotFittedError(ValueError, AttributeError):
    """``predict`` was called before ``fit`` (a ValueError and an AttributeError, as
    scikit-learn's exception of the same name)."""


def breakpoints(changepoints, n_samples):
    """ruptures' breakpoints from the change points of a result (0-based first rows of the new
    segments): the same positions as Python ints, ascending, then ``n_samples``."""
    return sorted(int(c) for c in changepoints) + [int(n_samples)]


def _is_default(value, default):
    """``value`` is the default (the same object, or an equal str, int, float or bool)."""
    return value is default or (type(value) is type(default)
                                and isinstance(value, (str, int, float)) and value == default)


class _ChangePointEstimator(Params):
    """What both estimators share: parameters (``get_params``/``set_params`` as in
    scikit-learn), ``fit``, ``fit_predict`` and the not-fitted error."""

    #: estimator parameter -> the function's argument of another name
    _renamed = {}

    def __repr__(self):
        # the parameters that differ from their defaults, as scikit-learn shows them
        sig = inspect.signature(type(self).__init__).parameters
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items()
                         if not _is_default(v, sig[k].default))
        return f"{type(self).__name__}({args})"

    def _function_kwargs(self):
        return {self._renamed.get(k, k): v for k, v in self.get_params().items()}

    def fit(self, signal):
        """Check and store the series; returns self.

        Parameters
        ----------
        signal : array_like of shape (n_samples, n_features) or (n_samples,), pandas Series
            or DataFrame
            The series, rows in time order (as the function takes it: an index is carried
            into ``result_.changepoint_labels``; NaN or inf is an error naming the rows).

        Returns
        -------
        self
        """
        Z, _, _ = time_series(signal, self.columns, name="signal")
        self.signal_ = signal                    # passed to the function as given by predict
        self.n_samples_, self.n_features_in_ = Z.shape
        for name in ("result_", "path_row_"):     # a new series: no result until predict
            vars(self).pop(name, None)
        return self

    def _check_fitted(self, method):
        if "signal_" not in vars(self):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet: call "
                                 f"`fit(signal)` before `{method}`.")

    def fit_predict(self, signal, n_bkps=None):
        """``fit(signal).predict(n_bkps)``: the breakpoints of ``signal``."""
        return self.fit(signal).predict(n_bkps)


def _check_n_bkps(n_bkps):
    if n_bkps is not None and not (is_int(n_bkps) and n_bkps >= 0):
        raise ValueError(f"`n_bkps` must be None or a non-negative integer (the number of change "
                         f"points); got {n_bkps!r}.")


#: the arguments of e_divisive that only its permutation tests use
_TEST_SETTINGS = ("sig_level", "n_resamples", "pvalue_method", "resampling", "block_size",
                  "rng", "progress", "backend")


class EDivisive(_ChangePointEstimator):
    r"""E-Divisive change points as a ruptures-style estimator (:func:`~energystats.e_divisive`).

    Parameters
    ----------
    min_size, exponent, n_changepoints, kappa, metric, sigma, check_negative_type, columns
        The search's parameters of :func:`~energystats.e_divisive`, with its defaults
        (``min_size=30``, ``exponent=1.0``, ...), passed to it unchanged and checked there
        (at ``predict``).
    sig_level, n_resamples, pvalue_method, resampling, block_size, progress, backend, n_threads
        Its tests' parameters and threads, likewise (``sig_level=0.05``,
        ``n_resamples=199``, ...).
    random_state : int, numpy.random.Generator or None
        :func:`~energystats.e_divisive`'s ``rng`` (the permutations; errors name ``rng``).
        With None every ``predict`` draws a new seed, recorded in ``result_.seed``.

    Attributes
    ----------
    signal_ : array_like
        The series given to ``fit``, as given.
    n_samples_, n_features_in_ : int
        Its rows and columns.
    result_ : EDivisiveResult
        The result of the last ``predict`` (p-values, statistics, ``to_frame``, ``plot``).

    See Also
    --------
    energystats.e_divisive : the function, whose Notes say what the statistic and tests are.
    EAgglo

    Notes
    -----
    Breakpoints: :func:`~energystats.e_divisive` numbers a change point by the 0-based
    position of the first row of the new segment (τ in its Notes); ruptures' breakpoints are
    those same positions followed by ``n_samples``:
    ``bkps = result_.changepoints.tolist() + [n_samples_]``, and segment ``i`` is the rows
    ``bkps[i - 1]:bkps[i]`` (from 0 for the first).  Without a change, ``[n_samples_]``.
    R ``ecp``'s ``estimates`` (1-based, with the first row) are ``c(1, bkps + 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from energystats.changepoint import EDivisive
    >>> rng = np.random.default_rng(0)
    >>> x = np.concatenate([rng.normal(0, 1, 100), rng.normal(3, 1, 100)])
    >>> est = EDivisive(min_size=20, n_resamples=99, random_state=1).fit(x)
    >>> est.predict()
    [100, 200]
    >>> est.result_.changepoints.tolist(), est.result_.pvalues.tolist()
    ([100], [0.01])

    One change point, untested (the function's ``n_changepoints=1``; no p-values):

    >>> est.predict(n_bkps=1), est.result_.pvalues
    ([100, 200], None)
    """

    _renamed = {"random_state": "rng"}

    def __init__(self, *, min_size=30, exponent=1.0, n_changepoints=None, sig_level=0.05,
                 n_resamples=199, pvalue_method="full", resampling="permutation",
                 block_size=None, kappa="search", metric="energy", sigma=1.0,
                 check_negative_type=True, columns=None, random_state=None, n_threads=None,
                 progress="auto", backend=None):
        self.min_size = min_size
        self.exponent = exponent
        self.n_changepoints = n_changepoints
        self.sig_level = sig_level
        self.n_resamples = n_resamples
        self.pvalue_method = pvalue_method
        self.resampling = resampling
        self.block_size = block_size
        self.kappa = kappa
        self.metric = metric
        self.sigma = sigma
        self.check_negative_type = check_negative_type
        self.columns = columns
        self.random_state = random_state
        self.n_threads = n_threads
        self.progress = progress
        self.backend = backend

    def predict(self, n_bkps=None):
        """Run :func:`~energystats.e_divisive` on the fitted series; return its breakpoints.

        Parameters
        ----------
        n_bkps : int, optional
            The number of change points: passed as ``n_changepoints`` (the first ``n_bkps``
            splits, untested), overriding the parameter of that name.  The tests' settings
            (``sig_level``, ``n_resamples``, ``pvalue_method``, ``resampling``,
            ``block_size``, ``random_state``, ``progress``, ``backend``) are then not used.
            Default: the parameters as set — the permutation tests decide, unless
            ``n_changepoints`` was given.

        Returns
        -------
        list of int
            The change points (0-based first rows of the new segments), ascending, then
            ``n_samples_``.  The result is kept in ``result_``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        """
        self._check_fitted("predict")
        _check_n_bkps(n_bkps)
        kwargs = self._function_kwargs()
        if n_bkps is not None:
            kwargs = {k: v for k, v in kwargs.items() if k not in _TEST_SETTINGS}
            kwargs["n_changepoints"] = n_bkps
        self.result_ = e_divisive(self.signal_, **kwargs)
        return breakpoints(self.result_.changepoints, self.n_samples_)


class EAgglo(_ChangePointEstimator):
    r"""E-Agglo change points as a ruptures-style estimator (:func:`~energystats.e_agglo`).

    Parameters
    ----------
    member, exponent, penalty, definition, columns, n_threads, backend
        Those of :func:`~energystats.e_agglo`, with its defaults (``member=None``: one
        segment per row; ``penalty='auto'``; ``definition='ecp'``), passed to it unchanged and
        checked there (at ``predict``).

    Attributes
    ----------
    signal_ : array_like
        The series given to ``fit``, as given.
    n_samples_, n_features_in_ : int
        Its rows and columns.
    result_ : EAggloResult
        The result of the last ``predict`` (the merge path, fits, ``to_frame``, ``plot``).
    path_row_ : int
        The row of ``result_.path`` whose segmentation the last ``predict`` returned.

    See Also
    --------
    energystats.e_agglo : the function, whose Notes say what the fit and penalty are.
    EDivisive

    Notes
    -----
    Breakpoints: :func:`~energystats.e_agglo` numbers a change point by the 0-based position
    of the first row of the new segment; ruptures' breakpoints are those same positions
    followed by ``n_samples``: ``bkps = result_.changepoints.tolist() + [n_samples_]``.  They
    are segment boundaries only: where ``ecp``'s cyclic merge joined the last segment to the
    first, ``result_.labels`` gives both label 0, which breakpoints cannot say.

    Examples
    --------
    >>> import numpy as np
    >>> from energystats.changepoint import EAgglo
    >>> rng = np.random.default_rng(1)
    >>> x = np.concatenate([rng.normal(0, 1, 40), rng.normal(3, 1, 40)])
    >>> est = EAgglo()
    >>> est.fit_predict(x)
    [40, 80]
    >>> est.result_.changepoints.tolist(), round(est.result_.penalty, 2)
    ([40], 74.73)
    """

    def __init__(self, *, member=None, exponent=1.0, penalty="auto", definition="ecp",
                 columns=None, n_threads=None, backend=None):
        self.member = member
        self.exponent = exponent
        self.penalty = penalty
        self.definition = definition
        self.columns = columns
        self.n_threads = n_threads
        self.backend = backend

    def predict(self, n_bkps=None):
        """Run :func:`~energystats.e_agglo` on the fitted series; return its breakpoints.

        Parameters
        ----------
        n_bkps : int, optional
            The number of change points: the segmentation on the merge path
            (``result_.path``) with ``n_bkps`` change points, ``penalty`` not used.  ``ecp``'s
            merge of the last segment with the first removes no boundary, so the path can
            hold one set of change points twice (then the row with the larger fit is
            ``path_row_``) and, after such a merge, no row with one change point (two
            clusters there have two boundaries); a count the path does not hold is a
            ValueError that lists those it holds.  Default: the function's choice (the
            largest fit minus ``penalty``).  With a penalty per change point (a number or
            'auto') the default equals ``n_bkps=len(result_.changepoints)``.

        Returns
        -------
        list of int
            The change points (0-based first rows of the new segments), ascending, then
            ``n_samples_``.  The result is kept in ``result_``, the row of its path in
            ``path_row_``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        """
        self._check_fitted("predict")
        _check_n_bkps(n_bkps)
        self.result_ = res = e_agglo(self.signal_, **self._function_kwargs())
        if n_bkps is None:
            # the function's choice: e_agglo returns the chosen row's own array (not a copy),
            # which tells it from an earlier row with the same change points
            row = next(i for i, c in enumerate(res.path_changepoints) if c is res.changepoints)
        else:
            counts = res.path["n_changepoints"].to_numpy()
            rows = np.flatnonzero(counts == n_bkps)
            if rows.size == 0:
                raise ValueError(f"`n_bkps` must be a number of change points on the merge path, "
                                 f"one of {sorted(set(counts.tolist()))}; got {n_bkps}.")
            row = int(rows[np.argmax(res.path["fit"].to_numpy()[rows])])
        self.path_row_ = int(row)
        return breakpoints(res.path_changepoints[row], self.n_samples_)


class ECp3o(_ChangePointEstimator):
    r"""e-cp3o change points as a ruptures-style estimator (:func:`~energystats.e_cp3o`).

    Parameters
    ----------
    n_changepoints, max_changepoints, delta, exponent, search, columns, n_threads
        Those of :func:`~energystats.e_cp3o`, with its defaults, passed to it unchanged and
        checked there (at ``predict``).

    Attributes
    ----------
    signal_ : array_like
        The series given to ``fit``, as given.
    n_samples_, n_features_in_ : int
        Its rows and columns.
    result_ : ECp3oResult
        The result of the last ``predict`` (every fit from 1 to K change points: ``gof``,
        ``path_changepoints``, ``path_frame()``).

    See Also
    --------
    energystats.e_cp3o : the function; e-cp3o is not a test (it returns at least one change).
    EDivisive

    Notes
    -----
    Breakpoints: the change points of :func:`~energystats.e_cp3o` (0-based first rows of the
    new segments; ecp's 1-based "end of segment" estimates are the same numbers) followed by
    ``n_samples``.

    Examples
    --------
    >>> import numpy as np
    >>> from energystats.changepoint import ECp3o
    >>> rng = np.random.default_rng(3)
    >>> x = np.concatenate([rng.normal(0, 1, 200), rng.normal(3, 1, 200), rng.normal(0, 1, 200)])
    >>> ECp3o(max_changepoints=4).fit_predict(x)
    [200, 400, 600]
    >>> ECp3o().fit(x).predict(n_bkps=1)
    [400, 600]
    """

    def __init__(self, *, n_changepoints=None, max_changepoints=None, delta=29, exponent=1.0,
                 search="ecp", columns=None, n_threads=None):
        self.n_changepoints = n_changepoints
        self.max_changepoints = max_changepoints
        self.delta = delta
        self.exponent = exponent
        self.search = search
        self.columns = columns
        self.n_threads = n_threads

    def predict(self, n_bkps=None):
        """Run :func:`~energystats.e_cp3o` on the fitted series; return its breakpoints.

        Parameters
        ----------
        n_bkps : int, optional
            The number of change points (≥ 1; e-cp3o always places at least one), passed as
            ``n_changepoints``.  Default: ``n_changepoints`` of the estimator, else ecp's rule
            among 1 … ``max_changepoints``.

        Returns
        -------
        list of int
            The change points, ascending, then ``n_samples_``; the result is kept in
            ``result_``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        """
        self._check_fitted("predict")
        _check_n_bkps(n_bkps)
        if n_bkps == 0:
            raise ValueError("`n_bkps` must be at least 1 for e-cp3o, which always places a "
                             "change point (use EDivisive to test whether there is one); got 0.")
        kwargs = self._function_kwargs()
        if n_bkps is not None:
            kwargs.update(n_changepoints=int(n_bkps), max_changepoints=None)
        self.result_ = res = e_cp3o(self.signal_, **kwargs)
        return breakpoints(res.changepoints, self.n_samples_)
