"""energystats: energy statistics with a compiled core.

Energy distance, the W/S/T dispersion decomposition, permutation tests, DISCO
and energy clustering, for arrays and DataFrames.  The mathematical
conventions are those of the project's SPEC (V-statistics; see the docs).
"""
from .dispersion import DispersionResult, dispersion
from .distance import energy_distance, gram_matrix, is_negative_type, pairwise
from .homogeneity import DiscoResult, EnergyTestResult, disco, energy_test

__version__ = "0.1.0.dev0"

__all__ = [
    "DiscoResult",
    "DispersionResult",
    "EnergyTestResult",
    "disco",
    "dispersion",
    "energy_test",
    "energy_distance",
    "gram_matrix",
    "is_negative_type",
    "pairwise",
]
