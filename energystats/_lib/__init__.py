"""Compiled kernels (Cython).  Private: call them through the public API.

The kernels never validate user input; :mod:`energystats._core._validation` does so
before any of them runs, which is what allows them to run without bounds
checks.

The pair kernels are compiled for several instruction sets (see ``_simd.h``)
and the widest one the CPU supports is chosen when the kernels are imported.
``ENERGYSTATS_SIMD=baseline`` (or ``avx2``) in the environment caps the choice,
e.g. to compare the builds; every build gives the same bits.
"""
import os

#: instruction-set levels of the pair kernels, in increasing order (``_simd.h``)
SIMD_LEVELS = ("baseline", "avx2", "avx512")


def simd_cap():
    """The highest level ``ENERGYSTATS_SIMD`` allows (all of them when it is unset)."""
    value = os.environ.get("ENERGYSTATS_SIMD", "").strip().lower()
    if not value:
        return len(SIMD_LEVELS) - 1
    if value not in SIMD_LEVELS:
        raise ValueError(f"the environment variable ENERGYSTATS_SIMD must be one of "
                         f"{', '.join(SIMD_LEVELS)} (or unset); got {value!r}")
    return SIMD_LEVELS.index(value)
