"""Time versus n, log-log: energystats.energy_distance against dcor and scipy.

Same process, same data, best of a few repeats.  d = 10: energystats'
streamed O(n^2) reduction (both cores) against ``dcor.energy_distance``;
d = 1: energystats' sorted O(n log n) path against ``scipy.stats.energy_distance``
(which returns sqrt(E)) and dcor.  Writes ``timing.png`` and ``timing.inc``.
"""
import time

import numpy as np
import pandas as pd

from _common import args, machine, plt, rst_table, save, write_inc  # noqa: I001 (sets sys.path)

import energystats as es  # noqa: E402


def best_time(f, repeat):
    f()                                    # warm-up (thread pool, caches)
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    a = args(__doc__)
    rng = np.random.default_rng(0)
    repeat = 2 if a.quick else 3
    peers = {}
    try:
        import dcor
        peers["dcor"] = lambda x, y: dcor.energy_distance(x, y)
    except ImportError:
        pass
    import scipy.stats

    settings = {
        10: [250, 500, 1000, 2000] + ([] if a.quick else [4000]),
        1: [1000, 10_000, 100_000] + ([] if a.quick else [1_000_000]),
    }
    rows = []
    for d, ns in settings.items():
        for n in ns:
            x, y = rng.normal(size=(n, d)), rng.normal(0.1, 1, size=(n, d))
            if d == 1:
                x, y = x[:, 0], y[:, 0]
            e = es.energy_distance(x, y)
            rows.append(dict(d=d, n=n, tool="energystats", seconds=best_time(lambda: es.energy_distance(x, y), repeat), E=e))
            for name, f in peers.items():
                if n * n > (1.1e7 if a.quick else 2e8):   # dcor forms the n x n matrix
                    continue
                rows.append(dict(d=d, n=n, tool=name, seconds=best_time(lambda: f(x, y), repeat), E=float(f(x, y))))
            if d == 1:
                val = scipy.stats.energy_distance(x, y) ** 2 / 2   # docs/conventions.rst: scipy = sqrt(2 ∫(F-G)^2); E = 2 ∫(F-G)^2
                rows.append(dict(d=d, n=n, tool="scipy", seconds=best_time(lambda: scipy.stats.energy_distance(x, y), repeat),
                                 E=2 * val))
    df = pd.DataFrame(rows)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, d in zip(axes, (10, 1)):
        for tool, g in df[df.d == d].groupby("tool"):
            ax.loglog(g.n, g.seconds, "o-", label=tool)
        ns = sorted(df[df.d == d].n.unique())
        ax.set_xticks(ns, [f"{n:,}" for n in ns], minor=False)
        ax.minorticks_off()
        ax.set_xlabel("n = m (points per sample)")
        ax.set_ylabel("seconds (best of %d)" % repeat)
        ax.set_title(f"energy distance, d = {d}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    save(fig, a.out, "timing")
    wide = df.pivot_table(index=["d", "n"], columns="tool", values="seconds")
    wide.index = [f"d={d}, n={n}" for d, n in wide.index]
    wide.index.name = "setting"
    # the tools must agree on the value they time (scipy converted from sqrt)
    agree = df.groupby(["d", "n"]).E.agg(lambda s: float(np.ptp(s) / max(abs(s).max(), 1e-300)))
    write_inc(a.out, "timing",
              "Seconds per call (best of %d), lower is better:\n\n%s\n"
              "Largest relative disagreement between the tools' values of E at equal (d, n): %.1e.\n"
              "Machine: %s.\n" % (repeat, rst_table(wide, "{:.3g}"), agree.max(), machine()))


if __name__ == "__main__":
    main()
