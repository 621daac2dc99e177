"""Module-level tasks for tests/_core/test_workers.py (a worker process imports them by name)."""
import ctypes
import threading

import numpy as np


def noisy(common, t):
    """Prints from C and from Python before answering: neither may reach the answers."""
    libc = ctypes.CDLL(None)
    libc.printf(b"stray C output\n")
    libc.fflush(None)
    print("stray python output")
    return np.arange(t) * common


def unpicklable(common, t):
    return threading.Lock()          # cannot be sent back: the worker fails


def fails(common, t):
    raise ZeroDivisionError(f"task {t}")
