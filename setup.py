"""Build the compiled kernels of energystats.

Metadata lives in ``pyproject.toml``; this file only declares the Cython
extensions, their compiler directives and the OpenMP flags.  A compiler
without OpenMP still builds a working (single-threaded) package: the flags
are probed first.  Set ``ENERGYSTATS_DEBUG=1`` to turn bounds checks on.

The extensions are translated (Cython) and compiled (C) in parallel, one job
per CPU; ``ENERGYSTATS_BUILD_JOBS=N`` sets the number of jobs (1: serial), and
``python setup.py build_ext -j N`` overrides it for the compilation.
"""
import os
import sys
import tempfile
import textwrap

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("ENERGYSTATS_DEBUG", "0") not in ("", "0")
SIMD_HEADERS = ["_simd.h", "_simd_body.h", "_cp_lanes.h", "_cp_lanes_body.h"]
KERNELS = ["_pairwise", "_sorted1d", "_hartigan", "_permutation", "_dependence", "_gof", "_weighted",
           "_changepoint", "_matvec", "_screen"]


def _build_jobs():
    """Parallel jobs for the build: ``ENERGYSTATS_BUILD_JOBS`` or the CPU count."""
    raw = os.environ.get("ENERGYSTATS_BUILD_JOBS", "").strip()
    if not raw:
        return os.cpu_count() or 1
    try:
        jobs = int(raw)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise SystemExit(f"ENERGYSTATS_BUILD_JOBS must be a positive integer; got {raw!r}.")
    return jobs


BUILD_JOBS = _build_jobs()


def _openmp_flags(compiler):
    """Return (compile_args, link_args) for OpenMP, or ([], []) if unsupported."""
    if os.environ.get("ENERGYSTATS_NO_OPENMP"):
        return [], []
    if sys.platform == "win32":
        candidates = [(["/openmp"], [])]
    elif sys.platform == "darwin":
        candidates = [(["-Xpreprocessor", "-fopenmp"], ["-lomp"]), (["-fopenmp"], ["-fopenmp"])]
    else:
        candidates = [(["-fopenmp"], ["-fopenmp"])]
    code = textwrap.dedent(
        """
        #include <omp.h>
        int main(void) { int n = 0;
        #pragma omp parallel reduction(+:n)
        n += 1;
        return n > 0 ? 0 : 1; }
        """
    )
    for cflags, lflags in candidates:
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w") as fh:
                fh.write(code)
            try:
                objs = compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
                compiler.link_executable(objs, "probe", output_dir=tmp, extra_postargs=lflags)
            except Exception:  # noqa: BLE001 - any failure means "no OpenMP"
                continue
        return cflags, lflags
    print("energystats: the compiler has no OpenMP; building single-threaded kernels")
    return [], []


class BuildExt(build_ext):
    def finalize_options(self):
        # Compile the extensions in parallel (setuptools' ``build_ext -j``), unless the
        # command line asked for a number of jobs.
        if self.parallel is None and BUILD_JOBS > 1:
            self.parallel = BUILD_JOBS
        super().finalize_options()

    def build_extensions(self):
        cflags, lflags = _openmp_flags(self.compiler)
        # -fno-math-errno: sqrt and friends need not set errno (never read here), so the
        # compiler can vectorise them.  -ffp-contract=off: no fused multiply-adds, so the
        # kernels built for each instruction set (_simd.h) give the same bits.
        extra = [] if sys.platform == "win32" else ["-O3", "-fno-math-errno", "-ffp-contract=off"]
        for ext in self.extensions:
            ext.extra_compile_args = list(ext.extra_compile_args) + extra + cflags
            ext.extra_link_args = list(ext.extra_link_args) + lflags
        super().build_extensions()


def _extensions():
    exts = []
    for name in KERNELS:
        path = os.path.join("energystats", "_lib", name + ".pyx")
        if not os.path.exists(path):
            continue
        exts.append(
            Extension(
                "energystats._lib." + name,
                [path],
                include_dirs=[np.get_include(), os.path.join("energystats", "_lib")],
                depends=[os.path.join("energystats", "_lib", h) for h in SIMD_HEADERS],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return cythonize(
        exts,
        nthreads=BUILD_JOBS if BUILD_JOBS > 1 else 0,
        compiler_directives={
            "language_level": 3,
            "boundscheck": DEBUG,
            "wraparound": DEBUG,
            "initializedcheck": DEBUG,
            "cdivision": True,
        },
    )


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
