"""The spectral front end the VAD and the gender model share (probes/_spectrum.py)."""

from __future__ import annotations

import numpy as np
import pytest

from vocencebench.probes._spectrum import (
    band_sums,
    bin_ranges,
    frame_power,
    hann,
    hz_to_mel,
    mel_edges_hz,
)


def test_mel_edges_are_even_in_mel_and_end_where_asked() -> None:
    edges = mel_edges_hz(100.0, 3800.0, 26)
    assert edges[0] == pytest.approx(100.0) and edges[-1] == pytest.approx(3800.0)
    steps = np.diff([hz_to_mel(float(f)) for f in edges])
    assert np.allclose(steps, steps[0]) and steps[0] > 0
    assert hz_to_mel(1000.0) == pytest.approx(1000.0, abs=0.1)  # the scale's anchor


def test_frame_power_is_the_power_spectrum_of_each_hop_spaced_frame(
        rng: np.random.Generator) -> None:
    x = rng.standard_normal(1000)
    window = hann(200)
    assert not window.flags.writeable and window.min() > 0
    power = frame_power(x, window, 80, 256)
    assert power.shape == (1 + (1000 - 200) // 80, 129)
    k = 3
    ref = np.abs(np.fft.rfft(x[k * 80:k * 80 + 200] * window, n=256)) ** 2
    assert np.allclose(power[k], ref)


def test_band_sums_are_the_filter_matrix_product(rng: np.random.Generator) -> None:
    power = rng.random((7, 40))
    fb = np.zeros((40, 3))
    fb[2:9, 0] = rng.random(7) + 0.1
    fb[8:20, 1] = rng.random(12) + 0.1
    fb[25:40, 2] = 1.0
    ranges = bin_ranges(fb)
    assert ranges == ((2, 9), (8, 20), (25, 40))
    assert np.allclose(band_sums(power, ranges, fb), power @ fb)
    assert np.allclose(band_sums(power, ranges), power @ (fb > 0))
