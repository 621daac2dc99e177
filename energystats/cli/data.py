"""The command ``data``: the data sets bundled with the package (:mod:`energystats.datasets`,
files in ``energystats/data/``): list them, show one's path and shape, or write a copy.
"""
from __future__ import annotations

import os
import sys

from .._core._errors import CLIError
from ._common import _note, _print_json


def _bundled():
    """``{name: (path, description)}`` of every data set of :mod:`energystats.datasets` (its
    loader ``load_<name>``, its file ``energystats/data/<name>.csv``), in name order."""
    from importlib import resources

    from .. import datasets

    out = {}
    for loader in sorted(datasets.__all__):
        name = loader[len("load_"):]
        path = resources.files("energystats").joinpath("data", f"{name}.csv")
        doc = (getattr(datasets, loader).__doc__ or "").strip().splitlines()
        out[name] = (str(path), doc[0].rstrip(".") if doc else "")
    return out


def _table(path):
    from ._io import read_table

    return read_table(path)


def _cmd_data(args):
    import pandas as pd

    from ._io import check_out_path, emit, write_data

    sets = _bundled()
    if args.name is None:
        if args.out or args.force:
            raise CLIError(f"option {'--out' if args.out else '--force'}: name the data set to "
                           f"write (one of {', '.join(sets)}).")
        rows = []
        for name, (path, doc) in sets.items():
            df = _table(path)
            rows.append({"name": name, "n_rows": df.shape[0], "n_columns": df.shape[1],
                         "description": doc, "path": path})
        if args.format == "json":
            _print_json({"command": "data", "datasets": rows})
            return 0
        table = pd.DataFrame(rows).set_index("name")
        emit([("the data sets bundled with energystats (energystats data NAME --out FILE "
               "writes a copy)", table)], args.format)
        return 0
    if args.name not in sets:
        raise CLIError(f"no bundled data set {args.name!r}; they are {', '.join(sets)} (energystats "
                       "data lists them).")
    if args.force and not args.out:
        raise CLIError("option --force: only with --out (it allows overwriting that file).")
    path, doc = sets[args.name]
    if args.out:
        check_out_path(args.out)
        if os.path.exists(args.out) and not args.force:
            raise CLIError(f"{args.out} (option --out): the file exists; pass --force to "
                           "overwrite it.")
    df = _table(path)
    record = {"command": "data", "name": args.name, "description": doc, "path": path,
              "n_rows": df.shape[0], "n_columns": df.shape[1], "columns": list(df.columns)}
    if args.out:
        write_data(df, args.out)
        record["out"] = args.out
        _note(args, f"{args.name}: {df.shape[0]} rows, {df.shape[1]} columns written to {args.out}")
    if args.format == "json":
        _print_json(record)
    elif args.format == "csv":
        pd.DataFrame([{**record, "columns": ", ".join(record["columns"])}]).drop(
            columns="command").to_csv(sys.stdout, index=False, lineterminator="\n")
    else:
        print(f"{args.name}: {doc}\npath: {path}\nshape: {df.shape[0]} rows x {df.shape[1]} "
              f"columns ({', '.join(df.columns)})"
              + (f"\nwritten to: {args.out}" if args.out else ""))
    return 0
