"""Real speech under manipulations that must not move a label, and ones that must move one
in a known direction (every fifth clip of the set; the full table is
benchmarks/real_speech/measure.py, the pace/pitch/gender targets on all 110 clips are
tests/acceptance/test_realspeech_targets.py), plus the speech check: no speech → UNMEASURABLE
(d = 0) on every trait, and stereo loudness (BS.1770 channel sum) on a decoded two-channel WAV."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import realspeech as rs
from seeding import make_rng
from vocencebench.audio import Audio
from vocencebench.probes import ProbeSet, default_probes
from vocencebench.probes import acoustic as ac
from vocencebench.probes.classifiers import measure_batch
from vocencebench.schema import UNMEASURABLE, Item, ProbeResult

TRAITS = ("pace", "pitch", "loudness", "gender")
#: every fifth clip of the manifest (22): both sexes, LibriSpeech, ARCTIC and VCTK
SUBSET = rs.manifest()[::5]


def item(c: rs.RealClip | None = None, **over: str) -> Item:
    traits = {"gender": c.sex if c else "female", "age": "30", "pace": "moderate",
              "pitch": "medium", "loudness": "normal", "emotion": "neutral",
              "accent": "American", "tone": "warm", **over}
    return Item(id=c.id if c else "x", instruction="",
                text=(c.transcript if c and c.transcript else
                      "The weather should clear up by the end of the afternoon."),
                traits=traits, difficulty=1)


@pytest.fixture(scope="module")
def base() -> dict[str, tuple[np.ndarray, int, dict[str, ProbeResult]]]:
    ps = default_probes()
    out = {}
    for c in SUBSET:
        a = c.audio()
        out[c.id] = (np.asarray(a.samples, dtype=np.float64), a.sample_rate,
                     ps.measure(a, item(c)))
    return out


def test_the_set_is_real_and_balanced() -> None:
    clips = rs.manifest()
    assert len(clips) >= 100
    sexes = [c.sex for c in clips]
    assert abs(sexes.count("female") - sexes.count("male")) <= 0.1 * len(clips)
    for c in clips:
        head = (rs.DATA / c.file).read_bytes()[:4]
        assert head == b"fLaC", c.file  # real FLAC, not a Git LFS pointer
        assert c.meta["licence"] and c.meta["source_commit"]


STEREO = "mono → stereo (dual mono)"
#: every must-not-move manipulation of the issue: rs.INVARIANT plus mono → stereo
INVARIANT: dict[str, Callable[[np.ndarray, int], Audio]] = {
    **{name: (lambda x, r, fn=fn: rs.make_audio(*fn(x, r)))
       for name, fn in rs.INVARIANT.items()},
    STEREO: lambda x, r: rs.stereo(x, r),
}
#: Loudness must move under gain and mono → stereo (BS.1770 sums the channels: +3.01 LU).
LOUDNESS_MOVES = ("gain +6 dB", "gain -6 dB", STEREO)
#: Where the issue sets a bound above zero, the test allows it: white noise at 20 dB SNR may
#: move ≤ 5 % of pace buckets (on the full set 4 of 110 move; docs/probes.md).
ALLOWED = {("white noise 20 dB SNR", "pace"): 0.05}


@pytest.mark.parametrize("name", list(INVARIANT))
def test_labels_do_not_move(base: dict[str, tuple[np.ndarray, int, dict[str, ProbeResult]]],
                            name: str) -> None:
    ps = default_probes()
    moved: dict[str, list[tuple[str, object, object]]] = {t: [] for t in TRAITS}
    for c in SUBSET:
        x, r, before = base[c.id]
        after = ps.measure(INVARIANT[name](x, r), item(c))
        for t in TRAITS:
            if t == "loudness" and name in LOUDNESS_MOVES:
                continue
            if after[t].label != before[t].label:
                v0, v1 = before[t].value, after[t].value
                edge_case = (isinstance(v0, float) and isinstance(v1, float)
                             and abs(v1 / v0 - 1) < 0.01)
                if not edge_case:  # a value within 1 % of where it was, across a bucket edge
                    moved[t].append((c.id, v0, v1))
    for t, got in moved.items():
        assert len(got) <= ALLOWED.get((name, t), 0.0) * len(SUBSET), (t, got)


ORDER = {"pace": ("slow", "moderate", "fast"), "pitch": ("low", "medium", "high"),
         "loudness": ("quiet", "normal", "loud")}
#: Each must-move manipulation's nominal shift on the trait's own bucket scale (pace: log of
#: phones/s; pitch: semitones re the requested reference; loudness: LU) and the share of it
#: that must carry a label across an edge. Gain is exact in BS.1770 (share 1). Praat's
#: overlap-add tempo change and its PSOLA pitch shift deliver less than nominal on some clips
#: (on the 110 clips tempo reached ≥ 0.6 of its nominal log-rate change; −4 st on low male
#: voices falls under the 75 Hz floor, see docs/probes.md), so half the shift must do it.
NOMINAL = {"tempo x0.8": (math.log(0.8), 0.5), "tempo x1.25": (math.log(1.25), 0.5),
           "pitch +4 st": (4.0, 0.5), "pitch -4 st": (-4.0, 0.5),
           "gain +10 dB": (10.0, 1.0), "gain -10 dB": (-10.0, 1.0)}


def position(res: ProbeResult) -> float:
    """Where a result sits on its trait's bucket scale (see NOMINAL)."""
    assert res.value is not None, res.detail
    if res.trait == "pace":
        return math.log(float(res.value))
    if res.trait == "pitch":
        return float(res.detail["semitones"])
    return float(res.value)


def bucket(trait: str, p: float) -> int:
    """The index in ORDER of the label the probe gives at position ``p``."""
    lo, hi = {"pace": tuple(math.log(e) for e in ac.PACE_EDGES_PPS),
              "pitch": (-ac.PITCH_EDGE_SEMITONES, ac.PITCH_EDGE_SEMITONES),
              "loudness": ac.LOUDNESS_EDGES_LUFS}[trait]
    return 0 if p < lo else 2 if p > hi else 1


@pytest.mark.slow
@pytest.mark.parametrize("name", list(rs.DIRECTIONAL))
def test_labels_move_the_right_way(
        base: dict[str, tuple[np.ndarray, int, dict[str, ProbeResult]]], name: str) -> None:
    """On every clip: the measured value moves the required way and the label never moves
    the wrong way; where the clip's value plus the required share of the nominal shift lies
    past a bucket edge, the label has moved at least that far (or already sat in the extreme
    bucket). Buckets are wider than these shifts (moderate pace spans ×1.43, medium pitch
    6 st), so a clip in the middle of a bucket may stay in it."""
    ps = default_probes()
    fn, trait, sign = rs.DIRECTIONAL[name]
    shift, share = NOMINAL[name]
    wrong = []
    for c in SUBSET:
        x, r, before = base[c.id]
        y, ry = fn(x, r)
        b, a = before[trait], ps.measure(rs.make_audio(y, ry), item(c))[trait]
        i0, i1 = ORDER[trait].index(b.label), ORDER[trait].index(a.label)
        need = bucket(trait, position(b) + share * shift)
        if (position(a) - position(b)) * sign <= 0 or (i1 - i0) * sign < 0 \
                or (i1 - need) * sign < 0:
            wrong.append((c.id, b.label, a.label, b.value, a.value, ORDER[trait][need]))
    assert not wrong, wrong


def test_stereo_loudness_sums_channel_powers() -> None:
    import pyloudnorm

    c = SUBSET[0]
    a = c.audio()
    x = np.asarray(a.samples, dtype=np.float64)
    right = rs.white_noise(x, a.sample_rate, 30.0)
    st = rs.stereo(x, a.sample_rate, right)
    ours = ac.LoudnessProbe().measure(st, item(c))["loudness"]
    ref = pyloudnorm.Meter(a.sample_rate).integrated_loudness(np.stack([x, right], axis=1))
    assert abs(float(ours.value or 0) - ref) < 0.05
    assert ours.detail["channels_estimated"] is False
    mono = ac.LoudnessProbe().measure(a, item(c))["loudness"]
    assert abs(float(mono.value or 0) - pyloudnorm.Meter(a.sample_rate)
               .integrated_loudness(x)) < 1e-6
    # dual mono reads 3.01 LU above the mono file, as BS.1770 sums the two channels
    dual = ac.LoudnessProbe().measure(rs.stereo(x, a.sample_rate), item(c))["loudness"]
    assert float(dual.value or 0) - float(mono.value or 0) == pytest.approx(3.0103, abs=1e-3)


def test_stereo_wav_file_reads_as_pyloudnorm(tmp_path: Path) -> None:
    """A real two-channel WAV file (two different real clips, 16-bit PCM) decoded by
    load_audio: the loudness probe sums the decoded channels as BS.1770 does."""
    import pyloudnorm
    import soundfile as sf

    from vocencebench.audio import load_audio

    left, right = (np.asarray(c.audio().samples, dtype=np.float64) for c in SUBSET[:2])
    n = min(left.shape[0], right.shape[0])
    pair = np.stack([left[:n], right[:n]], axis=1)
    path = tmp_path / "stereo.wav"
    sf.write(path, pair, 16_000, subtype="PCM_16")
    a = load_audio(path)
    assert (a.channels, a.mixed_down, a.channel_samples.shape) == (2, True, (n, 2))
    ours = ac.LoudnessProbe().measure(a, item(SUBSET[0]))["loudness"]
    ref = pyloudnorm.Meter(16_000).integrated_loudness(pair)
    assert ours.detail["channels_estimated"] is False
    assert abs(float(ours.value or 0) - ref) < 0.05, (ours.value, ref)
    # the channels differ, so the mono mix-down reads far below the two-channel sum
    assert pyloudnorm.Meter(16_000).integrated_loudness(np.asarray(a.samples)) < ref - 4.0


def _noise_system(seconds: float, lufs: float, seed: int) -> np.ndarray:
    """Speech-shaped noise (pink, syllable-rate amplitude modulation) scaled to ``lufs``."""
    sr = 16_000
    rng = make_rng(seed)
    t = np.arange(round(seconds * sr)) / sr
    y = rs.pink(t.shape[0], rng) * (0.6 + 0.4 * np.sin(2 * np.pi * 4 * t))
    now, _ = ac.integrated_loudness(y, sr)
    return np.asarray(y * 10 ** ((lufs - float(now or 0)) / 20))


@pytest.mark.parametrize(("pace", "loudness", "lufs"),
                         [("moderate", "normal", -20.0), ("slow", "quiet", -27.0),
                          ("fast", "loud", -15.0)])
def test_noise_that_lands_in_the_requested_buckets_scores_zero(
        pace: str, loudness: str, lufs: float) -> None:
    it = item(pace=pace, loudness=loudness)
    from vocencebench.probes.syllables import count_syllables

    phones = count_syllables(it.text).phones
    rate = {"slow": 8.0, "moderate": 11.5, "fast": 16.0}[pace]
    x = _noise_system(phones / rate, lufs, seed=7)
    ps = default_probes()
    assert ac.LoudnessProbe().measure(rs.make_audio(x, 16_000), it)["loudness"].label == \
        loudness  # it would have scored on loudness
    out = ps.measure(rs.make_audio(x, 16_000), it)
    assert set(out) == set(TRAITS)
    for r in out.values():
        assert r.label == UNMEASURABLE and r.d == 0.0 and r.value is None
        assert r.detail["unmeasurable"].startswith("no speech")
    check = ps.speech_check(rs.make_audio(x, 16_000))
    assert not check.present and check.reason


@pytest.mark.parametrize("kind", ["white", "tone", "hum", "dither"])
def test_non_speech_fails_the_check(kind: str, rng: np.random.Generator) -> None:
    sr = 16_000
    t = np.arange(3 * sr) / sr
    x = {"white": 0.1 * rng.standard_normal(t.shape[0]),
         "tone": 0.3 * np.sin(2 * np.pi * 220 * t),
         "hum": 0.2 * (np.sin(2 * np.pi * 60 * t) + 0.5 * np.sin(2 * np.pi * 120 * t)),
         "dither": rng.integers(-1, 2, t.shape[0]) / 32768.0}[kind]
    assert not default_probes().speech_check(rs.make_audio(x, sr)).present


def test_real_clips_pass_the_check_and_batched_traits_are_filled(
        rng: np.random.Generator) -> None:
    ps = default_probes()
    for c in SUBSET:
        assert ps.speech_check(c.audio()).present, c.id
    noise = rs.make_audio(0.1 * rng.standard_normal(32_000), 16_000)
    res = measure_batch(ps, [SUBSET[0].audio(), noise], [item(SUBSET[0]), item()])
    assert all(r.label != UNMEASURABLE for r in res[0].values())
    assert all(r.label == UNMEASURABLE for r in res[1].values())
    filled = ps.unmeasurable_results(item(), "no speech: test", traits=("gender", "loudness"))
    assert list(filled) == ["gender", "loudness"]
    assert filled["loudness"].unit == "LUFS" and filled["gender"].probe == "gender-f0gmm@1"
    from vocencebench.errors import ProbeError

    with pytest.raises(ProbeError, match="needs the requested 'gender'"):
        ps.unmeasurable_results(Item(id="x", instruction="", text="hi", traits={},
                                     difficulty=0), "no speech")
    assert ProbeSet(ps.probes, check_speech=False).check_speech is False


@pytest.mark.slow
def test_hibari_speech_passes_the_check() -> None:
    hibari = pytest.importorskip("hibari", reason="the neural extra (hibari-tts)")
    tts = hibari.Hibari()
    x = np.asarray(tts("The weather should clear up by the end of the afternoon.", seed=0),
                   dtype=np.float32)
    a = rs.make_audio(x, int(tts.sample_rate))
    check = default_probes().speech_check(a)
    assert check.present, check
    out = default_probes().measure(a, item())
    assert out["gender"].label == "female" and out["pace"].label != UNMEASURABLE


def _syllable_envelope(n: int, sr: int) -> np.ndarray:
    """Syllable-rate bumps (4 a second) with phrase gaps, as a system faking speech makes."""
    t = np.arange(n) / sr
    env = np.maximum(0.0, np.sin(2 * np.pi * 2.0 * t)) ** 0.7
    return np.asarray(env * (np.sin(2 * np.pi * 0.4 * t) > -0.8))


def _as_wav_samples(x: np.ndarray) -> np.ndarray:
    """Peak −6 dBFS, rounded to 16 bits: the quantisation floor is what let them through."""
    return np.asarray(np.round(0.5 * x / np.max(np.abs(x)) * 32767) / 32767)


@pytest.mark.parametrize("kind", ["tone-vibrato", "tone-contour", "speech-shaped-noise"])
def test_non_speech_under_a_syllable_envelope_fails_the_check(
        kind: str, rng: np.random.Generator) -> None:
    """The fourth audit: each passed the check and scored S = 1.000 on the probes (gate off):
    the envelope moved the old shape measure against the constant quantisation floor."""
    sr = 16_000
    n = 3 * sr
    t = np.arange(n) / sr
    if kind.startswith("tone"):
        st = (0.5 * np.sin(2 * np.pi * 5 * t) if kind == "tone-vibrato" else
              1.5 * np.sin(2 * np.pi * 0.7 * t) + 0.8 * np.sin(2 * np.pi * 2.3 * t))
        x = np.sin(2 * np.pi * np.cumsum(247.0 * 2 ** (st / 12)) / sr)
    else:  # white noise shaped to a real voice's long-term spectrum
        from scipy.signal import welch

        voice = SUBSET[0].audio()
        f, p = welch(np.asarray(voice.samples, dtype=np.float64), voice.sample_rate,
                     nperseg=512)
        spectrum = np.fft.rfft(rng.standard_normal(n))
        spectrum *= np.sqrt(np.interp(np.fft.rfftfreq(n, 1 / sr), f, p))
        x = np.fft.irfft(spectrum, n)
    y = _as_wav_samples(x * _syllable_envelope(n, sr))
    from vocencebench.probes.voice import SPEECH_MIN_SHAPE_VAR_DB

    check = default_probes().speech_check(rs.make_audio(y, sr))
    # the shape criterion alone rejects each (the noise is also unvoiced for this voice)
    assert not check.present and check.shape_var_db < SPEECH_MIN_SHAPE_VAR_DB, check


@pytest.mark.slow
def test_every_real_clip_clears_the_spectral_change_threshold_by_a_margin() -> None:
    from vocencebench.probes.voice import SPEECH_MIN_SHAPE_VAR_DB, check_speech

    shapes = {c.id: check_speech(c.audio()).shape_var_db for c in rs.manifest()}
    assert len(shapes) == 110
    low = min(shapes, key=shapes.__getitem__)
    assert shapes[low] >= SPEECH_MIN_SHAPE_VAR_DB + 1.0, (low, shapes[low])  # 4.59 dB measured
