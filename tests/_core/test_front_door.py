"""The front door names everything: every public function and estimator (the registry of
entry points) and every command of the command-line tool is named in README.md, in the quick
start's overview, on the index page and on the API page; and every option that a command's
``--help`` mentions is an option of that command."""
import re
import sys
from pathlib import Path

import pytest

from .registry import public_entry_points

ROOT = Path(__file__).resolve().parents[2]


def _commands():
    from energystats.cli import build_parser

    return dict(build_parser()._subparsers._group_actions[0].choices)


def _quickstart_overview():
    text = (ROOT / "docs" / "quickstart.rst").read_text()
    start = text.index("Overview\n--------")
    end = text.index("\n---", start + 20)
    return text[start:end]


def _api_page(tmp_path):
    sys.path.insert(0, str(ROOT / "docs" / "scripts"))
    try:
        import generate
    finally:
        sys.path.pop(0)
    generate.write_api_listing(tmp_path)
    return (ROOT / "docs" / "api.rst").read_text() + (tmp_path / "api_listing.inc").read_text()


def _pages(tmp_path):
    return {"README.md": (ROOT / "README.md").read_text(),
            "the quick start's overview": _quickstart_overview(),
            "docs/index.rst": (ROOT / "docs" / "index.rst").read_text(),
            "docs/api.rst": _api_page(tmp_path)}


def _named(text, name):
    """``name`` as a word of ``text`` (not a part of a longer name)."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text) is not None


@pytest.mark.skipif(not (ROOT / "docs" / "scripts" / "generate.py").exists(),
                    reason="the documentation sources are not in this tree (an installed wheel)")
def test_every_public_name_and_command_is_named_on_every_front_page(tmp_path):
    pages = _pages(tmp_path)
    names = sorted(public_entry_points())
    commands = sorted(_commands())
    missing = {page: [n for n in names + commands if not _named(text, n)]
               for page, text in pages.items()}
    missing = {page: m for page, m in missing.items() if m}
    assert not missing, f"not named: {missing}"


def _mentioned_options(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))


def _options(parser):
    return {s for a in parser._actions for s in a.option_strings}


def test_every_option_a_help_text_mentions_exists(monkeypatch):
    """Was: balance, changepoint and cluster said the default was 'every column except
    --by', an option they do not have."""
    from energystats.cli import build_parser

    monkeypatch.setenv("COLUMNS", "2000")     # no option name cut by a line break

    top = build_parser()
    bad = {}
    for name, sub in _commands().items():
        wrong = _mentioned_options(sub.format_help()) - _options(sub) - _options(top)
        if wrong:
            bad[name] = sorted(wrong)
    assert not bad, f"--help mentions options the command does not have: {bad}"


def _calls():
    import numpy as np
    import pandas as pd

    import energystats as es

    df = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 7, "s": ["x"] * 40})
    return [("e_divisive", lambda: es.e_divisive(df, n_resamples=9, rng=0)),
            ("energy_distance", lambda: es.energy_distance(df, df)),
            ("distance_correlation", lambda: es.distance_correlation(df, df)),
            ("normality_test", lambda: es.normality_test(df, n_resamples=9, rng=0)),
            ("e_agglo", lambda: es.e_agglo(df)),
            ("pairwise", lambda: es.pairwise(df))]


@pytest.mark.parametrize("i", range(6))
def test_a_suggestion_names_only_arguments_the_function_has(i):
    """Was: '(e.g. `columns=[...]`, or `numeric_only=True` where offered)' for functions that
    take neither."""
    import inspect

    import energystats as es

    name, call = _calls()[i]
    with pytest.raises(TypeError, match="non-numeric column") as info:
        call()
    msg = str(info.value)
    params = inspect.signature(getattr(es, name)).parameters
    suggested = re.findall(r"`(\w+)`(?= or | of )", msg)
    assert all(p in params for p in suggested), (name, msg)
    assert "where offered" not in msg
    if not suggested:
        assert f"`{name}` takes numeric columns only" in msg, msg
