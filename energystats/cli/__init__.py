"""Command-line interface: ``energystats <command>`` or ``python -m energystats``.

* :mod:`.main` — :func:`main` (the console script): runs a command, maps errors to exit codes;
* :mod:`.parser` — :func:`build_parser`, every command's options;
* one module per command group: :mod:`.homogeneity` (``distance``, ``test``, ``disco``),
  :mod:`.dependence` (``dcor``, ``dcor-matrix``), :mod:`.goodness_of_fit` (``gof``),
  :mod:`.clustering` (``cluster``), :mod:`.balance` (``balance``),
  :mod:`.changepoint` (``changepoint``), :mod:`.demo`;
* private: ``_common`` (what the commands share), ``_io`` (reading and writing tables).

Only the standard library is imported until a command runs, so ``--help`` answers at once.
"""
from __future__ import annotations

from .main import main
from .parser import build_parser

__all__ = ["main", "build_parser"]
