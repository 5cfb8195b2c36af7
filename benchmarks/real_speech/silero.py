"""Silero VAD (the ONNX network the ``silero-vad`` wheel ships, MIT) run with onnxruntime
directly: the independent reference segmentation of the real-speech measurements.

It is a neural VAD trained on many languages and noise types and shares nothing with the
pace probe's own voice-activity detector, which is why it serves as the reference for
"sounding time" (never inside the package). Install: ``pip install silero-vad==6.2.3``.
"""

from __future__ import annotations

import functools
import importlib.resources
from typing import Any

import numpy as np
import numpy.typing as npt

#: Samples per window at 16 kHz and the context the model expects before each window.
WINDOW = 512
CONTEXT = 64
RATE = 16_000


@functools.cache
def _session() -> Any:
    import onnxruntime as ort

    path = importlib.resources.files("silero_vad") / "data" / "silero_vad.onnx"
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), sess_options=opts,
                                providers=["CPUExecutionProvider"])


def speech_probability(x: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """P(speech) per 32 ms window (512 samples at 16 kHz) of a 16 kHz mono signal."""
    y = np.asarray(x, dtype=np.float32)
    n = y.shape[0] // WINDOW
    state = np.zeros((2, 1, 128), dtype=np.float32)
    ctx = np.zeros(CONTEXT, dtype=np.float32)
    sr = np.array(RATE, dtype=np.int64)
    out = np.zeros(n, dtype=np.float64)
    sess = _session()
    for i in range(n):
        chunk = y[i * WINDOW:(i + 1) * WINDOW]
        inp = np.concatenate([ctx, chunk])[np.newaxis, :]
        p, state = sess.run(None, {"input": inp, "state": state, "sr": sr})
        out[i] = float(p[0, 0])
        ctx = chunk[-CONTEXT:]
    return out


def segments(x: npt.ArrayLike, *, threshold: float = 0.5, min_silence_s: float = 0.1,
             min_speech_s: float = 0.06) -> list[tuple[float, float]]:
    """Speech segments (start s, end s) of a 16 kHz signal, after Silero's own rule:
    enter speech at p ≥ threshold, leave at p < threshold − 0.15 for ``min_silence_s``;
    segments shorter than ``min_speech_s`` are dropped."""
    p = speech_probability(x)
    hop = WINDOW / RATE
    segs: list[tuple[float, float]] = []
    on = False
    start = 0
    quiet = 0
    need_quiet = max(1, round(min_silence_s / hop))
    for i, v in enumerate(p):
        if not on and v >= threshold:
            on, start, quiet = True, i, 0
        elif on:
            if v < threshold - 0.15:
                quiet += 1
                if quiet >= need_quiet:
                    end = i - quiet + 1
                    if (end - start) * hop >= min_speech_s:
                        segs.append((start * hop, end * hop))
                    on = False
            else:
                quiet = 0
    if on:
        end = len(p) - quiet
        if (end - start) * hop >= min_speech_s:
            segs.append((start * hop, end * hop))
    return segs
