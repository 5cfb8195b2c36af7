"""The offline gender model: median F0 plus a spectral-envelope log-likelihood ratio from two
small Gaussian mixtures, fitted on real read speech (benchmarks/real_speech/fit_gender.py).

Front end (the same for every delivery format from 8 kHz up, so an 8 kHz clip measures what
its 16 kHz original does): the analysis signal resampled to 8 kHz; 25 ms Hann frames every
10 ms, 256-point FFT; power in 24 triangular mel bands from 100 Hz to 3.8 kHz; log (dB);
DCT-II (orthonormal); coefficients 1 to :data:`N_CEPSTRA` (c0, the frame's level, is left
out, so gain and level do not matter). Only frames whose centre falls on a voiced pitch frame
are kept: vowels and voiced consonants, where the vocal tract's resonances show.

Model: ``llr`` = mean over those frames of log p(x | female) − log p(x | male), each p a
diagonal-covariance Gaussian mixture; ``z = bias + w_f0 · semitones(median F0 re 165 Hz) +
w_llr · llr``; female when z > 0. The numbers are data, ``gender_model.json`` beside this
module (written by the fit script, with its data sources under ``about``; the measured
accuracy is in docs/probes.md).
"""

from __future__ import annotations

import functools
import json
import math
from importlib import resources
from typing import TYPE_CHECKING, Final, NamedTuple

import numpy as np
import numpy.typing as npt
import scipy.fft as sfft

from ._spectrum import FloatArray, band_sums, bin_ranges, frame_power, hann, mel_edges_hz

if TYPE_CHECKING:
    from ..audio import Audio

__all__ = [
    "BANDS",
    "FRAME_S",
    "HOP_S",
    "N_CEPSTRA",
    "RATE",
    "WEIGHTS_FILE",
    "GenderWeights",
    "Mixture",
    "cepstra",
    "frame_cepstra",
    "gender_weights",
    "log_odds",
    "spectral_llr",
]

#: Front-end rate (Hz), frame and hop (s), FFT size, mel bands and their range (Hz).
RATE: Final = 8_000
FRAME_S: Final = 0.025
HOP_S: Final = 0.010
N_FFT: Final = 256
BANDS: Final = 24
BAND_LO_HZ: Final = 100.0
BAND_HI_HZ: Final = 3800.0
#: Cepstral coefficients kept (c1 … c19).
N_CEPSTRA: Final = 19
#: F0 term: semitones re this frequency (Hz).
F0_MID_HZ: Final = 165.0


@functools.cache
def _filterbank() -> tuple[FloatArray, FloatArray, tuple[tuple[int, int], ...]]:
    """(Hann window, bins × bands triangular mel filters, each filter's bin range)."""
    freqs = np.fft.rfftfreq(N_FFT, 1.0 / RATE)
    edges = mel_edges_hz(BAND_LO_HZ, BAND_HI_HZ, BANDS + 2)
    fb = np.zeros((freqs.shape[0], BANDS), dtype=np.float64)
    for k in range(BANDS):
        lo, mid, hi = edges[k], edges[k + 1], edges[k + 2]
        fb[:, k] = np.clip(np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)),
                           0.0, None)
    fb.setflags(write=False)
    return hann(round(FRAME_S * RATE)), fb, bin_ranges(fb)


def frame_cepstra(x: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """(cepstra frames × :data:`N_CEPSTRA`, frame centre times s) of a signal at :data:`RATE`."""
    y = np.asarray(x, dtype=np.float64)
    window, fb, ranges = _filterbank()
    n, hop = window.shape[0], round(HOP_S * RATE)
    if y.shape[0] < n:
        return np.zeros((0, N_CEPSTRA)), np.zeros(0)
    bands = band_sums(frame_power(y, window, hop, N_FFT), ranges, fb)
    logp = 10.0 * np.log10(np.maximum(bands, 1e-12))
    times = (np.arange(bands.shape[0]) * hop + n / 2.0) / RATE
    cep = sfft.dct(logp, type=2, norm="ortho", axis=1)[:, 1:N_CEPSTRA + 1]
    return np.ascontiguousarray(cep), times


def cepstra(audio: Audio, x: FloatArray, rate: int) -> tuple[FloatArray, FloatArray]:
    """:func:`frame_cepstra` of the analysis signal ``x`` (at ``rate`` Hz) resampled to
    :data:`RATE`, kept with the clip."""
    def compute() -> tuple[FloatArray, FloatArray]:
        if rate == RATE:
            y = x
        else:
            import soxr

            y = np.asarray(soxr.resample(x, rate, RATE, quality="HQ"), dtype=np.float64)
        c, t = frame_cepstra(y)
        c.setflags(write=False)
        t.setflags(write=False)
        return c, t

    return audio.derived(f"probes.gender-cepstra@{RATE}/{BANDS}/{N_CEPSTRA}", compute)


class Mixture(NamedTuple):
    """A diagonal-covariance Gaussian mixture over cepstra: component weights, means and
    variances (shapes (K,), (K, N_CEPSTRA), (K, N_CEPSTRA)), read-only."""

    weights: FloatArray
    means: FloatArray
    variances: FloatArray


class GenderWeights(NamedTuple):
    """The fitted model: the logistic regression's bias and weights (per semitone of F0, per
    nat of log-likelihood ratio), the F0-only fallback's, and the two mixtures."""

    bias: float
    w_f0: float
    w_llr: float
    f0_only_bias: float
    f0_only_w_f0: float
    female: Mixture
    male: Mixture


#: The fitted weights' file, inside this package.
WEIGHTS_FILE: Final = "gender_model.json"


@functools.cache
def gender_weights() -> GenderWeights:
    """The fitted weights, read once from :data:`WEIGHTS_FILE`."""
    raw = json.loads(resources.files(__package__).joinpath(WEIGHTS_FILE).read_text("utf-8"))

    def mixture(m: dict[str, list[object]]) -> Mixture:
        arrays = [np.asarray(m[k], dtype=np.float64) for k in ("weights", "means", "variances")]
        for a in arrays:
            a.setflags(write=False)
        return Mixture(*arrays)

    return GenderWeights(float(raw["bias"]), float(raw["w_f0"]), float(raw["w_llr"]),
                         float(raw["f0_only_bias"]), float(raw["f0_only_w_f0"]),
                         mixture(raw["female"]), mixture(raw["male"]))


def _gmm_loglik(c: FloatArray, gmm: Mixture) -> FloatArray:
    """Per-frame log-likelihood under a diagonal Gaussian mixture."""
    w, mu, var = gmm
    diff = c[:, np.newaxis, :] - mu[np.newaxis, :, :]
    comp = (np.log(w)[np.newaxis, :]
            - 0.5 * np.sum(np.log(2.0 * math.pi * var), axis=1)[np.newaxis, :]
            - 0.5 * np.sum(diff * diff / var[np.newaxis, :, :], axis=2))
    top = comp.max(axis=1, keepdims=True)
    return np.asarray(top[:, 0] + np.log(np.exp(comp - top).sum(axis=1)), dtype=np.float64)


def spectral_llr(c: FloatArray) -> float | None:
    """Mean per-frame log-likelihood ratio female − male of the cepstra ``c`` (None: no
    frames)."""
    if c.shape[0] == 0:
        return None
    gw = gender_weights()
    ratio = _gmm_loglik(c, gw.female) - _gmm_loglik(c, gw.male)
    return float(np.mean(ratio))


def log_odds(f0_hz: float, llr: float | None) -> float:
    """z > 0: female. Without spectral frames (``llr`` None) the F0 term alone decides, with
    the F0-only fit's bias and weight."""
    gw = gender_weights()
    st = 12.0 * math.log2(f0_hz / F0_MID_HZ)
    if llr is None:
        return gw.f0_only_bias + gw.f0_only_w_f0 * st
    return gw.bias + gw.w_f0 * st + gw.w_llr * llr
