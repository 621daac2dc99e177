"""Command-line interface: ``energystats <command>`` or ``python -m energystats``."""
from __future__ import annotations

import argparse
import itertools
import sys

import pandas as pd

__all__ = ["main"]


def _demo(args):
    from . import dispersion, energy_distance
    from .datasets import load_iris

    df = load_iris()
    features = [c for c in df.columns if c != "species"]
    print("Fisher's iris data: 150 flowers, features", ", ".join(features))
    print(f"metric = 'energy', exponent = {args.exponent}\n")
    rows = []
    for a, b in itertools.combinations(df["species"].cat.categories, 2):
        xa = df.loc[df["species"] == a, features]
        xb = df.loc[df["species"] == b, features]
        e = energy_distance(xa, xb, exponent=args.exponent)
        sub = df[df["species"].isin([a, b])]
        res = dispersion(sub[features], sub["species"].astype(str), exponent=args.exponent)
        n1, n2 = len(xa), len(xb)
        rows.append({"pair": f"{a} vs {b}", "E": e, "edist (R)": n1 * n2 / (n1 + n2) * e,
                     "W": res.W, "S": res.S, "T": res.T, "F": res.F})
    table = pd.DataFrame(rows).set_index("pair")
    with pd.option_context("display.float_format", "{:.6g}".format, "display.width", 120):
        print("Energy distance and dispersion per pair of species")
        print(table.to_string())
        res = dispersion(df, by="species", exponent=args.exponent)
        print("\nDispersion of the three species (W + S = T)")
        print(res.to_frame().to_string())
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="energystats",
        description="Energy statistics: distances, dispersion, tests and clustering.",
    )
    sub = parser.add_subparsers(dest="command", metavar="command")
    demo = sub.add_parser(
        "demo", help="energy distances and W/S/T on the bundled iris data",
        description="Energy distance and the W/S/T/F dispersion table on Fisher's iris data.",
        epilog="example: energystats demo --exponent 1",
    )
    demo.add_argument("--exponent", type=float, default=1.0, help="exponent of the energy metric, in (0, 2]")
    demo.set_defaults(func=_demo)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (ValueError, TypeError, KeyError) as exc:
        print(f"energystats {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
