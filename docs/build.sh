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
python -m pytest docs --doctest-glob='*.rst' -q -p no:cacheprovider
echo "docs built in $(( $(date +%s) - start )) s: docs/_build/html/index.html"
