"""A Dask run whose cluster cannot run its units stops with one clear error instead of
waiting for ever: a cluster left with no worker (scaled to zero, every worker lost), a unit
that asks for a resource no worker has, and a scheduler that dies mid-run. Finished work is
in the cache, and the rerun resumes to the same scores as a local run."""

from __future__ import annotations

import contextlib
import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

import vocencebench as vb
from dask_fakes import BatchedLoudness, Hum, SlowPitch, ToneModel, cluster_env, free_port
from vocencebench.errors import ConfigError, ServiceError

pytest.importorskip("distributed")

ITEMS = vb.load_benchmark("benchmark_v1")[:6]
#: Seconds a run may take here before the test calls it hung (it ends in seconds).
HUNG_S = 120.0


def _run(executor: object, cache: Path, *, delay_s: float = 0.0) -> vb.Head2Head:
    probes = vb.ProbeSet([SlowPitch(delay_s), BatchedLoudness()], check_speech=False)
    return vb.benchmark(ITEMS, ToneModel(190.0), Hum(250.0), probes=probes,
                        labels=("model", "hum"), cache=cache, executor=executor,
                        progress=False, canaries=False)


def _run_bounded(executor: object, cache: Path, **kw: Any) -> vb.Head2Head:
    """The run in a thread: a run that would wait for ever fails the test, not the suite."""
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(_run(executor, cache, **kw)), daemon=True)
    t.start()
    t.join(timeout=HUNG_S)
    assert not t.is_alive(), f"the run was still waiting after {HUNG_S:g} s"
    assert out, "the run raised (see the thread's traceback above)"
    return out[0]


def _no_system_failure(h2h: vb.Head2Head) -> None:
    """The cluster's failure is the instrument's: no clip counts against a system."""
    for p in h2h.pairs:
        assert p.analysis_a.failure is None and p.analysis_b.failure is None, p.item.id


def test_a_cluster_left_without_workers_stops_the_run_and_the_rerun_resumes(
        tmp_path: Path) -> None:
    from distributed import LocalCluster

    from vocencebench.executor import DaskExecutor

    cluster = LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                           dashboard_address=None)
    exe = DaskExecutor(cluster=cluster, no_workers_timeout=1.0)
    try:
        cluster.scale(0)  # type: ignore[no-untyped-call]
        deadline = time.monotonic() + 60
        while exe.client.scheduler_info()["workers"]:
            assert time.monotonic() < deadline, "the cluster kept its worker"
            time.sleep(0.05)
        cache = tmp_path / "run.sqlite"
        stopped = _run_bounded(exe, cache)
        assert not stopped.complete
        reason = stopped.decision.reason
        assert "no winner is named" in reason
        assert "the Dask cluster LocalCluster at inproc://" in reason
        assert "has had no worker that can run the run's units for 1 s" in reason
        assert "Finished work is in the cache" in reason
        assert all(p.incomplete for p in stopped.pairs)
        _no_system_failure(stopped)

        cluster.scale(1)  # type: ignore[no-untyped-call]
        exe.client.wait_for_workers(1, timeout=60)
        resumed = _run_bounded(exe, cache)
    finally:
        exe.close()
        cluster.close()  # type: ignore[no-untyped-call]
    local = _run("serial", tmp_path / "local.sqlite")
    assert resumed.complete and local.complete
    resumed.save(tmp_path / "resumed")
    local.save(tmp_path / "local")
    assert ((tmp_path / "resumed" / "scores.jsonl").read_bytes()
            == (tmp_path / "local" / "scores.jsonl").read_bytes())


# -- the watch on its own: a client whose scheduler reports what the test says -------------


class _Scheduler:
    """A stand-in for ``distributed.Client`` that only answers ``scheduler_info``."""

    def __init__(self, workers: list[dict[str, float]] | None) -> None:
        self.workers = workers

    def scheduler_info(self, n_workers: int = -1) -> dict[str, Any]:
        if self.workers is None:
            raise OSError("Timed out trying to connect to tcp://127.0.0.1:1")
        return {"workers": {f"tcp://127.0.0.1:{k}": {"resources": r}
                            for k, r in enumerate(self.workers)}}


class _Task:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def _watch(client: _Scheduler, timeout_s: float | None) -> Any:
    from vocencebench._pipeline.dask import WorkerWatch

    return WorkerWatch(client, where="tcp://sched:8786", timeout_s=timeout_s,
                       poll_s=0.01, warn_s=0.05)


def _fails_within(fut: Future[Any], seconds: float) -> BaseException:
    exc = fut.exception(timeout=seconds)
    assert exc is not None
    return exc


@pytest.mark.parametrize("workers", [[], None], ids=["no-worker", "scheduler-gone"])
def test_units_waiting_on_no_worker_fail_with_one_error_naming_the_cluster(
        workers: list[dict[str, float]] | None, caplog: pytest.LogCaptureFixture) -> None:
    watch = _watch(_Scheduler(workers), timeout_s=0.3)
    tasks = [_Task(), _Task()]
    futs: list[Future[Any]] = [Future(), Future()]
    with caplog.at_level(logging.WARNING, logger="vocencebench._pipeline.dask"):
        for f, t in zip(futs, tasks, strict=True):
            watch.track(f, t, None)
        errors = [_fails_within(f, HUNG_S) for f in futs]
    watch.close()
    assert errors[0] is errors[1] and isinstance(errors[0], ServiceError)
    assert errors[0].fatal and errors[0].blame == "instrument"
    assert str(errors[0]).startswith("the Dask cluster tcp://sched:8786 has had no worker "
                                     "that can run the run's units for 0.3 s (2 unit(s)")
    assert all(t.cancelled for t in tasks)
    said = [r.getMessage() for r in caplog.records]
    assert any("has had no worker for 0 s: 2 unit(s) wait" in m for m in said), said


def test_a_unit_is_stuck_only_while_no_worker_has_what_it_asks_for() -> None:
    client = _Scheduler([{}])  # one CPU worker
    watch = _watch(client, timeout_s=0.3)
    cpu, gpu = Future[Any](), Future[Any]()
    watch.track(cpu, _Task(), None)
    watch.track(gpu, _Task(), {"GPU": 1.0})
    assert "(1 unit(s) waiting, asking for GPU=1: " in str(_fails_within(gpu, HUNG_S))
    assert not cpu.done()  # a worker can run it: it waits as long as it takes
    client.workers = [{"GPU": 2.0}]
    again = Future[Any]()
    watch.track(again, _Task(), {"GPU": 1.0})
    time.sleep(0.6)  # twice the timeout
    assert not again.done()
    cpu.set_result(1)
    again.set_result(2)
    watch.close()


def test_no_timeout_waits_for_ever_and_a_bad_timeout_is_refused() -> None:
    watch = _watch(_Scheduler([]), timeout_s=None)
    fut = Future[Any]()
    watch.track(fut, _Task(), None)
    time.sleep(0.2)
    assert not fut.done()
    watch.close()

    from vocencebench.executor import DaskExecutor

    for bad in (0, -1.0, float("inf"), float("nan"), "300", True):
        with pytest.raises(ConfigError, match="no_workers_timeout must be a number of "
                                              "seconds > 0"):
            DaskExecutor(no_workers_timeout=bad)  # type: ignore[arg-type]


# -- a real scheduler process that dies mid-run ---------------------------------------------



@contextlib.contextmanager
def _scheduler_and_worker(tmp: Path) -> Iterator[tuple[str, subprocess.Popen[bytes],
                                                       subprocess.Popen[bytes]]]:
    dask = Path(sys.executable).with_name("dask")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = cluster_env(tmp)
    log = open(tmp / "cluster.log", "wb")  # noqa: SIM115 - closed below
    procs = [subprocess.Popen([str(dask), "scheduler", "--host", "127.0.0.1", "--port",
                               str(port), "--no-dashboard"], env=env, stdout=log, stderr=log)]
    try:
        procs.append(subprocess.Popen(
            [str(dask), "worker", address, "--host", "127.0.0.1", "--no-nanny", "--nthreads",
             "1", "--no-dashboard", "--name", "w0"], env=env, stdout=log, stderr=log))
        from distributed import Client

        with Client(address, timeout=60) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(1, timeout=120)
        yield address, procs[0], procs[1]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        log.close()


@pytest.mark.slow
@pytest.mark.signals
def test_a_scheduler_killed_mid_run_stops_the_run_instead_of_hanging(tmp_path: Path) -> None:
    with _scheduler_and_worker(tmp_path) as (address, scheduler, _worker):
        from vocencebench.executor import DaskExecutor

        exe = DaskExecutor(address)
        done = threading.Event()

        def killer() -> None:
            # The worker announces its first per-clip analysis and then waits (dask_fakes):
            # the scheduler dies while the run has units on the cluster.
            while not done.is_set():
                if (tmp_path / "busy").exists():
                    scheduler.send_signal(signal.SIGKILL)
                    return
                time.sleep(0.01)

        t = threading.Thread(target=killer, daemon=True)
        t.start()
        try:
            stopped = _run_bounded(exe, tmp_path / "run.sqlite")
        finally:
            done.set()
            t.join(timeout=10)
            with contextlib.suppress(Exception):  # the client lost its scheduler
                exe.close()
        assert scheduler.wait(timeout=10) == -signal.SIGKILL
    assert not stopped.complete
    # Which unit notices first (one the client cancels, or one whose result it cannot
    # fetch) depends on timing; either names the cluster and stops the run.
    reason = stopped.decision.reason
    assert (f"the Dask cluster {address} cancelled a unit the run had not cancelled" in reason
            or f"the Dask cluster {address} could not deliver a unit's result" in reason)
    assert "Finished work is in the cache" in reason
    _no_system_failure(stopped)
