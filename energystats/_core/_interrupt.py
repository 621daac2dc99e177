"""Run a long compiled call so that Ctrl-C is honoured within about a second.

Python runs a signal handler (which raises :class:`KeyboardInterrupt`) only in
the main thread, and only between bytecodes: while the main thread sits in a
long compiled call, Ctrl-C waits for the call to end.  :func:`call` therefore
runs the call in a worker thread and lets the main thread wait for it in
short timeouts, so that the KeyboardInterrupt is raised in the main thread
at once.  Then:

* a *cancellable* call (``cancel`` given) is asked to stop: ``cancel()`` sets
  a flag that the compiled kernels read every few hundred points (see
  :mod:`energystats._lib._hartigan`), the main thread waits briefly (at most
  ``grace`` seconds) for the worker to return, calls ``reset()`` and
  re-raises;
* a call that cannot be cancelled (LAPACK) keeps running in its daemon
  thread until it finishes, and the KeyboardInterrupt is re-raised at once.
  Its memory (and its cores) stay in use until it ends in the background,
  and a process that exits meanwhile waits for it (OpenBLAS joins its
  threads at exit).

The worker must release the GIL for the main thread to get in: every
function run here is a kernel that computes ``with nogil`` (SciPy's own
``linkage`` and ``eigh`` hold the GIL for the whole call, which is why
:mod:`energystats._lib._hartigan` has its own ``ward_nn_chain`` and
``eigh_top``).

Called from any thread but the main one, :func:`call` just calls the
function: signals reach only the main thread, whose own handler (a
:func:`call` up the stack, or the caller's code) owns the cancellation.
"""
from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["call", "in_main_thread", "deferred_sigint", "POLL_S", "GRACE_S"]

#: how often the main thread wakes up to let a pending Ctrl-C through
POLL_S = 0.1
#: how long a cancelled call may take to return before the KeyboardInterrupt is re-raised
GRACE_S = 1.0


def in_main_thread():
    """Whether this is the main thread (the one that receives Ctrl-C)."""
    return threading.current_thread() is threading.main_thread()


def call(fn, /, *args, cancel=None, reset=None, grace=GRACE_S, inline=False, **kwargs):
    """``fn(*args, **kwargs)``, honouring Ctrl-C in the main thread within about ``POLL_S``.

    Parameters
    ----------
    fn : callable
        The long call; its return value is returned and any exception it
        raises propagates unchanged (same object, its traceback kept).
    cancel : callable, optional
        Makes ``fn`` return early (it should then raise KeyboardInterrupt).
        Called on Ctrl-C; the main thread then waits up to ``grace`` seconds
        for ``fn`` to return.  Without it, ``fn`` cannot be cancelled: it runs
        on in its daemon thread and the KeyboardInterrupt is re-raised at once.
    reset : callable, optional
        Undoes ``cancel``; called whenever the call ends in a KeyboardInterrupt
        (Ctrl-C here, or one raised by ``fn`` because somebody cancelled it),
        after the worker returned or the grace period ended.
    inline : bool, default False
        Call ``fn`` in this thread (``reset`` still follows a
        KeyboardInterrupt): for calls known to be short (well under a
        second), since a worker thread costs about a millisecond.
    """
    if not in_main_thread():
        return fn(*args, **kwargs)
    if inline:
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            if reset is not None:
                reset()
            raise
    box = {}
    # held until the worker is done.  The main thread waits on the lock itself, not on a
    # threading.Event: a KeyboardInterrupt raised inside Event.wait's Python code can land
    # between its condition's acquire and release ("RuntimeError: release unlocked lock",
    # seen once in the Ctrl-C tests on a loaded machine); a raw lock's acquire returns or
    # raises without leaving state half-changed
    running = threading.Lock()
    running.acquire()

    def target():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller unchanged
            box["error"] = exc
        finally:
            running.release()

    worker = threading.Thread(target=target, daemon=True,
                              name=f"energystats-{getattr(fn, '__name__', 'call')}")
    try:
        worker.start()
        while not running.acquire(timeout=POLL_S):
            pass
    except KeyboardInterrupt:
        try:
            if cancel is not None:
                cancel()
                running.acquire(timeout=grace)
        finally:
            if reset is not None:
                reset()
        raise
    if "error" in box:
        exc = box.pop("error")
        if isinstance(exc, KeyboardInterrupt) and reset is not None:
            reset()
        try:
            raise exc
        finally:
            del exc
    return box.pop("value")


@contextlib.contextmanager
def deferred_sigint():
    """Hold Ctrl-C back for the block and raise its KeyboardInterrupt when the block ends.

    Python raises the KeyboardInterrupt of a Ctrl-C at the next bytecode, wherever that is:
    inside a finaliser or a weak-reference callback (where CPython prints "Exception
    ignored" and drops it), or inside a compiled library's call into Python that clears
    the errors it meets.  Such a Ctrl-C is lost: the block goes on as if nothing happened
    (about one signal in 1 500 across OSQP's setup and solve on a loaded machine, measured
    with ``tests/balance/test_qp_interrupt.py``'s child).  In the block the handler only notes
    the signal, so nothing can swallow it; the previous handler is back when the block
    ends, and a noted Ctrl-C then raises KeyboardInterrupt (replacing any other exception
    of the block).  Yields ``pending()``, true once a Ctrl-C was noted, for the block to
    stop early at its own checkpoints.

    Only where the main thread runs with Python's default handler (the one that raises
    KeyboardInterrupt); elsewhere the block runs unchanged and ``pending()`` stays False.
    """
    if not in_main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield lambda: False
        return
    noted = []
    signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    try:
        yield lambda: bool(noted)
    finally:
        # a Ctrl-C landing from here on reaches the default handler again, and raises
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if noted:
            raise KeyboardInterrupt
