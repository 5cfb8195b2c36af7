"""Short-time power spectra on mel-spaced bands: the front end the voice-activity detector
(:mod:`.vad`) and the gender model (:mod:`.gender_model`) share.

Each caller keeps its own numbers (rate, frame, hop, band count and edges) because each was
tuned, or fitted, on them; what is shared is the arithmetic, so both read a clip the same way.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = [
    "FloatArray",
    "band_sums",
    "bin_ranges",
    "frame_power",
    "hann",
    "hz_to_mel",
    "mel_edges_hz",
]

FloatArray = npt.NDArray[np.float64]


def hz_to_mel(hz: float) -> float:
    """The mel value of a frequency in Hz (O'Shaughnessy: 2595 · log10(1 + f / 700))."""
    return 2595.0 * math.log10(1.0 + hz / 700.0)


def mel_edges_hz(lo_hz: float, hi_hz: float, count: int) -> FloatArray:
    """``count`` frequencies (Hz) from ``lo_hz`` to ``hi_hz``, evenly spaced in mel."""
    mel = np.linspace(hz_to_mel(lo_hz), hz_to_mel(hi_hz), count)
    return np.asarray(700.0 * (10.0 ** (mel / 2595.0) - 1.0), dtype=np.float64)


def hann(n: int) -> FloatArray:
    """A Hann window of ``n`` samples without its zero end points, read-only."""
    window = np.hanning(n + 2)[1:-1]
    window.setflags(write=False)
    return window


def frame_power(x: FloatArray, window: FloatArray, hop: int, n_fft: int) -> FloatArray:
    """Power spectra |X|² (frames × ``n_fft // 2 + 1`` bins) of the frames of ``x`` that the
    window covers, one every ``hop`` samples, each zero-padded to ``n_fft``; ``x`` must be at
    least one window long."""
    frames = np.lib.stride_tricks.sliding_window_view(x, window.shape[0])[::hop]
    spec = np.fft.rfft(frames * window, n=n_fft, axis=1)
    return np.asarray(spec.real ** 2 + spec.imag ** 2, dtype=np.float64)


def bin_ranges(bands: FloatArray) -> tuple[tuple[int, int], ...]:
    """(first bin, end bin) of each column of a bins × bands filter matrix: the bins where it
    is non-zero (every filter is one run of bins)."""
    out = []
    for k in range(bands.shape[1]):
        idx = np.flatnonzero(bands[:, k] > 0)
        out.append((int(idx[0]), int(idx[-1]) + 1))
    return tuple(out)


def band_sums(power: FloatArray, ranges: tuple[tuple[int, int], ...],
              weights: FloatArray | None = None) -> FloatArray:
    """Per-frame band power: the sums of ``power`` (frames × bins) over each bin range of
    :func:`bin_ranges`, weighted by the filter matrix ``weights`` (bins × bands) when given.

    This is the filter-matrix product without BLAS, whose worker threads cost more CPU than
    these small products (docs/performance.md)."""
    out = np.empty((power.shape[0], len(ranges)), dtype=np.float64)
    for k, (lo, hi) in enumerate(ranges):
        part = power[:, lo:hi] if weights is None else power[:, lo:hi] * weights[lo:hi, k]
        np.sum(part, axis=1, out=out[:, k])
    return out
