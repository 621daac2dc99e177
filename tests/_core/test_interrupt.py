"""Ctrl-C during long clustering calls, and MemoryError before allocating.

The long calls run in a child process (``sys.executable``): the parent waits
until the child reports that the long phase began, sends SIGINT and checks
that the child gets a KeyboardInterrupt within DEADLINE_S, its computation
stopped, and it exits within DEADLINE_S.  The property is that the call stops:
a child that ends its call reports "finished", which fails the test whenever
it comes, so the bound on the seconds can be generous (over 10x the quiet
latency of 0.1-0.5 s: a loaded machine took 3 s).  Uninterrupted, the fits
take well over 5 s and the linkage about 5 s (sized on a 2-core machine).
"""
import os
import queue
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import energystats as es
from energystats._core import _interrupt
from energystats._lib import _hartigan

posix_signals = pytest.mark.skipif(not hasattr(signal, "SIGINT") or sys.platform == "win32",
                                   reason="needs POSIX signals")

#: the child must have left this long after SIGINT (generous: see the module docstring)
DEADLINE_S = 15.0

# The child announces "phase" from a wrapper around the kernel of the long phase
# (looked up on the module at call time), so the signal lands inside it.
CHILD = textwrap.dedent("""
    import faulthandler, signal, sys, time
    # a stalled child prints every thread's stack on SIGUSR1 (see _interrupt_child)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # Ctrl-C raises KeyboardInterrupt even when this child inherited SIGINT ignored (as a job
    # started in the background by a non-interactive shell does)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import energystats as es
    from energystats._lib import _hartigan

    def announce(name):
        inner = getattr(_hartigan, name)
        def wrapper(*args, **kwargs):
            # one write of the whole line: print() writes "phase" and the newline separately, and
            # two restarts' threads then interleave them ("phasephase", "")
            sys.stdout.write("phase\\n")
            sys.stdout.flush()
            return inner(*args, **kwargs)
        setattr(_hartigan, name, wrapper)

    rng = np.random.default_rng(0)
    {setup}
    print("ready", flush=True)
    t0 = time.perf_counter()
    try:
        {call}
    except KeyboardInterrupt:
        # a cancelled computation has stopped: no worker thread left running
        import threading
        others = [t for t in threading.enumerate() if t is not threading.main_thread()]
        for t in others:
            t.join(0.5)
        print("interrupted; running: " + ",".join(t.name for t in others if t.is_alive()), flush=True)
        sys.exit(0)
    print("finished in %.1f s" % (time.perf_counter() - t0), flush=True)
""")


def _interrupt_child(setup, call, wait_after_phase=0.5, timeout=120, wait_exit=True):
    """Run the child and SIGINT it in its long phase.

    Returns ``(interrupted_after, exited_after, lines, stderr)``: seconds from
    the signal to the child's "interrupted" line and to its exit (inf when
    they did not come within ``DEADLINE_S + 3``), its stdout lines and stderr.
    Without ``wait_exit`` the child is killed once it reported the interrupt.
    """
    code = CHILD.format(setup=setup, call=call)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put((time.perf_counter(), line.rstrip("\n")))
        lines.put((time.perf_counter(), None))  # end of output: the child has exited

    threading.Thread(target=read, daemon=True).start()
    seen = []
    interrupted = exited = float("inf")
    try:
        start = time.perf_counter()
        while not any("phase" in line for line in seen):
            try:
                _, line = lines.get(timeout=max(0.1, timeout - (time.perf_counter() - start)))
            except queue.Empty:
                raise ChildStalled(seen, _stacks(proc)) from None
            assert line is not None, (f"the child ended before its long phase: {seen}\n"
                                      f"{proc.stderr.read()}")
            seen.append(line)
        time.sleep(wait_after_phase)
        t_sig = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        while True:
            left = DEADLINE_S + 3 - (time.perf_counter() - t_sig)
            try:
                t, line = lines.get(timeout=max(0.01, left))
            except queue.Empty:
                break
            if line is None:
                exited = t - t_sig
                break
            seen.append(line)
            if line.startswith("interrupted"):
                interrupted = t - t_sig
                if not wait_exit:
                    break
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate()
    return interrupted, exited, seen, err


class ChildStalled(AssertionError):
    """The child did not reach its long phase in time; the message holds its stacks."""

    def __init__(self, seen, stacks):
        super().__init__(f"the child printed {seen} and then nothing; its stacks:\n{stacks}")


def _stacks(proc):
    """The stalled child's Python stacks (faulthandler, on SIGUSR1) and, where gdb is
    installed, its native ones; the child is killed afterwards."""
    native = ""
    if shutil.which("gdb"):
        try:
            native = subprocess.run(["gdb", "-p", str(proc.pid), "-batch", "-ex",
                                     "thread apply all bt 25"], capture_output=True, text=True,
                                    timeout=60).stdout
        except (OSError, subprocess.SubprocessError) as exc:
            native = f"(gdb failed: {exc})"
    proc.send_signal(signal.SIGUSR1)
    time.sleep(2)
    proc.kill()
    _, err = proc.communicate()
    return f"{err}\n--- native ---\n{native[-20000:]}"


def _check_interrupted(result, stopped=True):
    """The child raised KeyboardInterrupt within DEADLINE_S of SIGINT; with ``stopped``, its
    computation had stopped (no worker left running) and it exited within DEADLINE_S too."""
    interrupted, exited, lines, err = result
    out = "\n".join(lines)
    assert "finished" not in out, f"the call ended before the signal:\n{out}"
    assert interrupted < DEADLINE_S, (f"no KeyboardInterrupt within {DEADLINE_S} s of SIGINT "
                                      f"(after {interrupted:.2f} s):\n{out}\n{err}")
    if stopped:
        running = out.split("running:")[1].split("\n")[0].strip()
        assert running == "", f"the computation went on in the background: {running}"
        assert exited < DEADLINE_S, f"the child took {exited:.2f} s to exit:\n{out}\n{err}"


@posix_signals
class TestCtrlC:
    def test_hartigan_restarts_in_threads(self):
        # uniform data, many clusters, random seeding, many restarts: well over 5 s in all
        setup = ("X = rng.uniform(size=(8000, 2))\n"
                 "announce('hartigan')")
        call = ("es.EnergyClustering(12, algorithm='hartigan', init='random', n_init=60, "
                "max_iter=10000, n_threads=2, random_state=0).fit(X)")
        _check_interrupted(_interrupt_child(setup, call))

    @pytest.mark.parametrize("algorithm,n_threads", [("hartigan", 2), ("lloyd", 1)])
    def test_kernel_that_never_converges(self, algorithm, n_threads):
        # a negative tolerance makes every point move at every sweep: one kernel call runs
        # for minutes, so only the cancel flag read inside the sweeps can stop it in time
        setup = ("from energystats.clustering import _engine as ce\n"
                 "ce.tolerance = lambda G: -1.0\n"
                 "X = rng.uniform(size=(3000, 2))\n"
                 f"announce({algorithm!r})")
        call = (f"es.EnergyClustering(5, algorithm={algorithm!r}, init='random', n_init=2, "
                f"max_iter=10**8, n_threads={n_threads}, random_state=0).fit(X)")
        _check_interrupted(_interrupt_child(setup, call))

    def test_spectral_during_eigh(self):
        # LAPACK cannot stop: the KeyboardInterrupt is raised at once, LAPACK ends in the background
        setup = ("X = rng.normal(size=(6000, 2))\n"
                 "announce('eigh_top')")
        call = "es.EnergyClustering(3, algorithm='spectral', n_init=2, random_state=0).fit(X)"
        # LAPACK goes on in its daemon thread (and OpenBLAS holds the exit until it ends):
        # only the KeyboardInterrupt is prompt
        _check_interrupted(_interrupt_child(setup, call, wait_after_phase=0.3, wait_exit=False),
                           stopped=False)

    def test_cluster_test_reference_fits_in_threads(self):
        # the reference clusterings run in a pool: on Ctrl-C the running ones are cancelled,
        # not waited for
        # (the observed fit converges; every reference fit then runs until cancelled)
        setup = ("from energystats.clustering import _engine as ce\n"
                 "first = ce.tolerance\n"
                 "calls = []\n"
                 "ce.tolerance = lambda G: (calls.append(1), first(G) if len(calls) == 1 else -1.0)[1]\n"
                 "X = rng.uniform(size=(2500, 2))\n"
                 "announce('hartigan')")
        call = ("es.cluster_test(X, 4, n_resamples=50, n_init=1, init='random', max_iter=10**8, "
                "n_threads=2, rng=0)")
        _check_interrupted(_interrupt_child(setup, call, wait_after_phase=1.0))

    @pytest.mark.parametrize("search", ["exact", "ecp"])
    def test_e_cp3o_programme(self, search):
        # the exact programme on 1000 rows with K = 20 takes about 20 s; ecp's on 60 000 rows
        # about as long: the cancel flag is read once per t
        rows, kw = (1000, "search='exact', max_changepoints=20, delta=2") if search == "exact" \
            else (60000, "max_changepoints=5, delta=29")
        name = "cp3o_exact" if search == "exact" else "cp3o_path"
        setup = ("from energystats._lib import _changepoint as cp\n"
                 f"inner = cp.{name}\n"
                 "def wrapper(*a, **k):\n"
                 "    sys.stdout.write('phase\\n'); sys.stdout.flush()\n"
                 "    return inner(*a, **k)\n"
                 f"cp.{name} = wrapper\n"
                 f"X = rng.normal(size=({rows}, 2))")
        call = f"es.e_cp3o(X, {kw}, n_threads=2)"
        _check_interrupted(_interrupt_child(setup, call))

    def test_energy_linkage_during_merges(self):
        setup = ("X = rng.uniform(size=(16000, 1))\n"
                 "announce('ward_nn_chain')")
        call = "es.energy_linkage(X)"
        _check_interrupted(_interrupt_child(setup, call))


# -- the cancel flag in process ---------------------------------------------------------------


class TestCancelFlag:
    # n <= SHORT_N: the restarts run in the calling thread; above, in a worker
    @pytest.mark.parametrize("algorithm,n_threads,n", [("hartigan", 1, 3000), ("hartigan", 2, 3000),
                                                       ("lloyd", 1, 2000), ("lloyd", 2, 2000)])
    def test_flag_reset_after_cancelled_fit(self, algorithm, n_threads, n):
        from energystats.clustering._engine import SHORT_N

        assert (n <= SHORT_N) == (n == 2000)
        rng = np.random.default_rng(1)
        X_long = rng.uniform(size=(n, 2))
        X = np.vstack([rng.normal(0, 1, (60, 2)), rng.normal(4, 1, (60, 2))])
        fresh = es.EnergyClustering(3, algorithm=algorithm, n_init=3, random_state=5,
                                    n_threads=n_threads).fit(X)
        timer = threading.Timer(0.3, _hartigan.cancel)  # as the Ctrl-C handler would
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                es.EnergyClustering(12, algorithm=algorithm, init="random", n_init=200,
                                    max_iter=10000, random_state=0, n_threads=n_threads).fit(X_long)
        finally:
            timer.cancel()
            timer.join()
            was_set = _hartigan.cancelled()
            _hartigan.reset()
        assert not was_set, "the cancel flag was left set"
        again = es.EnergyClustering(3, algorithm=algorithm, n_init=3, random_state=5,
                                    n_threads=n_threads).fit(X)
        np.testing.assert_array_equal(again.labels_, fresh.labels_)
        assert again.W_ == fresh.W_

    def test_cancelled_kernel_raises_instead_of_returning(self):
        from energystats.clustering import _engine as ce
        from energystats._core._metrics import resolve_metric

        X = np.random.default_rng(2).normal(size=(600, 2))
        G = ce.centred_gram(ce.semimetric_matrix(X, resolve_metric("energy", 1.0, 1.0), 1))
        k = 4
        for kernel in (_hartigan.hartigan, _hartigan.lloyd, _hartigan.init_bookkeeping):
            labels = ce.random_labels(600, k, np.random.default_rng(0))
            QX, Q, sizes = np.empty((600, k)), np.empty(k), np.empty(k, dtype=np.intp)
            _hartigan.cancel()
            try:
                with pytest.raises(KeyboardInterrupt):
                    if kernel is _hartigan.init_bookkeeping:
                        kernel(G, labels, k, QX, Q, sizes)
                    else:
                        kernel(G, labels, k, QX, Q, sizes, 100, 0.0)
            finally:
                _hartigan.reset()
        y = np.random.default_rng(0).uniform(size=45)
        _hartigan.cancel()
        try:
            with pytest.raises(KeyboardInterrupt):
                _hartigan.ward_nn_chain(y, 10, np.empty((9, 4)), np.ones(10, dtype=np.intc),
                                        np.empty(10, dtype=np.intc))
        finally:
            _hartigan.reset()


class TestCall:
    def test_returns_and_propagates_unchanged(self):
        assert _interrupt.call(lambda a, b=0: a + b, 2, b=3) == 5
        err = ValueError("boom")

        def fail():
            raise err

        with pytest.raises(ValueError) as info:
            _interrupt.call(fail)
        assert info.value is err

    def test_worker_keyboard_interrupt_resets(self):
        resets = []

        def cancelled():
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            _interrupt.call(cancelled, cancel=lambda: None, reset=lambda: resets.append(1))
        assert resets == [1]

    def test_other_threads_call_directly(self):
        seen = {}

        def where():
            return threading.current_thread()

        t = threading.Thread(target=lambda: seen.setdefault("t", _interrupt.call(where)))
        t.start()
        t.join()
        assert seen["t"] is t
        assert _interrupt.call(where) is not threading.main_thread()


class _SignalledInFinaliser:
    """Sends itself Ctrl-C from its finaliser, where Python's handler then runs: its
    KeyboardInterrupt is "ignored" by CPython (the way a real Ctrl-C got lost in OSQP's setup)."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100):   # bytecodes: the handler runs here, inside the finaliser
            pass


@posix_signals
class TestDeferredSigint:
    @pytest.fixture(autouse=True)
    def default_handler(self):
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        yield
        signal.signal(signal.SIGINT, previous)

    def test_a_ctrl_c_inside_a_finaliser_is_raised_after_the_block(self):
        reached = []
        with pytest.raises(KeyboardInterrupt):
            with _interrupt.deferred_sigint() as pending:
                assert not pending()
                obj = _SignalledInFinaliser()
                del obj
                reached.append(pending())
        assert reached == [True]     # the block ran to its end, the signal noted
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def test_replaces_the_blocks_own_error_and_restores_the_handler(self):
        reached = []
        with pytest.raises(KeyboardInterrupt):
            with _interrupt.deferred_sigint():
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(100):
                    pass
                reached.append(1)
                raise ValueError("the block's own error")
        assert reached == [1]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with _interrupt.deferred_sigint() as pending:   # no signal: nothing raised
            pass
        assert not pending()

    def test_other_handlers_and_threads_are_left_alone(self):
        def mine(signum, frame):
            pass

        signal.signal(signal.SIGINT, mine)
        with _interrupt.deferred_sigint() as pending:
            assert signal.getsignal(signal.SIGINT) is mine
        assert not pending()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        seen = []

        def in_thread():
            with _interrupt.deferred_sigint() as pending:
                seen.append((pending(), signal.getsignal(signal.SIGINT)))

        t = threading.Thread(target=in_thread)
        t.start()
        t.join()
        assert seen == [(False, signal.default_int_handler)]


# -- memory: fail at once, before allocating -------------------------------------------------

MEMORY_CHILD = textwrap.dedent("""
    import resource, sys, time
    import numpy as np
    import energystats as es
    X = np.random.default_rng(0).normal(size=(25000, 3))
    es.EnergyClustering, es.energy_linkage  # the lazy imports, before the limit and the clock
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))
    t0 = time.perf_counter()
    try:
        {call}
    except MemoryError as exc:
        print("MemoryError %.2f s: %s" % (time.perf_counter() - t0, exc), flush=True)
        sys.exit(0)
    print("no error", flush=True)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as on Linux")
@pytest.mark.parametrize("call", ["es.energy_linkage(X)", "es.EnergyClustering(2, engine='matrix').fit(X)"])
def test_too_big_fails_at_once_under_ulimit(call):
    pytest.importorskip("resource")
    proc = subprocess.run([sys.executable, "-c", MEMORY_CHILD.format(call=call)],
                          capture_output=True, text=True, timeout=60)
    out = proc.stdout.strip()
    assert out.startswith("MemoryError"), f"{out}\n{proc.stderr}"
    seconds = float(out.split()[1])
    assert seconds < 20.0  # "at once": a hang guard, over 10x the quiet time (a fraction of a second)
    assert "GiB" in out
    assert "sample" in out


def test_spectral_checks_its_copy_of_the_gram_matrix(monkeypatch):
    # room for the n×n matrix of distances, not for LAPACK's copy of it
    n = 500
    X = np.random.default_rng(0).normal(size=(n, 3))
    monkeypatch.setenv("ENERGYSTATS_AVAILABLE_MEMORY", str(8 * n * n + 100_000))
    es.EnergyClustering(2, n_init=1, random_state=0).fit(X)
    with pytest.raises(MemoryError, match="spectral clustering of 500 points"):
        es.EnergyClustering(2, algorithm="spectral", n_init=1, random_state=0).fit(X)
