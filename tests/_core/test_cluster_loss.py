"""A Dask cluster that goes away mid-run: a clear RuntimeError, never a hang.

Each test starts its own two-worker ``LocalCluster(processes=True)``, runs a Dask-backend test
that takes tens of seconds there, and takes the cluster away from another thread two seconds
in: the scheduler closed (the call fails at once, saying the cluster went away), or every
worker removed (the call gives up after ``NO_WORKERS_TIMEOUT`` seconds, here 3, and cancels
its tasks).  Without ``_core._dask.dask_compute`` the first raised Dask's bare
"Futures cancelled for reason: unknown" and the second waited for ever.
"""
import threading
import time

import numpy as np
import pytest

import energystats as es
from energystats._core import _dask as core_dask

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.dask


def _long_call():
    g = np.random.default_rng(0)
    x, y = g.normal(size=(3000, 3)), g.normal(size=(3000, 3))
    return es.independence_test(x, y, n_resamples=2000, rng=1, backend="dask")


def _run_and_take_away(take_away):
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    timer = threading.Timer(2.0, take_away, args=(cluster,))
    outcome = {}

    def call():                      # in a thread: a hang fails the test instead of the suite
        try:
            _long_call()
            outcome["returned"] = True
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome["error"] = exc

    t0 = time.monotonic()
    worker = threading.Thread(target=call, daemon=True)
    timer.start()
    worker.start()
    try:
        worker.join(90)
        assert not worker.is_alive(), "the call still waits 90 s after the cluster went away"
        assert isinstance(outcome.get("error"), RuntimeError), outcome
        return str(outcome["error"]), time.monotonic() - t0
    finally:
        timer.cancel()
        client.close()
        cluster.close()


def test_the_scheduler_closed_mid_run(monkeypatch):
    monkeypatch.setattr(core_dask, "NO_WORKERS_TIMEOUT", 3.0)
    msg, took = _run_and_take_away(lambda c: c.close())
    assert "the Dask cluster went away while this computation ran" in msg
    assert "rerun the call" in msg
    assert took < 60                    # the call ran about 20 s with its workers


def test_every_worker_gone_mid_run(monkeypatch):
    monkeypatch.setattr(core_dask, "NO_WORKERS_TIMEOUT", 3.0)
    msg, took = _run_and_take_away(lambda c: c.scale(0))
    assert "has had no worker for 3 s" in msg and "tasks were cancelled" in msg
    assert took < 60


def test_without_a_client_dask_compute_is_dasks():
    dask = pytest.importorskip("dask")
    d = dask.delayed(lambda v: v + 1)(1)
    assert core_dask._distributed_client() is None
    assert core_dask.dask_compute([d], 5, {"k": d}) == ([2], 5, {"k": 2})
