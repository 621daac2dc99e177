"""A small, dependency-free progress bar for long permutation loops.

On a terminal one line is redrawn in place (percent, count/total,
elapsed<time left, rate): ``permutations:  37% 370/999 [00:04<00:07, 92.1 perm/s]``.
Elsewhere (a log file, a pipe) a full line is printed every ``LOG_INTERVAL``
(5) seconds and once at the end (a bar asked for with ``progress=True`` always
writes that final line; the command line's ambient bars leave it out when the
run took less than the interval, since the command reports the time anyway).  A heartbeat thread redraws the line when no
step has been counted for that long (a long batch), so that the elapsed time
still advances.  A closed or broken stream never raises.

Callers that have no ``progress`` argument of their own report through the
*ambient* setting (:func:`ambient`, used by the command-line tool): while it is
on, :func:`progress_bar` called with ``progress=False`` makes a bar anyway,
unless another bar is open (an inner loop of an outer bar's work); such an
inner loop counts its steps with :func:`advance`, which moves the open bar only
when that bar was made with ``nested=True`` (it counts the inner steps).
"""
from __future__ import annotations

import contextlib
import sys
import threading
import time

__all__ = ["Progress", "progress_bar", "ambient", "advance"]

LOG_INTERVAL = 5.0  # seconds between lines when the stream is not a terminal
HEARTBEAT = 1.0  # seconds between the heartbeat thread's looks at the bar

#: the ambient setting (False, True or a stream) and the bars open now (innermost last)
_AMBIENT = {"progress": False}
_OPEN = []
_OPEN_LOCK = threading.Lock()


def interactive(stream):
    """Whether ``stream`` is read by a person as it is written: a terminal, or the output
    stream of a Jupyter/IPython kernel (a notebook's cell output, which is not a terminal but
    redraws a line on a carriage return)."""
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError, OSError):
        pass
    return (type(stream).__module__ or "").split(".")[0] == "ipykernel"


def _format_time(seconds):
    """``MM:SS``, or ``H:MM:SS`` from one hour on."""
    s = int(round(max(seconds, 0.0)))
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{h:d}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """Progress of ``total`` steps, written to a stream.

    Parameters
    ----------
    total : int
        Number of steps expected.  With ``total == 0`` nothing is written.
    desc : str
        Label at the start of the line.
    unit : str
        Name of one step, used in the rate (``perm/s``).
    file : file-like, optional
        Where to write; ``sys.stderr`` (looked up now) when None.
    min_interval : float, optional
        Least number of seconds between two redraws (the last one excepted).
    enabled : bool, optional
        When false, nothing is written at all.
    nested : bool, optional
        Inner loops may count their steps on this bar with :func:`advance`.
    heartbeat : bool, optional
        Run a daemon thread that redraws the line (elapsed time, time left)
        when no step was counted for a redraw interval; default True.
    clock : callable, optional
        Seconds as a float (default :func:`time.monotonic`); tests pass a fake one.
    quiet_if_short : bool, optional
        When the stream is not a terminal, leave the final line out if the run
        took less than one interval (the command line's ambient bars).

    Notes
    -----
    :meth:`update` is thread-safe and takes fractions of a step (a part of a
    long batch); the count shown is the whole steps done.  Errors of a closed stream (``ValueError``,
    ``OSError`` such as ``BrokenPipeError``) are swallowed and disable the bar.
    """

    def __init__(self, total, desc, unit, *, file=None, min_interval=0.5, enabled=True,
                 nested=False, heartbeat=True, clock=None, quiet_if_short=False):
        self.total = int(total)
        self.quiet_if_short = bool(quiet_if_short)
        self.n = 0
        self.nested = bool(nested)
        self._clock = time.monotonic if clock is None else clock
        self.desc, self.unit = desc, unit
        self.file = sys.stderr if file is None else file
        self.min_interval = float(min_interval)
        self._enabled = bool(enabled) and self.total > 0
        self._closed = False
        self._lock = threading.Lock()
        self._width = 0  # length of the line last drawn on a terminal
        self._tty = interactive(self.file)   # a terminal or a notebook: one line redrawn
        self._start = self._last = self._clock()
        if self._tty and self._enabled:
            self._draw(self._start)
        with _OPEN_LOCK:
            _OPEN.append(self)
        self._stop = threading.Event()
        self._thread = None
        if heartbeat and self._enabled:
            self._thread = threading.Thread(target=self._beat, daemon=True,
                                            name="energystats-progress")
            self._thread.start()

    @property
    def interval(self):
        """Least seconds between two lines: ``min_interval`` on a terminal, else LOG_INTERVAL."""
        return self.min_interval if self._tty else max(self.min_interval, LOG_INTERVAL)

    def _beat(self):
        while not self._stop.wait(max(HEARTBEAT, self.min_interval)):
            self.tick()

    def tick(self):
        """Redraw when a redraw interval has passed since the last line (the heartbeat)."""
        with self._lock:
            if self._enabled and not self._closed:
                now = self._clock()
                if now - self._last >= max(self.interval, HEARTBEAT):
                    self._draw(now)

    def _line(self, now, final=False):
        elapsed = now - self._start
        done = int(self.n + 1e-9)  # whole steps (update takes fractions of one)
        pct = int(100 * done / self.total)
        rate = self.n / elapsed if elapsed > 0 else None
        if final:
            when = _format_time(elapsed)
        else:
            eta = "?" if not self.n or rate is None else _format_time((self.total - self.n) / rate)
            when = f"{_format_time(elapsed)}<{eta}"
        speed = "?" if rate is None else f"{rate:.1f}" if rate >= 1 else f"{rate:.3g}"
        return f"{self.desc}: {pct:3d}% {done}/{self.total} [{when}, {speed} {self.unit}/s]"

    def _write(self, text):
        try:
            self.file.write(text)
            self.file.flush()
        except (ValueError, OSError):
            self._enabled = False

    def _draw(self, now, final=False):
        self._last = now
        line = self._line(now, final)
        if self._tty:
            pad = " " * max(self._width - len(line), 0)
            self._width = len(line)
            self._write("\r" + line + pad + ("\n" if final else ""))
        else:
            self._write(line + "\n")

    def update(self, n=1):
        """Count ``n`` more steps done (a fraction for a part of one), redrawing when it is time to."""
        with self._lock:
            self.n += n
            if not self._enabled or self._closed:
                return
            now = self._clock()
            if now - self._last >= self.interval:
                self._draw(now)

    def close(self):
        """Write the final line (total elapsed time); later calls do nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop.set()
            with _OPEN_LOCK:
                if self in _OPEN:
                    _OPEN.remove(self)
            now = self._clock()
            if self._enabled and (self._tty or not self.quiet_if_short
                                  or now - self._start >= self.interval):
                self._draw(now, final=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def progress_bar(total, progress, desc="permutations", unit="perm", *, nested=False):
    """A :class:`Progress` when ``progress`` is truthy and ``total > 0``, else None.

    ``progress`` is 'auto' (a bar on ``sys.stderr`` when it is interactive, a terminal;
    otherwise as False), a bool (True: on ``sys.stderr``) or a file-like object (with
    ``write``) to write to; ``desc`` and ``unit`` as in :class:`Progress`.  A false
    ``progress`` takes the :func:`ambient` setting when no bar is open.
    """
    from_ambient = False
    if isinstance(progress, str):
        if progress != "auto":
            raise ValueError(f"`progress` must be 'auto', True, False or a stream (with write); "
                             f"got {progress!r}.")
        progress = interactive(sys.stderr)   # 'auto': on a terminal or a notebook only
        from_ambient = True
    if not progress and not hasattr(progress, "write"):
        with _OPEN_LOCK:
            progress = _AMBIENT["progress"] if not _OPEN else False
        from_ambient = True
    file = progress if hasattr(progress, "write") else None
    if total <= 0 or (file is None and not progress):
        return None
    return Progress(total, desc, unit, file=file, nested=nested, quiet_if_short=from_ambient)


@contextlib.contextmanager
def ambient(progress):
    """Within the block, calls without a ``progress`` argument show progress on ``progress``
    (True: ``sys.stderr``; a stream; False: nothing), as :func:`progress_bar` describes."""
    before = _AMBIENT["progress"]
    _AMBIENT["progress"] = progress
    try:
        yield
    finally:
        _AMBIENT["progress"] = before


def advance(n):
    """Count ``n`` steps of an inner loop on the innermost open bar, if it was made ``nested``."""
    with _OPEN_LOCK:
        bar = _OPEN[-1] if _OPEN else None
    if bar is not None and bar.nested:
        bar.update(n)
