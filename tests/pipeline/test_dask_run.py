"""A whole run on a real Dask cluster on 127.0.0.1 (a ``dask scheduler`` and two
``dask worker`` processes started here), with one worker SIGKILLed mid-run: the scheduler
reruns its units elsewhere and the scores are the same bytes as a local run. And a component
that cannot be pickled is refused on Dask, never run in the client instead."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import vocencebench as vb
from dask_fakes import BatchedLoudness, Hum, SlowPitch, ToneModel, cluster_env, free_port

pytest.importorskip("distributed")

ITEMS = vb.load_benchmark("benchmark_v1")[:8]



@contextlib.contextmanager
def _cluster(tmp: Path) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    dask = Path(sys.executable).with_name("dask")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = cluster_env(tmp)
    procs: list[subprocess.Popen[bytes]] = []
    log = open(tmp / "cluster.log", "wb")  # noqa: SIM115 - closed below
    try:
        procs.append(subprocess.Popen(
            [str(dask), "scheduler", "--host", "127.0.0.1", "--port", str(port),
             "--no-dashboard"], env=env, stdout=log, stderr=log))
        # No nanny: a killed worker stays dead (the nanny would restart it). Worker w1
        # advertises a GPU: the model units must run there and only there.
        workers = [subprocess.Popen(
            [str(dask), "worker", address, "--host", "127.0.0.1", "--no-nanny",
             "--nthreads", "1", "--no-dashboard", "--name", f"w{k}",
             *(["--resources", "GPU=1"] if k == 1 else [])],
            env=env, stdout=log, stderr=log) for k in range(2)]
        procs += workers
        from distributed import Client

        with Client(address, timeout=60) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(2, timeout=120)
        yield address, workers
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()


def _run(executor: object, cache: Path) -> vb.Head2Head:
    probes = vb.ProbeSet([SlowPitch(), BatchedLoudness()], check_speech=False)  # tones
    return vb.benchmark(ITEMS, ToneModel(190.0), Hum(250.0), probes=probes,
                        labels=("model", "hum"), cache=cache, executor=executor,
                        workers=2, progress=False, canaries=False)



@pytest.mark.slow
@pytest.mark.signals
def test_a_worker_killed_mid_run_changes_no_score(tmp_path: Path) -> None:
    local = _run("serial", tmp_path / "local.sqlite")
    with _cluster(tmp_path) as (address, workers):
        cache = tmp_path / "dask.sqlite"
        killed = threading.Event()
        done = threading.Event()

        def killer() -> None:
            # Worker w0 stops inside its first per-clip analysis and says so (dask_fakes): it
            # is killed mid-unit, however fast or slow the run is.
            while not done.is_set():
                if (tmp_path / "busy").exists():
                    workers[0].send_signal(signal.SIGKILL)
                    killed.set()
                    return
                time.sleep(0.01)

        from distributed import get_task_stream

        from vocencebench.executor import DaskExecutor

        exe = DaskExecutor(address)
        gpu_worker = next(a for a, w in exe.client.scheduler_info()["workers"].items()
                          if w.get("name") == "w1")
        t = threading.Thread(target=killer, daemon=True)
        t.start()
        try:
            with get_task_stream(exe.client) as stream:
                remote = _run(exe, cache)
        finally:
            done.set()
            t.join(timeout=10)
            exe.close()
        assert killed.is_set(), "worker w0 was given no per-clip analysis"
        assert workers[0].wait(timeout=10) == -signal.SIGKILL
        assert remote.metadata["executor"]["name"] == "dask"
        where: dict[str, set[str]] = {}
        for task in stream.data:
            where.setdefault(str(task["key"]).split("-")[0], set()).add(task["worker"])
        # Synthesis of the model system and the batched probe ran on the workers, on the
        # GPU worker only; the per-clip analyses ran on the workers too.
        assert where["synthesize"] == {gpu_worker} and where["measure"] == {gpu_worker}
        assert "analyse" in where
    assert remote.complete and local.complete
    local.save(tmp_path / "local")
    remote.save(tmp_path / "remote")
    assert ((tmp_path / "local" / "scores.jsonl").read_bytes()
            == (tmp_path / "remote" / "scores.jsonl").read_bytes())
    assert [p.to_dict() for p in local.pairs] == [p.to_dict() for p in remote.pairs]


def test_a_component_that_cannot_travel_is_refused_on_dask() -> None:
    # An in-process cluster (no sockets): the refusal comes before any unit is sent.
    from distributed import LocalCluster

    from vocencebench.errors import ConfigError
    from vocencebench.executor import DaskExecutor

    class LocalPitch(SlowPitch):  # local to this function: these do not pickle
        name = "local-pitch"

    class LocalLoud(BatchedLoudness):
        name = "local-loud"

    synthesised: list[str] = []

    def hum(text: str, instruction: str) -> bytes:
        synthesised.append(text)
        return Hum(250.0)(text, instruction)

    cluster = LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                           dashboard_address=None)
    exe = DaskExecutor(cluster=cluster)
    try:
        with pytest.raises(ConfigError, match=r"the Dask executor runs the per-clip analysis "
                                              r"on its workers, but probe local-pitch@1 cannot "
                                              r"be pickled .*--executor local"):
            vb.benchmark(ITEMS[:2], hum, Hum(190.0),
                         probes=vb.ProbeSet([LocalPitch(0.0)], check_speech=False),
                         labels=("a", "b"), executor=exe, progress=False, canaries=False)
        with pytest.raises(ConfigError, match=r"the batched probes on its workers, but "
                                              r"probe local-loud@1 cannot be pickled"):
            vb.benchmark(ITEMS[:2], hum, Hum(190.0),
                         probes=vb.ProbeSet([SlowPitch(0.0), LocalLoud()],
                                            check_speech=False),
                         labels=("a", "b"), executor=exe, progress=False, canaries=False)
    finally:
        exe.close()
        cluster.close()  # type: ignore[no-untyped-call]
    assert synthesised == []  # refused before any work
