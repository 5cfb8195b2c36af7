"""Components for the Dask tests, importable by `dask worker` processes (tests/ is on their
PYTHONPATH): a batched "model" system placed on the workers, a slow per-clip probe and a
batched probe. Every output is a pure function of its input."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge_fakes import tone_wav
from repo_paths import SRC, TESTS
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


class DyingToneModel(ToneModel):
    """:class:`ToneModel` whose worker process dies (``os._exit``, as a segfault or the OOM
    killer ends it) on any script of an odd length while the file ``marker`` exists; the
    same system, and the same clips, once it is gone (``system_id`` ignores the marker)."""

    def __init__(self, base_hz: float, marker: Path) -> None:
        super().__init__(base_hz)
        self.marker = str(marker)

    def synthesize_many(self, requests: Sequence[tuple[str, str]], *,
                        workers: int | None = None) -> list[bytes | Exception]:
        if os.path.exists(self.marker) and any(len(t) % 2 for t, _ in requests):
            os._exit(70)
        return super().synthesize_many(requests, workers=workers)


class Hum:
    """A per-item system (stays in the client)."""

    def __init__(self, hz: float) -> None:
        self.hz = hz
        self.system_id = f"hum:{hz}"

    def __call__(self, text: str, instruction: str) -> bytes:
        return tone_wav(self.hz + len(text) % 13, seconds=0.45)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a test's scheduler)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cluster_env(stall_dir: Path) -> dict[str, str]:
    """The environment of a test's ``dask scheduler`` and ``dask worker`` processes: this
    checkout and tests/ importable, non-daemonic workers, worker ``w0`` the victim of
    :func:`_victim_waits` announcing itself in ``stall_dir``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS)]),
            "DASK_DISTRIBUTED__WORKER__DAEMON": "False",
            VICTIM_ENV: "w0", STALL_DIR_ENV: str(stall_dir)}


#: On the Dask worker whose name this variable holds, :class:`SlowPitch` announces its first
#: clip (a file ``busy`` in the folder named by STALL_DIR_ENV) and then waits to be killed.
VICTIM_ENV = "VOCENCE_TEST_DASK_VICTIM"
STALL_DIR_ENV = "VOCENCE_TEST_DASK_STALL_DIR"


def _victim_waits() -> None:
    """On the victim worker: say so and sleep until the test SIGKILLs this process, so the
    worker is killed in the middle of a unit whatever the machine's speed."""
    victim, folder = os.environ.get(VICTIM_ENV), os.environ.get(STALL_DIR_ENV)
    if not victim or not folder:
        return
    try:
        from distributed import get_worker

        name = get_worker().name
    except (ImportError, ValueError):  # not on a Dask worker (the local run)
        return
    if name != victim:
        return
    with open(os.path.join(folder, "busy"), "w") as fh:
        fh.write(str(os.getpid()))
    while True:
        time.sleep(1.0)


class SlowPitch:
    """A per-clip probe that takes ``delay_s`` seconds; on the worker named by
    :data:`VICTIM_ENV` it never finishes (see :func:`_victim_waits`)."""

    name, version, traits = "slow-pitch", "1", ("pitch",)

    def __init__(self, delay_s: float = 0.15) -> None:
        self.delay_s = delay_s

    def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
        _victim_waits()
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
