"""Sphinx configuration of the energystats documentation.

Figures and tables are generated at build time by the scripts in
``docs/scripts/`` (see ``docs/scripts/generate.py``) into ``docs/generated/``
(git-ignored); nothing generated is committed.  ``ENERGYSTATS_DOCS_QUICK=1``
(the default of ``docs/build.sh``) runs them with fewer Monte Carlo
repetitions, so that the CI build takes a few minutes; the captions state the
repetitions that were used.
"""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))   # the in-place build of the package
sys.path.insert(0, str(HERE / "scripts"))

import energystats  # noqa: E402

project = "energystats"
author = "the energystats developers"
copyright = "2026, the energystats developers"
release = energystats.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "benchmarks"]
html_theme = "alabaster"
html_theme_options = {
    "description": "Energy statistics with a compiled core",
    "fixed_sidebar": True,
    "page_width": "1100px",
    "sidebar_width": "230px",
}
# Only the theme's overrides (custom.css: code blocks use the column's width); the
# figures in docs/_static are copied by the image directives that show them.
html_static_path = ["_static/theme"]
html_title = f"energystats {release}"

autosummary_generate = False   # the stubs are written by scripts/generate.py
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
math_number_all = False
nitpicky = False
suppress_warnings = []
# MathJax 3 is served with the pages, so the formulas render offline and no page
# loads a CDN: the startup loader, TeX input and CommonHTML output, copied into
# _static/mathjax by _copy_mathjax below from the package sphinx-mathjax-offline
# (the `docs` extra), which ships MathJax 3.2.2.
mathjax_path = "mathjax/startup.js"
mathjax3_config = {
    "loader": {"load": ["input/tex", "output/chtml"]},
    "tex": {"macros": {"E": r"\mathcal{E}"}},
}
#: What the pages load from MathJax: the loader and core, TeX input (its extensions
#: load on demand) and CommonHTML output with its fonts.  Not copied: the combined
#: components, the contextual menu and the speech engine, whose code names CDN
#: addresses (for Internet Explorer and the speech rules).
MATHJAX_FILES = ["startup.js", "core.js", "input/tex.js", "input/tex-base.js", "input/tex/extensions",
                 "output/chtml.js", "output/chtml/fonts/tex.js", "output/chtml/fonts/woff-v2"]


def _mathjax_source():
    import importlib.util

    spec = importlib.util.find_spec("sphinx-mathjax-offline")   # its import name has hyphens
    if spec is None or spec.origin is None:
        raise ImportError("the documentation serves MathJax from the package sphinx-mathjax-offline: "
                          "python -m pip install -e \".[docs]\"")
    return Path(spec.origin).parent / "static" / "mathjax"


def _copy_mathjax(app, exc):
    """Copy the MathJax files the pages load into ``_static/mathjax``."""
    import shutil

    if exc is not None or app.builder.format != "html":
        return
    src, dst = _mathjax_source(), Path(app.outdir) / "_static" / "mathjax"
    for name in MATHJAX_FILES:
        (dst / name).parent.mkdir(parents=True, exist_ok=True)
        if (src / name).is_dir():
            shutil.copytree(src / name, dst / name, dirs_exist_ok=True)
        else:
            shutil.copy2(src / name, dst / name)


def _generate(app):
    """Write the API listing and the CLI help, and run the figure scripts."""
    import generate  # docs/scripts/generate.py

    quick = os.environ.get("ENERGYSTATS_DOCS_QUICK", "1") not in ("", "0")
    only = os.environ.get("ENERGYSTATS_DOCS_ONLY")
    generate.write_api_listing(HERE / "generated")
    generate.write_cli_help(HERE / "generated")
    generate.write_benchmark_listing(HERE / "generated")
    failures = generate.run_scripts(HERE / "generated" / "figures", quick=quick,
                                    only=only.split(",") if only else None)
    from sphinx.util import logging

    log = logging.getLogger(__name__)
    for name, msg in failures:
        log.warning("figure script %s failed: %s", name, msg)


def setup(app):
    _mathjax_source()   # fail at once, not after the build, when MathJax is missing
    app.connect("builder-inited", _generate)
    app.connect("build-finished", _copy_mathjax)
