"""Tests of the dependency-free progress bar (energystats._core._progress)."""
import io
import sys
import threading

import pytest

from energystats._core import _progress
from energystats._core._progress import Progress, _format_time, progress_bar


class TTY(io.StringIO):
    """A StringIO that says it is a terminal."""

    def isatty(self):
        return True


class Clock:
    """A settable replacement for time.monotonic."""

    def __init__(self, t=0.0):
        self.t = t

    def __call__(self):
        return self.t


@pytest.fixture
def clock(monkeypatch):
    c = Clock(100.0)
    monkeypatch.setattr(_progress.time, "monotonic", c)
    return c


@pytest.fixture(autouse=True)
def no_open_bars():
    """Bars some tests leave open (never closed) must not hide the ambient setting's bars."""
    yield
    _progress._OPEN.clear()


def last_frame(text):
    return text.rstrip("\n").split("\r")[-1].rstrip()


def test_format_time():
    assert _format_time(0) == "00:00"
    assert _format_time(65) == "01:05"
    assert _format_time(3599.4) == "59:59"
    assert _format_time(3725) == "1:02:05"


def test_terminal_rendering(clock):
    out = TTY()
    bar = Progress(999, "permutations", "perm", file=out)
    assert last_frame(out.getvalue()) == "permutations:   0% 0/999 [00:00<?, ? perm/s]"
    clock.t += 4.0                    # 370 in 4 s: 92.5 perm/s, 629 left: 6.8 s
    bar.update(370)
    assert bar.n == 370 and bar.total == 999
    assert last_frame(out.getvalue()) == "permutations:  37% 370/999 [00:04<00:07, 92.5 perm/s]"
    clock.t += 4.0
    bar.update(629)
    clock.t += 1.0
    bar.close()
    text = out.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    assert last_frame(text) == "permutations: 100% 999/999 [00:09, 111.0 perm/s]"


def test_terminal_redraw_throttled(clock):
    out = TTY()
    bar = Progress(100, "d", "it", file=out, min_interval=1.0)
    draws = [out.getvalue().count("\r")]
    for dt in (0.5, 0.5, 0.5, 0.7, 0.1):   # t = 0.5, 1.0, 1.5, 2.2, 2.3
        clock.t += dt
        bar.update()
        draws.append(out.getvalue().count("\r"))
    assert draws == [1, 1, 2, 2, 3, 3]
    bar.close()                            # the final redraw is not throttled
    assert out.getvalue().count("\r") == 4
    assert last_frame(out.getvalue()).startswith("d:   5% 5/100 [00:02, ")


def test_log_mode_one_line_per_5s_and_final(clock):
    out = io.StringIO()
    bar = Progress(100, "permutations", "perm", file=out, min_interval=0.0)
    assert out.getvalue() == ""            # nothing at the start
    for _ in range(35):                    # one step a second for 35 s
        clock.t += 1.0
        bar.update()
    lines = out.getvalue().splitlines()
    assert len(lines) == 7                 # at 5, 10, ..., 35 s (issue 30: every ~5 s, was 10)
    assert lines[0] == "permutations:   5% 5/100 [00:05<01:35, 1.0 perm/s]"
    assert "\r" not in out.getvalue()
    clock.t += 0.5
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 8 and out.getvalue().endswith("\n")
    assert lines[-1].startswith("permutations:  35% 35/100 [00:36, ")   # total elapsed


@pytest.mark.parametrize("stream", [io.StringIO, TTY])
def test_close_twice_writes_end_once(clock, stream):
    out = stream()
    with Progress(10, "d", "it", file=out) as bar:
        clock.t += 6.0                     # long enough for a final line in a log too
        bar.update(10)
    text = out.getvalue()
    bar.close()
    bar.update()                           # after close: counted, not drawn
    assert out.getvalue() == text and text.count("\n") == (1 if stream is TTY else 2)
    assert bar.n == 11


@pytest.mark.parametrize("stream", [io.StringIO, TTY])
@pytest.mark.parametrize("total, enabled", [(0, True), (10, False)])
def test_silent(clock, stream, total, enabled):
    out = stream()
    bar = Progress(total, "d", "it", file=out, min_interval=0.0, enabled=enabled)
    for _ in range(30):
        clock.t += 1.0
        bar.update()
    bar.close()
    bar.close()
    assert out.getvalue() == ""


def test_closed_stream_does_not_raise(clock):
    out = TTY()
    bar = Progress(10, "d", "it", file=out, min_interval=0.0)
    out.close()
    clock.t += 1.0
    bar.update()
    bar.close()


def test_broken_pipe_disables_bar(clock):
    class Broken(io.StringIO):
        writes = 0

        def write(self, s):
            Broken.writes += 1
            raise BrokenPipeError

    bar = Progress(10, "d", "it", file=Broken(), min_interval=0.0)
    for _ in range(20):
        clock.t += 10.0
        bar.update()
    bar.close()
    assert Broken.writes == 1
    assert bar.n == 20


def test_progress_bar_factory(monkeypatch):
    assert progress_bar(10, False) is None
    assert progress_bar(10, None) is None
    assert progress_bar(0, True) is None
    assert progress_bar(0, io.StringIO()) is None
    out = io.StringIO()
    bar = progress_bar(10, out)
    assert isinstance(bar, Progress) and bar.file is out
    assert (bar.desc, bar.unit, bar.total) == ("permutations", "perm", 10)
    err = TTY()
    monkeypatch.setattr(sys, "stderr", err)   # stderr is looked up when the bar is made
    bar = progress_bar(5, True, desc="rounds", unit="r")
    assert bar.file is err
    bar.update(5)
    bar.close()
    assert "rounds: 100% 5/5" in err.getvalue()


def test_threads_sum_exactly():
    out = TTY()
    bar = Progress(4000, "d", "it", file=out, min_interval=0.0)

    def work():
        for _ in range(1000):
            bar.update()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bar.close()
    assert bar.n == 4000
    assert last_frame(out.getvalue()).startswith("d: 100% 4000/4000 [")


# -- issue 30: a line every few seconds even while one long batch runs ----------

def test_heartbeat_redraws_without_steps(clock):
    """No step counted for 12 s (one long batch): the heartbeat writes the elapsed time."""
    out = io.StringIO()
    bar = Progress(999, "permutations", "perm", file=out, heartbeat=False)
    for _ in range(12):                    # the heartbeat thread calls tick() every second
        clock.t += 1.0
        bar.tick()
    lines = out.getvalue().splitlines()
    assert lines == ["permutations:   0% 0/999 [00:05<?, 0 perm/s]",
                     "permutations:   0% 0/999 [00:10<?, 0 perm/s]"]
    bar.close()


def test_heartbeat_on_a_terminal(clock):
    out = TTY()
    bar = Progress(10, "d", "it", file=out, heartbeat=False)
    clock.t += 3.0
    bar.tick()
    assert last_frame(out.getvalue()) == "d:   0% 0/10 [00:03<?, 0 it/s]"
    bar.close()


def test_heartbeat_thread_stops_at_close():
    out = io.StringIO()
    bar = Progress(10, "d", "it", file=out)
    assert bar._thread.is_alive() and bar._thread.daemon
    bar.close()
    bar._thread.join(timeout=10)
    assert not bar._thread.is_alive()
    assert Progress(0, "d", "it", file=out)._thread is None   # nothing to show, no thread


def test_fractions_of_a_step(clock):
    """A long batch reports its parts: the bar moves before the batch ends."""
    out = io.StringIO()
    bar = Progress(999, "permutations", "perm", file=out, heartbeat=False)
    for _ in range(10):                    # a batch of 512 in 10 parts, 2.4 s each
        clock.t += 2.4
        bar.update(51.2)
    lines = out.getvalue().splitlines()
    assert lines == ["permutations:  15% 153/999 [00:07<00:40, 21.3 perm/s]",
                     "permutations:  30% 307/999 [00:14<00:32, 21.3 perm/s]",
                     "permutations:  46% 460/999 [00:22<00:25, 21.3 perm/s]"]
    bar.close()
    assert bar.n == pytest.approx(512)


def test_ambient_and_nested(clock):
    out = io.StringIO()
    assert progress_bar(10, False) is None
    with _progress.ambient(out):
        outer = progress_bar(4, False, desc="pairs", unit="perm", nested=True)
        assert isinstance(outer, Progress) and outer.file is out
        assert progress_bar(2, False) is None       # an inner loop: no second bar
        _progress.advance(3)                        # ... counts on the outer one
        assert outer.n == 3
        clock.t += 6.0
        outer.close()
        plain = progress_bar(5, False)
        _progress.advance(2)                        # not nested: not counted there
        assert plain.n == 0
        plain.close()
    assert progress_bar(10, False) is None
    assert "pairs: 100%" not in out.getvalue() and "pairs:  75% 3/4" in out.getvalue()


def test_a_long_batch_moves_the_bar(monkeypatch):
    """Issue 30: the bar sat at 0 % for 24 s, then jumped to 51 %: the tiled engine's batch is
    up to 512 relabellings (of 999), and the bar moved once per batch.  Now it moves with
    the batch's tiles; the p-value is the same with or without the bar."""
    import numpy as np

    from energystats._core import _group_sums
    from energystats import energy_test

    ticks = [0.0]

    def clock():                          # one second per look: every update redraws
        ticks[0] += 1.0
        return ticks[0]

    monkeypatch.setattr(_progress.time, "monotonic", clock)
    monkeypatch.setattr(_group_sums, "TILE_ROWS", 16)   # 64 rows: 10 tiles per batch
    seen = []
    real = _group_sums.TiledEngine.group_sums

    def spy(self, codes):
        seen.append(codes.shape[0])
        return real(self, codes)

    monkeypatch.setattr(_group_sums.TiledEngine, "group_sums", spy)
    X = np.random.default_rng(0).normal(size=(64, 2))
    labels = np.repeat([0, 1], 32)
    kw = dict(labels=labels, n_resamples=13, rng=1, memory_budget=30000, method="pairwise")
    out = TTY()
    res = energy_test(X, progress=out, **kw)
    # the observed labelling, then the 13 relabellings in batches (one batch of 13, or 10 and 3
    # where the memory of two threads is set aside: the batch size follows the machine's
    # cores, never n_threads)
    assert seen[0] == 1 and sum(seen[1:]) == 13 and max(seen[1:]) > 1, seen
    ends = set(np.cumsum([0] + seen[1:]).tolist())
    counts = {int(f.split("/")[0].split()[-1]) for f in out.getvalue().split("\r") if "/" in f}
    assert counts - ends, counts          # frames inside a batch (before: only its ends)
    assert res.pvalue == energy_test(X, **kw).pvalue


def test_log_mode_short_run_writes_nothing(clock):
    # the command line's ambient bars: a short run is reported by the command itself
    out = io.StringIO()
    with Progress(10, "d", "it", file=out, quiet_if_short=True) as bar:
        clock.t += 4.9
        bar.update(10)
    assert out.getvalue() == ""


def test_log_mode_asked_for_writes_the_final_line(clock):
    # progress=True from Python (a notebook's stderr is no terminal): a short run still says
    # it ran (it printed nothing at all, and test_homogeneity's progress test failed)
    out = io.StringIO()
    with Progress(10, "d", "it", file=out) as bar:
        clock.t += 4.9
        bar.update(10)
    assert out.getvalue().splitlines() == ["d: 100% 10/10 [00:05, 2.0 it/s]"]
