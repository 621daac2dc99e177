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
html_static_path = []
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
mathjax3_config = {"tex": {"macros": {"E": r"\mathcal{E}"}}}


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
    app.connect("builder-inited", _generate)
