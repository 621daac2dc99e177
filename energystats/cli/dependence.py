"""The commands ``dcor`` and ``dcor-matrix``.
"""
from __future__ import annotations

import time

from .._core._errors import CLIError
from ._common import (_draw_seed, _load, _metric_kwargs, _metric_record, _note, _note_run,
    _print_json, _pvalue_kwargs, _speak, _test_verdict)


def _cmd_dcor(args):
    import pandas as pd

    from .. import distance_stats, independence_test
    from ._io import emit, split_names

    met = _metric_kwargs(args)
    if args.resamples < 0:
        raise CLIError(f"option --resamples: must be >= 0; got {args.resamples}.")
    xs, ys = split_names(args.x), split_names(args.y)
    overlap = sorted(set(xs) & set(ys))
    if overlap:
        raise CLIError(f"options --x and --y: column(s) {overlap} in both.")
    if args.columns:
        raise CLIError("option --columns: dcor takes its columns from --x and --y.")
    options = {**{c: "--x" for c in xs}, **{c: "--y" for c in ys}}
    df, cols = _load(args, args.file, columns=xs + ys, option="--x/--y", options=options)
    x, y = df[xs], df[ys]
    _speak(args, "x", xs, options)
    _speak(args, "y", ys, options)
    pkw = _pvalue_kwargs(args)
    if args.affine:
        pkw["affine"] = True
    if (args.projections is None) == (pkw.get("pvalue_method") == "gamma"):
        if args.projections is None:
            raise CLIError("option --pvalue-method gamma: only with --projections K.")
        if pkw.get("pvalue_method") not in (None, "gamma"):
            raise CLIError(f"option --projections: takes --pvalue-method full or gamma; got "
                           f"{args.pvalue_method}.")
    if args.projections is not None:
        return _dcor_projection(args, x, y, xs, ys, met, pkw)
    t0 = time.perf_counter()
    if pkw.get("pvalue_method") == "asymptotic":
        res = independence_test(x, y, **met, **pkw)
        _note_run(args, "chi-square test of independence", res, t0)
        est = res.estimates
    elif args.resamples > 0:
        seed = _draw_seed(args)
        res = independence_test(x, y, n_resamples=args.resamples, rng=seed, **met, **pkw)
        _note_run(args, "independence test", res, t0)
        est = res.estimates
    else:
        res, est = None, distance_stats(x, y, **met, affine=args.affine)
    row = {"x": ", ".join(map(str, xs)), "y": ", ".join(map(str, ys)), "n": est.n_samples,
           "dcor": est.dcor, "dcov": est.dcov, "dcor_u": est.dcor_u, "dcov_u": est.dcov_u,
           "statistic": est.test_statistic}
    title = "statistic: n dCov^2"
    if res is not None:
        row.update(pvalue=res.pvalue, pvalue_se=res.pvalue_se, n_resamples=res.n_resamples,
                   seed=res.seed)
        if res.pvalue_method != "full":
            row["pvalue_method"] = res.pvalue_method
        if res.pvalue_method == "decision":
            row["decision"] = res.decision
        if res.pvalue_method == "asymptotic":
            row["statistic"] = res.statistic
            title = "statistic: n dcor_u, chi-square test"
    if args.format == "json":
        _print_json({"command": "dcor", **row, **_metric_record(met),
                     **({"affine": True} if args.affine else {})})
        return 0
    kind = "affinely invariant distance correlation (x, y whitened)" if args.affine else \
        "distance correlation"
    emit([(f"{kind} (dcor, dcov: V-statistics, roots; dcor_u, dcov_u: bias-corrected, "
           f"squared; {title})",
           pd.DataFrame([row]).set_index(["x", "y"]))], args.format,
         columns=getattr(args, "columns_used", None))
    if res is not None:
        _test_verdict(args, res, "x and y are dependent", "no evidence of dependence between x and y")
    return 0


def _dcor_projection(args, x, y, xs, ys, met, pkw):
    """``dcor --projections K``: the projection test (no O(n²) estimates)."""
    import pandas as pd

    from .. import independence_test
    from ._io import emit

    if args.projections < 1:
        raise CLIError(f"option --projections: must be >= 1; got {args.projections}.")
    if met.get("metric", "energy") != "energy" or float(met.get("exponent", 1.0)) != 1.0:
        raise CLIError("option --projections: needs --metric energy with --exponent 1 (the "
                       "projections' identity holds for the Euclidean distance only).")
    gamma = pkw.get("pvalue_method") == "gamma"
    if not gamma and args.resamples < 1:
        raise CLIError("option --resamples: the projection test's permutations need >= 1 (or "
                       "--pvalue-method gamma).")
    seed = _draw_seed(args)
    t0 = time.perf_counter()
    res = independence_test(x, y, method="projection", n_projections=args.projections,
                            n_resamples=args.resamples, rng=seed, **met, **pkw)
    _note_run(args, "projection test of independence", res, t0)
    row = {"x": ", ".join(map(str, xs)), "y": ", ".join(map(str, ys)), "n": len(x),
           "statistic": res.statistic, "n_projections": res.n_projections, "pvalue": res.pvalue,
           "pvalue_method": res.pvalue_method, "seed": res.seed}
    if not gamma:
        row.update(pvalue_se=res.pvalue_se, n_resamples=res.n_resamples)
    if args.format == "json":
        _print_json({"command": "dcor", "method": "projection", **row, **_metric_record(met)})
        return 0
    emit([("projection test of independence (statistic: n dCov^2 estimated from "
           f"{res.n_projections} pairs of random directions"
           + (", gamma p-value, approximate)" if gamma else ", permutation p-value)"),
           pd.DataFrame([row]).set_index(["x", "y"]))], args.format,
         columns=getattr(args, "columns_used", None))
    _test_verdict(args, res, "x and y are dependent", "no evidence of dependence between x and y")
    return 0


def _cmd_dcor_matrix(args):
    from .. import distance_correlation_matrix
    from ._io import emit

    if not (0.0 < args.exponent <= 2.0):
        raise CLIError(f"option --exponent: must lie in (0, 2]; got {args.exponent:g}.")
    df, cols = _load(args, args.file)
    if len(cols) < 2:
        raise CLIError(f"{args.file}: dcor-matrix needs at least 2 numeric columns; got {cols}.")
    _speak(args, "data", cols)
    adjust = None if args.adjust == "none" else args.adjust
    if args.pvalue_method == "permutation":
        args.pvalues = "permutation"
    elif args.pvalues:
        args.pvalues = "ttest"
    else:
        args.pvalues = None
    if args.resamples is not None and args.resamples < 1:
        raise CLIError(f"option --resamples: must be >= 1; got {args.resamples}.")
    if args.pvalues != "permutation" and (args.resamples is not None or args.seed is not None):
        raise CLIError("options --resamples/--seed: only with --pvalue-method permutation.")
    seed = _draw_seed(args) if args.pvalues == "permutation" else None
    t0 = time.perf_counter()
    res = distance_correlation_matrix(df[cols], exponent=args.exponent, estimator=args.estimator,
                                      pvalue=args.pvalues, adjust=adjust,
                                      n_resamples=args.resamples, rng=seed)
    _note(args, f"distance correlation matrix of {len(cols)} columns in "
                f"{time.perf_counter() - t0:.2f} s"
                + (f" ({res.n_resamples} permutations, seed {res.seed})" if seed is not None else ""))
    if args.format == "json":
        out = {"command": "dcor-matrix", "columns": cols, "estimator": args.estimator,
               "exponent": args.exponent, "dcor": res.dcor.to_numpy().tolist()}
        if args.pvalues:
            out.update(pvalue_method=args.pvalues, adjust=args.adjust,
                       pvalues=res.pvalues.to_numpy().tolist(),
                       adjusted=res.adjusted.to_numpy().tolist())
        if seed is not None:
            out.update(n_resamples=res.n_resamples, exact=res.exact, seed=res.seed)
        _print_json(out)
        return 0
    sections = [("distance correlation" + (" (bias-corrected)" if args.estimator == "U" else ""),
                 res.dcor.rename_axis("column"))]  # named: CSV gets its row labels
    if args.pvalues:
        how = ("t-test" if args.pvalues == "ttest" else
               f"permutation ({res.n_resamples} permutations"
               + (", all of them" if res.exact else f", seed {res.seed}") + ")")
        sections.append((f"{how} p-values, adjusted over the pairs ({args.adjust})",
                         res.adjusted.rename_axis("column")))
    emit(sections, args.format,
         columns=getattr(args, "columns_used", None))
    return 0
