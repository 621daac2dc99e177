"""progress='auto' (the default of the resampling tests): a bar on an interactive stderr only,
nothing in pipes; other strings refused with the argument named."""
from __future__ import annotations

import io
import sys

import numpy as np
import pytest

import energystats as es


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _calls():
    g = np.random.default_rng(0)
    x, y = g.normal(size=(30, 2)), g.normal(size=(30, 2)) + 1
    series = np.r_[g.normal(size=40), g.normal(size=40) + 3]
    return {
        "energy_test": lambda **kw: es.energy_test(x, y, n_resamples=19, rng=0, **kw),
        "disco": lambda **kw: es.disco(np.r_[x, y], labels=np.repeat([0, 1], 30),
                                       n_resamples=19, rng=0, **kw),
        "e_divisive": lambda **kw: es.e_divisive(series, n_resamples=19, rng=0, min_size=10, **kw),
        "cluster_test": lambda **kw: es.cluster_test(np.r_[x, y], 2, n_resamples=9, rng=0, **kw),
    }


@pytest.mark.parametrize("name", sorted(_calls()))
def test_auto_draws_on_a_terminal_only(name, monkeypatch):
    call = _calls()[name]
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    call()
    assert "/" in term.getvalue() and "%" in term.getvalue()     # 'desc:  37% 7/19 [...]'
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    call()
    assert pipe.getvalue() == ""
    call(progress=False)
    assert pipe.getvalue() == ""


@pytest.mark.parametrize("name", sorted(_calls()))
def test_other_strings_refused(name):
    with pytest.raises(ValueError, match="`progress` must be 'auto'"):
        _calls()[name](progress="yes")


def test_auto_makes_no_bar_in_a_pipe(monkeypatch):
    """In a pipe 'auto' makes no bar at all (a long run would otherwise write a line every 5 s);
    on a terminal it makes one."""
    from energystats._core import _progress

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert _progress.progress_bar(10, "auto") is None
    monkeypatch.setattr(sys, "stderr", _Terminal())
    bar = _progress.progress_bar(10, "auto")
    assert bar is not None
    bar.close()
    with _progress.ambient(True):          # the command line's setting still applies
        monkeypatch.setattr(sys, "stderr", io.StringIO())
        bar = _progress.progress_bar(10, "auto")
        assert bar is not None
        bar.close()


class _NotebookStream(io.StringIO):
    """Stands for ipykernel's OutStream: not a terminal (isatty False), written to a cell."""

    def isatty(self):
        return False


_NotebookStream.__module__ = "ipykernel.iostream"


@pytest.mark.parametrize("name", sorted(_calls()))
def test_auto_draws_in_a_notebook(name, monkeypatch):
    # was: silent in Jupyter, whose stderr is not a terminal
    from energystats._core._progress import interactive

    cell = _NotebookStream()
    assert interactive(cell) and not interactive(io.StringIO())
    monkeypatch.setattr(sys, "stderr", cell)
    _calls()[name]()
    out = cell.getvalue()
    assert "%" in out and "\r" in out       # one line redrawn in place, as on a terminal


def test_weighted_effect_auto_in_a_notebook(monkeypatch):
    from energystats.balance.effect import _progress_of

    monkeypatch.setattr(sys, "stderr", _NotebookStream())
    assert _progress_of("auto") == (True, True)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert _progress_of("auto") == (False, True)
