"""The command ``balance``: energy balancing weights (or independence weights for a continuous
treatment) of one file's rows, the balance table before and after, and the weights written
with ``--out``.
"""
from __future__ import annotations

import os
import time

from .._core._errors import CLIError
from ._common import _draw_seed, _load, _note, _print_json, _read, _record, _speak

BUDGET = 2**30  # the library's default memory_budget, which the command passes on


def _level(levels, text, option="--focal"):
    """The treatment level written ``text`` on the command line (levels are read as numbers
    or text: compared by their printed form)."""
    from .._core._validation import short_list

    match = [g for g in levels if str(g) == text]
    if not match:
        raise CLIError(f"option {option}: {text!r} is not a level of the treatment; the levels are "
                       f"{short_list([str(g) for g in levels])}.")
    return match[0]


def _check_options(args):
    """The option combinations that are refused before the file is read."""
    import numpy as np

    from ._io import split_names

    if not (args.lam >= 0 and np.isfinite(args.lam)):
        raise CLIError(f"option --lam: must be a finite number >= 0; got {args.lam:g}.")
    named = split_names(args.columns) or []
    for c, opt in ((args.treatment, "--treatment"), (args.outcome, "--outcome"),
                   (args.base_weights, "--base-weights")):
        if c and c in named:
            raise CLIError(f"options --columns and {opt}: column {c!r} in both.")
    if args.outcome and args.outcome in (args.treatment, args.base_weights):
        raise CLIError(f"option --outcome: column {args.outcome!r} is also the treatment or the "
                       "base weights.")
    if args.continuous and (args.estimand != "ATE" or args.focal is not None):
        raise CLIError("options --estimand/--focal: a continuous treatment (--continuous) has "
                       "independence weights, no estimand or focal level.")
    if args.continuous and (args.moments is not None or args.quantiles is not None):
        raise CLIError("options --moments/--quantiles: are exact constraints of the energy "
                       "balancing weights (a categorical treatment), not of --continuous.")
    if args.continuous and args.solver == "firstorder":
        raise CLIError("option --solver firstorder: solves the energy balancing weights (a "
                       "categorical treatment); --continuous takes osqp or clarabel.")
    if args.no_dimension_adj and not args.continuous:
        raise CLIError("option --no-dimension-adj: is for a continuous treatment (--continuous), "
                       "whose independence weights have the dimension adjustment.")
    resampled = args.outcome is not None and _effect_is_random(args)
    if args.seed is not None and args.cells is None and not resampled:
        raise CLIError("option --seed: seeds the k-means of --cells and the resamples of "
                       "--outcome (--se subsample or bootstrap); without either the weights "
                       "involve no randomness.")
    if args.outcome is None:
        for opt, given in (("--se", args.se != "auto"), ("--n-boot", args.n_boot != 200),
                           ("--outcome-model", args.outcome_model != "auto"),
                           ("--ci-method", args.ci_method != "normal"),
                           ("--adjust", args.adjust), ("--reference", args.reference is not None),
                           ("--confidence", args.confidence != 0.95)):
            if given:
                raise CLIError(f"option {opt}: is for the effect on --outcome, which was not "
                               "given.")
    if not (0 < args.confidence < 1):
        raise CLIError(f"option --confidence: must be strictly between 0 and 1; got "
                       f"{args.confidence:g}.")


def _covariates(args, path):
    """``(df, cols)``: the file's rows and the covariate columns (every numeric column but the
    treatment, base weights, outcome and --exclude when --columns is not given)."""
    from .._core._validation import short_list

    extra = [c for c in (args.treatment, args.base_weights, args.outcome) if c]
    full = _read(args, path)
    for c, opt in ((args.treatment, "--treatment"), (args.base_weights, "--base-weights"),
                   (args.outcome, "--outcome")):
        if c and c not in full.columns:
            raise CLIError(f"{path}: no column {c!r} (option {opt}); the file has "
                           f"{short_list(full.columns)}.")
    if not args.columns and not args.outcome and not args.exclude:
        from ._io import numeric_columns

        others = numeric_columns(full, None, exclude=tuple(extra), numeric_only=True, path=path)[0]
        raise CLIError(f"name the covariates: --columns COLS, or --outcome COLUMN (left out of "
                       f"the covariates, with the effect estimated), or --exclude COLS. Without "
                       f"one of them every other numeric column would be balanced "
                       f"({short_list(others, 5)}), an outcome column too, which biases the "
                       f"effect.")
    if args.out and args.weight_column in full.columns:
        raise CLIError(f"option --weight-column: {path} already has a column {args.weight_column!r}; "
                       "choose another name.")
    roles = f"treatment: column {args.treatment!r} (--treatment)"
    if args.base_weights:
        roles += f"; base weights: column {args.base_weights!r} (--base-weights)"
    if args.outcome:
        roles += f"; outcome: column {args.outcome!r} (--outcome, not a covariate)"
    df, cols = _load(args, path, by=tuple(extra), by_note=roles)
    cols = [c for c in cols if c not in extra]
    if not cols:
        raise CLIError(f"{path}: no covariate columns left besides --treatment/--base-weights/"
                       "--outcome.")
    _speak(args, "X", cols)
    _speak(args, "treatment", [args.treatment], {args.treatment: "--treatment"})
    if args.base_weights:
        _speak(args, "base_weights", [args.base_weights], {args.base_weights: "--base-weights"})
    if args.outcome:
        _speak(args, "outcome", [args.outcome], {args.outcome: "--outcome"})
    return df, cols


def _weights(args, X, t, s):
    """The weights' result (energy balancing or independence weights)."""
    import pandas as pd

    from .. import energy_balancing_weights, independence_weights

    std = None if args.standardize == "none" else args.standardize
    solver = "osqp" if args.continuous and args.solver == "auto" else args.solver
    opts = dict(base_weights=s, lam=args.lam, standardize=std, solver=solver)
    if args.cells is not None:
        opts.update(cells=args.cells, rng=args.seed_used)
    if args.continuous:
        return independence_weights(X, t, dimension_adj=not args.no_dimension_adj, **opts)
    focal = None if args.focal is None else _level(sorted(pd.unique(t).tolist(), key=str), args.focal)
    extra = {}
    if args.moments is not None:
        extra["moments"] = args.moments
    if args.quantiles is not None:
        extra["quantiles"] = args.quantiles
    return energy_balancing_weights(X, t, estimand=args.estimand, focal=focal,
                                    improved=not args.no_improved, **extra, **opts)


def _effect_is_random(args):
    """Whether the effect draws random numbers: the kernel model's folds (the default for a
    categorical treatment) or resamples (--se subsample/bootstrap, or auto without the kernel
    model, which resolves to subsample)."""
    kernel = (args.outcome_model in ("auto", "kernel") and not args.continuous
              and not args.adjust)
    se = args.se if args.se != "auto" else ("influence" if kernel else "subsample")
    return kernel or se in ("subsample", "bootstrap")


def _effect(args, df, res):
    """The effect on --outcome, with its standard error and interval, or None."""
    import pandas as pd

    from .. import weighted_effect

    if not args.outcome:
        return None
    reference = None
    if args.reference is not None:
        if args.continuous:
            raise CLIError("option --reference: is for a categorical treatment.")
        reference = _level(res.groups, args.reference, "--reference")
    se = None if args.se == "none" else args.se
    model = {"none": None}.get(args.outcome_model, args.outcome_model)
    if args.adjust:
        if args.outcome_model not in ("auto", "linear"):
            raise CLIError(f"option --adjust: is --outcome-model linear; got --outcome-model "
                           f"{args.outcome_model} too.")
        model = "linear"
    t0 = time.perf_counter()
    try:
        eff = weighted_effect(df[args.outcome].to_numpy(), res, outcome_model=model,
                              reference=reference, se=se, n_boot=args.n_boot,
                              confidence=args.confidence, ci_method=args.ci_method,
                              rng=args.seed_used if _effect_is_random(args) else None,
                              progress=not args.quiet)
    except ValueError as exc:     # an option that does not fit the outcome model, or the data
        raise CLIError(f"the effect on --outcome {args.outcome!r}: {exc}") from None
    se = eff.se_method
    if eff.n_folds:
        _note(args, f"augmented estimate: outcome model {eff.outcome_model!r} cross-fitted on "
                    f"{eff.n_folds} folds (seed {eff.seed}; pass --seed {eff.seed} to repeat); "
                    "bias bound " + ", ".join(f"{b:.4g}" for b in eff.bias_bound)
                    + "; the augmentation moved the weighted difference by "
                    + ", ".join(f"{s_:+.1%}" for s_ in eff.augmentation_share))
    if se in ("subsample", "bootstrap"):
        _note(args, f"{'half-samples' if se == 'subsample' else 'bootstrap'} of the effect: "
                    f"{args.n_boot} resamples, the weights solved again "
                    f"on each (seed {eff.seed}; pass --seed {eff.seed} to repeat), in "
                    f"{time.perf_counter() - t0:.2f} s"
                    + (f"; {eff.n_failed} failed and left out" if eff.n_failed else ""))
    del pd
    return eff


def _cmd_balance(args):
    import pandas as pd

    from .. import balance_table
    from ._io import check_out_path, emit

    path = args.file
    if args.out:
        check_out_path(args.out, inputs=[path])
    _check_options(args)
    df, cols = _covariates(args, path)
    X, t = df[cols], df[args.treatment].to_numpy()
    s = None if not args.base_weights else df[args.base_weights].to_numpy()
    resampled = args.outcome is not None and _effect_is_random(args)
    args.seed_used = _draw_seed(args) if (args.cells is not None or resampled) else None
    t0 = time.perf_counter()
    try:
        res = _weights(args, X, t, s)
    except (ImportError, RuntimeError) as exc:  # the solver missing, or stopped short
        raise CLIError(f"option --solver {args.solver}: {exc}") from None
    except MemoryError:
        return _out_of_memory(args, len(t), len(pd.unique(t)))
    cells = ("" if res.cells is None else
             f", on {res.cells} k-means cells (seed {res.seed}; pass --seed {res.seed} to repeat)")
    _note(args, f"{'independence' if args.continuous else 'energy balancing'} weights of {len(t)} rows "
                f"({res.solver}, KKT residual {res.kkt_residual:.1e}{cells}) in "
                f"{time.perf_counter() - t0:.2f} s")
    try:
        bt = balance_table(X, t, res.weights, base_weights=s, warn=False,
                           treatment_kind="continuous" if args.continuous else "categorical",
                           standardize=None if args.standardize == "none" else args.standardize,
                           **({} if args.continuous else {"estimand": res.estimand,
                                                          "focal": res.focal}))
    except MemoryError:
        return _out_of_memory(args, len(t), len(pd.unique(t)))
    if bt.issues:   # the library's warning, without its advice in Python words
        from .._core._validation import warn
        from ..balance import BalanceWarning

        warn("balance after weighting: " + "; ".join(bt.issues) + ".", BalanceWarning)
    eff = _effect(args, df, res)
    if args.out:
        _write_weights(args, path, df, res.weights)
    if args.format == "json":
        _print_json(_json(args, path, cols, t, res, bt, eff))
        return 0
    emit(_sections(args, cols, res, bt, eff), args.format)
    return 0


def _json(args, path, cols, t, res, bt, eff):
    overall = "distance correlation" if args.continuous else "energy distance"
    obj = {"command": "balance", "file": path, "treatment": args.treatment,
           "columns": [str(c) for c in cols], "n": int(len(t)),
           "weights": _record(res, drop=("weights", "index", "cell_labels", "inputs", "data", "formula")),
           "balance": {"table": bt.table.reset_index().to_dict(orient="records"),
                       "overall": overall, "before": bt.energy_before,
                       "after": bt.energy_after,
                       "ess": bt.ess.reset_index().to_dict(orient="records")},
           "out": args.out}
    if eff is not None:
        obj["outcome"] = args.outcome
        obj["effect"] = {**_record(eff, drop=("boot", "means", "fold")),
                         "table": eff.to_frame().reset_index().to_dict(orient="records")}
    return obj


def _sections(args, cols, res, bt, eff):
    """The text/csv output's tables."""
    import pandas as pd

    overall = "distance correlation" if args.continuous else "energy distance"
    what = (f"independence weights (Huling, Greifer & Chen 2023), treatment {args.treatment!r}"
            if args.continuous else
            f"energy balancing weights (Huling & Mak 2024), estimand {res.estimand}"
            + (f", focal level {res.focal!r}" if res.focal is not None else "")
            + ("" if res.improved or res.estimand != "ATE" else ", not improved"))
    sections = [("covariates balanced", pd.DataFrame({"column": [str(c) for c in cols]},
                                                     index=pd.RangeIndex(1, len(cols) + 1))),
                (f"balance before and after {what}", bt.table),
                (f"overall: weighted {overall} of the standardised covariates",
                 pd.DataFrame([{"before": bt.energy_before, "after": bt.energy_after}],
                              index=pd.Index([overall], name="statistic"))),
                ("effective sample size (sum w)^2 / sum w^2", bt.ess)]
    if eff is not None:
        how = {"subsample": f"half-samples that solve the weights again ({eff.n_boot}, seed "
                            f"{eff.seed})",
               "bootstrap": f"bootstrap that solves the weights again ({eff.n_boot} resamples, "
                            f"seed {eff.seed})",
               "sandwich": "HC0 sandwich, the weights held fixed",
               "influence": f"influence function of the augmented estimator ({eff.outcome_model} "
                            f"outcome model, {eff.n_folds} folds, seed {eff.seed})",
               None: "none"}[eff.se_method]
        sections.append((f"effect on {args.outcome!r} ({eff.estimand}"
                         + (", regression-adjusted" if args.adjust else "")
                         + f"); standard error: {how}"
                         + (f"; {eff.confidence:.0%} {eff.ci_method} interval"
                            if eff.ci_method else ""), eff.to_frame()))
    return sections


def _out_of_memory(args, n, levels):
    """The balance advice for a MemoryError (the library's budget refusal or a failed
    allocation), on stderr; exit status 4.  Called inside the ``except`` block."""
    if args.debug:
        raise  # noqa: PLE0704 - re-raises the MemoryError being handled
    import sys

    from .._core._errors import EXIT_MEMORY
    from .._core._memory import format_bytes

    from ..balance._forms import peak_matrices

    k = peak_matrices("independence" if args.continuous else "balancing", args.solver)
    units = n if args.cells is None else min(n, args.cells * (1 if args.continuous else levels))
    need = 8.0 * units * units * k
    what = "independence" if args.continuous else "energy balancing"
    over = need > BUDGET
    if args.cells is None:
        msg = (f"out of memory: {what} weights of {n} rows need about {k} {n}×{n} float64 "
               f"matrices at their peak, about {format_bytes(need)} (the quadratic programme has "
               "one variable per row), "
               + (f"above the memory budget of {format_bytes(BUDGET)} that this command uses"
                  if over else "more than this machine could allocate")
               + ". Pass --cells K (for instance --cells 1000) to solve it on K k-means cells per "
                 "treatment level, with weights constant within a cell.")
    else:
        msg = (f"out of memory: {what} weights on --cells {args.cells} need about {k} float64 "
               f"matrices of up to {units}×{units} (cells), about {format_bytes(need)}, "
               + (f"above the memory budget of {format_bytes(BUDGET)} that this command uses"
                  if over else "more than this machine could allocate")
               + ". Pass a smaller --cells.")
    print(f"energystats balance: error: {msg}", file=sys.stderr, flush=True)  # as main's errors
    return EXIT_MEMORY


def _write_weights(args, path, df, weights):
    """The input rows with a weight column appended; text files keep every field as written."""
    import pandas as pd

    from ._io import input_kind, read_text_fields, write_data

    col = args.weight_column
    in_kind = input_kind(path, args.input_format)
    out_kind = os.path.splitext(args.out)[1].lower()
    w = pd.Series(weights, index=df.index)
    if in_kind in ("csv", "tsv") and out_kind in (".csv", ".tsv", ".tab", ".txt"):
        full = read_text_fields(path, fmt=args.input_format, sep=args.sep, decimal=args.decimal)
        full[col] = w.map(lambda v: repr(float(v))).reindex(full.index).fillna("")  # repr: every digit, read back exactly
    else:
        full = _read(args, path)
        full[col] = w.reindex(full.index)
    write_data(full, args.out)
    _note(args, f"weights written to {args.out} (column {col!r} appended to the input rows"
                + ("; rows dropped by --dropna have an empty weight)" if len(full) > len(df) else ")"))
