"""Acoustic probes: calibration on eSpeak clips with known settings, synthetic signals with
known F0 and level, determinism, and bad input."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import multiprocessing
import pickle

import numpy as np
import pytest

from vocencebench.audio import Audio, load_audio, to_wav_bytes
from vocencebench.decide import desirability
from vocencebench.errors import ProbeError
from vocencebench.loudness import integrated_loudness
from vocencebench.norms import age_group
from vocencebench.probes import acoustic as ac
from vocencebench.probes import default_probes, vad
from vocencebench.probes import voice as pv
from vocencebench.probes.acoustic import (
    DnsmosDiagnostic,
    GenderHeuristicProbe,
    LoudnessProbe,
    PaceProbe,
    PitchProbe,
    analyse,
)
from vocencebench.probes.syllables import count_syllables
from vocencebench.schema import UNMEASURABLE, Item, ProbeResult
from vocencebench.tts import EspeakSettings, render_many

#: Everyday scripts of the shipped corpus (benchmark_v1, category everyday, ≥ 10 syllables;
#: every fourth), copied here so that corpus edits cannot move the pace calibration.
CORPUS_EVERYDAY = (
    "Well, the old piano's gone to the church hall, so who's going to hear all my wrong notes now?",
    "Everyone stay right behind me, the water's rising but we'll reach the bridge in time.",
    ("It's just a few bumps, sweetheart, hold my hand and we'll be on the ground before you "
     "know it."),
    "Well, look who finally remembered my address!",
    "I didn't get the scholarship this year.",
    "Yes, this meeting could have been an email, but here we are, reading slides aloud together.",
    "Boarding passes out, please. Gate closes now.",
    "It's fine, honestly, I'll just watch the match from the bench again and bring the oranges.",
    "Nan taught half this room to bake, so tonight we eat Nan's sponge cake and share stories.",
    "With respect, the deposit was due back on the first, and I will not be waiting another week.",
    ("The flight's been cancelled, so no, I won't make it home for Christmas, but we'll "
     "video call, promise."),
    "Okay, sweetie, stay right here with me while I check the back door, I'll be two seconds.",
    "Whoa! Everybody freeze, there's a lizard!",
    ("The baby just took those wobbly steps on the video call, and I hollered so much the "
     "cat ran off!"),
    ("Guess who finally passed the driving test on attempt number four? Lock up your "
     "wheelie bins, everyone."),
    ("You told me the report was finished, and now the client's calling because half of it "
     "is missing."),
    "The bus is running late again, so I'll text when I'm at the corner near the servo.",
    ("It gives me great pleasure to announce that our team has exceeded every target set "
     "for this quarter."),
    "Oh my goodness, you fainted! Don't try to stand yet, just sip some water and breathe.",
    ("Don't cry, Didi, the kite got stuck but Papa has a ladder, and we can make another "
     "one tomorrow."),
    "The ice is finally thick enough, so grab your skates, the pond's all ours this afternoon.",
    ("Sure, the team traded my favourite player the day after I bought the jersey, perfect "
     "timing as always."),
    ("Oh, wonderful, the grandchildren have finally remembered I exist, and they brought "
     "cake. Stop the presses, everyone!"),
    ("I beg your pardon, the board has approved the entire budget? I was told to expect a "
     "firm refusal."),
    ("Look, the caterpillar turned into a butterfly overnight! Don't cry, it's okay, it "
     "just flew to the window."),
    "Good evening, your booth by the window awaits.",
    ("You found my old school photo in the attic? I had completely forgotten this moustache "
     "ever existed!"),
    "Wait, my brother actually cleaned the bedroom without being asked? Is the world ending?",
    "Oh sure, park right across my driveway, mate, it's not like I needed to get to work today.",
    "Everyone outside, this is a fire drill.",
    ("Who left prawns in the ute over the weekend? Get it cleaned out now, the whole car "
     "park reeks."),
    ("You hid a whole birthday cake in my car boot this morning? You sneaky little rascal, "
     "I never noticed!"),
    ("Your application has been received and will be reviewed within ten working days. You "
     "will be contacted by post."),
    "I know we lost the final, everyone, but I have never been prouder of this team. Heads up.",
    ("Everyone stay inside and away from the windows. The funnel cloud is heading this way, "
     "and we wait here."),
    "Don't look in the bin, Sam, the fox has been at it again. I'll sort it, go back inside.",
    "Another funeral. Lovely way to spend Tuesday.",
    ("Barbie's at mine on Saturday, bring your own chairs and something better than last "
     "week's burnt sausages."),
    "Team, we closed the deal! Celebrate tonight!",
    ("You came all this way just to see me? And you brought the great-grandbaby too, what a "
     "lovely morning!"),
    ("The gate stays shut after dark, the dogs are fed at six, and nobody touches the "
     "tractor without asking."),
    ("The safe is open and the cash is still inside? Nobody moves, nobody touches anything "
     "until the sheriff gets here."),
    ("Oh, thanks so much for saving me a cookie. Really nice of you. There's only crumbs "
     "left in the jar!"),
    ("Someone left a tuna sandwich in the office fridge for three weeks. We need to talk "
     "about this today."),
    "Stay right there, doggy. Don't come any closer. Sit down and stay. Good dog, just stay there.",
    ("We got the house! The offer went through this morning, and we can move in before the "
     "holidays!"),
    ("The library closes in fifteen minutes. Please gather your things and exit through the "
     "main doors on the left."),
    ("Your results just came back clear. No, really, everything looks good. You can breathe "
     "now, okay?"),
    ("Right, nobody touch it. It's just a dead mouse, it can't hurt you. I'll get the "
     "gloves and a bag."),
    ("So the tooth fairy comes tonight, and you have to put the tooth under your pillow, "
     "and you can't peek."),
    ("If I didn't pass chemistry, I'll have to retake it this summer, and that means no "
     "camp at all."),
    ("Pool closes in ten minutes. Finish your last lap, grab your towels, and exit by the "
     "side gate."),
    "Look outside! Everything's white, and the bus isn't coming, so there's no school today!",
    ("This gallery holds paintings from the colonial period. Please refrain from using "
     "flash photography in this room."),
    "The food drive runs through Sunday. Canned goods go in the blue bins by the front entrance.",
    ("Okay, everyone, raise a mug for Donna! Twelve years at this desk, and the office "
     "won't be the same without her."),
    ("I was promised a refund within five business days. It has now been three weeks, and I "
     "expect a resolution."),
    "This was her chair by the window. She'd sit here every evening and wait for you to call.",
    ("Who left a prawn in the car over the weekend? Right, windows down, everyone, it's "
     "going to be a fun drive!"),
)
#: Short everyday scripts of the corpus (fewer than 10 syllables; every fourth of the 136), so
#: that the pace calibration covers them in about their share of the corpus (37 %).
CORPUS_EVERYDAY_SHORT = (
    'Oh, perfect. Dumped by text. Classic.',
    'Everyone, sit down. Phones away, please.',
    'Ew, who left prawns in the sun?',
    'Is that a snake? Please be a rope.',
    'Ugh, whose hair is in the plughole?',
    'Ew, who licked the remote?',
    'Breathe in. Good. Now breathe out.',
    'Please, doctor, what did the scan show?',
    "Printer's jammed again. What a plot twist.",
    'Wait, you made this cake for me?',
    "Mum, you promised we'd go today!",
    'The shop closes for good on Friday.',
    "It's okay, Max, I've got you.",
    'They gave the job to someone else.',
    'Pardon me, you took my chair.',
    'Night night, little kitten. Sweet dreams.',
    "Dude, the teacher's wig just fell off!",
    'Last one to the dock buys lunch!',
    'Dude, who microwaved fish in here?',
    'Oh dear, this trifle smells of fish.',
    'Put the phone down. Now, please.',
    'Everyone out, now. Leave your bags.',
    "It's fine! Totally fine! Here I come!",
    'The nurse will be right in.',
    'Everyone line up, the bell rang.',
    'Well, the old car finally gave up.',
    'You told everyone my secret.',
    "I didn't get the place.",
    'The contract is signed. We start Monday.',
    'I passed my driving test!',
    'The meeting will now begin.',
    'Put the tools down and step back.',
    "The storm has passed. Everyone's safe.",
    "Please take your seats. We're beginning.",
)
#: Hand-written everyday sentences (no numbers or addresses).
EVERYDAY = (
    "Could you pass me the salt and the pepper, please?",
    "We will meet at the station before the train leaves.",
    "My sister bought a new bicycle for the summer holidays.",
    "The results came back clear, thank you doctor.",
    "I left my umbrella at the office again this morning.",
    "Please remember to water the plants while I am away.",
    "The children were playing in the garden until it got dark.",
    "He always makes a cup of tea before reading the newspaper.",
    "Our neighbours are moving to a smaller house next month.",
    "Would you like to join us for dinner on Friday evening?",
    "The library closes early on Sundays, so we should hurry.",
    "She painted the kitchen a bright shade of yellow.",
    "I think the meeting went better than anyone expected.",
    "The dog barked at the postman and then fell asleep.",
    "Let me know when you have finished with the laptop.",
    "We walked along the river and watched the boats go by.",
    "The soup needs a little more salt, but it smells wonderful.",
    "They forgot to lock the back door before leaving.",
    "Honestly, I could not have asked for a better friend.",
    "The weather should clear up by the end of the afternoon.",
)
BASE_TRAITS = {"gender": "male", "age": "30", "pace": "moderate", "pitch": "medium",
               "loudness": "normal", "emotion": "neutral", "accent": "American", "tone": "warm"}


def make_item(text: str = EVERYDAY[0], **traits: str) -> Item:
    return Item(id="t-1", instruction="test", text=text, traits={**BASE_TRAITS, **traits},
                difficulty=1)


def from_samples(x: np.ndarray, sr: int) -> Audio:
    return load_audio(to_wav_bytes(x, sr), name="synthetic")


def harmonic(f0: float, *, sr: int, seconds: float = 1.5, amp: float = 0.3) -> np.ndarray:
    """A sum of the first five harmonics of ``f0`` (Hz), amplitude 1/k, peak ``amp``."""
    t = np.arange(round(seconds * sr)) / sr
    x = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 6) if k * f0 < sr / 2)
    x = np.asarray(x, dtype=np.float64)
    out: np.ndarray = (amp * x / np.max(np.abs(x))).astype(np.float32)
    return out


# ------------------------------------------------------------------- eSpeak clips (built once)


@pytest.fixture(scope="module")
def pitch_clips() -> dict[tuple[str, int], Audio]:
    keys = [(g, p) for g in ("male", "female") for p in (20, 50, 80)]
    voice = {"male": "en-us", "female": "en-us+f4"}
    wavs = render_many([(EVERYDAY[1], EspeakSettings(voice=voice[g], pitch=p))
                            for g, p in keys], workers=2)
    return {k: load_audio(w) for k, w in zip(keys, wavs, strict=True)}


@pytest.fixture(scope="module")
def pace_clips() -> dict[tuple[str, int], Audio]:
    keys = [(s, r) for r in (120, 175, 260) for s in CORPUS_EVERYDAY + CORPUS_EVERYDAY_SHORT]
    wavs = render_many([(s, EspeakSettings(rate=r)) for s, r in keys], workers=2)
    return {k: load_audio(w) for k, w in zip(keys, wavs, strict=True)}


@pytest.fixture(scope="module")
def loudness_clips() -> dict[tuple[str, str, int, int], Audio]:
    keys = [(t, v, p, a) for t in (EVERYDAY[2], CORPUS_EVERYDAY[5]) for v in ("en-us", "en-us+f4")
            for p in (20, 50, 80) for a in (50, 100, 180)]
    wavs = render_many([(t, EspeakSettings(voice=v, pitch=p, volume=a))
                            for t, v, p, a in keys], workers=2)
    return {k: load_audio(w) for k, w in zip(keys, wavs, strict=True)}


@pytest.mark.parametrize("gender", ["male", "female"])
def test_pitch_buckets_on_espeak(pitch_clips: dict[tuple[str, int], Audio], gender: str) -> None:
    expected = {20: "low", 50: "medium", 80: "high"}
    got = {}
    for p, want in expected.items():
        res = PitchProbe().measure(pitch_clips[(gender, p)], make_item(gender=gender))["pitch"]
        got[p] = (res.label, round(float(res.value or 0), 1), round(res.detail["semitones"], 2))
        assert res.label == want, got
        assert res.unit == "Hz" and res.probe == "pitch-praat@4"
        assert res.d == desirability("pitch", res.label, "medium")
        assert res.detail["reference_hz"] == ac.REFERENCE_F0_HZ[(gender, "adult")]
        assert 0.3 < res.detail["voiced_fraction"] <= 1.0
    # eSpeak's own pitch order must survive the measurement
    assert got[20][1] < got[50][1] < got[80][1]


def test_pitch_reference_follows_requested_age(pitch_clips: dict[tuple[str, int], Audio]) -> None:
    clip = pitch_clips[("male", 50)]  # about 104 Hz
    adult = PitchProbe().measure(clip, make_item(age="30"))["pitch"]
    child = PitchProbe().measure(clip, make_item(age="8"))["pitch"]
    assert adult.label == "medium" and child.label == "low"
    assert child.detail["age_group"] == "child" and child.detail["reference_hz"] == 250.0


@pytest.mark.slow
def test_pace_buckets_on_espeak(pace_clips: dict[tuple[str, int], Audio]) -> None:
    expected = {120: "slow", 175: "moderate", 260: "fast"}
    for rate, want in expected.items():
        for scripts in (CORPUS_EVERYDAY, CORPUS_EVERYDAY_SHORT,
                        CORPUS_EVERYDAY + CORPUS_EVERYDAY_SHORT):
            results = [PaceProbe().measure(pace_clips[(s, rate)], make_item(text=s))["pace"]
                       for s in scripts]
            hits = sum(r.label == want for r in results)
            values = [round(float(r.value or 0), 2) for r in results]
            assert hits / len(results) >= 0.9, (rate, len(scripts), values)
        for r in results:
            assert r.unit == "phones/s" and r.probe == "pace-phones@5"
            assert r.detail["phones"] > r.detail["syllables"] > 0
            assert 0 < r.detail["articulation_s"] <= r.detail["speech_s"]
            assert r.detail["articulation_s"] + r.detail["pause_s"] == pytest.approx(
                r.detail["speech_s"])
            assert not r.detail["disagreement"], r.detail  # text and audio agree on clean TTS


@pytest.mark.slow
def test_pace_credits_phrase_final_lengthening(
        pace_clips: dict[tuple[str, int], Audio]) -> None:
    """Pace = (script phones + 3 for the first phrase + 2 for each further one) / articulation
    time; the allowance comes from the text alone, so the audio cannot earn more of it."""
    for s in (CORPUS_EVERYDAY_SHORT[0], CORPUS_EVERYDAY[0], CORPUS_EVERYDAY[6]):
        r = PaceProbe().measure(pace_clips[(s, 175)], make_item(text=s))["pace"]
        phrases = count_syllables(s).phrases
        assert r.detail["phrases"] == phrases >= 1
        assert r.detail["lengthening_phones"] == ac.lengthening_phones(phrases) == \
            ac.PACE_UTTERANCE_PHONES + ac.PACE_PHRASE_PHONES * (phrases - 1)
        assert r.value == pytest.approx(
            (r.detail["phones"] + r.detail["lengthening_phones"]) / r.detail["articulation_s"])
    assert ac.lengthening_phones(0) == 0.0
    # "Oh, perfect. Dumped by text. Classic." is four phrases: 3 + 2 + 2 + 2 phones
    assert ac.lengthening_phones(count_syllables(CORPUS_EVERYDAY_SHORT[0]).phrases) == 9.0


def test_trimming_the_silence_around_speech_keeps_its_span(rng: np.random.Generator) -> None:
    """A clip cut to start and end with sound has about the speech span of the same sound with
    silence around it: the hang-over reaches past the clip's ends instead of being cut off,
    and digital silence moves neither the floor nor the loud-frame reference. What is left is
    the analysis windows that overlap the sound only partly, which the padded clip has (up to
    two 10 ms frames at each end) and the cut one cannot; cut off at the clip's ends, as it
    was, the hang-over lost 155 ms here."""
    sr = 16_000
    t = np.arange(sr) / sr
    voice = sum(np.sin(2 * np.pi * 200 * k * t) / k for k in range(1, 19))
    voice *= 0.2 * (0.55 + 0.45 * np.sin(2 * np.pi * 3 * t))  # syllable-like swell, 3 Hz
    voice[round(0.4 * sr):round(0.7 * sr)] = 0.0  # a 300 ms pause inside
    voice += 1e-4 * rng.standard_normal(t.shape[0])  # a faint floor, as in a recording
    padded = np.concatenate([np.zeros(sr // 2), voice, np.zeros(3 * sr // 10)])
    cut = vad.voice_activity(voice, sr)
    around = vad.voice_activity(padded, sr)
    s_cut, e_cut, p_cut, n_cut = cut.span(ac.PAUSE_MIN_S)
    s_pad, e_pad, p_pad, n_pad = around.span(ac.PAUSE_MIN_S)
    assert s_cut < 0 and e_cut > cut.duration  # the hang-over past both ends
    assert 0 <= (e_pad - s_pad) - (e_cut - s_cut) <= 4 * vad.HOP_S + 1e-9
    assert (p_cut, n_cut) == (p_pad, n_pad) and n_cut == 1
    assert 0 <= s_cut - (s_pad - 0.5) <= 2 * vad.HOP_S + 1e-9


def test_pauses_do_not_slow_the_pace() -> None:
    """Silence inserted between words is a pause, not slower articulation: padding a clip
    with silence cannot turn a moderate reading into a slow one."""
    text = EVERYDAY[4]
    wav = render_many([(text, EspeakSettings(rate=175))], workers=1)[0]
    clip = load_audio(wav)
    x = clip.samples
    gap = np.zeros(round(0.8 * clip.sample_rate), dtype=np.float32)
    cut = [round(f * x.shape[0]) for f in (0.3, 0.6)]
    padded = from_samples(np.concatenate([x[:cut[0]], gap, x[cut[0]:cut[1]], gap, x[cut[1]:]]),
                          clip.sample_rate)
    plain = PaceProbe().measure(clip, make_item(text=text))["pace"]
    slowed = PaceProbe().measure(padded, make_item(text=text))["pace"]
    assert slowed.detail["pauses"] >= plain.detail["pauses"] + 2
    # each inserted pause loses the voice activity's 60 ms hang-over at both of its ends
    hang = 2 * 2 * vad.HANG_S
    assert slowed.detail["pause_s"] >= plain.detail["pause_s"] + 1.6 - hang - 0.02
    assert slowed.detail["speech_s"] > plain.detail["speech_s"] + 1.5
    assert float(slowed.value or 0) == pytest.approx(float(plain.value or 0), rel=0.1)
    assert slowed.label == plain.label == "moderate"


@pytest.mark.slow
def test_pace_rates_increase_with_wpm(pace_clips: dict[tuple[str, int], Audio]) -> None:
    s = CORPUS_EVERYDAY[3]
    v = [PaceProbe().measure(pace_clips[(s, r)], make_item(text=s))["pace"].value
         for r in (120, 175, 260)]
    assert v[0] is not None and v[1] is not None and v[2] is not None
    assert float(v[0]) < float(v[1]) < float(v[2])


@pytest.mark.slow
def test_loudness_buckets_on_espeak(
        loudness_clips: dict[tuple[str, str, int, int], Audio]) -> None:
    expected = {50: "quiet", 100: "normal", 180: "loud"}
    for (text, voice, pitch, amp), clip in loudness_clips.items():
        res = LoudnessProbe().measure(clip, make_item())["loudness"]
        assert res.unit == "LUFS" and res.probe == "loudness-bs1770@3"
        assert res.d == desirability("loudness", res.label, "normal")
        assert res.detail["short_clip"] is False
        if pitch == 50:  # eSpeak's own pitch; the extremes are checked for order below
            assert res.label == expected[amp], (text, voice, pitch, amp, res.value)
    for text, voice, pitch in {k[:3] for k in loudness_clips}:
        lufs = [LoudnessProbe().measure(loudness_clips[(text, voice, pitch, a)], make_item())
                ["loudness"].value for a in (50, 100, 180)]
        assert lufs[0] is not None and lufs[1] is not None and lufs[2] is not None
        assert float(lufs[0]) + 4 < float(lufs[1]) < float(lufs[2]) - 3, (voice, pitch, lufs)


def test_gender_heuristic_on_espeak(pitch_clips: dict[tuple[str, int], Audio]) -> None:
    for (gender, p), clip in pitch_clips.items():
        res = GenderHeuristicProbe().measure(clip, make_item(gender="male"))["gender"]
        assert res.label == gender, (gender, p, res.detail)
        assert res.detail["heuristic"] is True
        assert res.detail["method"] == "f0+spectrum" and res.detail["voiced_frames"] > 50
        assert res.d == (1.0 if gender == "male" else 0.0)


def test_gender_score_is_the_shipped_model(pitch_clips: dict[tuple[str, int], Audio]) -> None:
    from vocencebench.probes import gender_model

    for clip in pitch_clips.values():
        res = GenderHeuristicProbe().measure(clip, make_item())["gender"]
        a = analyse(clip)
        y, rate = pv.samples_for_analysis(clip)
        cep, t = gender_model.frame_cepstra(pv.resample(y, rate, gender_model.RATE))
        llr = gender_model.spectral_llr(cep[a.voiced_mask(t)])
        assert llr == pytest.approx(res.detail["spectral_llr"], abs=1e-9)
        z = gender_model.log_odds(float(a.median_f0 or 0), llr)
        assert z == pytest.approx(res.detail["score"], abs=1e-9)
        assert ("female" if z > 0 else "male") == res.label
        # level does not enter the cepstra (c0 is left out): 20 dB quieter, same score
        quiet = from_samples(np.asarray(clip.samples) * 0.1, clip.sample_rate)
        again = GenderHeuristicProbe().measure(quiet, make_item())["gender"]
        assert again.label == res.label
        assert again.detail["score"] == pytest.approx(res.detail["score"], rel=0.02, abs=0.05)
    # no voiced frame in the front end: the F0-only fallback of the same fit
    assert gender_model.log_odds(200.0, None) > 0 > gender_model.log_odds(100.0, None)


def test_classifier_listed_later_replaces_the_heuristic(
        pitch_clips: dict[tuple[str, int], Audio]) -> None:
    class FakeClassifier:  # stands in for the classifier probe: the ProbeSet order is tested
        name: str = "gender-clf"
        version: str = "1"
        traits: tuple[str, ...] = ("gender",)

        def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
            return {"gender": ProbeResult("gender", "female", "", "female", 0.0, "gender-clf@1")}

    from vocencebench.probes import ProbeSet

    ps = ProbeSet((*default_probes().probes, FakeClassifier()))
    out = ps.measure(pitch_clips[("male", 50)], make_item())
    assert out["gender"].probe == "gender-clf@1"
    assert set(out) == {"gender", "pace", "pitch", "loudness"}


# ------------------------------------------------------------------- synthetic signals


@pytest.mark.parametrize("sr", [8_000, 16_000, 22_050, 44_100, 48_000])
@pytest.mark.parametrize("f0", [55.0, 82.0, 120.0, 196.0, 310.0, 440.0])
def test_harmonic_f0_within_one_percent(f0: float, sr: int) -> None:
    # below the 75 Hz floor only a man asked for a low voice is tracked (50 Hz floor)
    item = make_item(pitch="low") if f0 < ac.PITCH_FLOOR_HZ else make_item()
    res = PitchProbe().measure(from_samples(harmonic(f0, sr=sr), sr), item)["pitch"]
    assert res.value is not None
    assert abs(float(res.value) / f0 - 1) < 0.01, res.value
    assert res.detail["voiced_fraction"] > 0.9


@pytest.mark.parametrize("dbfs", [-30.0, -20.0, -6.0])
@pytest.mark.parametrize("sr", [16_000, 44_100, 48_000])
def test_loudness_of_a_sine(dbfs: float, sr: int) -> None:
    # BS.1770: a 997 Hz full-scale sine on one channel reads −3.01 LUFS.
    t = np.arange(2 * sr) / sr
    x = 10 ** (dbfs / 20) * np.sin(2 * np.pi * 997 * t)
    lufs, short = integrated_loudness(x, sr)
    assert lufs is not None and not short
    assert abs(lufs - (dbfs - 3.01)) < 0.1


@pytest.mark.parametrize("sr", [8_000, 11_025, 16_000, 22_050, 44_100, 48_000])
def test_loudness_matches_pyloudnorm(sr: int, rng: np.random.Generator) -> None:
    """Our vectorised gating against the reference's per-block loop, on clips whose blocks
    pass both gates, fail the relative gate in part, and fade in (odd lengths included)."""
    import pyloudnorm

    for seconds in (0.4, 0.41, 1.23, 3.0):
        n = round(seconds * sr) + 3
        for shape in ("flat", "half quiet", "fade in"):
            x = 0.1 * rng.standard_normal(n)
            if shape == "half quiet":
                x[: n // 2] *= 1e-3
            elif shape == "fade in":
                x *= np.linspace(0.0, 1.0, n) ** 4
            ours, short = integrated_loudness(x, sr)
            theirs = pyloudnorm.Meter(sr).integrated_loudness(x)
            assert not short and ours is not None
            assert abs(ours - theirs) < 1e-9, (sr, seconds, shape, ours, theirs)


def test_short_clip_loudness_matches_the_long_one() -> None:
    sr = 16_000
    x = harmonic(150.0, sr=sr, seconds=0.3)
    short, was_short = integrated_loudness(x, sr)
    long, _ = integrated_loudness(np.tile(x, 8), sr)
    assert was_short and short is not None and long is not None
    assert abs(short - long) < 0.5


def test_silent_waveform_is_unmeasurable_not_guessed() -> None:
    zeros = np.zeros(16_000, dtype=np.float32)
    zeros.setflags(write=False)
    audio = Audio(samples=zeros, sample_rate=16_000, sha256="0" * 64, channels=1,
                  mixed_down=False, format="WAV/PCM_16", name="silence")
    out = default_probes().measure(audio, make_item())
    assert set(out) == {"gender", "pace", "pitch", "loudness"}
    for r in out.values():
        assert r.label == UNMEASURABLE and r.d == 0.0 and r.value is None
        assert r.detail["unmeasurable"].startswith("no speech")
    # the probes themselves, without the set's speech check, say why
    for p in default_probes().probes:
        res = p.measure(audio, make_item())
        assert all(r.label == UNMEASURABLE and r.d == 0.0 for r in res.values()), res
    assert LoudnessProbe().measure(audio, make_item())["loudness"].detail["unmeasurable"] \
        .startswith("every block is below")


def test_empty_script_is_a_probe_error(pitch_clips: dict[tuple[str, int], Audio]) -> None:
    with pytest.raises(ProbeError, match="no syllables"):
        PaceProbe().measure(pitch_clips[("male", 50)], make_item(text="..."))


def test_missing_request_is_a_probe_error(pitch_clips: dict[tuple[str, int], Audio]) -> None:
    item = Item(id="x", instruction="", text="hello", traits={"pace": "slow"}, difficulty=0)
    with pytest.raises(ProbeError, match="needs the requested 'gender'"):
        PitchProbe().measure(pitch_clips[("male", 50)], item)


@pytest.mark.parametrize(("age", "group"), [("8", "child"), ("13", "teen"), ("20", "adult"),
                                            ("45", "adult"), ("60", "elderly"), ("78", "elderly")])
def test_age_group(age: str, group: str) -> None:
    assert age_group(age) == group


# ------------------------------------------------------------------- bad input


def _finite(results: dict[str, ProbeResult]) -> None:
    for r in results.values():
        assert r.label, r
        assert math.isfinite(r.d) and 0 <= r.d <= 1
        if isinstance(r.value, float):
            assert math.isfinite(r.value), r
        for v in r.detail.values():
            if isinstance(v, float):
                assert math.isfinite(v), r


def _speechlike(sr: int, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Harmonic bursts (syllables) with gliding F0, each through the two formants of another
    vowel (a buzz whose spectrum does not move is not speech to the speech check), separated
    by short gaps, plus noise."""
    from scipy.signal import iirpeak, lfilter

    t = np.arange(int(seconds * sr)) / sr
    f0 = 120 + 20 * np.sin(2 * np.pi * 0.5 * t)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    x = np.asarray(sum(np.sin(k * phase) / k for k in range(1, 30) if k * 140 < sr / 2 - 200))
    vowels = ((700, 1200), (300, 2300), (500, 1000), (350, 800), (600, 1800))
    seg = sr // 4
    y = np.zeros_like(x)
    for n, start in enumerate(range(0, x.shape[0], seg)):
        for fc, bw in zip(vowels[n % len(vowels)], (90, 120), strict=True):
            num, den = iirpeak(fc, fc / bw, sr)
            y[start:start + seg] += lfilter(num, den, x[start:start + seg])
    y /= np.max(np.abs(y)) + 1e-12
    env = (np.sin(2 * np.pi * 4 * t) > -0.3).astype(np.float64)
    y = 0.25 * y * env + 0.002 * rng.standard_normal(t.shape[0])
    return np.asarray(y, dtype=np.float32)


@pytest.mark.parametrize(
    "case", ["noise", "clipping", "0.3s", "60s", "8k", "22.05k", "44.1k", "48k"])
def test_bad_input_gives_a_clear_result(case: str, rng: np.random.Generator) -> None:
    sr = {"8k": 8_000, "22.05k": 22_050, "44.1k": 44_100, "48k": 48_000}.get(case, 16_000)
    if case == "noise":
        x = (0.1 * rng.standard_normal(3 * sr)).astype(np.float32)
    elif case == "clipping":
        x = np.clip(8 * _speechlike(sr, 3.0, rng), -1, 1)
    elif case == "0.3s":
        x = _speechlike(sr, 0.3, rng)
    elif case == "60s":
        x = _speechlike(sr, 59.9, rng)
    else:
        x = _speechlike(sr, 3.0, rng)
    audio = from_samples(x, sr)
    out = default_probes().measure(audio, make_item())
    _finite(out)
    assert set(out) == {"pace", "loudness", "pitch", "gender"}
    if case == "noise":
        assert all(r.label == UNMEASURABLE and r.d == 0.0 for r in out.values())
    else:
        assert {"pitch", "gender"} <= set(out)
        assert abs(float(out["pitch"].value or 0) / 120 - 1) < 0.15


# ------------------------------------------------------------------- determinism and pickling


def _measure_in_child(wav: bytes) -> dict[str, dict[str, object]]:
    audio = load_audio(wav)
    return {k: v.to_dict() for k, v in default_probes().measure(audio, make_item()).items()}


@pytest.mark.slow
def test_repeated_runs_are_bit_identical(pitch_clips: dict[tuple[str, int], Audio]) -> None:
    clip = pitch_clips[("female", 50)]
    first = {k: v.to_dict() for k, v in default_probes().measure(clip, make_item()).items()}
    again = dataclasses.replace(clip)  # the same samples, nothing kept from the first run
    second = {k: v.to_dict() for k, v in default_probes().measure(again, make_item()).items()}
    assert first == second
    wav = to_wav_bytes(clip.samples, clip.sample_rate)
    here = _measure_in_child(wav)
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        there = pool.submit(_measure_in_child, wav).result(timeout=120)
    assert here == there


def test_probes_pickle() -> None:
    ps = default_probes(quality=True)
    for p in (*ps.probes, *ps.diagnostics):
        assert pickle.loads(pickle.dumps(p)) == p
    assert ps.ids == ("pitch-praat@4", "pace-phones@5", "loudness-bs1770@3",
                      "gender-f0gmm@1", "dnsmos@1")
    assert ps.traits == ("gender", "pace", "pitch", "loudness")
    assert default_probes().diagnostics == ()


def test_analysis_is_shared_and_kept_with_the_clip(
        pitch_clips: dict[tuple[str, int], Audio]) -> None:
    clip = pitch_clips[("male", 80)]
    assert analyse(clip) is analyse(clip)
    copy = dataclasses.replace(clip)  # a new clip object: analysed afresh, to the same bits
    fresh = analyse(copy)
    assert fresh is not analyse(clip)
    assert fresh.f0_hz.tobytes() == analyse(clip).f0_hz.tobytes()
    assert (fresh.median_f0, fresh.speech_start, fresh.speech_end) == (
        analyse(clip).median_f0, analyse(clip).speech_start, analyse(clip).speech_end)


# ------------------------------------------------------------------- DNSMOS


@pytest.mark.slow
def test_dnsmos_diagnostic(pitch_clips: dict[tuple[str, int], Audio],
                           rng: np.random.Generator) -> None:
    clip = pitch_clips[("male", 50)]
    a = DnsmosDiagnostic().assess(clip)
    assert list(a) == ["dnsmos_ovrl", "dnsmos_sig", "dnsmos_bak"]
    for v in a.values():
        assert 1.0 <= v <= 5.0
    noise = rng.standard_normal(clip.num_samples).astype(np.float32)
    noisy = from_samples(np.clip(clip.samples + 0.05 * noise, -1, 1), clip.sample_rate)
    assert DnsmosDiagnostic().assess(noisy)["dnsmos_bak"] < a["dnsmos_bak"]
    assert default_probes(quality=True).diagnose(clip) == a  # repeated: bit-identical


@pytest.mark.slow
def test_dnsmos_matches_the_speechmos_reference(rng: np.random.Generator) -> None:
    # speechmos's own wrapper needs librosa (the dev extra); ours runs the same ONNX model
    # without it. A 9.5 s clip makes one window, so this stays quick.
    pytest.importorskip("librosa", reason="the reference wrapper needs librosa (dev extra)")
    from speechmos import dnsmos

    clip = from_samples(_speechlike(16_000, 9.5, rng), 16_000)
    ours = DnsmosDiagnostic().assess(clip)
    ref = dnsmos.run(np.asarray(clip.at_16k(), dtype=np.float32), 16_000)
    for name in ("ovrl", "sig", "bak"):
        assert ours[f"dnsmos_{name}"] == pytest.approx(float(ref[f"{name}_mos"]), abs=1e-5)


def test_fast_percentile_and_median_equal_numpy(rng: np.random.Generator) -> None:
    for n in [*range(1, 30), 97, 200, 1001]:
        for scale in (1.0, 1e-3, 100.0):
            x = rng.standard_normal(n) * scale
            if n % 3 == 0:
                x = np.round(x, 1)  # ties
            for q in (0.0, 5.0, 50.0, 99.0, 100.0):
                assert pv.percentile(x, q) == float(np.percentile(x, q)), (n, q)
            assert pv.median(x) == float(np.median(x)), n
