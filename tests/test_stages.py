"""The stage units: components travel once per process (a model loads once per worker)."""

from __future__ import annotations

import os
import pickle
from typing import Any

import vocencebench as vb
from judge_fakes import tone_wav
from vocencebench.schema import Item, ProbeResult
from vocencebench.stages import handle

ITEMS = vb.load_benchmark("benchmark_v1")[:6]


class WhereProbe:
    """Records which process and which object measured each clip."""

    name, version, traits = "where", "1", ("pitch",)

    def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
        return {"pitch": ProbeResult("pitch", 1.0, "", "low", 1.0, "where@1",
                                     detail={"pid": os.getpid(), "obj": id(self)})}


def test_a_handle_is_unpickled_once_per_process() -> None:
    h = handle(WhereProbe())
    blob = pickle.dumps(h)
    one, two = pickle.loads(blob).get(), pickle.loads(blob).get()
    assert one is two  # the second unit in this process reuses the first one's object


def test_every_unit_of_a_worker_uses_the_same_component_object() -> None:
    def hum(text: str, instruction: str) -> bytes:
        return tone_wav(200.0 + len(text) % 5, seconds=0.4)

    probes = vb.ProbeSet([WhereProbe()], check_speech=False)  # the systems render tones
    h = vb.benchmark(ITEMS, hum, hum, probes=probes, labels=("a", "b"),
                     workers=2, progress=False, canaries=False)
    seen: dict[int, set[int]] = {}
    for p in h.pairs:
        for an in (p.analysis_a, p.analysis_b):
            d = an.probes["pitch"].detail
            seen.setdefault(d["pid"], set()).add(d["obj"])
    assert os.getpid() not in seen  # measured in the pool's processes
    assert all(len(objs) == 1 for objs in seen.values())


def test_a_large_run_keeps_its_pairs_on_disk(monkeypatch: Any, tmp_path: Any) -> None:
    import vocencebench._engine as engine
    from vocencebench.report import load_run
    from vocencebench.result import PairList

    def hum(text: str, instruction: str) -> bytes:
        return tone_wav(200.0 + len(text) % 5, seconds=0.4)

    probes = vb.ProbeSet([WhereProbe()], check_speech=False)
    small = vb.benchmark(ITEMS, hum, hum, probes=probes, labels=("a", "b"), workers=1,
                         progress=False, canaries=False)
    monkeypatch.setattr(engine, "SPILL_PAIRS", 2)
    big = vb.benchmark(ITEMS, hum, hum, probes=probes, labels=("a", "b"), workers=1,
                       progress=False, canaries=False)
    assert isinstance(small.pairs, tuple) and isinstance(big.pairs, PairList)
    assert big.pairs == small.pairs and small.pairs == big.pairs
    assert big.pairs[-1] == small.pairs[-1] and big.pairs[1:3] == small.pairs[1:3]
    assert big.decision == small.decision and big.samples == small.samples
    assert pickle.loads(pickle.dumps(big)).pairs == small.pairs
    assert load_run(big.save(tmp_path / "run")).pairs == small.pairs


def test_compare_models_scores_given_clips_like_benchmark() -> None:
    def hum(text: str, instruction: str) -> bytes:
        return tone_wav(200.0 + len(text) % 5, seconds=0.4)

    probes = vb.ProbeSet([WhereProbe()], check_speech=False)
    ran = vb.benchmark(ITEMS, hum, hum, probes=probes, labels=("a", "b"), workers=1,
                       progress=False, canaries=False)
    clips = [hum(it.text, it.instruction) for it in ITEMS]
    missing = {ITEMS[0].id: "synthesis: the GPU ran out of memory"}
    given = vb.compare_models(ITEMS, [None, *clips[1:]], {it.id: c for it, c
                                                           in zip(ITEMS, clips, strict=True)},
                              probes=probes, labels=("a", "b"), workers=1, progress=False,
                              synthesis_failures=(missing, {}), canaries=False)
    assert given.pairs[0].a.S == 0.0
    assert given.pairs[0].a.failure == "synthesis: the GPU ran out of memory"
    assert [p.b for p in given.pairs] == [p.b for p in ran.pairs]
