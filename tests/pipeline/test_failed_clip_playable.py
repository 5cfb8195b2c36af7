"""A clip the run could not use (here: too short to analyse) is the system's failure, and the
next run asks the system again instead of reusing it; but the report still lets you hear
what the system produced (issue 22: "every system failure that produced audio")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import soundfile as sf

import vocencebench as vb
from judge_fakes import PitchProbe, tone_wav
from vocencebench.cache import Cache, clip_key, failed_clip_key
from vocencebench.probes import ProbeSet

ITEMS = vb.load_benchmark("benchmark_v1")[:4]
PROBES = ProbeSet([PitchProbe()], check_speech=False)


class Counted:
    """A system that answers every item with a tone, and ``short_for`` with 0.1 s of one."""

    def __init__(self, name: str, short_for: str | None = None) -> None:
        self.system_id, self.short_for = f"counted:{name}", short_for
        self.calls: list[str] = []

    def __call__(self, text: str, instruction: str) -> bytes:
        self.calls.append(text)
        seconds = 0.1 if self.short_for == text else 0.6
        return tone_wav(220.0, seconds=seconds)


def _run(cache: Path, a: Any, b: Any) -> vb.Head2Head:
    return vb.benchmark(ITEMS, a, b, probes=PROBES, labels=("steady", "broken"), cache=cache,
                        progress=False, canaries=False)


def test_a_failed_clip_is_playable_but_never_reused(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    short = ITEMS[1]
    a, b = Counted("steady"), Counted("broken", short_for=short.text)
    h = _run(cache, a, b)
    failed = h.pairs[1].analysis_b
    assert failed.failure is not None and "too short" in failed.failure
    assert failed.sha256 is not None
    # The run keeps the bytes aside, never under the key a run reads.
    store = Cache(cache, readonly=True)
    try:
        assert store.get_bytes("clips", clip_key(b.system_id, short)) is None
        kept = store.get_bytes("clips", failed_clip_key(b.system_id, short))
    finally:
        store.close()
    assert kept is not None and kept[1]["failed"] is True
    # The report plays it: the listening section has its FLAC, as long as the system's clip.
    out = h.save(tmp_path / "run")
    flac = out / "clips" / f"{failed.sha256[:20]}.flac"
    assert flac.is_file()
    info = sf.info(str(flac))
    assert abs(info.frames / info.samplerate - 0.1) < 0.002
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f"clips/{failed.sha256[:20]}.flac" in page
    # A rerun on the same cache asks the broken system again for that item only.
    a2, b2 = Counted("steady"), Counted("broken", short_for=short.text)
    again = _run(cache, a2, b2)
    assert a2.calls == [] and b2.calls == [short.text]
    assert again.decision == h.decision
