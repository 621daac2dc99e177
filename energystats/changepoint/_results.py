"""Results of the change-point searches: :class:`EDivisiveResult` and :class:`EAggloResult`.

Both describe a segmentation of the rows 0 … T−1 of the series by its change points (the
first row of each new segment, ascending) and share the segment table
(:meth:`_Segmentation.to_frame`) and the figure (:meth:`_Segmentation.plot`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from .._core._display import notebook_display

__all__ = ["EDivisiveResult", "EAggloResult", "ECp3oResult", "ChangePointWarning"]


class ChangePointWarning(UserWarning):
    """A change-point answer that needs a second look: a change point where ``min_size``
    binds, or a permutation test on an autocorrelated series (:func:`energystats.e_divisive`)."""


def segment_labels(changepoints, T):
    """The segment (0, 1, …) of each of the ``T`` rows."""
    labels = np.zeros(T, dtype=np.intp)
    for c in np.sort(np.asarray(changepoints, dtype=np.intp)):
        labels[c:] += 1
    return labels


def index_labels(positions, index):
    """The index labels of ``positions`` (the positions themselves without an index)."""
    if index is None:
        return [int(p) for p in positions]
    return [index[int(p)] for p in positions]


class _Segmentation:
    """What both results share: the segment table and the figure."""

    def _names(self):
        if self.columns is not None:
            return [str(c) for c in self.columns]
        d = self.data.shape[1]
        return ["x"] if d == 1 else [f"x{j}" for j in range(d)]

    def to_frame(self):
        """One row per segment: ``start`` (its first row, by position), ``end`` (one past its
        last row), ``length``, ``first`` and ``last`` (the index labels of its first and last
        rows; positions without an index), and the segment mean of every column
        (``mean_<column>``).

        Returns
        -------
        pandas.DataFrame
            Indexed by ``segment`` (0, 1, …).

        Examples
        --------
        >>> import pandas as pd
        >>> import energystats as es
        >>> s = pd.Series([0.0, 0.1, -0.1, 0.0, 5.0, 5.1, 4.9, 5.0],
        ...               index=pd.date_range("2026-01-01", periods=8, freq="D"))
        >>> es.e_divisive(s, min_size=2, n_changepoints=1).to_frame()
                 start  end  length      first       last  mean_x
        segment
        0            0    4       4 2026-01-01 2026-01-04     0.0
        1            4    8       4 2026-01-05 2026-01-08     5.0
        """
        T = self.data.shape[0]
        bounds = [0] + [int(c) for c in self.changepoints] + [T]
        rows = []
        names = self._names()
        for s, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            row = {"segment": s, "start": a, "end": b, "length": b - a,
                   "first": index_labels([a], self.index)[0],
                   "last": index_labels([b - 1], self.index)[0]}
            means = self.data[a:b].mean(axis=0)
            for name, v in zip(names, means):
                row[f"mean_{name}"] = float(v)
            rows.append(row)
        return pd.DataFrame(rows).set_index("segment")

    def plot(self, ax=None):
        """Draw the series (one line per column, against its index) with a vertical line at
        every change point.  Needs matplotlib (imported here).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure's axes).

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .._core._plot import axes

        ax = axes(ax)
        x = np.arange(self.data.shape[0]) if self.index is None else self.index
        for j, name in enumerate(self._names()):
            ax.plot(x, self.data[:, j], lw=0.8, label=name)
        for lab in self.changepoint_labels:
            ax.axvline(lab, color="k", ls="--", lw=1.0)
        if self.data.shape[1] > 1:
            ax.legend(loc="best", fontsize="small")
        ax.set_title(f"{type(self).__name__[:-6]}: {len(self.changepoints)} change point(s)")
        return ax


@notebook_display
@dataclass(frozen=True, eq=False)
class EDivisiveResult(_Segmentation):
    """The result of :func:`energystats.e_divisive`.

    Attributes
    ----------
    changepoints : numpy.ndarray of int
        The accepted change points, ascending: the position (0-based row) of the first row
        of each new segment.
    changepoint_labels : list
        The same rows' index labels (their positions for array input).
    labels : numpy.ndarray of int
        The segment (0, 1, …) of every row.
    statistics : numpy.ndarray
        Q̂ of each accepted split, in the order found.
    pvalues : numpy.ndarray or None
        The permutation p-value of each accepted split, in the order found (None with
        ``n_changepoints``: no tests).
    order_found : numpy.ndarray of int
        The accepted change points in the order found.
    rejected : int or None
        The split tested last and not accepted (p > ``sig_level``), by position; None when
        no split was rejected (``n_changepoints`` given, or no segment left to split).
    rejected_statistic, rejected_pvalue : float or None
        Its Q̂ and p-value.
    n_resamples : tuple of int
        Permutations used by each test, accepted splits first, then the rejected one.
    decisions : tuple
        With ``pvalue_method='decision'``: each test's decision ('p <= alpha',
        'p > alpha', or None when ``n_resamples`` came first); otherwise empty.
    seed : int or None
        The seed of the permutations (None when a Generator was passed, or no test ran).
    min_size, exponent, sig_level, pvalue_method :
        The settings used.
    columns : list or None
        The DataFrame columns used.
    index : pandas.Index or None
        The rows' index (a Series or DataFrame input's).
    data : numpy.ndarray
        The (T, d) series, for :meth:`to_frame` and :meth:`plot`.
    resampling : str or None
        'permutation' or 'block' (None without tests).
    block_sizes : tuple of int
        With 'block': the block length of each test, in the order of ``n_resamples``.
    lag1_autocorrelation : float
        The largest absolute lag-1 autocorrelation over the columns of the residuals within the
        segments found (pairs of rows inside one segment): the diagnostic that says when the
        rows are not exchangeable ('block' is then the valid test).
    at_boundary : tuple of int
        The change points (positions) that lie at most max(2, 5 % of the part) rows beyond
        ``min_size`` from an end of the part they split: there the constraint binds or nearly
        binds (a warning says so).
    block_rules : tuple of dict
        With 'block': the inputs of each test's block length, in the order of
        ``block_sizes`` — per column of the residuals the Politis–White length of the column and
        of its squares, the lag of its first run of insignificant autocorrelations (``m_hat``)
        and its last significant lag up to T/4 (``reach``), the factors and the cap; or
        ``{'block_size': L}`` when ``block_size`` was given.
    series_checks : tuple of str
        With tests: what the time-series diagnostics saw (a unit root in the series; long
        memory or a seasonal lag in the residuals of the segments found; a block longer than
        T/4), one
        sentence each, each also a ``SeriesDependenceWarning``; or that the series is too short
        for them (fewer than 50 rows: nothing checked, no warning).  Empty when nothing was
        seen.
    """

    changepoints: np.ndarray
    changepoint_labels: list
    labels: np.ndarray
    statistics: np.ndarray
    pvalues: np.ndarray | None
    order_found: np.ndarray
    rejected: int | None
    rejected_statistic: float | None
    rejected_pvalue: float | None
    n_resamples: tuple
    decisions: tuple
    seed: int | None
    min_size: int
    exponent: float
    sig_level: float
    pvalue_method: str | None
    columns: list | None = None
    index: object = field(default=None, repr=False)
    data: np.ndarray = field(default=None, repr=False)
    resampling: str | None = None
    block_sizes: tuple = ()
    lag1_autocorrelation: float = float("nan")
    at_boundary: tuple = ()
    series_checks: tuple = ()
    block_rules: tuple = field(default=(), repr=False)

    def __repr__(self):
        return (f"EDivisiveResult(changepoints={[int(c) for c in self.changepoints]}, "
                f"statistics={np.round(self.statistics, 4).tolist()}, "
                f"pvalues={None if self.pvalues is None else np.round(self.pvalues, 4).tolist()}, "
                f"rejected={self.rejected}, rejected_pvalue={self.rejected_pvalue}, "
                f"n_resamples={list(self.n_resamples)}, seed={self.seed})")


@notebook_display
@dataclass(frozen=True, eq=False)
class EAggloResult(_Segmentation):
    """The result of :func:`energystats.e_agglo`.

    Attributes
    ----------
    changepoints : numpy.ndarray of int
        The change points of the chosen segmentation, ascending (first rows of the new
        segments, by position).
    changepoint_labels : list
        Their index labels (positions for array input).
    labels : numpy.ndarray of int
        The cluster (0, 1, …) of every row: segments in row order, except that the last
        segment is labelled 0 when it was merged with the first (``ecp``'s cyclic merge).
    fit : float
        The goodness of fit of the chosen segmentation (``definition='ecp'``: ``ecp``'s fit;
        'u-statistic': Ŝ, the sum of Q̂ between adjacent segments).
    penalised_fit : float
        ``fit`` minus the penalty of its change points.
    path : pandas.DataFrame
        The merge path, one row per segmentation from the initial one to one segment:
        ``n_changepoints``, ``merged`` (the boundary removed to get there, 0 for a merge of
        the last segment with the first; -1 for the initial row), ``fit``,
        ``penalised_fit``, ``wrapped`` (the first and last segments are one cluster).
    path_changepoints : list of numpy.ndarray
        The change points of every row of ``path``.
    exponent : float
    columns : list or None
    index : pandas.Index or None
    data : numpy.ndarray
    penalty : float or callable
        The penalty per change point that chose the segmentation, in the units of ``fit``
        (the default's value when ``penalty='auto'``; 0.0 for none), or the callable given.
    definition : str
        'ecp' or 'u-statistic' (see :func:`energystats.e_agglo`).
    """

    changepoints: np.ndarray
    changepoint_labels: list
    labels: np.ndarray
    fit: float
    penalised_fit: float
    path: pd.DataFrame = field(repr=False)
    path_changepoints: list = field(repr=False)
    exponent: float = 1.0
    columns: list | None = None
    index: object = field(default=None, repr=False)
    data: np.ndarray = field(default=None, repr=False)
    # -- e_agglo (ecp's definitions): the penalty used and the definition ------------------
    penalty: object = field(default=0.0, repr=False)
    definition: str = "ecp"

    def __repr__(self):
        return (f"EAggloResult(changepoints={[int(c) for c in self.changepoints]}, "
                f"fit={self.fit:.6g}, penalised_fit={self.penalised_fit:.6g})")


@notebook_display
@dataclass(frozen=True, eq=False)
class ECp3oResult(_Segmentation):
    """The result of :func:`energystats.e_cp3o`.

    Attributes
    ----------
    changepoints : numpy.ndarray of int
        The change points of the chosen fit, ascending: the first row of each new segment,
        by position (ecp's ``estimates``, which number the last row of each segment from 1,
        are the same numbers).
    changepoint_labels : list
        Their index labels (positions for array input).
    labels : numpy.ndarray of int
        The segment (0, 1, …) of every row.
    n_changepoints : int
        How many change points were chosen.
    gof : numpy.ndarray
        The best goodness of fit G with 1, 2, …, ``max_changepoints`` change points (ecp's
        ``gofM``), in the units of ρ.
    path_changepoints : list of numpy.ndarray
        The change points of each of those fits (ecp's ``cpLoc``).
    chosen_by : str
        'fixed' (``n_changepoints`` given) or 'ecp rule' (ecp's choice from ``gof``).
    max_changepoints : int
        K, the most change points fitted.
    delta : int
        The window; segments have at least ``delta + 1`` rows.
    exponent : float
    search : str
        'ecp' (ecp's programme) or 'exact' (the exact maximum of G).
    columns : list or None
    index : pandas.Index or None
    data : numpy.ndarray
    """

    changepoints: np.ndarray
    changepoint_labels: list
    labels: np.ndarray
    n_changepoints: int
    gof: np.ndarray
    path_changepoints: list = field(repr=False)
    chosen_by: str = "ecp rule"
    max_changepoints: int = 1
    delta: int = 29
    exponent: float = 1.0
    search: str = "ecp"
    columns: list | None = None
    index: object = field(default=None, repr=False)
    data: np.ndarray = field(default=None, repr=False)

    def __repr__(self):
        return (f"ECp3oResult(changepoints={[int(c) for c in self.changepoints]}, "
                f"n_changepoints={self.n_changepoints}, chosen_by={self.chosen_by!r}, "
                f"gof={np.round(self.gof, 4).tolist()})")

    def path_frame(self):
        """One row per number of change points fitted: ``n_changepoints``, ``gof`` and the
        ``changepoints`` of that fit (ecp's ``gofM`` and ``cpLoc`` side by side).

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame({"n_changepoints": np.arange(1, len(self.gof) + 1),
                             "gof": self.gof,
                             "changepoints": [c.tolist() for c in self.path_changepoints]})
