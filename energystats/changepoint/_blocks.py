"""Block permutations for serially dependent series, and the automatic block length.

Under serial dependence the rows of a segment are not exchangeable, and permuting them one
by one breaks the dependence that the observed series has: the permuted maxima of Q̂ are
then too small and the test rejects far too often (AR(1) noise with φ = 0.5 and no change:
90 % of series at T = 500 got a change point).  The block permutation principle of Kirch
(2007, "Block permutation principles for the change analysis of dependent data", Journal of
Statistical Planning and Inference 137(7)) permutes *blocks* of consecutive rows instead:
within every segment the rows are cut into blocks of length L (the first block of a random
length 1..L, so that the cuts do not sit at fixed places) and the order of the blocks is
permuted; each block keeps its rows' order and so the dependence within it.  For a
stationary, weakly dependent segment the permuted statistics then approximate the null
distribution as L grows with T (L → ∞, L/T → 0), which single-row permutation does not.

The block length, when not given, is twice the length that the rule of Politis and White
(2004, "Automatic block-length selection for the dependent bootstrap", Econometric Reviews
23(1)), with the correction of Patton, Politis and White (2009, Econometric Reviews 28(4)),
gives the circular block bootstrap, computed on the residuals of the current segmentation
with the split being tested (each segment's rows minus its mean: a change left in them
would look like dependence), or three times the length for their squares, column by
column; the largest is used (see :data:`BLOCK_FACTOR` and :data:`SQUARES_FACTOR`).
On the residuals the rule's lag window also reaches the last autocorrelation up to lag T/4
that is significant over all those lags (:func:`energystats._core._blocks.seasonal_reach`),
so that seasonal and slowly decaying dependence, which the rule's first run of insignificant
lags misses, lengthens the blocks.

The generic parts (the Politis-White length, drawing block permutations, the lag-1
autocorrelation) live in :mod:`energystats._core._blocks`; this module keeps the change-point
rule (residuals of the segmentation, the multiples) and re-exports them.
"""
from __future__ import annotations

import numpy as np

from .._core._blocks import (block_length, draw_block_permutations, lag1_autocorrelation,
                             lag1_autocorrelations)

__all__ = ["auto_block_length", "draw_block_permutations", "lag1_autocorrelation",
           "lag1_autocorrelations", "residuals"]


def residuals(Z, segments):
    """The rows minus their segment's mean, segment after segment."""
    return np.vstack([Z[a:b] - Z[a:b].mean(axis=0) for a, b in segments])


#: the block length is this multiple of the Politis-White-Patton length of the residuals: that
#: length is optimal for the variance of a mean, while the size distortion of the permutation
#: test keeps falling as the blocks grow (measured: AR(1), phi = 0.5, T = 500: level 0.087 at
#: 1x, 0.040 at 2x; benchmarks/changepoint_level.py)
BLOCK_FACTOR = 2.0
#: ... and at least this multiple of the length for the squared residuals (dependence in the
#: variance: GARCH(1,1), T = 500: level 0.103 with blocks of 11, 0.06 with 20, 0.04 with 35)
SQUARES_FACTOR = 3.0


def auto_block_length(Z, segments, rule=None):
    """The block length L (an int >= 1) for the segmentation ``segments`` of ``Z``: the
    largest over the columns of :data:`BLOCK_FACTOR` times the Politis-White-Patton length
    of the residuals and :data:`SQUARES_FACTOR` times that of their squares (dependence in
    the variance, as in a GARCH series, shows there), rounded up, and at most a third of the
    shortest segment (:func:`energystats._core._blocks.block_length`)."""
    E = residuals(Z, segments)
    shortest = min(b - a for a, b in segments)
    return block_length(E, BLOCK_FACTOR, SQUARES_FACTOR, shortest // 3, rule)
