"""energystats: energy statistics with a compiled core.

Energy distance, the W/S/T dispersion decomposition, permutation tests, DISCO
and energy clustering, for arrays and DataFrames.  The mathematical
conventions are those of the project's SPEC (V-statistics; see the docs).
"""
from .clustering import EnergyClustering, EnergyClusteringResult, clustering_accuracy, energy_clustering
from .decomposition import DispersionResult, dispersion
from .hierarchy import energy_linkage
from .homogeneity import DiscoResult, EnergyTestResult, disco, energy_test
from .significance import AntiConservativeWarning, ClusterTestResult, cluster_test
from .distance import energy_distance, gram_matrix, is_negative_type, pairwise

__version__ = "0.1.0.dev0"

__all__ = [
    "AntiConservativeWarning",
    "ClusterTestResult",
    "DiscoResult",
    "EnergyClustering",
    "EnergyClusteringResult",
    "EnergyTestResult",
    "cluster_test",
    "clustering_accuracy",
    "disco",
    "energy_clustering",
    "energy_linkage",
    "energy_test",
    "DispersionResult",
    "dispersion",
    "energy_distance",
    "gram_matrix",
    "is_negative_type",
    "pairwise",
]
