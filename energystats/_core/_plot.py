"""Matplotlib, imported when a result is drawn (it is an optional dependency)."""
from __future__ import annotations

__all__ = ["axes"]


def axes(ax=None, what="`plot`", figsize=(8, 3)):
    """``ax``, or the axes of a new figure of ``figsize``; an ImportError that says what to
    install when matplotlib is missing (``what`` names the method in the message)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(f"{what} needs matplotlib (pip install matplotlib).") from None
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax
