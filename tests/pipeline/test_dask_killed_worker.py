"""A model unit whose Dask workers keep dying while they run it (``KilledWorker``) is the
instrument's failure: a dying worker takes every unit it runs with it, so nothing can say
whose unit killed it, and no score may blame a system for it. The items stay unscored, the
run names no winner, and the same command, once the workers stop dying, resumes to the same
scores as a local run."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import vocencebench as vb
from dask_fakes import BatchedLoudness, DyingToneModel, Hum, SlowPitch, ToneModel
from vocencebench.errors import ServiceError, blame_of, is_fatal

pytest.importorskip("distributed")

ITEMS = vb.load_benchmark("benchmark_v1")[:6]


def _run(system: ToneModel, executor: object, cache: Path) -> vb.Head2Head:
    probes = vb.ProbeSet([SlowPitch(0.01), BatchedLoudness()], check_speech=False)
    return vb.benchmark(ITEMS, system, Hum(250.0), probes=probes, labels=("model", "hum"),
                        cache=cache, executor=executor, progress=False, canaries=False)


def test_the_corpus_has_a_script_that_kills_the_worker() -> None:
    assert any(len(it.text) % 2 for it in ITEMS)  # else the test below proves nothing


@pytest.mark.slow
@pytest.mark.signals  # kills worker processes and waits for Dask to give up: run alone
def test_a_unit_whose_workers_keep_dying_blames_no_system_and_the_rerun_resumes(
        tmp_path: Path) -> None:
    from distributed import LocalCluster

    from vocencebench.executor import DaskExecutor

    marker = tmp_path / "die"
    marker.write_text("")
    system = DyingToneModel(190.0, marker)
    cluster = LocalCluster(processes=True, n_workers=1, threads_per_worker=1,
                           dashboard_address=None)
    exe = DaskExecutor(cluster=cluster)
    cache = tmp_path / "run.sqlite"
    try:
        dying = _run(system, exe, cache)
        marker.unlink()
        resumed = _run(system, exe, cache)
    finally:
        exe.close()
        cluster.close()  # type: ignore[no-untyped-call]

    assert not dying.complete
    assert dying.decision.winner == "incomplete"
    assert "no winner is named" in dying.decision.reason
    lost = [p for p in dying.pairs if p.analysis_a.instrument_failure]
    assert lost, "no unit of the model system was lost"
    for p in dying.pairs:
        # the old code scored these clips as the model system's synthesis failures (S = 0)
        assert p.analysis_a.failure is None and p.analysis_b.failure is None, p.item.id
    for p in lost:
        why = p.analysis_a.instrument_failure or ""
        assert why.startswith(
            "synthesis-service: the Dask workers running this unit kept dying"), why
        assert "(KilledWorker: 4 workers died running it)" in why  # allowed-failures 3
        assert "cannot tell which" in why and why.endswith("rerun to retry")
        assert p.incomplete

    local = _run(ToneModel(190.0), "serial", tmp_path / "local.sqlite")
    assert resumed.complete and local.complete
    resumed.save(tmp_path / "resumed")
    local.save(tmp_path / "local")
    assert ((tmp_path / "resumed" / "scores.jsonl").read_bytes()
            == (tmp_path / "local" / "scores.jsonl").read_bytes())


def test_killed_worker_is_an_instrument_failure_that_does_not_stop_the_run() -> None:
    from distributed import KilledWorker

    from vocencebench._pipeline.dask import killed_worker_error

    last = SimpleNamespace(address="tcp://127.0.0.1:1")
    err = killed_worker_error(KilledWorker("synthesize-1", last, 3))  # type: ignore[arg-type]
    assert isinstance(err, ServiceError)
    assert blame_of(err) == "instrument" and not is_fatal(err)
    assert "(KilledWorker: 4 workers died running it)" in str(err)
    assert "tcp://" not in str(err)  # a task key and an address say nothing to the user
