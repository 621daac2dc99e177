"""Memory estimates before allocating: how much a call needs, how much there is.

Every large allocation (an n×n matrix, a batch of relabellings, a Gram
matrix per thread) is estimated first and compared with the memory the
process can still get.  When it does not fit, the call fails at once with a
:class:`MemoryError` that says how much is needed, how much is available, and
what to use instead -- never after minutes of work, and never by meeting the
kernel's out-of-memory killer, which a large allocation that the system
grants lazily (overcommit) would otherwise do.

The memory available is the smallest of:

* ``MemAvailable`` of ``/proc/meminfo`` (Linux; physical memory the kernel can
  give without swapping);
* the address-space limit (``resource.RLIMIT_AS``) less the process's
  current virtual size;
* the cgroup limit (``memory.max`` less ``memory.current``, cgroup v2; or
  ``memory.limit_in_bytes`` less ``memory.usage_in_bytes``, v1).

Where none of these can be read (not Linux), nothing is refused here and
NumPy's own ``MemoryError`` stays the last line.
"""
from __future__ import annotations

import os

__all__ = ["available_memory", "format_bytes", "check_fits", "MiB"]

MiB = 2**20


def format_bytes(n):
    """``1.5 GiB`` style, for messages."""
    n = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def _read_int(path):
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if not text or text == "max":
        return None
    try:
        return int(text.split()[0])
    except ValueError:
        return None


def _proc_kib(path, field):
    """``field`` (given in kB) of a ``/proc`` status file, in bytes; None when unreadable."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _meminfo(field):
    return _proc_kib("/proc/meminfo", field)


def _vm_size():
    return _proc_kib("/proc/self/status", "VmSize")


def _address_space_left():
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    used = _vm_size()
    return None if used is None else max(0, soft - used)


def _cgroup_left():
    limit = _read_int("/sys/fs/cgroup/memory.max")
    if limit is not None:
        used = _read_int("/sys/fs/cgroup/memory.current") or 0
        return max(0, limit - used)
    limit = _read_int("/sys/fs/cgroup/memory/memory.limit_in_bytes")
    if limit is not None and limit < 2**60:
        used = _read_int("/sys/fs/cgroup/memory/memory.usage_in_bytes") or 0
        return max(0, limit - used)
    return None


def available_memory():
    """``(bytes, source)``: the memory this process can still allocate, or ``(None, None)``.

    ``ENERGYSTATS_AVAILABLE_MEMORY`` (bytes) overrides the measurement (for
    tests and for schedulers that know better).
    """
    env = os.environ.get("ENERGYSTATS_AVAILABLE_MEMORY")
    if env:
        try:
            return int(float(env)), "ENERGYSTATS_AVAILABLE_MEMORY"
        except ValueError:
            pass
    found = [(v, s) for v, s in ((_meminfo("MemAvailable"), "available system memory"),
                                 (_address_space_left(), "the address-space limit (ulimit -v)"),
                                 (_cgroup_left(), "the cgroup memory limit")) if v is not None]
    if not found:
        return None, None
    return min(found)


def check_fits(nbytes, what, instead=""):
    """Raise :class:`MemoryError` before allocating when ``nbytes`` cannot fit.

    ``what`` names the allocation ("the 25000×25000 distance matrix"),
    ``instead`` says what to use instead; both appear in the message.
    """
    avail, source = available_memory()
    if avail is not None and nbytes > avail:
        hint = f" {instead}" if instead else ""
        raise MemoryError(f"{what} needs about {format_bytes(nbytes)}, but only {format_bytes(avail)} "
                          f"is available ({source}).{hint}")
    return avail
