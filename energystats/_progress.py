"""A small, dependency-free progress bar for long permutation loops.

On a terminal one line is redrawn in place (percent, count/total,
elapsed<time left, rate): ``permutations:  37% 370/999 [00:04<00:07, 92.1 perm/s]``.
Elsewhere (a log file, a pipe) a full line is printed at most every ten
seconds and once at the end.  A closed or broken stream never raises.
"""
from __future__ import annotations

import sys
import threading
import time

__all__ = ["Progress", "progress_bar"]

LOG_INTERVAL = 10.0  # seconds between lines when the stream is not a terminal


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

    Notes
    -----
    :meth:`update` is thread-safe.  Errors of a closed stream (``ValueError``,
    ``OSError`` such as ``BrokenPipeError``) are swallowed and disable the bar.
    """

    def __init__(self, total, desc, unit, *, file=None, min_interval=0.5, enabled=True):
        self.total = int(total)
        self.n = 0
        self.desc, self.unit = desc, unit
        self.file = sys.stderr if file is None else file
        self.min_interval = float(min_interval)
        self._enabled = bool(enabled) and self.total > 0
        self._closed = False
        self._lock = threading.Lock()
        self._width = 0  # length of the line last drawn on a terminal
        try:
            self._tty = bool(self.file.isatty())
        except (AttributeError, ValueError, OSError):
            self._tty = False
        self._start = self._last = time.monotonic()
        if self._tty and self._enabled:
            self._draw(self._start)

    def _line(self, now, final=False):
        elapsed = now - self._start
        pct = int(100 * self.n / self.total)
        rate = self.n / elapsed if elapsed > 0 else None
        if final:
            when = _format_time(elapsed)
        else:
            eta = "?" if not self.n or rate is None else _format_time((self.total - self.n) / rate)
            when = f"{_format_time(elapsed)}<{eta}"
        speed = "?" if rate is None else f"{rate:.1f}" if rate >= 1 else f"{rate:.3g}"
        return f"{self.desc}: {pct:3d}% {self.n}/{self.total} [{when}, {speed} {self.unit}/s]"

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
        """Count ``n`` more steps done, redrawing when it is time to."""
        with self._lock:
            self.n += n
            if not self._enabled or self._closed:
                return
            now = time.monotonic()
            wait = self.min_interval if self._tty else max(self.min_interval, LOG_INTERVAL)
            if now - self._last >= wait:
                self._draw(now)

    def close(self):
        """Write the final line (total elapsed time); later calls do nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._enabled:
                self._draw(time.monotonic(), final=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def progress_bar(total, progress, desc="permutations", unit="perm"):
    """A :class:`Progress` when ``progress`` is truthy and ``total > 0``, else None.

    ``progress`` is a bool (True: on ``sys.stderr``) or a file-like object
    (with ``write``) to write to; ``desc`` and ``unit`` as in :class:`Progress`.
    """
    file = progress if hasattr(progress, "write") else None
    if total <= 0 or (file is None and not progress):
        return None
    return Progress(total, desc, unit, file=file)
