"""Test doubles for the leaderboard: eSpeak-based systems that count their clips, and a
scripted judge that counts its calls (offline, deterministic)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from vocencebench import tts
from vocencebench.judge import Judge, JudgeRequest, ScriptedBackend


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


class CountingEspeak:
    """An eSpeak system (``espeak-follow`` or ``espeak-flat`` settings, shifted by ``rate``
    wpm, ``volume`` and ``pitch``) that counts every clip it renders in ``calls``."""

    def __init__(self, name: str, base: str = "espeak-follow", *, rate: int = 0,
                 volume: int = 0, pitch: int = 0) -> None:
        self.name = name
        self.base = tts.get_system(base)
        self.shift = (rate, volume, pitch)
        self.system_id = f"test-{name}-{base}-{rate}-{volume}-{pitch}"
        self.calls = 0

    def settings(self, instruction: str) -> tts.EspeakSettings:
        s = self.base.settings(instruction)
        r, v, p = self.shift
        return replace(s, rate=_clamp(s.rate + r, 80, 450), volume=_clamp(s.volume + v, 0, 200),
                       pitch=_clamp(s.pitch + p, 0, 100))

    def __call__(self, text: str, instruction: str) -> bytes:
        self.calls += 1
        return tts.synthesize(text, self.settings(instruction))

    def synthesize_many(self, requests: Sequence[tuple[str, str]], *,
                        workers: int | None = None) -> list[bytes | Exception]:
        self.calls += len(requests)
        return list(tts.render_many([(t, self.settings(i)) for t, i in requests], workers=1))


def clip_score(clip: bytes, other: bytes = b"") -> int:
    """The scripted judge's 0–3 rubric score of ``clip`` heard beside ``other``."""
    return hashlib.sha256(clip + other).digest()[0] % 4


def scripted_judge(model: str = "scripted-judge", *, relative: bool = True
                   ) -> tuple[Judge, ScriptedBackend]:
    """A deterministic judge; ``backend.requests`` counts its calls. ``relative``: a clip's
    score depends on the clip it is compared with (as with a real audio-LLM judge), else on
    the clip alone. Either way it does not depend on the order the clips are played in."""

    def answer(request: JudgeRequest) -> dict[str, Any]:
        first, second = (a.data for a in request.audio())
        sa = clip_score(first, second if relative else b"")
        sb = clip_score(second, first if relative else b"")
        win = "A" if sa > sb else "B" if sb > sa else "tie"
        return {"analysis_a": f"first clip: {sa}", "analysis_b": f"second clip: {sb}",
                "score_a": sa, "score_b": sb, "winner": win, "confidence": 0.8}

    backend = ScriptedBackend(answer, model=model)
    return Judge(backend, validate_audio=False), backend
