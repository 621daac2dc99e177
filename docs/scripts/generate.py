"""Generate the documentation's figures, tables and listings at build time.

Called by ``docs/conf.py`` (``builder-inited``); can also be run alone::

    python docs/scripts/generate.py [--quick] [--only fig_timing,fig_gallery] [--force]

Every ``docs/scripts/fig_*.py`` is run in its own process as
``python fig_x.py --out docs/generated/figures [--quick]``; it writes
``<name>.png`` files and, for captions and tables, ``<name>.inc`` (reST
fragments) that the pages include.  A script is rerun only when it, or the
package's source, changed since its last run (a stamp file keeps the hash);
``--force`` or ``ENERGYSTATS_DOCS_REBUILD=1`` reruns everything.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent
ROOT = DOCS.parent
if str(ROOT) not in sys.path:          # document the in-place build, not an installed copy
    sys.path.insert(0, str(ROOT))

#: sections of the API reference, one per subpackage: (package, title, what it holds).  Every
#: public name goes to the section of the subpackage that exports it (``energystats._EXPORTS``),
#: so a new public name needs no edit here; only a new subpackage needs a line.
API_SECTIONS = [
    ("homogeneity", "Homogeneity", "Tests of equal distributions, DISCO and the W/S/T dispersion."),
    ("dependence", "Dependence", "Distance covariance and correlation, their tests, "
                                 "partial and mutual dependence."),
    ("goodness_of_fit", "Goodness of fit", "Energy tests of normality, the Poisson law and "
                                           "one-dimensional SciPy families."),
    ("clustering", "Clustering", "Energy clustering, its significance test and energy linkage."),
    ("balance", "Balance", "Energy balancing and independence weights, the balance table, and "
                           "the effect they estimate."),
    ("changepoint", "Change points", "E-Divisive with permutation tests and E-Agglo "
                                     "(Matteson and James 2014)."),
    ("distance", "Distance", "Pairwise semimetrics, the generated kernel and the energy distance."),
    ("_core", "Warnings shared by every subpackage", "Raised by the input layer and the "
                                                     "resampling engine below the subpackages."),
    ("datasets", "Data sets", "Small real data sets shipped with the package."),
]


def _write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text() == text:
        return
    path.write_text(text)


def _stub(qualname, obj):
    """reST stub of one public object (what autosummary would generate)."""
    import inspect

    mod, _, short = qualname.rpartition(".")
    head = [qualname, "=" * len(qualname), "", f".. currentmodule:: {mod}", ""]
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return "\n".join(head + [f".. autoclass:: {short}", ""])
        fields = set(getattr(obj, "__dataclass_fields__", {}))
        methods = [n for n, v in vars(obj).items()
                   if not n.startswith("_") and n not in fields
                   and (inspect.isfunction(v) or isinstance(v, property))]
        lines = head + [f".. autoclass:: {short}"]
        if methods:
            lines.append(f"   :members: {', '.join(sorted(methods))}")
        return "\n".join(lines + [""])
    return "\n".join(head + [f".. autofunction:: {short}", ""])


def write_api_listing(outdir):
    """``api_listing.inc`` (autosummary tables) and one stub per public name.

    Every name in ``energystats.__all__`` is listed under a heading for the subpackage
    that exports it (homogeneity, dependence, goodness of fit, clustering, distance, ...),
    in the order of that subpackage's ``__all__``; the names stay ``energystats.X``.  A subpackage missing from :data:`API_SECTIONS` is an
    error, so that no public name is left out of the reference.
    """
    import importlib

    import energystats
    import energystats.datasets

    names = {name: getattr(energystats, name) for name in energystats.__all__}
    names["datasets.load_iris"] = energystats.datasets.load_iris
    home = {name: energystats._EXPORTS[name].split(".")[0] for name in energystats.__all__}
    home["datasets.load_iris"] = "datasets"
    known = {pkg for pkg, _, _ in API_SECTIONS}
    unknown = sorted({pkg for pkg in home.values() if pkg not in known})
    if unknown:
        raise RuntimeError(f"docs/scripts/generate.py: API_SECTIONS has no section for the "
                           f"subpackage(s) {unknown}; add one.")
    lines = []
    stubdir = Path(outdir) / "api"
    for pkg, title, blurb in API_SECTIONS:
        members = [n for n in names if home[n] == pkg]
        if not members:
            continue
        order = list(getattr(importlib.import_module(f"energystats.{pkg}"), "__all__", []))

        def key(n, order=order):
            short = n.split(".")[-1]
            return (order.index(short) if short in order else len(order), n.lower())

        members.sort(key=key)
        if pkg == "datasets":
            where = "Imported from ``energystats.datasets``."
        elif pkg.startswith("_"):
            where = "Imported as ``energystats.<name>``."
        else:
            where = f"Defined in ``energystats.{pkg}``; imported as ``energystats.<name>``."
        lines += [title, "-" * len(title), "", f"{blurb} {where}", ""]
        lines += [".. autosummary::", "   :toctree: generated/api", ""]
        lines += [f"   {n}" for n in members]
        lines.append("")
        for n in members:
            _write_if_changed(stubdir / f"energystats.{n}.rst", _stub(f"energystats.{n}", names[n]))
    _write_if_changed(Path(outdir) / "api_listing.inc", "\n".join(lines) + "\n")


def write_cli_help(outdir):
    """``cli_<command>.txt``: the ``--help`` text of every subcommand."""
    os.environ["COLUMNS"] = "88"
    from energystats.cli import build_parser

    parser = build_parser()
    _write_if_changed(Path(outdir) / "cli_main.txt", parser.format_help())
    choices = parser._subparsers._group_actions[0].choices
    for name, sub in choices.items():
        _write_if_changed(Path(outdir) / f"cli_{name}.txt", sub.format_help())


def write_benchmark_listing(outdir):
    """``benchmarks.inc``: each benchmark script, its command, and its recorded output.

    Recorded outputs are ``docs/benchmarks/<script>.txt`` (the first line is the
    command that produced them); scripts without one are listed with the
    command to run.
    """
    lines = []
    scripts = sorted((ROOT / "benchmarks").glob("*.py"))
    if not scripts:
        lines.append("No benchmark scripts in this checkout.")
    for script in scripts:
        doc = ""
        text = script.read_text()
        for quote in ('"""', "'''"):
            if text.lstrip().startswith(quote):
                doc = text.lstrip()[3:].split(quote)[0].strip().splitlines()[0]
                break
        title = f"``benchmarks/{script.name}``"
        lines += [title, "^" * len(title), "", doc, ""]
        rec = DOCS / "benchmarks" / f"{script.stem}.txt"
        if rec.exists():
            lines += [f".. literalinclude:: /benchmarks/{rec.name}", "   :language: text", ""]
        else:
            lines += ["No recorded run yet; run::", "", f"    python benchmarks/{script.name}", ""]
    _write_if_changed(Path(outdir) / "benchmarks.inc", "\n".join(lines) + "\n")


def _source_hash(script, quick):
    h = hashlib.sha256()
    h.update(b"quick" if quick else b"full")
    h.update(script.read_bytes())
    for p in sorted((ROOT / "energystats").rglob("*")):
        if p.suffix in (".py", ".pyx", ".pxd") and p.is_file():
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def run_scripts(outdir, *, quick=True, only=None, force=None):
    """Run the ``fig_*.py`` scripts; return ``[(name, error message), ...]``."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    if force is None:
        force = os.environ.get("ENERGYSTATS_DOCS_REBUILD", "0") not in ("", "0")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    failures = []
    for script in sorted(HERE.glob("fig_*.py")):
        name = script.stem
        if only and name not in only:
            continue
        stamp = outdir / f".{name}.stamp"
        digest = _source_hash(script, quick)
        if not force and stamp.exists() and stamp.read_text() == digest:
            print(f"[docs] {name}: up to date", flush=True)
            continue
        t0 = time.perf_counter()
        cmd = [sys.executable, str(script), "--out", str(outdir)] + (["--quick"] if quick else [])
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
            failures.append((name, tail[0]))
            sys.stderr.write(proc.stderr)
            print(f"[docs] {name}: FAILED after {dt:.1f} s", flush=True)
            if stamp.exists():
                stamp.unlink()
            continue
        stamp.write_text(digest)
        print(f"[docs] {name}: {dt:.1f} s", flush=True)
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer Monte Carlo repetitions")
    ap.add_argument("--only", help="comma-separated script names (without .py)")
    ap.add_argument("--force", action="store_true", help="rerun even if up to date")
    args = ap.parse_args(argv)
    out = DOCS / "generated"
    write_api_listing(out)
    write_cli_help(out)
    write_benchmark_listing(out)
    failures = run_scripts(out / "figures", quick=args.quick, force=args.force,
                           only=args.only.split(",") if args.only else None)
    for name, msg in failures:
        print(f"{name}: {msg}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
