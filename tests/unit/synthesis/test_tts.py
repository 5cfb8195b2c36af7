"""Built-in eSpeak systems: determinism, hidden-state isolation, voice validation, and that
``espeak-follow`` moves pace, pitch, loudness, gender and age the right way."""

from __future__ import annotations

import hashlib
import io
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from vocencebench import tts
from vocencebench._tts import render
from vocencebench.audio import load_audio
from vocencebench.errors import ConfigError, SynthesisError
from vocencebench.tts import NEUTRAL, EspeakSettings

TEXT = "The old lighthouse stood watch over the restless grey sea."
LONG = ("The old lighthouse stood watch over the restless grey sea, "
        "and the fishermen trusted its light.")


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def pcm(wav: bytes) -> np.ndarray:
    x, sr = sf.read(io.BytesIO(wav), dtype="float64")
    assert sr == tts.SAMPLE_RATE
    return np.asarray(x)


def median_f0(wav: bytes) -> float:
    import parselmouth

    snd = parselmouth.Sound(pcm(wav), tts.SAMPLE_RATE)
    f = snd.to_pitch(pitch_floor=60, pitch_ceiling=600).selected_array["frequency"]
    return float(np.median(f[f > 0]))


def lufs(wav: bytes) -> float:
    import pyloudnorm

    return float(pyloudnorm.Meter(tts.SAMPLE_RATE).integrated_loudness(pcm(wav)))


def seconds(wav: bytes) -> float:
    return len(pcm(wav)) / tts.SAMPLE_RATE


def semitones(a: float, b: float) -> float:
    return 12 * math.log2(b / a)


def espeak_mapped_here() -> bool:
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:  # pragma: no cover - not Linux
        pytest.skip("needs /proc/self/maps")
    return "libespeak-ng" in maps


# ---------------------------------------------------------------- reference renderings

#: sha256 of reference renderings with espeakng-loader 0.2.4 (mapping version 1). A change here
#: means the engine or the mapping changed: bump tts.MAPPING_VERSION and re-pin.
PINS: list[tuple[str, EspeakSettings, str]] = [
    (TEXT, NEUTRAL, "a4b31c7c645deddff9b107a9728ac30877001a482a4cb468e0f6b54ebbce37d0"),
    # en+f3 has breath noise: only a seeded generator makes this repeatable.
    (TEXT, EspeakSettings(voice="en+f3"),
     "6a4779657c6c4555e31786f66413a357b56bd20d157611d69d93ba0c7f032e36"),
    (TEXT, tts.voice_settings({"gender": "female", "pace": "fast", "loudness": "loud",
                                    "pitch": "high", "accent": "British"}),
     "c6fd5901ddee48212e1ae33506df8ae85039d4f53cb03af5cafe3ef64e851d4b"),
    ("Hello world.", EspeakSettings(voice="en-us+m3", rate=120, volume=50, pitch=25, range=80,
                                    seed=7),
     "11678008371b3975a42ae82b6f7ed1980b180729942d144faee7c29070a3975a"),
]


def test_loader_version_is_the_pinned_one() -> None:
    from importlib import metadata

    assert metadata.version("espeakng-loader") == tts.ESPEAKNG_LOADER_VERSION
    expected = f"espeakng-loader-{tts.ESPEAKNG_LOADER_VERSION}+map1"
    assert expected == tts.ENGINE_VERSION


@pytest.mark.slow
def test_reference_renderings_match_their_pins() -> None:
    wavs = tts.render_many([(t, s) for t, s, _ in PINS], workers=2)
    assert [sha(w) for w in wavs] == [p for _, _, p in PINS]
    a = load_audio(wavs[0])
    assert a.sample_rate == 22_050 and a.format == "WAV/PCM_16" and a.channels == 1


@pytest.mark.slow
def test_identical_in_another_python_process() -> None:
    code = (
        "import hashlib; from vocencebench import tts;"
        f"print(hashlib.sha256(tts.synthesize({TEXT!r}, "
        "tts.EspeakSettings(voice='en+f3'))).hexdigest())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == PINS[1][2]
    assert sha(tts.synthesize(TEXT, EspeakSettings(voice="en+f3"))) == PINS[1][2]


@pytest.mark.slow
def test_seed_is_applied_to_breath_noise() -> None:
    a, b, c, d = tts.render_many(
        [(TEXT, EspeakSettings(voice="en+f3", seed=s)) for s in (1, 1, 2)]
        + [(TEXT, EspeakSettings(voice="en+f4", seed=2))], workers=2)
    assert a == b
    assert a != c  # the seed reaches eSpeak's noise generator
    # a voice without breath noise does not depend on the seed at all
    assert d == tts.synthesize(TEXT, EspeakSettings(voice="en+f4", seed=1))


# ---------------------------------------------------------------- hidden state

def _fresh_engine_renders(texts: list[str], settings: list[EspeakSettings],
                          conn: multiprocessing.connection.Connection) -> None:
    """In a forked child: load the library here and render ``texts`` one after another."""
    engine = render._Engine(*render._paths(), reuse=True)
    conn.send([engine.render(t, s) for t, s in zip(texts, settings, strict=True)])
    conn.close()


def in_child(texts: list[str], settings: list[EspeakSettings]) -> list[bytes]:
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_fresh_engine_renders, args=(texts, settings, send))
    p.start()
    send.close()
    out: list[bytes] = recv.recv()
    p.join(timeout=30)
    return out


def as_pcm16(wav: bytes) -> bytes:
    return bytes(np.rint(pcm(wav) * 32768).astype(np.int16).tobytes())


@pytest.mark.slow
def test_hidden_state_does_not_leak_between_clips() -> None:
    other = "Please restart the router and wait thirty seconds."
    a1, b, a2 = tts.render_many([(TEXT, NEUTRAL), (other, NEUTRAL), (TEXT, NEUTRAL)],
                                    workers=1)
    assert a1 == a2 == tts.synthesize(TEXT, NEUTRAL)
    assert b != a1
    assert not espeak_mapped_here(), "the calling process must never load libespeak-ng"


def test_in_process_reuse_is_not_repeatable() -> None:
    """Documents why each clip gets its own process: one long-lived engine renders the same
    text differently the second time. If this starts failing, the library stopped keeping
    hidden state and the design note in tts.py is stale."""
    first, second, third = in_child([TEXT] * 3, [NEUTRAL] * 3)
    assert first != second and second != third
    assert len({len(first), len(second), len(third)}) > 1  # even the lengths differ
    # the first rendering of a freshly loaded engine is what the systems return
    assert first == as_pcm16(tts.synthesize(TEXT, NEUTRAL))


@pytest.mark.slow
@pytest.mark.parametrize("voice", [*tts.VOICES, "en+f3", "en-us+f5", "en+m7", "en-029+klatt"])
def test_template_fork_equals_a_freshly_loaded_library(voice: str) -> None:
    """Clip processes are forked from an initialised template (en-us selected) rather than
    loading the library themselves; that must not change a single sample."""
    s = EspeakSettings(voice=voice, rate=150, pitch=60)
    (fresh,) = in_child([TEXT], [s])
    assert fresh == as_pcm16(tts.synthesize(TEXT, s))


def test_one_clip_per_engine_process_is_enforced() -> None:
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def twice(conn: multiprocessing.connection.Connection) -> None:
        engine = render._Engine(*render._paths())
        engine.render(TEXT, NEUTRAL)
        try:
            engine.render(TEXT, NEUTRAL)
        except SynthesisError as exc:
            conn.send(str(exc))
        else:
            conn.send("no error")
        conn.close()

    p = ctx.Process(target=twice, args=(send,))
    p.start()
    send.close()
    assert "hidden state" in recv.recv()
    p.join(timeout=30)


# ---------------------------------------------------------------- voice names and settings

@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("en-gb", r"unknown eSpeak voice 'en-gb' \(British English is 'en'\)"),
        ("en-gb+f3", "unknown eSpeak voice 'en-gb'"),
        ("en-us+zz", "unknown eSpeak variant 'zz'.*drop it silently"),
        ("en+F3", "unknown eSpeak variant 'F3'"),
        ("en+", "unknown eSpeak variant ''"),
        ("nonsense", "valid voices: en, en-us"),
        ("", "unknown eSpeak voice ''"),
    ],
)
def test_unknown_voice_names_are_config_errors(name: str, pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern):
        tts.validate_voice(name)
    with pytest.raises(ConfigError, match=pattern):
        EspeakSettings(voice=name)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"rate": 79}, r"rate must be an integer in \[80, 450\]"),
        ({"rate": 451}, "rate"),
        ({"rate": 175.0}, "rate"),
        ({"volume": -1}, "volume"),
        ({"volume": 201}, "volume"),
        ({"pitch": 101}, "pitch"),
        ({"range": -5}, "range"),
        ({"pitch": True}, "pitch"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**31}, "seed"),
    ],
)
def test_settings_out_of_range(kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern):
        EspeakSettings(**kwargs)  # type: ignore[arg-type]


@pytest.mark.slow
def test_every_listed_voice_and_variant_is_real() -> None:
    """Each listed base loads (the library says OK) and each variant changes the sound, so
    none of them is silently dropped."""
    data = Path(render._paths()[1])
    for v in tts.VARIANTS:
        assert (data / "voices" / "!v" / v).is_file(), v
    names = list(tts.VOICES) + [f"en+{v}" for v in tts.VARIANTS]
    wavs = tts.render_many([("Hello there.", EspeakSettings(voice=n)) for n in names],
                               workers=2)
    digests = {sha(w) for w in wavs}
    assert len(digests) == len(names)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("text", ["", "   ", "\x00\n"])
def test_empty_text_is_a_synthesis_error(text: str) -> None:
    with pytest.raises(SynthesisError, match="nothing to say"):
        tts.synthesize(text)


def test_control_characters_do_not_cut_the_text() -> None:
    assert tts.synthesize("Hello\x00 world.") == tts.synthesize("Hello  world.")


@pytest.mark.slow
def test_batch_errors_name_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SynthesisError, match="nothing to say"):
        tts.render_many([(TEXT, NEUTRAL), ("", NEUTRAL)], workers=2)
    with pytest.raises(ConfigError, match="workers"):
        tts.render_many([(TEXT, NEUTRAL)], workers=0)
    with pytest.raises(ConfigError, match="EspeakSettings"):
        tts.render_many([(TEXT, {"rate": 100})], workers=1)  # type: ignore[list-item]

    def crash(engine: object, text: str, settings: EspeakSettings) -> bytes:
        os._exit(3)

    monkeypatch.setattr(render, "_render_wav_in_clip_process", crash)  # forked children see it
    with pytest.raises(SynthesisError,
                       match=r"failed on 'The old.*clip process died \(exit code 3\)"):
        tts.synthesize(TEXT)

    def killed(engine: object, text: str, settings: EspeakSettings) -> bytes:
        os.kill(os.getpid(), signal.SIGKILL)  # as if the OOM killer struck
        return b""

    monkeypatch.setattr(render, "_render_wav_in_clip_process", killed)
    out = tts.synthesize_requests("espeak-flat", [(TEXT, ""), ("Second.", "")], workers=1)
    assert all(isinstance(r, SynthesisError) and "signal 9" in str(r) for r in out)

    def boom(engine: object, text: str, settings: EspeakSettings) -> bytes:
        raise RuntimeError("library exploded")

    monkeypatch.setattr(render, "_render_wav_in_clip_process", boom)
    with pytest.raises(SynthesisError, match=r"failed on .The old.*RuntimeError: library exploded"):
        tts.synthesize(TEXT)

    def hang(engine: object, text: str, settings: EspeakSettings) -> bytes:
        time.sleep(30)
        return b""

    monkeypatch.setattr(render, "_render_wav_in_clip_process", hang)
    t0 = time.monotonic()
    res = render.render_jobs([(TEXT, NEUTRAL)], 1, timeout=0.5)
    assert isinstance(res[0], SynthesisError) and "timed out after 0.5 s" in str(res[0])
    assert time.monotonic() - t0 < 10


def test_template_failures_fail_the_clips(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_library(self: object, lib_path: str, data_path: str, *, reuse: bool = False) -> None:
        raise OSError("libespeak-ng.so: cannot open shared object file")

    monkeypatch.setattr(render._Engine, "__init__", no_library)
    out = tts.synthesize_requests("espeak-flat", [(TEXT, ""), ("Second one.", "")], workers=1)
    assert [str(r) for r in out] == [
        f"eSpeak failed on {t!r}: OSError: libespeak-ng.so: cannot open shared object file"
        for t in (TEXT, "Second one.")
    ]
    monkeypatch.undo()

    def template_dies(engine: object, text: str, settings: object, timeout: float) -> None:
        os._exit(9)

    monkeypatch.setattr(render, "_render_one", template_dies)
    out = tts.synthesize_requests("espeak-flat", [(TEXT, ""), ("Second one.", "")], workers=1)
    assert all(isinstance(r, SynthesisError) and "worker died (exit code 9)" in str(r)
               for r in out)


def test_synthesize_requests_fails_items_not_batches() -> None:
    out = tts.synthesize_requests("espeak-flat", [(TEXT, "anything"), ("", "x")], workers=2)
    assert out[0] == tts.synthesize(TEXT, NEUTRAL)
    assert isinstance(out[1], SynthesisError)


# ---------------------------------------------------------------- the registry and the plan

def test_registry() -> None:
    assert tts.builtin_systems() == ("espeak-follow", "espeak-flat")
    assert isinstance(tts.get_system("espeak-follow"), tts.EspeakFollow)
    assert tts.get_system("espeak-flat").system_id.startswith("espeak-flat@espeakng-loader-")
    with pytest.raises(ConfigError, match="valid: espeak-follow, espeak-flat"):
        tts.get_system("espeak")


def test_flat_ignores_the_instruction() -> None:
    flat = tts.EspeakFlat()
    assert flat.settings("a loud fast child") == NEUTRAL == flat.settings("")
    assert flat(TEXT, "a whispering old woman") == tts.synthesize(TEXT, NEUTRAL)


def test_empty_request_is_neutral() -> None:
    assert tts.voice_settings({}) == NEUTRAL


@pytest.mark.parametrize(
    ("traits", "expect"),
    [
        ({"pace": "slow"}, {"rate": 110, "voice": "en-us", "pitch": 50, "volume": 100}),
        ({"pace": "moderate"}, {"rate": 165}),
        ({"pace": "fast"}, {"rate": 260}),
        ({"loudness": "quiet"}, {"volume": 50, "pitch": 50}),
        ({"loudness": "normal"}, {"volume": 99}),
        ({"loudness": "loud"}, {"volume": 180}),
        # pitch: the male adult reference 110 Hz, then -5 / +5 semitones (82 / 147 Hz);
        # the amplitude follows so that higher voices are not louder
        ({"pitch": "low"}, {"pitch": 29, "volume": 110}),
        ({"pitch": "medium"}, {"pitch": 60, "volume": 94}),
        ({"pitch": "high"}, {"pitch": 87, "volume": 85}),
        ({"gender": "female"}, {"voice": "en-us+f4", "pitch": 61, "volume": 79}),
        ({"gender": "male"}, {"voice": "en-us", "pitch": 60}),
        ({"gender": "female", "accent": "British"}, {"voice": "en+f4"}),
        ({"accent": "American"}, {"voice": "en-us"}),
        ({"accent": "Australian"}, {"voice": "en"}),
        ({"age": "8"}, {"voice": "en-us+f3", "pitch": 71, "rate": 178}),
        ({"age": "78"}, {"voice": "en-us", "pitch": 69, "rate": 148}),
        ({"age": "78", "pace": "slow"}, {"rate": 110}),  # a requested pace wins over age
        ({"age": "8", "pitch": "high", "pace": "fast"}, {"pitch": 100, "rate": 260}),
        ({"age": "30"}, {"pitch": 60, "rate": 165}),
        ({"age": "13", "gender": "male", "pitch": "high"}, {"pitch": 100, "rate": 172}),
    ],
)
def test_trait_mapping(traits: dict[str, str], expect: dict[str, object]) -> None:
    s = tts.voice_settings(traits)
    assert {k: getattr(s, k) for k in expect} == expect


def test_plan_records_what_is_not_realised() -> None:
    plan = tts.plan_voice({"gender": "female", "pace": "fast", "accent": "Indian",
                           "emotion": "angry", "tone": "warm", "age": "78",
                           "loudness": "loud", "pitch": "low"})
    assert set(plan.realised) == {"gender", "pace", "loudness", "pitch"}
    assert set(plan.approximated) == {"age"}
    assert set(plan.unrealised) == {"accent", "emotion", "tone"}
    assert "no Indian English voice" in plan.unrealised["accent"]
    teen = tts.plan_voice({"age": "13", "gender": "male", "pitch": "high"})
    assert "out of reach: 168 Hz" in teen.approximated["pitch"]
    boy = tts.plan_voice({"age": "8", "gender": "male"})
    assert "no boy's voice" in boy.approximated["gender"]
    assert "pitch" in tts.plan_voice({"age": "8", "pitch": "high"}).realised  # 334 Hz reached
    canada = tts.plan_voice({"accent": "Canadian"})
    assert "Canadian" in canada.approximated["accent"]
    assert tts.plan_voice({"emotion": "neutral"}).realised.keys() == {"emotion"}


@pytest.mark.parametrize(
    ("traits", "pattern"),
    [
        ({"timbre": "dark"}, "unknown trait 'timbre'"),
        ({"pace": "glacial"}, "'glacial' is not a value of trait 'pace'"),
        ({"age": "old"}, "trait 'age' needs a number"),
    ],
)
def test_bad_requests(traits: dict[str, str], pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern):
        tts.voice_settings(traits)


# ---------------------------------------------------------------- measurable realisation


@pytest.fixture(scope="module")
def renders() -> dict[str, bytes]:
    requests = {
        "slow": {"pace": "slow"},
        "moderate": {"pace": "moderate"},
        "fast": {"pace": "fast"},
        "low": {"pitch": "low"},
        "medium": {"pitch": "medium"},
        "high": {"pitch": "high"},
        "f-low": {"gender": "female", "pitch": "low"},
        "f-high": {"gender": "female", "pitch": "high"},
        "quiet": {"loudness": "quiet"},
        "normal": {"loudness": "normal"},
        "loud": {"loudness": "loud"},
        "male": {"gender": "male"},
        "female": {"gender": "female"},
        "child": {"age": "8"},
        "adult": {"age": "30"},
        "elderly": {"age": "78"},
        "f-adult": {"age": "30", "gender": "female"},
        "f-elderly": {"age": "78", "gender": "female"},
    }
    keys = list(requests)
    wavs = tts.render_many([(LONG, tts.voice_settings(requests[k])) for k in keys],
                               workers=2)
    return dict(zip(keys, wavs, strict=True))


@pytest.mark.slow
def test_pace_moves_duration(renders: dict[str, bytes]) -> None:
    slow, mod, fast = (seconds(renders[k]) for k in ("slow", "moderate", "fast"))
    # 110 / 165 / 260 wpm; duration scales ~ 1 / wpm (plus a fixed end pause)
    assert slow > mod > fast
    assert slow / mod == pytest.approx(165 / 110, rel=0.06)
    assert mod / fast == pytest.approx(260 / 165, rel=0.06)


@pytest.mark.slow
def test_pitch_moves_f0(renders: dict[str, bytes]) -> None:
    lo, mid, hi = (median_f0(renders[k]) for k in ("low", "medium", "high"))
    # aimed at 82 / 110 / 147 Hz (male adult reference 110 Hz, -5 / 0 / +5 semitones)
    assert semitones(110, lo) == pytest.approx(-5, abs=1)
    assert semitones(110, mid) == pytest.approx(0, abs=1)
    assert semitones(110, hi) == pytest.approx(5, abs=1)
    f_lo, f_hi = median_f0(renders["f-low"]), median_f0(renders["f-high"])
    # aimed at 150 / 267 Hz (female adult reference 200 Hz)
    assert semitones(200, f_lo) == pytest.approx(-5, abs=1)
    assert semitones(200, f_hi) == pytest.approx(5, abs=1)


@pytest.mark.slow
def test_gender_moves_f0(renders: dict[str, bytes]) -> None:
    male, female = median_f0(renders["male"]), median_f0(renders["female"])
    assert semitones(110, male) == pytest.approx(0, abs=1)
    assert semitones(200, female) == pytest.approx(0, abs=1)


@pytest.mark.slow
def test_loudness_moves_lufs(renders: dict[str, bytes]) -> None:
    quiet, normal, loud = (lufs(renders[k]) for k in ("quiet", "normal", "loud"))
    # measured: -27.0, -20.7, -15.8 LUFS (amplitudes 50, 99, 180)
    assert quiet == pytest.approx(-27.0, abs=1.5)
    assert normal == pytest.approx(-21.0, abs=1.5)
    assert loud == pytest.approx(-16.0, abs=1.5)
    # higher voices get less amplitude, so that they are not louder
    for k in ("high", "female", "f-high", "child"):
        assert lufs(renders[k]) == pytest.approx(-21.0, abs=1.5), k


@pytest.mark.slow
def test_amplitude_is_a_gain_up_to_100_and_limited_above() -> None:
    amps = (50, 100, 150, 200)
    xs = [pcm(w) for w in tts.render_many([(LONG, EspeakSettings(volume=v)) for v in amps],
                                              workers=2)]
    x50, x100, x150, x200 = xs

    def rms_db(x: np.ndarray) -> float:
        return float(20 * np.log10(np.sqrt(np.mean(x**2))))

    def corr(x: np.ndarray, y: np.ndarray) -> float:
        return float(np.corrcoef(x, y)[0, 1])

    # up to 100: the same waveform scaled (measured: +6.3 dB for x2, correlation 0.99996)
    assert corr(x50, x100) > 0.9999
    assert rms_db(x100) - rms_db(x50) == pytest.approx(6.0, abs=0.5)
    assert np.max(np.abs(x100)) < 0.9
    # above: peaks held at full scale, waveform reshaped, less than linear gain
    # (measured: +5.6 dB for x2, correlation 0.994, 0.14 % of samples at full scale)
    assert np.max(np.abs(x200)) > 0.99
    assert corr(x200, x100) < 0.998
    assert rms_db(x200) - rms_db(x100) < 20 * math.log10(2) - 0.3
    assert rms_db(x100) < rms_db(x150) < rms_db(x200)


@pytest.mark.slow
def test_age_moves_pitch_and_rate(renders: dict[str, bytes]) -> None:
    child, adult, old = (renders[k] for k in ("child", "adult", "elderly"))
    assert semitones(250, median_f0(child)) == pytest.approx(0, abs=1)
    assert median_f0(renders["f-elderly"]) < median_f0(renders["f-adult"])  # 185 vs 200 Hz
    assert seconds(child) < seconds(adult) < seconds(old)  # no pace requested: age sets it


@pytest.mark.slow
def test_follow_lands_in_the_probes_buckets() -> None:
    """The built-in system is the probes' ground truth: every request it can realise must
    come out in the requested bucket of the acoustic probes."""
    try:
        from vocencebench.probes import acoustic
        from vocencebench.schema import Item
    except Exception as exc:  # another engineer's module
        pytest.skip(f"acoustic probes unavailable: {exc}")
    assert dict(acoustic.REFERENCE_F0_HZ) == dict(tts.TARGET_F0_HZ)
    assert tuple(acoustic.AGE_GROUPS) == tuple(tts.AGE_GROUPS)
    base = {"gender": "male", "age": "30", "pace": "moderate", "pitch": "medium",
            "loudness": "normal", "emotion": "neutral", "accent": "American", "tone": "warm"}
    requests = [dict(base, gender=g, age=a, pitch=p)
                for g in ("male", "female") for a in ("8", "13", "30", "78")
                for p in ("low", "medium", "high")
                if (g, a, p) != ("male", "13", "high")]  # out of reach, reported as such
    requests += [dict(base, pace=p) for p in ("slow", "fast")]
    requests += [dict(base, loudness=v, gender=g) for v in ("quiet", "loud")
                 for g in ("male", "female")]
    wavs = tts.render_many([(LONG, tts.voice_settings(r)) for r in requests], workers=2)
    probes: list[Any] = [acoustic.PitchProbe(), acoustic.PaceProbe(), acoustic.LoudnessProbe()]
    wrong = []
    for req, wav in zip(requests, wavs, strict=True):
        item = Item(id="x", instruction="", text=LONG, traits=req, difficulty=1)
        audio = load_audio(wav)
        for probe in probes:
            for trait, res in probe.measure(audio, item).items():
                if res.label != req[trait]:
                    wrong.append((req, trait, res.label, res.value))
    assert wrong == []


# ---------------------------------------------------------------- espeak-follow end to end

@pytest.mark.slow
def test_follow_reads_the_instruction() -> None:
    try:
        from vocencebench.instruction import parse_instruction
    except Exception as exc:  # another module; not written yet in some checkouts
        pytest.skip(f"vocencebench.instruction unavailable: {exc}")
    follow = tts.EspeakFollow()
    instruction = "A woman speaking quickly and loudly with a high-pitched voice."
    traits = parse_instruction(instruction)
    assert follow.settings(instruction) == tts.voice_settings(traits)
    wav = follow(TEXT, instruction)
    assert wav == tts.synthesize(TEXT, tts.voice_settings(traits))
    assert wav != tts.EspeakFlat()(TEXT, instruction)
