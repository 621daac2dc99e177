"""Start-up time of the command-line tool and of ``import energystats``.

Times, as a user's shell would see them (a new process each run, wall clock):
``energystats --help``, a small ``energystats test`` (60 rows, 99 permutations),
``python -c "import energystats"`` and, for scale, ``python -c "pass"`` and
``python -c "import pandas"``.  Prints the median and the range of ``--repeats``
runs, and whether scikit-learn / pandas were imported.

    python benchmarks/bench_cli.py --repeats 15
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd, env, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=11)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "small.csv"
        lines = ["x,y,group"] + [f"{(i * 37) % 17 / 7:.4f},{(i * 11) % 13 / 5:.4f},{'abc'[i % 3]}"
                                 for i in range(60)]
        data.write_text("\n".join(lines) + "\n")
        cases = [
            ("python -c pass", [py, "-c", "pass"]),
            ("python -c 'import pandas'", [py, "-c", "import pandas"]),
            ("python -c 'import energystats'", [py, "-c", "import energystats"]),
            ("energystats --help", [py, "-m", "energystats", "--help"]),
            ("energystats test small.csv (60 rows, R = 99)",
             [py, "-m", "energystats", "test", str(data), "--by", "group", "-R", "99", "--seed", "1"]),
        ]
        print(f"{'command':<48} {'median [s]':>11} {'min [s]':>9} {'max [s]':>9}")
        for name, cmd in cases:
            t = timed(cmd, env, args.repeats)
            print(f"{name:<48} {statistics.median(t):>11.3f} {min(t):>9.3f} {max(t):>9.3f}")
        probe = ("import sys, energystats; print('sklearn' in sys.modules, 'pandas' in sys.modules)")
        out = subprocess.run([py, "-c", probe], env=env, capture_output=True, text=True).stdout.split()
        print(f"\nafter `import energystats`: scikit-learn imported: {out[0]}, pandas imported: {out[1]}")
        print(f"python {sys.version.split()[0]}, {args.repeats} runs each")


if __name__ == "__main__":
    main()
