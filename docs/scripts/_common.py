"""Shared bits of the figure scripts: arguments, saving, caption fragments."""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:   # run against the in-place build of this checkout
    sys.path.insert(0, str(ROOT))

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def args(doc):
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "generated" / "figures")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (CI docs build)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    return a


def save(fig, out, name):
    """Save a small PNG (about 100 dpi) and close the figure."""
    fig.savefig(out / f"{name}.png", dpi=100, bbox_inches="tight")
    plt.close(fig)


def write_inc(out, name, text):
    """A reST fragment (caption, table) included by the pages."""
    (out / f"{name}.inc").write_text(text.rstrip() + "\n")


def machine():
    import numpy as np

    import energystats

    return (f"energystats {energystats.__version__}, numpy {np.__version__}, Python "
            f"{platform.python_version()}, {platform.machine()}, generated "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def rst_table(df, floatfmt="{:.4g}"):
    """A DataFrame as a reST grid table (``list-table``)."""
    cols = [df.index.name or ""] + [str(c) for c in df.columns]
    lines = [".. list-table::", "   :header-rows: 1", ""]
    lines.append("   * - " + "\n     - ".join(cols))
    for idx, row in df.iterrows():
        cells = [str(idx)] + [("—" if v != v else floatfmt.format(v)) if isinstance(v, float) else str(v)
                              for v in row]
        lines.append("   * - " + "\n     - ".join(cells))
    return "\n".join(lines) + "\n"
