#!/usr/bin/env bash
# Build the documentation with warnings as errors, then run the pages' doctests.
#
#   docs/build.sh            quick figures (CI: a few minutes)
#   docs/build.sh --full     full Monte Carlo repetitions for the figures
#
# Needs the package built in place (python setup.py build_ext --inplace) or
# installed, plus the `docs` extra (sphinx, numpydoc, matplotlib) and the
# peers used by the pages (dcor, scipy, scikit-learn: the `test` extra).
set -euo pipefail
cd "$(dirname "$0")/.."
export ENERGYSTATS_DOCS_QUICK=1
if [[ "${1:-}" == "--full" ]]; then export ENERGYSTATS_DOCS_QUICK=0; fi
export MPLBACKEND=Agg
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
start=$(date +%s)
python -m sphinx -W --keep-going -b html docs docs/_build/html
# Offline: no page loads a script, style sheet or font from another host (MathJax
# is served from _static/mathjax; docs/conf.py).
if grep -rl "https://cdn" docs/_build/html \
   || grep -rlE --include='*.html' '<(script|link)[^>]*(src|href)="(https?:)?//' docs/_build/html; then
  echo "docs/build.sh: the pages above load files from another host" >&2
  exit 1
fi
python -m pytest docs --doctest-glob='*.rst' -q -p no:cacheprovider
echo "docs built in $(( $(date +%s) - start )) s: docs/_build/html/index.html"
