#!/usr/bin/env bash
# Install the peers used by benchmarks/bench_tests.py (optional helper).
#   R and the `energy` package from Debian/Ubuntu packages, and the Python
#   peers dcor and hyppo.  Run as root (or with sudo) on a Debian-like system.
set -euo pipefail
if command -v apt-get >/dev/null 2>&1; then
    apt-get update
    apt-get install -y --no-install-recommends r-base-core r-cran-energy
else
    echo "apt-get not found: install R and the CRAN package 'energy' by hand" >&2
fi
python -m pip install "dcor>=0.6" "hyppo>=0.4"
Rscript -e 'library(energy); cat("R energy", as.character(packageVersion("energy")), "\n")'
