"""Components for the Dask tests, importable by `dask worker` processes (tests/ is on their
PYTHONPATH): a batched "model" system placed on the workers, a slow per-clip probe and a
batched probe. Every output is a pure function of its input."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from judge_fakes import tone_wav
from vocencebench.schema import Item, ProbeResult


class ToneModel:
    """A batched system that runs on the workers (``placement = "worker"``)."""

    placement = "worker"

    def __init__(self, base_hz: float) -> None:
        self.base_hz = base_hz
        self.system_id = f"tone-model:{base_hz}"

    def __call__(self, text: str, instruction: str) -> bytes:
        return self.synthesize_many([(text, instruction)])[0]  # type: ignore[return-value]

    def synthesize_many(self, requests: Sequence[tuple[str, str]], *,
                        workers: int | None = None) -> list[bytes | Exception]:
        return [tone_wav(self.base_hz + 7 * (len(t) % 11), seconds=0.4 + 0.02 * (len(i) % 7))
                for t, i in requests]


class Hum:
    """A per-item system (stays in the client)."""

    def __init__(self, hz: float) -> None:
        self.hz = hz
        self.system_id = f"hum:{hz}"

    def __call__(self, text: str, instruction: str) -> bytes:
        return tone_wav(self.hz + len(text) % 13, seconds=0.45)


class SlowPitch:
    """A per-clip probe slow enough that a worker is busy when it is killed."""

    name, version, traits = "slow-pitch", "1", ("pitch",)

    def __init__(self, delay_s: float = 0.15) -> None:
        self.delay_s = delay_s

    def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
        time.sleep(self.delay_s)
        label = "high" if audio.duration > 0.47 else "low"
        d = 1.0 if item.traits["pitch"] == label else 0.5
        return {"pitch": ProbeResult("pitch", round(audio.duration, 6), "s", label, d,
                                     "slow-pitch@1")}


class BatchedLoudness:
    """A batched probe (the shape of the classifier probes)."""

    name, version, traits = "batched-loudness", "1", ("loudness",)

    def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
        return self.measure_batch([audio], [item])[0]

    def measure_batch(self, audios: Sequence[Any], items: Sequence[Item]
                      ) -> list[dict[str, ProbeResult]]:
        out = []
        for a, it in zip(audios, items, strict=True):
            label = "loud" if a.sample_rate >= 16_000 else "quiet"
            d = 1.0 if it.traits["loudness"] == label else 0.0
            out.append({"loudness": ProbeResult("loudness", float(a.num_samples), "n", label,
                                                d, "batched-loudness@1")})
        return out
