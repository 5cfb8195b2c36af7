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

    h = vb.benchmark(ITEMS, hum, hum, probes=vb.ProbeSet([WhereProbe()]), labels=("a", "b"),
                     workers=2, progress=False)
    seen: dict[int, set[int]] = {}
    for p in h.pairs:
        for an in (p.analysis_a, p.analysis_b):
            d = an.probes["pitch"].detail
            seen.setdefault(d["pid"], set()).add(d["obj"])
    assert os.getpid() not in seen  # measured in the pool's processes
    assert all(len(objs) == 1 for objs in seen.values())
