"""Energy clustering: Hartigan's method on the energy kernel, its baselines and what follows a fit.

* :mod:`.estimator` — :class:`EnergyClustering`, :func:`energy_clustering`,
  :func:`clustering_accuracy`;
* :mod:`.significance` — :func:`cluster_test` (is the clustering better than on unclustered data?);
* :mod:`.linkage` — :func:`energy_linkage` (hierarchical clustering, Ward-like on energy distances);
* private: ``_fit`` (the checked input and the fit driver shared by the estimator and
  :func:`cluster_test`), ``_engine`` (the Hartigan, Lloyd, spectral, Nyström and 1-D drivers),
  ``_dask`` (restarts on the Dask backend).
"""
from __future__ import annotations

from ._fit import ColumnScaleWarning, column_scale_message  # the message: also the CLI's
from .estimator import EnergyClustering, EnergyClusteringResult, clustering_accuracy, energy_clustering
from .linkage import energy_linkage
from .significance import AntiConservativeWarning, ClusterTestResult, cluster_test

__all__ = ["EnergyClustering", "EnergyClusteringResult", "energy_clustering", "clustering_accuracy",
           "ColumnScaleWarning", "cluster_test", "ClusterTestResult", "AntiConservativeWarning",
           "energy_linkage"]
