"""The command ``cluster``.
"""
from __future__ import annotations

import os
import time

from .._core._errors import CLIError
from ._common import (_columns_option, _draw_seed, _load, _metric_kwargs, _metric_record, _note,
    _print_json, _pvalue_kwargs, _pvalue_text, _read, _record, _speak, _test_verdict, _verdict)


def _cmd_cluster(args):
    import numpy as np
    import pandas as pd

    from ._io import check_out_path, emit

    met = _metric_kwargs(args)
    path = args.file
    if args.out:
        check_out_path(args.out, inputs=[path])
    df, cols = _load(args, path)
    _speak(args, "X", cols, _columns_option(args),
           " (their z-scores, --standardize)" if args.standardize else "")
    if args.out and args.label_column in _read(args, path).columns:
        raise CLIError(f"option --label-column: {path} already has a column {args.label_column!r}; "
                       "choose another name.")
    n = df.shape[0]
    if not (2 <= args.k <= n):
        raise CLIError(f"option -k/--clusters: must be an integer in [2, n_samples={n}] "
                       f"({path}); got {args.k}.")
    if args.n_init < 1:
        raise CLIError(f"option --n-init: must be >= 1; got {args.n_init}.")
    if args.test and args.resamples < 1:
        raise CLIError(f"option --resamples: --test needs at least 1; got {args.resamples}.")
    pkw = _pvalue_kwargs(args)
    if pkw and not args.test:
        raise CLIError(f"option --pvalue-method {args.pvalue_method}: only with --test (the "
                       "significance check is the test that stops early).")
    X, scaling = _cluster_data(args, df[cols], cols)
    seed = _draw_seed(args)
    opts = dict(algorithm=args.algorithm, n_init=args.n_init, **met)
    t0 = time.perf_counter()
    import warnings

    from .. import cluster_test, dispersion, energy_clustering
    from ..clustering import ColumnScaleWarning

    on = " (z-scores of the columns)" if scaling is not None else ""
    with warnings.catch_warnings():
        # _cluster_data has said it, with the command line's advice
        warnings.simplefilter("ignore", ColumnScaleWarning)
        if args.test:
            _note(args, f"clustering {n} rows{on} into k={args.k} ({args.algorithm}, {args.n_init} "
                        f"restarts), then the same on {args.resamples} reference data sets drawn "
                        f"from the {args.null!r} null; seed {seed}")
            tres = cluster_test(X, args.k, null=args.null, n_resamples=args.resamples, rng=seed,
                                random_state=seed, **opts, **pkw)  # progress: main's ambient
            labels = np.asarray(tres.labels)
        else:
            _note(args, f"clustering {n} rows{on} into k={args.k} ({args.algorithm}, {args.n_init} "
                        f"restarts); seed {seed}")
            labels = np.asarray(energy_clustering(X, args.k, rng=seed, **opts).labels)
    _note(args, f"  done in {time.perf_counter() - t0:.2f} s (pass --seed {seed} to repeat)")
    disp = dispersion(X, labels, **met)
    sizes = np.bincount(labels, minlength=args.k)
    stat = disp.S / disp.T if disp.T > 0 else float("nan")
    if args.out:
        _write_labels(args, path, df, labels)
    if args.format == "json":
        obj = {"command": "cluster", "k": args.k, "n": n, "columns": cols, "seed": seed,
               "algorithm": args.algorithm, **_metric_record(met), "standardize": scaling,
               "partition": {"W": disp.W, "S": disp.S, "T": disp.T, "F": disp.F, "statistic": stat},
               "clusters": [{"cluster": c, "size": int(s)} for c, s in enumerate(sizes)],
               "check": None}
        if args.test:
            obj["check"] = {**_record(tres, drop=("null_distribution", "labels", "dispersion",
                                                  "columns")), "alpha": args.alpha}
        _print_json(obj)
        return 0
    summary = {"k": args.k, "n": n, "W": disp.W, "S": disp.S, "T": disp.T, "F": disp.F,
               "statistic": stat, "seed": seed}
    sections = [("fitted partition (W + S = T; statistic = S/T)",
                 pd.DataFrame([summary], index=pd.Index(["fit"], name="partition"))),
                ("clusters", pd.DataFrame({"size": sizes},
                                          index=pd.Index(np.arange(args.k), name="cluster")))]
    if scaling is not None:
        sections.insert(0, ("standardized columns: the clustering and W, S, T use z = (x - mean) / sd "
                            "(sd with divisor n - 1)",
                            pd.DataFrame(scaling, index=pd.Index(cols, name="column"))))
    if args.test:
        check = {"statistic": tres.statistic, "null": args.null, "n_resamples": tres.n_resamples,
                 "pvalue": tres.pvalue, "pvalue_se": tres.pvalue_se}
        if tres.pvalue_method != "full":
            check["pvalue_method"] = tres.pvalue_method
        if tres.pvalue_method == "decision":
            check["decision"] = tres.decision
        sections.append(("significance check: S/T against the same clustering of reference data",
                         pd.DataFrame([check], index=pd.Index(["cluster_test"], name="check"))))
    emit(sections, args.format,
         columns=getattr(args, "columns_used", None))
    if args.test:
        ref = ("a Gaussian with the data's mean and covariance" if args.null == "gaussian"
               else "a uniform box along the data's principal axes")
        what = _pvalue_text(tres.pvalue, tres.pvalue_se)
        if tres.pvalue_method != "full":
            _test_verdict(args, tres, f"more clustered than {ref}",
                          f"no evidence of more cluster structure than {ref}")
        elif tres.pvalue <= args.alpha:
            _verdict(args, f"verdict: more clustered than {ref} ({what} <= alpha = {args.alpha:g}).",
                     tres.pvalue, tres.pvalue_se)
        else:
            _verdict(args, f"verdict: no evidence of more cluster structure than {ref} "
                           f"({what} > alpha = {args.alpha:g}).", tres.pvalue, tres.pvalue_se)
    return 0


def _cluster_data(args, X, cols):
    """``(data, scaling)``: with --standardize the z-scores of the columns and their means and
    sds (divisor n - 1); else the data as read, with a ColumnScaleWarning when the columns'
    standard deviations differ 1000-fold or more."""
    import warnings

    import numpy as np

    from .._core._validation import short_list
    from ..clustering import ColumnScaleWarning, column_scale_message

    if not args.standardize:
        msg = column_scale_message(X.to_numpy(dtype=np.float64), [str(c) for c in cols],
                                   advice="If their units are not comparable, pass --standardize "
                                          "to cluster the columns' z-scores, (x - mean) / sd.",
                                   name=args.file)
        if msg is not None:
            warnings.warn(msg, ColumnScaleWarning)
        return X, None
    X = X.astype(np.float64)
    mean, sd = X.mean(), X.std(ddof=1)
    bad = [c for c in cols if not 0.0 < sd[c] < np.inf]
    if bad:
        raise CLIError(f"option --standardize: column(s) {short_list(bad)} of {args.file} have standard deviation "
                       f"{[float(sd[c]) for c in bad]} and cannot be scaled to 1 (a constant column "
                       "adds nothing to the distances); leave them out with --columns.")
    return (X - mean) / sd, {"mean": {str(c): float(mean[c]) for c in cols},
                             "sd": {str(c): float(sd[c]) for c in cols}}


def _write_labels(args, path, df, labels):
    """The input rows with a label column appended; text files keep every field as written."""
    import pandas as pd

    from ._io import input_kind, read_text_fields, write_data

    col = args.label_column
    in_kind = input_kind(path, args.input_format)
    out_kind = os.path.splitext(args.out)[1].lower()
    if in_kind in ("csv", "tsv") and out_kind in (".csv", ".tsv", ".tab", ".txt"):
        # the fields exactly as they stand in the input (no number is re-formatted)
        full = read_text_fields(path, fmt=args.input_format, sep=args.sep, decimal=args.decimal)
        text = pd.Series([str(v) for v in labels], index=df.index)
        full[col] = text.reindex(full.index).fillna("")
    else:
        full = _read(args, path)
        full[col] = pd.Series(labels, index=df.index).reindex(full.index).astype("Int64")
    write_data(full, args.out)
    _note(args, f"labels written to {args.out} (column {col!r} appended to the input rows"
                + ("; rows dropped by --dropna have an empty label)" if len(full) > len(df) else ")"))


def _adjusted_rand(a, b):
    """Hubert & Arabie's adjusted Rand index of two labelings (1: the same partition, about 0:
    no better than chance), from their contingency table."""
    import numpy as np
    import pandas as pd

    table = pd.crosstab(np.asarray(a), np.asarray(b)).to_numpy().astype(float)

    def pairs(x):
        return float((x * (x - 1) / 2).sum())

    index, rows, cols = pairs(table), pairs(table.sum(1)), pairs(table.sum(0))
    n = pairs(np.array([table.sum()]))
    expected = rows * cols / n
    top = (rows + cols) / 2
    return 1.0 if top == expected else (index - expected) / (top - expected)
