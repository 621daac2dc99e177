"""energystats._core._workers: answers in task order, the same in one or two workers, stray
output of a task (C's printf too) kept off the answers, and a worker that fails is an error
in the parent, never a hang."""
import sys

import numpy as np
import pytest

from energystats._core._workers import run_tasks

from . import _worker_tasks as tasks

posix = pytest.mark.skipif(sys.platform == "win32", reason="printf from ctypes.CDLL(None)")


@posix
@pytest.mark.parametrize("workers", [1, 2])
def test_stray_output_does_not_corrupt_the_answers(workers, capfd):
    """Was: a compiled library's printf in a worker went into the answers' pipe, and the
    parent's reader died ('PyMemoryView_FromBuffer(): info->buf must not be NULL') and left
    the parent waiting for ever (seen in a bootstrap of the Lalonde study)."""
    out = run_tasks(tasks.noisy, 3, [2, 0, 4], workers)
    assert [o.tolist() for o in out] == [[0, 3], [], [0, 3, 6, 9]]
    assert "stray C output" in capfd.readouterr().err


def test_an_answer_that_cannot_travel_is_an_error_not_a_hang():
    with pytest.raises(RuntimeError, match="worker process"):
        run_tasks(tasks.unpicklable, None, [1], 1)


def test_a_task_error_is_raised_in_the_parent():
    # both tasks fail: the first answer to arrive is raised (either, with two workers)
    with pytest.raises(ZeroDivisionError, match="task [23]"):
        run_tasks(tasks.fails, None, [2, 3], 2)
    with pytest.raises(ZeroDivisionError, match="task 2"):
        run_tasks(tasks.fails, None, [2], 2)
