"""Run Python calls in child processes that Ctrl-C stops at once, and that share the cores.

Some long calls hold the GIL in compiled code of other packages (the factorisation in
OSQP's ``setup`` does, for seconds at a few thousand rows): in a thread of this process
they can neither be interrupted (Python runs its Ctrl-C handler only in the main thread,
between bytecodes) nor run beside each other.  :func:`run_tasks` runs them in child
processes instead: the main thread waits for their answers in short timeouts, so that a
KeyboardInterrupt is raised within about :data:`POLL_S`, and then ends the children.

The children are started with :mod:`subprocess` (``python -c``, the parent's
``sys.path``), not with :mod:`multiprocessing`, whose 'spawn' and 'forkserver' methods
import the caller's ``__main__`` again in every child (a script without an
``if __name__ == "__main__":`` guard would run itself once per child), and whose 'fork'
copies a process that may hold OpenMP and BLAS threads.  Each child reads pickled
messages on its standard input and writes pickled answers on its standard output (its
``print`` goes to the standard error); what it computes is the function of a module,
named in the message, so the same call in the parent gives the same bits.
"""
from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading

__all__ = ["run_tasks", "in_worker", "POLL_S"]

#: how often the waiting main thread wakes up to let a pending Ctrl-C through
POLL_S = 0.1

#: set in a worker process: its calls need no child of their own to be interruptible (the
#: parent ends the worker on Ctrl-C)
_IN_WORKER = False


def in_worker():
    """Whether this process is a worker of :func:`run_tasks`."""
    return _IN_WORKER


_BOOT = ("import sys, pickle; sys.path[:] = pickle.load(sys.stdin.buffer); "
         "from energystats._core._workers import _serve; _serve()")


def _serve():
    """The child's loop: the common arguments once, then ``(i, task)`` messages until None;
    each answer ``(i, ok, value)`` (``value`` the exception when not ``ok``)."""
    import signal

    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it ends the child
    # the answers go to a copy of the stdout pipe; descriptor 1 itself is pointed at stderr,
    # so that nothing printed -- by Python or by a compiled library's printf (OSQP prints
    # some errors whatever its `verbose`) -- can corrupt them
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    fn, common = pickle.load(inp)
    while True:
        msg = pickle.load(inp)
        if msg is None:
            return
        i, task = msg
        try:
            answer = (i, True, fn(common, task))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent
            try:
                pickle.dumps(exc)
            except Exception:  # noqa: BLE001 - an exception that cannot travel
                exc = RuntimeError(f"{type(exc).__name__}: {exc}")
            answer = (i, False, exc)
        pickle.dump(answer, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()


class _Child:
    """One child process and the thread that reads its answers into a queue."""

    def __init__(self, fn, common, answers):
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        self.proc = subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        self.send(list(sys.path))
        self.send((fn, common))
        self.reader = threading.Thread(target=self._read, args=(answers,), daemon=True)
        self.reader.start()

    def send(self, obj):
        pickle.dump(obj, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.proc.stdin.flush()

    def _read(self, answers):
        try:
            while True:
                answers.put((self, pickle.load(self.proc.stdout)))
        except (EOFError, OSError, pickle.UnpicklingError):
            answers.put((self, None))             # the child ended (or was ended)
        except BaseException as exc:  # noqa: BLE001 - never leave the parent waiting
            answers.put((self, exc))

    def close(self, kill=False):
        if kill and self.proc.poll() is None:
            self.proc.kill()
        try:
            if self.proc.stdin and not self.proc.stdin.closed:
                if not kill:
                    self.send(None)
                self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


def run_tasks(fn, common, tasks, n_workers, on_result=None):
    """``[fn(common, task) for task in tasks]``, computed in ``n_workers`` child processes.

    ``fn`` is a module-level function (it is sent by name); ``common`` is sent once to each
    child, each task to one child when it is free.  ``on_result(i, value)`` is called in this
    thread as each answer arrives (for progress).  The first exception of a task is
    re-raised here, after the children are ended; a child that dies (killed for memory,
    say) is a RuntimeError; Ctrl-C ends every child and raises KeyboardInterrupt within
    about :data:`POLL_S`.
    """
    tasks = list(tasks)
    out = [None] * len(tasks)
    if not tasks:
        return out
    answers = queue.Queue()
    children, todo, done = [], iter(enumerate(tasks)), 0
    try:
        for _ in range(max(1, min(n_workers, len(tasks)))):
            child = _Child(fn, common, answers)
            children.append(child)
            nxt = next(todo, None)
            if nxt is not None:
                child.send(nxt)
        while done < len(tasks):
            try:
                child, msg = answers.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if msg is None:
                code = child.proc.wait()
                raise RuntimeError(f"a worker process ended unexpectedly (exit status {code}"
                                   + (", killed: out of memory?" if code in (-9, 137) else "")
                                   + ")")
            if isinstance(msg, BaseException):
                raise RuntimeError(f"a worker process's answer could not be read ({msg!r})")
            i, ok, value = msg
            if not ok:
                raise value
            out[i] = value
            done += 1
            if on_result is not None:
                on_result(i, value)
            nxt = next(todo, None)
            if nxt is not None:
                child.send(nxt)
    except BaseException:
        for child in children:
            child.close(kill=True)
        raise
    for child in children:
        child.close()
    return out
