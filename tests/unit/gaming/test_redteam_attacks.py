"""Golden properties of every attack's transformation, on a synthetic voice (no eSpeak).

Each attack must do exactly what its documentation says and nothing else: padding only on
slow requests and of the stated length and level, hum at the stated level and frequency,
clipping only on loud requests, gain only (correlation 1 with the base), noise of the stated
length, loudness and spectral shape, re-renderings asking the base for the stated request.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import math
import wave
from typing import Any

import numpy as np
import pytest

from vocencebench.audio import load_audio, to_wav_bytes
from vocencebench.errors import ConfigError
from vocencebench.gaming.attacks import (
    CATALOGUE,
    INSTRUMENTS,
    LOW_TONE_SEMITONES,
    NOTE_TO_JUDGE,
    PACE_TARGET_PPS,
    TONE_SEMITONES,
    ClipAttack,
    GainAttack,
    HumAttack,
    Memoriser,
    NoiseAttack,
    OtherSentenceAttack,
    PadAttack,
    RewriteAttack,
    SilenceAttack,
    SpeakInstructionAttack,
    SpokenNoteAttack,
    SyllableNoiseAttack,
    SyllableToneAttack,
    TraitWordAttack,
    attack_names,
    describe_voice,
    get_spec,
    rng_uniform,
)
from vocencebench.instruction import parse_instruction
from vocencebench.loudness import integrated_loudness
from vocencebench.norms import REFERENCE_F0_HZ
from vocencebench.probes.acoustic import lengthening_phones
from vocencebench.probes.syllables import count_syllables
from vocencebench.schema import Item
from vocencebench.tts import TARGET_LUFS

RATE = 22_050


def _voice(text: str, instruction: str) -> np.ndarray[Any, Any]:
    """A deterministic speech-like signal: harmonics of 120 Hz under a 4 Hz syllable
    envelope, 0.2 s per word, at about −20 dBFS."""
    n = int(0.2 * RATE * max(1, len(text.split())))
    t = np.arange(n) / RATE
    f0 = 120.0 + 10 * (hashlib.sha256(instruction.encode()).digest()[0] % 5)
    x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 12))
    env = 0.5 - 0.5 * np.cos(2 * np.pi * 4.0 * t)
    return np.asarray(0.12 * x * env, dtype=np.float64)


class Voice:
    """A synthetic base system that records what it was asked to say."""

    system_id = "test-voice@1"

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []

    def __call__(self, text: str, instruction: str) -> bytes:
        self.requests.append((text, instruction))
        return to_wav_bytes(_voice(text, instruction), RATE)


class Other(Voice):
    system_id = "test-other@1"

    def __call__(self, text: str, instruction: str) -> bytes:
        self.requests.append((text, instruction))
        return to_wav_bytes(0.5 * _voice(text, instruction + " other"), RATE)


def _item(**traits: str) -> Item:
    t = {"gender": "male", "age": "30", "pace": "moderate", "pitch": "medium",
         "loudness": "normal", "emotion": "neutral", "accent": "American", "tone": "warm"}
    t.update(traits)
    return Item(id="vb-test", instruction=describe_voice(t),
                text="Please pass the red cup to the teacher before lunch today.",
                traits=t, difficulty=1)


def _pcm(wav: bytes) -> np.ndarray[Any, Any]:
    with wave.open(io.BytesIO(wav)) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.int64)


def _samples(wav: bytes) -> np.ndarray[Any, Any]:
    return np.asarray(load_audio(wav).samples, dtype=np.float64)


def _dbfs(x: np.ndarray[Any, Any]) -> float:
    return 20 * math.log10(math.sqrt(float(np.mean(np.square(x)))))


# ----------------------------------------------------------------------------- catalogue


def test_catalogue_is_complete_and_consistent() -> None:
    names = attack_names()
    assert len(set(names)) == len(names)
    for required in ("silence", "noise", "pad-silence", "pad-room-tone", "gain-loudness",
                     "safe-middle", "speak-instruction", "other-sentence", "trait-words",
                     "hum-50hz", "tone-low", "clip-loud", "note-to-judge", "memoriser"):
        assert required in names
    voice, other = Voice(), Other()
    ids = set()
    for spec in CATALOGUE:
        assert spec.defence and spec.summary
        assert spec.needs and set(spec.needs) <= set(INSTRUMENTS)
        assert set(spec.decided_by) <= {"base", "reference"} and spec.decided_by
        attack = spec.make(voice, other, [])
        assert attack.system_id.startswith("redteam/") and "test-voice@1" in attack.system_id
        ids.add((attack.system_id, spec.base, spec.base_overrides))
    # parameters, names and bases make every attack distinct (pad-flat is pad-room-tone on
    # the flat voice instead of the reference that cannot slow down)
    assert len(ids) == len(CATALOGUE)
    assert get_spec("noise").needs == ("probes",)
    assert get_spec("other-sentence").needs == ("gate",)
    assert get_spec("note-to-judge").needs == ("judge",)
    assert get_spec("memoriser").needs == ("holdout",)
    assert get_spec("middle-age").needs == ("classifiers",)
    with pytest.raises(ConfigError, match="unknown attack 'nope'; valid: silence"):
        get_spec("nope")


def test_system_ids_name_the_parameters() -> None:
    v = Voice()
    assert PadAttack(v, fill="silence").system_id == \
        "redteam/pad-silence(fill=silence,seconds=1.5)<test-voice@1>"
    assert PadAttack(v, seconds=2.0).system_id != PadAttack(v).system_id
    assert NoiseAttack(v, seed=1).system_id != NoiseAttack(v, seed=2).system_id
    assert HumAttack(v, freq_hz=60.0).system_id != HumAttack(v, freq_hz=50.0).system_id


def test_raw_stream_is_pinned() -> None:
    x = rng_uniform(4, 3151662, "noise", "a")
    assert x.tolist() == rng_uniform(4, 3151662, "noise", "a").tolist()
    assert x.tolist() != rng_uniform(4, 3151662, "noise", "b").tolist()
    assert np.all((x >= -1) & (x < 1))
    # Golden: a NumPy release cannot move these (raw PCG64 words).
    assert [round(v, 12) for v in x.tolist()] == GOLDEN_UNIFORM


GOLDEN_UNIFORM = [-0.640505795102, -0.741287208537, 0.568951451683, -0.99696609834]


def test_describe_voice_reads_back_on_the_whole_corpus() -> None:
    from vocencebench.corpus import load_benchmark

    for it in load_benchmark():
        t = dict(it.traits)
        t.update(pace="moderate", pitch="medium", loudness="normal")
        assert parse_instruction(describe_voice(t)) == t, it.id


# ----------------------------------------------------------------------------- transformations


def test_silence_is_digital_zero_of_the_base_length() -> None:
    v = Voice()
    it = _item()
    out = _pcm(SilenceAttack(v).synthesize_item(it))
    assert out.shape == _pcm(v(it.text, it.instruction)).shape and not out.any()
    assert SilenceAttack(v).spoken_text(it) is None


def test_noise_targets_sit_inside_the_pace_probes_buckets() -> None:
    """The noise clip lasts (phones + lengthening) / target (test below), so the pace probe,
    were it to take the whole clip for speech, would read the target: each target must lie
    well inside its bucket of the current probe, so the attack tests the speech check and not
    a mis-aimed duration."""
    from vocencebench.probes import acoustic as ac

    lo, hi = ac.PACE_EDGES_PPS
    assert PACE_TARGET_PPS["slow"] * 1.15 < lo
    assert lo * 1.1 < PACE_TARGET_PPS["moderate"] < hi / 1.1
    assert PACE_TARGET_PPS["fast"] > 1.15 * hi


@pytest.mark.parametrize("pace", ["slow", "moderate", "fast"])
@pytest.mark.parametrize("loud", ["quiet", "loud"])
def test_noise_length_level_and_shape(pace: str, loud: str) -> None:
    v = Voice()
    it = _item(pace=pace, loudness=loud)
    att = NoiseAttack(v)
    wav = att.synthesize_item(it)
    assert wav == att.synthesize_item(it)  # deterministic
    assert wav != NoiseAttack(v, seed=7).synthesize_item(it)
    x = _samples(wav)
    count = count_syllables(it.text)
    phones = count.phones + lengthening_phones(count.phrases)
    assert x.shape[0] == round(phones / PACE_TARGET_PPS[pace] * RATE)
    lufs, _ = integrated_loudness(x, RATE)
    assert lufs is not None and abs(lufs - TARGET_LUFS[loud]) < 0.1
    # Shaped like the base's long-term spectrum: band levels track the voice's
    base = _samples(v(it.text, it.instruction))

    def bands(y: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        p = np.abs(np.fft.rfft(y)) ** 2
        f = np.fft.rfftfreq(y.shape[0], 1 / RATE)
        edges = [100, 300, 600, 1200, 2400, 4800]
        e = [p[(f >= lo) & (f < hi)].sum() / max(1, ((f >= lo) & (f < hi)).sum())
             for lo, hi in itertools.pairwise(edges)]
        return np.asarray(10 * np.log10(np.array(e) / e[0]))

    assert np.corrcoef(bands(x), bands(base))[0, 1] > 0.95
    # ... and it is noise: no sample-level resemblance to the voice
    m = min(x.shape[0], base.shape[0])
    assert abs(np.corrcoef(x[:m], base[:m])[0, 1]) < 0.3
    assert att.spoken_text(it) is None


@pytest.mark.parametrize("fill", ["silence", "room-tone"])
def test_padding_only_on_slow_requests_of_stated_length_and_level(fill: str) -> None:
    v = Voice()
    att = PadAttack(v, fill=fill)  # type: ignore[arg-type]
    for pace in ("moderate", "fast"):
        it = _item(pace=pace)
        assert att.synthesize_item(it) == v(it.text, it.instruction)  # unchanged bytes
    it = _item(pace="slow")
    base = _pcm(v(it.text, it.instruction))
    out = _pcm(att.synthesize_item(it))
    n = round(1.5 * RATE)
    assert out.shape[0] == base.shape[0] + 2 * n
    assert np.array_equal(out[n:n + base.shape[0]], base)  # the speech is untouched
    head, tail = out[:n] / 32767.0, out[-n:] / 32767.0
    if fill == "silence":
        assert not head.any() and not tail.any()
    else:
        assert abs(_dbfs(head) - (-40.0)) < 0.2 and abs(_dbfs(tail) - (-40.0)) < 0.2
        assert not np.array_equal(head, tail)
        # pink: more energy below 1 kHz than above, per Hz
        p = np.abs(np.fft.rfft(head)) ** 2
        f = np.fft.rfftfreq(n, 1 / RATE)
        assert p[(f > 50) & (f < 1000)].mean() > 10 * p[(f > 4000) & (f < 8000)].mean()
    with pytest.raises(ConfigError):
        PadAttack(v, fill="carpet")  # type: ignore[arg-type]


@pytest.mark.parametrize("loud", ["quiet", "normal", "loud"])
def test_gain_only_correlation_one_with_the_base(loud: str) -> None:
    v = Voice()
    it = _item(loudness=loud)
    base = _samples(v(it.text, it.instruction))
    att = GainAttack(v)
    out = _samples(att.synthesize_item(it))
    assert out.shape == base.shape
    assert np.corrcoef(out, base)[0, 1] > 0.99999
    g = att.gain(base, RATE, it)
    assert np.allclose(out, np.clip(base * g, -1, 1), atol=1.5 / 32767)
    assert np.max(np.abs(out)) <= 0.99 + 1 / 32767
    lufs, _ = integrated_loudness(out, RATE)
    peak_limited = math.isclose(g * np.max(np.abs(base)), 0.99, rel_tol=1e-9)
    assert lufs is not None
    if peak_limited:
        assert lufs < TARGET_LUFS[loud]
    else:
        assert abs(lufs - TARGET_LUFS[loud]) < 0.05


def _peak_freq(x: np.ndarray[Any, Any]) -> float:
    p = np.abs(np.fft.rfft(x * np.hanning(x.shape[0])))
    return float(np.fft.rfftfreq(x.shape[0], 1 / RATE)[int(np.argmax(p))])


def test_hum_only_on_low_pitch_requests_at_stated_level_and_frequency() -> None:
    v = Voice()
    att = HumAttack(v, freq_hz=50.0, level_dbfs=-20.0, harmonics=2)
    for pitch in ("medium", "high"):
        it = _item(pitch=pitch)
        assert att.synthesize_item(it) == v(it.text, it.instruction)
    it = _item(pitch="low")
    base = _samples(v(it.text, it.instruction))
    out = _samples(att.synthesize_item(it))
    hum = out - base
    assert abs(_dbfs(hum) - (-20.0)) < 0.05
    assert abs(_peak_freq(hum) - 50.0) < 1.0
    p = np.abs(np.fft.rfft(hum))
    f = np.fft.rfftfreq(hum.shape[0], 1 / RATE)
    for k, rel_db in ((2, -6.0), (3, -12.0)):  # harmonics 6 dB apart
        at = p[np.argmin(np.abs(f - 50.0 * k))] / p[np.argmin(np.abs(f - 50.0))]
        assert abs(20 * math.log10(at) - rel_db) < 0.5
    assert att.name == "hum-50hz"


@pytest.mark.parametrize(("gender", "age"), [("male", "30"), ("female", "45"),
                                             ("female", "8")])
def test_low_tone_sits_at_a_low_voice_f0(gender: str, age: str) -> None:
    from vocencebench.norms import age_group

    v = Voice()
    it = _item(pitch="low", gender=gender, age=age)
    att = HumAttack(v, freq_hz=None, level_dbfs=-20.0)
    hum = _samples(att.synthesize_item(it)) - _samples(v(it.text, it.instruction))
    want = REFERENCE_F0_HZ[(gender, age_group(age))] * 2 ** (LOW_TONE_SEMITONES / 12)
    assert abs(_peak_freq(hum) - want) < 1.0
    assert abs(_dbfs(hum) - (-20.0)) < 0.05
    assert att.name == "tone-low"


def test_clipping_only_on_loud_requests() -> None:
    v = Voice()
    att = ClipAttack(v, drive_db=12.0)
    for loud in ("quiet", "normal"):
        it = _item(loudness=loud)
        assert att.synthesize_item(it) == v(it.text, it.instruction)
    it = _item(loudness="loud")
    base = _samples(v(it.text, it.instruction))
    out = _pcm(att.synthesize_item(it))
    assert np.abs(out).max() == 32767
    clipped = np.mean(np.abs(out) == 32767)
    assert clipped > 0.01  # hard clipping, not a limiter
    g = 10 ** (12 / 20) / np.max(np.abs(base))  # peak driven 12 dB past full scale
    want = np.rint(np.clip(base * g, -1, 1) * 32767)
    assert np.max(np.abs(out - want)) <= 1


# ----------------------------------------------------------------------------- re-renderings


def test_rewrites_ask_the_base_for_the_stated_request() -> None:
    v = Voice()
    it = _item(pace="fast", pitch="low", loudness="quiet", age="78", gender="female")
    RewriteAttack(v, name="safe-middle", overrides={"pace": "moderate", "pitch": "medium",
                                                    "loudness": "normal"}).synthesize_item(it)
    text, instruction = v.requests[-1]
    want = dict(it.traits, pace="moderate", pitch="medium", loudness="normal")
    assert text == it.text and parse_instruction(instruction) == want

    SpeakInstructionAttack(v).synthesize_item(it)
    assert v.requests[-1] == (it.instruction, it.instruction)

    att = TraitWordAttack(v)
    att.synthesize_item(it)
    said = v.requests[-1][0]
    assert said.startswith(it.text.rstrip("."))
    assert said.endswith(", in a deep, neutral and warm voice.")
    assert v.requests[-1][1] == it.instruction and att.spoken_text(it) == said

    SpokenNoteAttack(v).synthesize_item(it)
    assert v.requests[-1][0].endswith(NOTE_TO_JUDGE) and it.text.rstrip(".") in \
        v.requests[-1][0]


def test_other_sentence_has_the_nearest_phone_count() -> None:
    v = Voice()
    pool = ["A cat sat.", "The quick brown fox jumps over the lazy dog near the river bank.",
            "Please pass the red cup to the teacher before lunch today.",
            "Bring the blue kite to the garden gate after school today."]
    att = OtherSentenceAttack(v, pool=pool)
    it = _item()
    other = att.other(it.text)
    assert other != it.text
    phones = count_syllables(it.text).phones
    gap = abs(count_syllables(other).phones - phones)
    assert all(gap <= abs(count_syllables(s).phones - phones) for s in pool if s != it.text)
    att.synthesize_item(it)
    assert v.requests[-1] == (other, it.instruction) and att.spoken_text(it) == other
    assert OtherSentenceAttack(v).other(it.text) != it.text  # the shipped pool


def test_rerender_batches_go_to_the_base() -> None:
    calls: list[list[tuple[str, str]]] = []

    class Batched(Voice):
        def synthesize_many(self, requests: Any, *, workers: int | None = None) -> list[Any]:
            calls.append(list(requests))
            return [self(t, i) for t, i in requests]

    it = _item()
    out = SpeakInstructionAttack(Batched()).synthesize_many([(it.text, it.instruction)])
    assert calls == [[(it.instruction, it.instruction)]]
    assert out == [Voice()(it.instruction, it.instruction)]


def test_memoriser_is_honest_only_on_what_it_memorised() -> None:
    flat, honest = Voice(), Other()
    it = _item()
    att = Memoriser(flat, honest=honest, memorised=[it])
    assert att.synthesize_item(it) == honest(it.text, it.instruction)
    unseen = Item(id="vb-other", instruction=it.instruction, text=it.text, traits=it.traits,
                  difficulty=1)
    assert att.synthesize_item(unseen) == flat(it.text, it.instruction)
    edited = Item(id=it.id, instruction=it.instruction, text="A different script now.",
                  traits=it.traits, difficulty=1)
    assert att.synthesize_item(edited) == flat(edited.text, edited.instruction)
    assert att(it.text, it.instruction) == honest(it.text, it.instruction)
    assert Memoriser(flat, honest=honest, memorised=[]).system_id != att.system_id


@pytest.mark.parametrize("pitch", ["low", "medium", "high"])
def test_syllable_signals_are_as_long_and_loud_as_the_noise_and_fail_the_speech_check(
        pitch: str) -> None:
    """The 4 December 2026 audit: these passed the first speech check (the tone scored
    S = 1.000 on the probes with the gate off; in the red team it beat its base, LCB +0.324)."""
    from vocencebench.norms import age_group
    from vocencebench.probes import default_probes
    from vocencebench.probes.voice import SPEECH_MIN_SHAPE_VAR_DB

    v = Voice()
    it = _item(pitch=pitch, loudness="quiet")
    noise = _samples(NoiseAttack(v).synthesize_item(it))
    for att in (SyllableNoiseAttack(v), SyllableToneAttack(v)):
        wav = att.synthesize_item(it)
        assert wav == att.synthesize_item(it) and att.spoken_text(it) is None
        x = _samples(wav)
        assert x.shape[0] == noise.shape[0]
        lufs, _ = integrated_loudness(x, RATE)
        assert lufs is not None and abs(lufs - TARGET_LUFS["quiet"]) < 0.1
        check = default_probes().speech_check(load_audio(wav))
        assert not check.present, check
        if isinstance(att, SyllableToneAttack):  # the spectral-shape criterion alone
            assert check.shape_var_db < SPEECH_MIN_SHAPE_VAR_DB, check
        # (noise shaped like this harmonic test voice has its ripple: the F0 criteria reject
        # it here, the shape measure alone does not — the comb-noise hole of docs/probes.md)
    tone = _samples(SyllableToneAttack(v).synthesize_item(it))
    spectrum = np.abs(np.fft.rfft(tone))
    peak_hz = float(np.fft.rfftfreq(tone.shape[0], 1 / RATE)[int(np.argmax(spectrum))])
    want = REFERENCE_F0_HZ[("male", age_group("30"))] * 2 ** (TONE_SEMITONES[pitch] / 12)
    assert abs(12 * math.log2(peak_hz / want)) < 0.6  # within its ±0.5 st vibrato
