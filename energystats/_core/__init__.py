"""The layer below every concept: input, metrics, resampling, memory, progress, Dask tiles.

Imports no concept package (see ``tools/import_graph.py``)."""
