"""The argument parser of every command (:func:`build_parser`): only the standard library, so
``--help`` answers at once.
"""
from __future__ import annotations

import argparse
import textwrap

from ._common import FORMATS, INPUT_FORMATS, _int_at_least, _level, _one_char, _seed
from .balance import _cmd_balance
from .changepoint import _cmd_changepoint
from .clustering import _cmd_cluster
from .conditional import _cmd_conditional
from .data import _cmd_data
from .demo import _cmd_demo
from .dependence import _cmd_dcor, _cmd_dcor_matrix
from .goodness_of_fit import _cmd_gof, _param_value
from .homogeneity import _cmd_disco, _cmd_distance, _cmd_test
from .lagged import _cmd_lagged
from .screening import _cmd_screen

__all__ = ["build_parser"]


# -- parser --------------------------------------------------------------------

_EXIT_CODES = ("exit status: 0 success; 2 bad usage or bad data; 3 output could not be written "
               "(closed pipe or stdout, full disk, permission); 4 out of memory; 130 interrupted")


def _common_parent():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("output")
    g.add_argument("--format", choices=FORMATS, default="text",
                   help="table format on stdout (default: text); json: one object whose keys "
                        "are the result's fields")
    g.add_argument("--quiet", "-q", action="store_true", help="no notes or progress on stderr")
    g.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    return p


def _data_parent():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("data")
    g.add_argument("--columns", "-c", action="append", metavar="COLS",
                   help="columns to use, comma-separated or repeated (default: every numeric "
                        "column the command does not use otherwise; a non-numeric one is an "
                        "error unless --numeric-only)")
    g.add_argument("--exclude", "-x", action="append", metavar="COLS",
                   help="columns to leave out of those used, comma-separated or repeated")
    g.add_argument("--numeric-only", action="store_true",
                   help="leave out wholly non-numeric columns (text, dates) instead of failing; "
                        "they are listed on stderr")
    g.add_argument("--dropna", action="store_true",
                   help="drop rows with missing values in the used columns instead of failing")
    g.add_argument("--input-format", choices=INPUT_FORMATS, default=None,
                   help="file format when the suffix does not say (default: from the suffix)")
    g.add_argument("--sep", type=_one_char, default=None,
                   help="field separator of text files (default: ',' for .csv, tab for .tsv)")
    g.add_argument("--decimal", type=_one_char, default=None,
                   help="decimal mark of text files (default: '.'; ',' for 1,5)")
    return p


#: --metric: the package's metrics and SciPy's names (energystats._core._metrics.SCIPY_NAMES;
#: the refused ones need --no-check-negative-type)
METRIC_CHOICES = ("energy", "laplacian", "gaussian", "euclidean", "sqeuclidean", "cityblock",
                  "hamming", "canberra", "chebyshev", "cosine", "correlation", "braycurtis")


#: SciPy's names that take a parameter, written --metric NAME:KEY=VALUE (parsed by
#: energystats.cli._common._metric_kwargs into the library's pair metric=(NAME, {KEY: VALUE}))
METRIC_PARAMS = ("minkowski", "seuclidean", "mahalanobis")


def _metric_value(text):
    """--metric: one of the names (what follows a ':' is read by ``_metric_kwargs``, which
    says in one line what is wrong with it)."""
    name = text.partition(":")[0]
    if name not in METRIC_CHOICES + METRIC_PARAMS:
        choices = ", ".join(repr(c) for c in METRIC_CHOICES + METRIC_PARAMS)
        raise argparse.ArgumentTypeError(f"invalid choice: {name!r} (choose from {choices})")
    return text


def _probabilities(text):
    """--quantiles: comma-separated probabilities strictly between 0 and 1."""
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be probabilities such as 0.25,0.5; got {text!r}") \
            from None
    if not vals or not all(0 < v < 1 for v in vals):
        raise argparse.ArgumentTypeError(f"must be probabilities strictly between 0 and 1; got "
                                         f"{text!r}")
    return vals


def _add_exact_constraint_args(p):
    g = p.add_argument_group("exact constraints (categorical treatment)")
    g.add_argument("--moments", type=_int_at_least(1), default=None, metavar="K",
                   help="balance the weighted means of each covariate's powers 1..K exactly "
                        "(R WeightIt's moments)")
    g.add_argument("--quantiles", type=_probabilities, default=None, metavar="Q",
                   help="balance these quantiles of every covariate exactly, e.g. 0.25,0.5,0.75 "
                        "(R WeightIt's quantile)")


def _add_effect_args(p):
    g = p.add_argument_group("effect (with --outcome)")
    g.add_argument("--outcome", "-y", metavar="COLUMN",
                   help="outcome column: left out of the covariates, and the effect of the "
                        "treatment on it is estimated with its standard error and interval")
    g.add_argument("--outcome-model", choices=("auto", "kernel", "linear", "none"), default="auto",
                   help="outcome model of the effect: kernel (the default for a categorical "
                        "treatment: the augmented estimator with a cross-fitted kernel ridge "
                        "regression), linear (weighted least squares on the covariates), none "
                        "(the difference of weighted means; the default for --continuous)")
    g.add_argument("--se", choices=("auto", "influence", "subsample", "bootstrap", "sandwich", "none"),
                   default="auto",
                   help="standard error of the effect: auto (default: influence with an outcome "
                        "model fitted by cross-fitting, else subsample), influence (the augmented "
                        "estimator's influence function), subsample (half-samples of each level, "
                        "the weights solved again and the model refitted on each), bootstrap (the "
                        "same with replacement: too narrow for these weights, kept for "
                        "comparison), sandwich (HC0, the weights held fixed; none/linear) or none")
    g.add_argument("--ci-method", choices=("normal", "bias-aware", "percentile"), default="normal",
                   help="interval: normal (default), bias-aware (widened by the bound on the "
                        "bias that the remaining imbalance allows; kernel model), percentile "
                        "(resampled standard errors)")
    g.add_argument("--n-boot", type=_int_at_least(20), default=200, metavar="B",
                   help="resamples (default: 200)")
    g.add_argument("--confidence", type=float, default=0.95,
                   help="level of the interval (default: 0.95)")
    g.add_argument("--adjust", action="store_true",
                   help="the same as --outcome-model linear (kept for older command lines)")
    g.add_argument("--reference", metavar="LEVEL",
                   help="the level subtracted in each contrast (default: the first level)")


def _metric_parent():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("semimetric")
    g.add_argument("--metric", type=_metric_value, default="energy", metavar="METRIC",
                   help="semimetric rho: energy (default, |x-y|^exponent), laplacian, gaussian, or "
                        "SciPy's names of a metric of negative type: euclidean, sqeuclidean, "
                        "cityblock, hamming, canberra, chebyshev (at most 2 columns), and with "
                        "their parameter as NAME:KEY=VALUE minkowski:p=P (1 <= P <= 2; P > 2 at "
                        "most 2 columns), seuclidean:V=v1;v2;... (one variance per column), "
                        "mahalanobis:VI=... (the inverse covariance, row by row, ';' between "
                        "values; quote the ';'); cosine, correlation, braycurtis (and chebyshev "
                        "in 3 or more columns) are refused with the reason unless "
                        "--no-check-negative-type")
    g.add_argument("--exponent", type=float, default=1.0,
                   help="exponent of the energy metric, in (0, 2] (default: 1)")
    g.add_argument("--sigma", type=float, default=1.0,
                   help="scale of the laplacian/gaussian metrics, > 0 (default: 1)")
    g.add_argument("--no-check-negative-type", action="store_true",
                   help="accept a SciPy metric name that is refused because it is not of negative "
                        "type (the statistics are then not valid; the library's "
                        "check_negative_type=False)")
    return p


_FMT = argparse.RawDescriptionHelpFormatter


def _wrap(text):
    """Descriptions are wrapped here; epilogs (examples) stay as written."""
    return textwrap.fill(" ".join(text.split()), width=79)


def _add_inference_args(p, resamples, what):
    """--resamples, --seed and --alpha, shared by test, disco and cluster."""
    p.add_argument("--resamples", "-R", type=int, default=resamples,
                   help=f"{what} (default: {resamples})")
    p.add_argument("--seed", type=_seed, default=None,
                   help="random seed, an integer >= 0 (default: a fresh one, printed on stderr "
                        "and in the output so that the run can be repeated)")
    p.add_argument("--alpha", type=_level, default=0.05, help="level of the verdict line (default: 0.05)")


def _add_pvalue_method_args(p, asymptotic, gamma=False):
    """--pvalue-method and --sequential-h, for the tests that stop early (or need no resampling)."""
    choices = ("full", "sequential", "decision") + (("asymptotic",) if asymptotic else ()) \
        + (("gamma",) if gamma else ())
    p.add_argument("--pvalue-method", choices=choices, default="full",
                   help="full: all --resamples; sequential: stop at the h-th resample reaching the "
                        "statistic (Besag & Clifford), p = h/L; decision: stop once p <= alpha or "
                        "p > alpha is clear (Gandy, error <= 1e-3)"
                        + ("; asymptotic: no resampling, the limit law's p-value (opt-in, see the "
                           "docs' validity table)" if asymptotic else "")
                        + ("; gamma: with --projections, the gamma approximation (no "
                           "permutations; approximate, liberal on heavy-tailed data)"
                           if gamma else "") + " (default: full)")
    p.add_argument("--sequential-h", type=int, default=None,
                   help="exceedances that stop --pvalue-method sequential (default: 10)")


def _add_distance_command(sub, parents):
    """The ``distance`` subcommand."""
    p = sub.add_parser(
        "distance", parents=parents, formatter_class=_FMT,
        help="energy distance between two samples (two files, or groups of one file)",
        description=_wrap("Two-sample energy distance E(A, B) (V-statistic, no square root), with "
                          "R energy's edist = nm/(n+m) E and the between statistic "
                          "S = nm/(2(n+m)) E."),
        epilog="examples:\n  energystats distance A.csv B.csv --columns x,y\n"
               "  energystats distance data.csv --by group --format csv",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="A.csv B.csv, or one file with --by")
    p.add_argument("--by", action="append", help="grouping column: E for every pair of groups")
    p.set_defaults(func=_cmd_distance)


def _add_test_command(sub, parents):
    """The ``test`` subcommand."""
    p = sub.add_parser(
        "test", parents=parents, formatter_class=_FMT,
        help="permutation test of equal distributions (k samples)",
        description=_wrap("Energy test of equal distributions of the groups of one file (--by) or "
                          "of several files (one group each): statistic "
                          "sum_{i<j} n_i n_j/(n_i+n_j) E(C_i, C_j) (R energy's eqdist.etest), "
                          "permutation p-value (1 + #{null >= observed}) / (R + 1) with its Monte "
                          "Carlo standard error."),
        epilog="examples:\n  energystats test data.csv --by group --resamples 999 --seed 1\n"
               "  energystats test A.csv B.csv C.csv --columns x,y",
    )
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="one CSV, TSV or Parquet file with --by, or one file per group")
    p.add_argument("--by", action="append", help="grouping column (with one file)")
    p.add_argument("--strata", metavar="COLUMN",
                   help="strata column: rows relabelled within strata, groups compared within "
                        "them (blocked designs, repeated measures)")
    p.add_argument("--estimator", choices=("V", "U"), default="V",
                   help="within-group means over all pairs (V, R energy's eqdist.etest) or "
                        "distinct pairs (U, dcor's u_statistic), in the statistic and the null "
                        "(default: V)")
    p.add_argument("--projections", type=int, default=None, metavar="K",
                   help="large n: the projection test (Baringhaus and Franz 2004), the energy "
                        "statistic estimated from K random directions, O(K n log n) per "
                        "relabelling instead of n^2 (a permutation test, exact level)")
    _add_inference_args(p, 999, "permutations")
    _add_pvalue_method_args(p, asymptotic=True)
    p.set_defaults(func=_cmd_test)


def _add_disco_command(sub, parents):
    """The ``disco`` subcommand."""
    p = sub.add_parser(
        "disco", parents=parents, formatter_class=_FMT,
        help="distance components (DISCO) analysis: nonparametric ANOVA",
        description=_wrap("DISCO decomposition T = S + W with F = (S/(k-1)) / (W/(n-k)) and its "
                          "permutation p-value. Several --by columns give one row per factor, each "
                          "tested given the others (relabelled within the other factors' cells); "
                          "--marginal gives R energy's table instead, where each factor is tested "
                          "as if alone (an effect of an associated factor makes it significant)."),
        epilog="examples:\n  energystats disco data.csv --by group --resamples 999 --seed 1\n"
               "  energystats disco data.csv --by dose,supplement --format json",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--by", action="append", required=True,
                   help="grouping column(s), comma-separated or repeated")
    p.add_argument("--strata", metavar="COLUMN",
                   help="strata column: groups compared and relabelled within strata")
    p.add_argument("--marginal", action="store_true",
                   help="several factors: marginal tests, each factor as if alone (R energy's "
                        "disco) instead of each given the others")
    _add_inference_args(p, 999, "permutations")
    _add_pvalue_method_args(p, asymptotic=False)
    p.set_defaults(func=_cmd_disco)


def _add_dcor_command(sub, parents):
    """The ``dcor`` subcommand."""
    p = sub.add_parser(
        "dcor", parents=parents, formatter_class=_FMT,
        help="distance correlation of two sets of columns, with a permutation test",
        description=_wrap("Distance covariance and correlation of the columns --x and --y of one "
                          "file (rows are paired observations): dCor and dCov (V-statistics, "
                          "roots, as R energy's dcor/dcov), their bias-corrected (U) forms, and "
                          "the permutation test of independence (statistic n dCov^2, as R's "
                          "dcov.test; --resamples 0 skips it)."),
        epilog="example:\n  energystats dcor data.csv --x a,b --y c --resamples 999 --seed 1",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--x", action="append", required=True, help="columns of x, comma-separated")
    p.add_argument("--y", action="append", required=True, help="columns of y, comma-separated")
    p.add_argument("--affine", action="store_true",
                   help="the affinely invariant forms: --x and --y each whitened by its sample "
                        "covariance first (unchanged by any invertible linear map of either)")
    p.add_argument("--projections", type=int, default=None, metavar="K",
                   help="large n: the projection test (Huang and Huo 2017), n dCov^2 estimated "
                        "from K pairs of random directions, O(K n log n) per permutation instead "
                        "of n^2; no dcor/dcov estimates (they are n^2)")
    _add_inference_args(p, 999, "permutations of the test of independence")
    _add_pvalue_method_args(p, asymptotic=True, gamma=True)
    p.set_defaults(func=_cmd_dcor)


def _add_dcor_matrix_command(sub, parents):
    """The ``dcor-matrix`` subcommand."""
    p = sub.add_parser(
        "dcor-matrix", parents=parents, formatter_class=_FMT,
        help="distance correlation of every pair of columns",
        description=_wrap("Distance correlation of every pair of numeric columns of one file "
                          "(each column one variable), optionally with p-values (t-test, or "
                          "permutation test of every pair with shared permutations) adjusted over "
                          "the pairs (Holm or Benjamini-Hochberg)."),
        epilog="examples:\n  energystats dcor-matrix data.csv --pvalues --adjust bh --format csv\n"
               "  energystats dcor-matrix data.csv --pvalue-method permutation -R 9999 --seed 1",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--exponent", type=float, default=1.0, help="exponent of |x-y|, in (0, 2] (default: 1)")
    p.add_argument("--estimator", choices=("V", "U"), default="V",
                   help="V: dCor (root); U: bias-corrected dCor (default: V)")
    p.add_argument("--pvalues", action="store_true", help="add p-values adjusted over the pairs")
    p.add_argument("--pvalue-method", choices=("ttest", "permutation"), default="ttest",
                   help="ttest, or the permutation test of every pair (implies --pvalues; "
                        "default: ttest)")
    p.add_argument("--adjust", choices=("holm", "bh", "none"), default="holm",
                   help="adjustment of the p-values over the pairs (default: holm)")
    p.add_argument("--resamples", "-R", type=int, default=None,
                   help="permutations with --pvalue-method permutation (default: 999, more for "
                        "many pairs, so that the adjusted p-values can reach 0.05)")
    p.add_argument("--seed", type=_seed, default=None,
                   help="random seed of the permutations, an integer >= 0 (default: a fresh one, "
                        "printed)")
    p.set_defaults(func=_cmd_dcor_matrix)


def _add_gof_command(sub, parents):
    """The ``gof`` subcommand."""
    p = sub.add_parser(
        "gof", parents=parents, formatter_class=_FMT,
        help="energy goodness-of-fit test: normality (uni- or multivariate), Poisson, SciPy laws",
        description=_wrap("Energy goodness-of-fit test of one column (--column) against a "
                          "distribution (--dist: normal, poisson, or a scipy.stats name such as "
                          "exponential, gamma, lognormal, weibull), parameters estimated and "
                          "re-estimated in every parametric bootstrap sample; with --dist normal "
                          "and several --columns, the test of multivariate normality (R energy's "
                          "mvnorm.test)."),
        epilog="examples:\n  energystats gof data.csv --column x --dist normal --seed 1\n"
               "  energystats gof data.csv --columns a,b,c --dist normal -R 199\n"
               "  energystats gof data.csv --column x --dist normal --method limit\n"
               "  energystats gof counts.csv --column n --dist poisson --statistic all\n"
               "  energystats gof data.csv --column x --dist gamma --param loc=0",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--column", help="the column to test (or --columns for multivariate normality)")
    p.add_argument("--dist", default="normal",
                   help="hypothesised family: normal (default), poisson, or a scipy.stats name")
    p.add_argument("--method", choices=("bootstrap", "limit"), default="bootstrap",
                   help="p-value: parametric bootstrap (default) or, for univariate normality, "
                        "the limit distribution")
    p.add_argument("--statistic", choices=("energy", "m-cvm", "m-ad", "all"), default="energy",
                   help="with --dist poisson: the statistic (default: energy)")
    p.add_argument("--param", action="append", type=_param_value, metavar="NAME=VALUE",
                   help="a parameter held fixed (SciPy name, e.g. loc=0); repeatable; the others "
                        "are estimated")
    _add_inference_args(p, 999, "parametric bootstrap samples")
    _add_pvalue_method_args(p, asymptotic=False)
    p.set_defaults(func=_cmd_gof)


def _add_cluster_command(sub, parents):
    """The ``cluster`` subcommand."""
    p = sub.add_parser(
        "cluster", parents=parents, formatter_class=_FMT,
        help="energy clustering (Hartigan's method) with a calibrated significance check",
        description=_wrap("Energy clustering into k groups; prints W, S, T, F of the fitted "
                          "partition and, with --test, the significance check: S/T of the fit "
                          "against the same clustering of reference data sets with no clusters: "
                          "data sets with exactly the data's mean and covariance, drawn as a "
                          "Gaussian sample would be (exact level for every Gaussian population), "
                          "or (--null uniform) from a uniform box with the data's covariance "
                          "(approximate). A small p-value says 'more clustered than a Gaussian' "
                          "(or than that box), not 'the clusters are real': a single uniform "
                          "population is more clustered than a Gaussian too. The naive "
                          "permutation test is invalid after clustering and is not offered here."),
        epilog="example:\n  energystats cluster data.csv -k 3 --test --resamples 99 --seed 1 "
               "--out labels.csv",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("-k", "--clusters", dest="k", type=int, required=True, help="number of clusters")
    p.add_argument("--algorithm", choices=("hartigan", "lloyd", "spectral", "exact-1d"),
                   default="hartigan", help="clustering algorithm (default: hartigan)")
    p.add_argument("--n-init", type=int, default=10, help="restarts, best W kept (default: 10)")
    p.add_argument("--standardize", action="store_true",
                   help="cluster the z-scores of the columns, (x - mean) / sd (sd with divisor "
                        "n - 1), instead of the raw values; W, S, T are then those of the "
                        "z-scores, and the means and sds are printed. Without it, columns whose "
                        "standard deviations differ 1000-fold or more draw a warning")
    p.add_argument("--test", action="store_true",
                   help="run the significance check (re-clusters --resamples null data sets)")
    p.add_argument("--null", choices=("gaussian", "uniform"), default="gaussian",
                   help="reference null of the check (default: gaussian)")
    _add_inference_args(p, 99, "reference data sets of the check")
    _add_pvalue_method_args(p, asymptotic=False)
    p.add_argument("--out", "-o", metavar="PATH",
                   help="write the input rows with a label column appended (.csv, .tsv, "
                        ".parquet, .json); text input written as text keeps every field as it is")
    p.add_argument("--label-column", default="cluster", help="name of the label column (default: cluster)")
    p.set_defaults(func=_cmd_cluster)


def _add_balance_command(sub, parents):
    """The ``balance`` subcommand."""
    p = sub.add_parser(
        "balance", parents=parents, formatter_class=_FMT,
        help="energy balancing weights for causal inference, with the balance table",
        description=_wrap("Energy balancing weights (Huling & Mak 2024) of the rows of one file "
                          "for the treatment column --treatment (binary or multi-category; "
                          "--continuous: independence weights, Huling, Greifer & Chen 2023), and "
                          "the balance table before and after weighting (standardised mean "
                          "differences, variance ratios, weighted KS, the energy distance or "
                          "distance correlation, effective sample sizes). Needs the [balance] "
                          "extra (pip install energy-statistics[balance])."),
        epilog="examples:\n  energystats balance data.csv --treatment t --estimand ATT --out weights.csv\n"
               "  energystats balance data.csv --treatment dose --continuous --format json",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--treatment", "-t", required=True, metavar="COLUMN", help="treatment column")
    p.add_argument("--estimand", choices=("ATE", "ATT", "ATC"), default="ATE",
                   help="target: the whole sample (ATE), the treated (ATT) or the controls (ATC) "
                        "(default: ATE)")
    p.add_argument("--focal", metavar="LEVEL",
                   help="the target level with ATT/ATC (default: 1 for ATT, 0 for ATC of a 0/1 "
                        "treatment; required otherwise)")
    p.add_argument("--continuous", action="store_true",
                   help="continuous treatment: independence weights")
    p.add_argument("--no-improved", action="store_true",
                   help="leave out the energy distances between the weighted groups")
    p.add_argument("--no-dimension-adj", action="store_true",
                   help="with --continuous: weight the two energy distances 1/2 each instead of "
                        "1/sqrt(d) and 1, normalised (Huling, Greifer & Chen's adjustment)")
    p.add_argument("--base-weights", metavar="COLUMN", help="column of sampling weights")
    p.add_argument("--lam", type=float, default=0.0,
                   help="ridge penalty lam * sum (w/n)^2, >= 0 (default: 0)")
    p.add_argument("--standardize", choices=("studentized", "mahalanobis", "none"),
                   default="studentized", help="units of the covariates (default: studentized)")
    p.add_argument("--cells", type=_int_at_least(2), default=None, metavar="K",
                   help="for large files: solve on at most K k-means cells per treatment level "
                        "(K in all with --continuous), weights constant within a cell (O(K^2) "
                        "memory instead of the exact programme's O(n^2); default: the exact "
                        "programme)")
    p.add_argument("--seed", type=_seed, default=None,
                   help="seed of the k-means of --cells and of the resamples of --outcome, an "
                        "integer >= 0 (default: a fresh one, printed so that the run can be "
                        "repeated)")
    p.add_argument("--solver", choices=("auto", "firstorder", "osqp", "clarabel"), default="auto",
                   help="solver of the weights' programme: auto (osqp where its n x n matrices "
                        "fit the memory budget, else firstorder), firstorder (exact, matrix-free, "
                        "O(n) memory; energy balancing weights only), or a QP solver "
                        "(default: auto)")
    p.add_argument("--out", "-o", metavar="PATH",
                   help="write the input rows with a weight column appended (.csv, .tsv, "
                        ".parquet, .json)")
    p.add_argument("--weight-column", default="weight",
                   help="name of the weight column (default: weight)")
    _add_exact_constraint_args(p)
    _add_effect_args(p)
    p.set_defaults(func=_cmd_balance)


def _add_changepoint_command(sub, parents):
    """The ``changepoint`` subcommand."""
    p = sub.add_parser(
        "changepoint", parents=parents, formatter_class=_FMT,
        help="change points of a series (rows in time order): E-Divisive with permutation "
             "tests, or E-Agglo",
        description=_wrap("Change points of the rows of one file, in file order (Matteson & James "
                          "2014). E-Divisive (default): the segment whose best split has the "
                          "largest Q = nm/(n+m) E (E with U-type within terms) is split, stage "
                          "after stage; each split is tested by permuting the rows within every "
                          "current segment and re-running the stage's whole search, p = (1 + "
                          "#{permuted max >= Q}) / (R + 1), and the search stops at the first "
                          "p > --sig-level. The p-value is for 'a further change exists given the "
                          "segments found so far'; it assumes exchangeable rows: for "
                          "autocorrelated series use --resampling block. A change point exactly "
                          "--min-size rows from an end of its part is a warning (the constraint "
                          "binds). --k returns the first k splits untested. "
                          "--method agglo: E-Agglo, merging adjacent segments (no test); "
                          "--method cp3o: e-cp3o (Zhang, James & Matteson 2017), a fixed number "
                          "of change points by dynamic programming (no test). Prints the "
                          "segment table and every tested split with its p-value; --out writes the "
                          "rows with a segment column."),
        epilog="examples:\n  energystats changepoint data.csv --columns a,b --time-column date "
               "--seed 1\n"
               "  energystats changepoint data.csv --columns a,b --k 3 --out segments.csv\n"
               "  energystats changepoint data.csv --columns a --agglo --block 10 --penalty 5\n"
               "  energystats changepoint data.csv --columns a,b --method cp3o --max-k 6",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file, rows in time order")
    p.add_argument("--time-column", metavar="COLUMN",
                   help="the rows' time stamps (ISO 8601 text read as dates, or numbers; checked to "
                        "be in order): change points and segments are named by them (default: the "
                        "data rows, counting from 1)")
    p.add_argument("--k", type=int, default=None,
                   help="return the first k splits untested (E-Divisive), the segmentation "
                        "with k change points on the merge path (--agglo), or the best fit with "
                        "k change points (--method cp3o)")
    p.add_argument("--min-size", type=int, default=None,
                   help="fewest rows of a segment, >= 2 (E-Divisive; default: 30)")
    p.add_argument("--exponent", type=float, default=1.0,
                   help="exponent alpha of |x-y|^alpha, in (0, 2) (default: 1)")
    p.add_argument("--sig-level", type=_level, default=None,
                   help="the search stops at the first split with p > this (default: 0.05)")
    p.add_argument("--resamples", "-R", type=int, default=None,
                   help="permutations per test, 1 to 10**9 (default: 199)")
    p.add_argument("--pvalue-method", choices=("full", "sequential", "decision"), default=None,
                   help="full: all --resamples; sequential: stop at the 10th permuted maximum "
                        "reaching Q (Besag & Clifford; needs --resamples >= 10); decision: stop "
                        "once p <= or > --sig-level is clear (Gandy) (default: full)")
    p.add_argument("--seed", type=_seed, default=None,
                   help="random seed of the permutations, an integer >= 0 (default: a fresh one, "
                        "printed on stderr and in the output)")
    p.add_argument("--resampling", choices=("permutation", "block"), default=None,
                   help="permutation (default): rows permuted one by one, valid for "
                        "exchangeable rows only; block: blocks of consecutive rows permuted "
                        "(Kirch 2007), for autocorrelated series (timings, sensors, prices, "
                        "flows: the permutation test finds changes that are not there)")
    p.add_argument("--kappa", choices=("search", "end"), default=None,
                   help="search (default, as the paper and R ecp): the end of the second part "
                        "of a split is searched too; end: it is the segment's end (more power "
                        "when a segment holds one change, e.g. a change in correlation)")
    p.add_argument("--block-size", type=_int_at_least(1), default=None, metavar="L",
                   help="block length of --resampling block (default: chosen at every test by "
                        "Politis & White's rule)")
    p.add_argument("--method", choices=("divisive", "agglo", "cp3o"), default=None,
                   help="divisive (default): E-Divisive with tests; agglo: E-Agglo, merging "
                        "adjacent segments (no test); cp3o: e-cp3o (R ecp's e.cp3o), the best "
                        "fit with 1 ... --max-k change points by dynamic programming on "
                        "windowed E-statistics, the number chosen by ecp's rule or fixed by "
                        "--k (no test; always at least one change point)")
    p.add_argument("--agglo", action="store_true",
                   help="the same as --method agglo")
    p.add_argument("--delta", type=int, default=None,
                   help="with --method cp3o: the window of the statistic, >= 2; segments have "
                        "at least delta+1 rows (default: 29, as ecp)")
    p.add_argument("--max-k", type=int, default=None,
                   help="with --method cp3o: the most change points fitted (default: "
                        "min(5, T // (delta+1) - 1))")
    p.add_argument("--block", type=int, default=None,
                   help="with --agglo: start from segments of this many rows (default: one per "
                        "row; the T x T distance matrix is formed)")
    p.add_argument("--penalty", type=float, default=None,
                   help="with --agglo: subtracted from the fit per change point (default: the "
                        "automatic penalty 4 m h (1 + 2 log T) of energystats.e_agglo, m the "
                        "mean distance, h the mean 1/size of the starting segments; 0: R ecp's "
                        "unpenalised fit)")
    p.add_argument("--out", "-o", metavar="PATH",
                   help="write the input rows with a segment column appended (.csv, .tsv, "
                        ".parquet, .json); text input written as text keeps every field as it is")
    p.add_argument("--segment-column", default="segment",
                   help="name of the segment column of --out (default: segment)")
    p.set_defaults(func=_cmd_changepoint)


def _add_screen_command(sub, parents):
    """The ``screen`` subcommand."""
    p = sub.add_parser(
        "screen", parents=parents, formatter_class=_FMT,
        help="feature screening: rank columns by their distance correlation with a target",
        description=_wrap("Distance-correlation screening (DC-SIS, Li, Zhong and Zhu 2012) of the "
                          "columns of one file against the target column(s) --target: each "
                          "feature's dCor with the target (V-statistic, root), the ranking, and "
                          "the top --top features selected (default floor(n / log n)); --rounds R: "
                          "iterative screening (Zhong and Zhu 2015), later rounds on the residuals "
                          "of the features chosen so far; --pvalue permutation: each feature's "
                          "permutation test of independence, the permutations shared by the "
                          "features, adjusted over them (--adjust)."),
        epilog="examples:\n  energystats screen data.csv --target y --top 10\n"
               "  energystats screen data.csv --target y --pvalue permutation -R 999 --seed 1",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--target", "-y", action="append", required=True, metavar="COLS",
                   help="the target column(s), comma-separated (a multivariate target is one "
                        "variable); left out of the features")
    p.add_argument("--top", type=_int_at_least(1), default=None, metavar="K",
                   help="features to select (default: floor(n / log n), at most their number)")
    p.add_argument("--rounds", type=_int_at_least(1), default=1, metavar="R",
                   help="1: DC-SIS (default); more: the top chosen in R rounds, each later round "
                        "on the residuals of the features on those chosen so far")
    p.add_argument("--pvalue", choices=("permutation",), default=None,
                   help="permutation: each feature's permutation p-value (default: none)")
    p.add_argument("--adjust", choices=("bh", "holm", "none"), default=None,
                   help="with --pvalue: adjustment over the features, Benjamini-Hochberg or Holm "
                        "(default: bh)")
    p.add_argument("--alpha", type=_level, default=None,
                   help="level of the 'significant' line of the verdict (default: 0.05)")
    p.add_argument("--resamples", "-R", type=int, default=None,
                   help="with --pvalue: permutations (default: 999)")
    p.add_argument("--seed", type=_seed, default=None,
                   help="with --pvalue: random seed of the permutations, an integer >= 0 "
                        "(default: a fresh one, printed)")
    p.set_defaults(func=_cmd_screen)


def _add_conditional_command(sub, parents):
    """The ``conditional`` subcommand."""
    p = sub.add_parser(
        "conditional", parents=parents, formatter_class=_FMT,
        help="test of conditional independence of two sets of columns given a third",
        description=_wrap("Test that the columns --x and --y of one file are independent given "
                          "the columns --z (Wang et al. 2015): the statistic T = mean of "
                          "12 f(z_i)^4 dCov^2(x, y | z_i), the local conditional distance "
                          "covariances under a Gaussian kernel on z, and its local-bootstrap "
                          "p-value (1 + #{T* >= T}) / (R + 1) (--resamples 0 skips it); also "
                          "cdcor, the mean conditional distance correlation (a square). The "
                          "level is approximate and depends on the kernel's --bandwidth: check "
                          "a rejection at half the bandwidth. O(n^3) per resample."),
        epilog="examples:\n  energystats conditional data.csv --x a --y b --z c,d --seed 1\n"
               "  energystats conditional data.csv --x a --y b --z c --bandwidth 0.5 -R 199",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--x", action="append", required=True, help="columns of x, comma-separated")
    p.add_argument("--y", action="append", required=True, help="columns of y, comma-separated")
    p.add_argument("--z", action="append", required=True,
                   help="the conditioning columns, comma-separated")
    p.add_argument("--bandwidth", metavar="H",
                   help="the Gaussian kernel's bandwidth on z: a rule, half-scott (default: half "
                        "of Scott's rule), scott, silverman or nrd0, or a number, or one number "
                        "per column of --z, comma-separated")
    _add_inference_args(p, 999, "bootstrap samples; 0: the statistic only")
    p.set_defaults(func=_cmd_conditional)


def _add_lagged_command(sub, parents):
    """The ``lagged`` subcommand."""
    p = sub.add_parser(
        "lagged", parents=parents, formatter_class=_FMT,
        help="dependence in time series: auto- or cross-distance correlation at each lag, tested",
        description=_wrap("Dependence across time of the rows of one file, in file order (or "
                          "the order of --time-column, checked). With --x only: the auto-distance "
                          "correlation function (ADCF) of x at lags 1..L and the test of serial "
                          "independence, rows permuted (Fokianos and Pitsillou 2017). With --y "
                          "too: the cross-distance correlation of x_t and y_(t-j) at lags -L..L "
                          "and the test that the two series are independent, y resampled in "
                          "blocks of consecutive rows (each series may be autocorrelated); a "
                          "unit root in either makes that test invalid (valid: False, and why). "
                          "Per lag: dCor (V-statistic, root), (n - |j|) dCov^2, the lag's own "
                          "p-value and critical value; the portmanteau statistic Q = sum of "
                          "k^2(j/p) (n - |j|) dCov^2 over the lags, with its p-value."),
        epilog="examples:\n  energystats lagged data.csv --x a --lags 10 --seed 1\n"
               "  energystats lagged data.csv --x a --y b --lags 3 --time-column date --seed 1\n"
               "  energystats lagged data.csv --x a --y b --lags=-2,0,2 --block-size 20",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file, rows in time order")
    p.add_argument("--x", action="append", required=True, help="columns of x, comma-separated")
    p.add_argument("--y", action="append",
                   help="columns of y, comma-separated: the cross test (default: the ADCF of x)")
    p.add_argument("--lags", metavar="L",
                   help="an integer L: lags 1..L (ADCF) or -L..L (cross); or the lags, comma-"
                        "separated (write --lags=-2,0,2 for a first lag below 0) (default: "
                        "10 log10(n) for the ADCF, ceil(log n) for the cross test)")
    p.add_argument("--time-column", metavar="COLUMN",
                   help="the rows' time stamps (ISO 8601 text read as dates, or numbers), "
                        "checked to be in time order (default: the file's order)")
    p.add_argument("--kernel", choices=("truncated", "bartlett"), default="truncated",
                   help="lag weights k^2(j/p) of the portmanteau, p = L + 1: 1 (truncated, "
                        "default) or (1 - j/p)^2 (bartlett)")
    p.add_argument("--resampling", choices=("block", "permutation"), default=None,
                   help="with --y: block (default; Kirch 2007) or permutation (rows one by one: "
                        "valid only when x or y is serially independent)")
    p.add_argument("--block-size", dest="block_length", type=_int_at_least(1), default=None,
                   metavar="L",
                   help="with --y: the block length (default: 2 x the Politis-White length of "
                        "each column and 3 x that of its squares, the largest, at most n/4)")
    _add_inference_args(p, 999, "permutations (of x) or resamples (of y)")
    p.set_defaults(func=_cmd_lagged)


def _add_data_command(sub, parents):
    """The ``data`` subcommand."""
    p = sub.add_parser(
        "data", parents=parents, formatter_class=_FMT,
        help="the bundled data sets: list them, show one, or write a copy",
        description=_wrap("The data sets installed with the package (in energystats/data/): "
                          "without NAME, the list; with NAME, its path and shape; with --out, a "
                          "copy written as CSV, TSV, Parquet or JSON by the suffix."),
        epilog="examples:\n  energystats data\n  energystats data iris\n"
               "  energystats data iris --out iris.csv",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="a data set (iris, nile)")
    p.add_argument("--out", "-o", metavar="PATH",
                   help="write a copy (.csv, .tsv, .parquet, .json)")
    p.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    p.set_defaults(func=_cmd_data)


def _add_demo_command(sub):
    """The ``demo`` subcommand."""
    p = sub.add_parser(
        "demo", formatter_class=_FMT,
        help="the main path on the bundled iris data: distances, test, clustering",
        description=_wrap("On Fisher's iris data: energy distances and the W/S/T/F dispersion "
                          "table of the species, the k-sample energy test with its p-value and "
                          "seed, energy clustering of the unlabelled measurements with its "
                          "significance check against the Gaussian reference (cluster_test), and "
                          "how the clusters agree with the species (crosstab, adjusted Rand "
                          "index). A few seconds."),
        epilog="example:\n  energystats demo --seed 1 --resamples 199",
    )
    p.add_argument("--exponent", type=float, default=1.0, help="exponent of the energy metric, in (0, 2]")
    p.add_argument("--resamples", "-R", type=int, default=99,
                   help="permutations of the test and reference data sets of the check (default: 99)")
    p.add_argument("--seed", type=_seed, default=1, help="random seed (default: 1)")
    p.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    p.set_defaults(func=_cmd_demo)


def build_parser():
    """The top-level parser, its shared parent parsers and every subcommand, in help order."""
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="energystats",
        description=_wrap("Energy statistics from the command line, on CSV, TSV or Parquet "
                          "files: energy distance, k-sample tests and DISCO, distance "
                          "correlation, feature screening, conditional independence, dependence "
                          "in time series, goodness of fit, energy clustering, balancing weights "
                          "and effects, change points; and the bundled data sets."),
        epilog="Run 'energystats <command> --help' for the options of a command.\n"
               "example: energystats test data.csv --by group --resamples 999 --seed 1\n"
               + textwrap.fill(_EXIT_CODES, width=79),
        formatter_class=_FMT,
    )
    parser.add_argument("--version", action="version", version=f"energystats {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    common, data, metric = _common_parent(), _data_parent(), _metric_parent()
    _add_distance_command(sub, [data, metric, common])
    _add_test_command(sub, [data, metric, common])
    _add_disco_command(sub, [data, metric, common])
    _add_dcor_command(sub, [data, metric, common])
    _add_dcor_matrix_command(sub, [data, common])
    _add_gof_command(sub, [data, common])
    _add_cluster_command(sub, [data, metric, common])
    _add_balance_command(sub, [data, common])
    _add_changepoint_command(sub, [data, common])
    _add_screen_command(sub, [data, metric, common])
    _add_conditional_command(sub, [data, metric, common])
    _add_lagged_command(sub, [data, metric, common])
    _add_data_command(sub, [common])
    _add_demo_command(sub)
    return parser
