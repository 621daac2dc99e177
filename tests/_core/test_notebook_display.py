"""Every result object shows as a table in a notebook (``_repr_html_``; issue 52): its class
name, its headline numbers (the repr) and its ``to_frame()`` table."""
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import energystats as es


def _result_classes():
    out = {}
    for mod in pkgutil.walk_packages(es.__path__, "energystats."):
        if ".cli" in mod.name or "_dask" in mod.name or mod.name.endswith("__main__"):
            continue
        try:
            m = importlib.import_module(mod.name)
        except ImportError:           # an optional dependency's module
            continue
        for name, obj in vars(m).items():
            if inspect.isclass(obj) and name.endswith("Result") and obj.__module__ == m.__name__:
                out[name] = obj
    return out


def test_every_result_class_has_a_notebook_display():
    classes = _result_classes()
    assert len(classes) >= 25
    missing = sorted(n for n, c in classes.items() if not hasattr(c, "_repr_html_"))
    assert missing == []


@pytest.mark.parametrize("make", [
    lambda g: es.energy_test(g.normal(size=(20, 2)), g.normal(size=(20, 2)), rng=0, n_resamples=19),
    lambda g: es.independence_test(g.normal(size=30), g.normal(size=30), rng=0, n_resamples=19),
    lambda g: es.e_divisive(np.r_[g.normal(size=40), g.normal(3, 1, size=40)], rng=0,
                            n_resamples=19),
])
def test_the_html_holds_the_headline_and_the_table(make):
    res = make(np.random.default_rng(0))
    out = res._repr_html_()
    assert f"<b>{type(res).__name__}</b>" in out
    assert "<table" in out and "</table>" in out
    assert repr(res).split("(")[0] in out
    frame_html = res.to_frame().to_html()
    assert frame_html in out
