r""":class:`SktimeDetector`: the change-point estimators as a detector of sktime.

sktime's detectors (``sktime.detection``) take a series in ``fit`` and return, from
``predict(X)``, a DataFrame with one row per change point and its 0-based position in the
column ``"ilocs"`` — the first row of the new segment, as :func:`~energystats.e_divisive` and
its siblings number a change point.  The adapter wraps an :class:`EDivisive`,
:class:`EAgglo` or :class:`ECp3o`; ``fit(X)`` runs a copy of it on ``X`` and keeps
the copy that ran on the ``fit`` series, with its full result, in ``estimator_``.

sktime is optional (``pip install "energy-statistics[sktime]"``): this module imports
without it, and creating the adapter then raises an ImportError that says what to install.
"""
from __future__ import annotations

import numpy as np

from .estimators import EAgglo, ECp3o, EDivisive

__all__ = ["SktimeDetector"]

SKTIME_INSTALL = 'pip install "energy-statistics[sktime]"'

try:  # sktime is optional: its base class is the base only when it is there
    from sktime.detection.base import BaseDetector as _Base

    _BASES = (_Base,)
except ImportError:  # pragma: no cover - exercised only without sktime
    _BASES = ()


class _NeedsSktime:
    """The base without sktime: instantiating says what to install."""

    def __new__(cls, *args, **kwargs):
        raise ImportError(f"{cls.__name__} is an sktime detector and needs sktime (the "
                          f"sktime.detection module), which is not installed: "
                          f"{SKTIME_INSTALL}.  Without it, EDivisive, EAgglo and ECp3o give the "
                          "same change points as ruptures-style breakpoints.")


_ESTIMATORS = (EDivisive, EAgglo, ECp3o)


def _copy(estimator):
    """A new, unfitted estimator of the same class and parameters."""
    return type(estimator)(**estimator.get_params())


class SktimeDetector(*(_BASES or (_NeedsSktime,))):
    r"""An :class:`EDivisive`, :class:`EAgglo` or :class:`ECp3o` as an sktime change-point
    detector.

    Parameters
    ----------
    estimator : EDivisive, EAgglo or ECp3o
        The change-point estimator and its parameters (not modified: each ``predict`` runs a
        copy).  Anything else is a TypeError naming ``estimator``.

    Attributes
    ----------
    estimator_ : EDivisive, EAgglo or ECp3o
        The copy that ``fit`` ran on its series; ``estimator_.result_`` is the function's full
        result (p-values, fits, seed, ``to_frame()``).
    breakpoints_ : list of int
        Its breakpoints (ruptures' convention: the change points, then ``n_samples``).

    See Also
    --------
    EDivisive, EAgglo, ECp3o : the estimators, whose Notes give the statistics.

    Notes
    -----
    sktime's task is ``"change_point_detection"``, unsupervised.  ``fit(X)`` finds the change
    points of ``X`` and keeps them with the result; ``predict(X)`` returns them for the same
    series (equal values and index: the result of ``fit``, not a new permutation draw), and
    for another series runs a fresh copy of the estimator on it without changing the
    detector (sktime's contract: ``predict`` changes no state) — the change points of a
    series depend on that series alone, nothing learnt from the ``fit`` series is used.
    Each change point is the 0-based position of the first row of a new segment, sktime's
    ``"ilocs"`` (its ``change_points_to_segments`` turns them into the segments
    ``[0, c_1), [c_1, c_2), …``); ruptures' breakpoints are the same numbers followed by
    ``n_samples``.  With ``EDivisive(random_state=None)`` every ``predict`` draws a new seed,
    recorded in ``estimator_.result_.seed``; give ``random_state`` for repeatable output.

    sktime converts ``X`` (a DataFrame, Series or array, rows in time order) to a DataFrame
    before the estimator sees it; the estimator's own checks (NaN or inf named by row,
    ``min_size`` against the length) then apply.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from energystats.changepoint import EDivisive, SktimeDetector
    >>> rng = np.random.default_rng(0)
    >>> x = pd.Series(np.concatenate([rng.normal(0, 1, 100), rng.normal(3, 1, 100)]))
    >>> det = SktimeDetector(EDivisive(min_size=20, n_resamples=99, random_state=1))
    >>> det.fit(x).predict(x)
       ilocs
    0    100
    >>> det.breakpoints_, det.estimator_.result_.pvalues.tolist()
    ([100, 200], [0.01])
    """

    _tags = {
        "authors": ["energystats developers"],
        "task": "change_point_detection",
        "learning_type": "unsupervised",
        "fit_is_empty": False,
    }

    def __init__(self, estimator):
        self.estimator = estimator
        super().__init__()
        if not isinstance(estimator, _ESTIMATORS):
            raise TypeError(f"`estimator` must be an EDivisive, EAgglo or ECp3o of "
                            f"energystats.changepoint; got {type(estimator).__name__}.")

    def _fit(self, X, y=None):
        est = _copy(self.estimator)
        self.breakpoints_ = est.fit(X).predict()
        self.estimator_ = est
        self._fit_X = X
        return self

    def _predict(self, X):
        import pandas as pd

        if X.shape == self._fit_X.shape and X.equals(self._fit_X):
            bkps = self.breakpoints_             # the series of fit: its result, not a new draw
        else:
            bkps = _copy(self.estimator).fit(X).predict()
        return pd.DataFrame({"ilocs": pd.array(np.asarray(bkps[:-1], dtype=np.int64))})

    @classmethod
    def get_test_params(cls, parameter_set="default"):
        """Instances for sktime's estimator checks: each estimator, small and seeded."""
        return [{"estimator": EDivisive(min_size=3, n_resamples=19, random_state=0)},
                {"estimator": EAgglo()},
                {"estimator": ECp3o(delta=2, max_changepoints=2)}]
