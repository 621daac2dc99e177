"""Plain-loop references of the balancing tests (independent of the package): distances,
energy distances of masses, weighted double centring, studentized covariates."""
import numpy as np


def studentize(X, s=None):
    s = np.ones(len(X)) if s is None else s
    p = s / s.sum()
    m = p @ X
    sd = np.sqrt(p @ (X - m) ** 2)
    return (X - m) / sd


def dist(Z):
    n = len(Z)
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            D[i, j] = np.sqrt(np.sum((Z[i] - Z[j]) ** 2))
    return D


def energy_loop(D, u, v):
    """2 sum u_i v_j D_ij - sum u_i u_k D_ik - sum v_j v_l D_jl, by loops."""
    n = len(u)
    a = b = c = 0.0
    for i in range(n):
        for j in range(n):
            a += u[i] * v[j] * D[i, j]
            b += u[i] * u[j] * D[i, j]
            c += v[i] * v[j] * D[i, j]
    return 2 * a - b - c


def masses(w, sel):
    u = np.where(sel, w, 0.0)
    return u / u.sum()


def centre_loop(D, p):
    n = len(p)
    r = [sum(D[i, k] * p[k] for k in range(n)) for i in range(n)]
    g = sum(r[i] * p[i] for i in range(n))
    return np.array([[D[i, j] - r[i] - r[j] + g for j in range(n)] for i in range(n)])


def confounded(n=40, k=2, seed=0, d=3):
    """Covariates and a k-level treatment cut from a score that depends on them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n)
    t = np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]))
    return X, t


#: child-process set-up code (tests/_core/test_interrupt.py's CHILD) that announces the long
#: phase when the worker processes start, so that the Ctrl-C tests signal inside it
ANNOUNCE_WORKERS = """
from energystats._core import _workers
_inner = _workers.run_tasks
def _announced(*a, **k):
    sys.stdout.write("phase\\n"); sys.stdout.flush()
    return _inner(*a, **k)
_workers.run_tasks = _announced
"""
