"""Rounding allowances shared by the concepts: a value that must be >= 0 and is within
rounding of 0 is reported as 0."""
from __future__ import annotations

import numpy as np


def nonnegative(E, size):
    """E of a semimetric of negative type is >= 0: a value within rounding of 0 is reported as 0.

    ``size`` is the sum of the magnitudes of the terms that were combined; a
    negative value larger than rounding (impossible for negative type) is
    returned as it is, so a bug would show.
    """
    tol = 64 * np.finfo(np.float64).eps * np.abs(size)
    return np.where((E < 0) & (E >= -tol), 0.0, E)
