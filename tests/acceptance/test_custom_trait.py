"""A ninth ordinal trait, registered as docs/traits.md says, honoured end to end.

A user adds ``breathiness`` (clear < slight < breathy) to a copy of the default registry,
measures it with a probe of their own (a deterministic high-frequency energy ratio), and runs
it beside the shipped probes through every step a published result takes: ``vb.benchmark``
→ ``scores.jsonl`` → ``vocencebench decide`` → ``report.md`` / ``report.html`` →
``vocencebench report`` (run.json restores the registry) → ``vb.leaderboard`` over three
systems → ``leaderboard.md`` / ``.html`` / ``.json`` → ``vocencebench leaderboard --verify``.
Nothing but the registry, the probe set and the corpus says that the trait exists.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest

import vocencebench as vb
from board_fakes import scripted_judge
from seeding import make_rng
from vocencebench.audio import Audio, load_audio, to_wav_bytes
from vocencebench.board import read_board, verify
from vocencebench.cli import main
from vocencebench.compare import status_lines
from vocencebench.decide import desirability
from vocencebench.instruction import parse_instruction, trait_mentions
from vocencebench.result import load_run, verify_run
from vocencebench.schema import UNMEASURABLE, Item, ProbeResult
from vocencebench.scores import decide_scores
from vocencebench.traits import TRAITS, Trait, TraitRegistry, unscored_words

pytestmark = pytest.mark.slow  # about 15 s: three eSpeak systems and a leaderboard

TRAIT: Final = "breathiness"
LEVELS: Final = ("clear", "slight", "breathy")
#: What each level adds to the brief (the registry's synonyms read it back).
PHRASES: Final = {"clear": "Keep the voice clear.",
                  "slight": "Let the voice sound slightly airy.",
                  "breathy": "Make the voice breathy."}
#: Breath noise the breathy system mixes in, as a fraction of the speech envelope.
NOISE: Final = {"clear": 0.0, "slight": 0.5, "breathy": 1.0}
N_ITEMS: Final = 6


def custom_registry() -> TraitRegistry:
    """The default eight traits plus breathiness, exactly as docs/traits.md registers it."""
    registry = TRAITS.copy()
    registry.register(Trait(
        TRAIT, "objective", "ordinal", LEVELS, "Audible breath noise in the voice.",
        unit="dB", synonyms={"slight": ("slightly airy",), "breathy": ("airy",)},
    ))
    return registry


# ----------------------------------------------------------------------------- the probe


@dataclass
class BreathinessProbe:
    """Breath noise as the share of the clip's energy above :attr:`split_hz` (dB re the
    whole spectrum; 32 ms Hann frames, half overlap, frames within 35 dB of the loudest),
    bucketed at :attr:`edges_db`: ``clear`` below the first, ``breathy`` from the second.
    Pure numpy, so identical on every machine."""

    name: str = "breathiness-hf"
    version: str = "1"
    traits: tuple[str, ...] = (TRAIT,)
    units: dict[str, str] = field(default_factory=lambda: {TRAIT: "dB"})
    split_hz: float = 4000.0
    edges_db: tuple[float, float] = (-10.5, -6.5)
    registry: TraitRegistry = field(default=TRAITS, repr=False, compare=False)

    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        pid = f"{self.name}@{self.version}"
        x = np.asarray(audio.samples, dtype=np.float64)
        sr = audio.sample_rate
        size = int(0.032 * sr)
        hop = size // 2
        if len(x) < size:
            return {TRAIT: ProbeResult(TRAIT, None, "dB", UNMEASURABLE, 0.0, pid,
                                       {"unmeasurable": "clip shorter than one frame"})}
        count = 1 + (len(x) - size) // hop
        frames = np.stack([x[k * hop:k * hop + size] for k in range(count)]) * np.hanning(size)
        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
        energy = power.sum(axis=1)
        loud = power[energy > energy.max() * 10 ** -3.5]
        high = np.fft.rfftfreq(size, 1.0 / sr) >= self.split_hz
        ratio_db = float(10.0 * math.log10(loud[:, high].sum() / loud.sum()))
        values = self.registry.get(TRAIT).values
        label = values[sum(ratio_db >= e for e in self.edges_db)]
        d = desirability(TRAIT, label, item.traits[TRAIT], registry=self.registry)
        return {TRAIT: ProbeResult(TRAIT, round(ratio_db, 3), "dB", label, d, pid,
                                   {"split_hz": self.split_hz})}


def custom_probes(registry: TraitRegistry) -> vb.ProbeSet:
    """The default probe set, plus the breathiness probe, on ``registry``."""
    return vb.ProbeSet([*vb.default_probes(registry=registry).probes, BreathinessProbe()],
                       registry=registry)


# ----------------------------------------------------------------------------- the systems


class BreathyEspeak:
    """``espeak-follow`` that also realises the requested breathiness: it reads the brief
    with the custom registry and mixes envelope-shaped noise (seeded by the text) into the
    clip."""

    def __init__(self, registry: TraitRegistry) -> None:
        self.inner = vb.EspeakSystem("espeak-follow")
        self.registry = registry
        self.system_id = f"test-breathy-{self.inner.system_id}"

    def __call__(self, text: str, instruction: str) -> bytes:
        wav = self.inner(text, instruction)
        level = NOISE[parse_instruction(instruction, registry=self.registry).get(TRAIT, "clear")]
        if not level:
            return wav
        clip = load_audio(wav)
        x = np.asarray(clip.samples, dtype=np.float64)
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
        k = int(0.02 * clip.sample_rate)
        envelope = np.sqrt(np.convolve(x * x, np.ones(k) / k, mode="same"))
        noisy = x + level * envelope * make_rng(seed).standard_normal(len(x))
        return to_wav_bytes(np.clip(noisy, -1.0, 1.0), clip.sample_rate)


def custom_corpus(registry: TraitRegistry) -> list[Item]:
    """The first shipped items whose scripts do not use a breathiness word (a script that
    says "clear" would name the trait), each asking for a level in its fields and its brief
    (levels in turn)."""
    usable = [it for it in vb.load_benchmark("benchmark_v1")
              if not trait_mentions(it.text, registry=registry)]
    out = []
    for k, it in enumerate(usable[:N_ITEMS]):
        level = LEVELS[k % len(LEVELS)]
        out.append(dataclasses.replace(it, instruction=f"{it.instruction} {PHRASES[level]}",
                                       traits={**it.traits, TRAIT: level}))
    vb.validate_corpus(out, registry=registry)
    return out


# ----------------------------------------------------------------------------- the duel


@pytest.fixture(scope="module")
def duel(tmp_path_factory: pytest.TempPathFactory) -> tuple[vb.Head2Head, Path]:
    registry = custom_registry()
    items = custom_corpus(registry)
    h = vb.benchmark(items, vb.EspeakSystem("espeak-follow"), BreathyEspeak(registry),
                     probes=custom_probes(registry), labels=("follow", "breathy"),
                     registry=registry, workers=1, progress=False,
                     cache=tmp_path_factory.mktemp("cache") / "run.sqlite")
    return h, h.save(tmp_path_factory.mktemp("run"))


def test_the_brief_and_the_gate_know_the_ninth_trait() -> None:
    registry = custom_registry()
    items = custom_corpus(registry)
    assert [parse_instruction(it.instruction, registry=registry)[TRAIT] for it in items] \
        == [it.traits[TRAIT] for it in items]
    with pytest.raises(vb.CorpusError, match=TRAIT):  # the default registry refuses it
        vb.validate_corpus(items)


def test_the_run_scores_the_ninth_trait_for_every_item(duel: tuple[vb.Head2Head, Path]
                                                       ) -> None:
    h, _ = duel
    assert h.complete and h.registry.get(TRAIT).values == LEVELS
    assert h.metadata["dimensions"] == ["gender", "pace", "pitch", "loudness", TRAIT]
    assert "breathiness-hf@1" in h.metadata["probes"]
    assert h.metadata["canaries"]["report"]["untested"] == [TRAIT]  # no known answer for it
    (missing,) = (line for line in h.status() if line.startswith("NOT MEASURED"))
    assert missing == "NOT MEASURED (no probe): age, emotion, accent"  # breathiness is measured
    for p in h.pairs:
        want = p.item.traits[TRAIT]
        for score, an in ((p.a, p.analysis_a), (p.b, p.analysis_b)):
            r = an.probes[TRAIT]
            assert score.d[TRAIT] == r.d == desirability(TRAIT, r.label, want,
                                                         registry=h.registry)
        # eSpeak cannot breathe; the breathy system renders the level asked for.
        assert p.analysis_a.probes[TRAIT].label == "clear"
        assert p.analysis_b.probes[TRAIT].label == want
    # The ninth dimension is in the composite: what separates the two systems most.
    mean = {s: sum(getattr(p, s).d[TRAIT] for p in h.pairs) / len(h.pairs) for s in "ab"}
    assert mean == {"a": 0.5, "b": 1.0}


def test_scores_jsonl_carries_the_ninth_dimension_and_decide_recomputes_it(
        duel: tuple[vb.Head2Head, Path], capsys: pytest.CaptureFixture[str]) -> None:
    h, out = duel
    rows = [json.loads(line) for line in
            (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 * N_ITEMS
    for row, sample in zip(rows, h.samples, strict=True):
        assert row["d"][TRAIT] == sample.d[TRAIT]
        assert set(row["d"]) == set(h.metadata["dimensions"])
    assert decide_scores(out / "scores.jsonl") == h.decision
    capsys.readouterr()
    assert main(["decide", str(out / "scores.jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == h.decision.to_dict()


def _row(markdown: str, dimension: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith(f"| {dimension} |"))


def test_the_reports_show_the_ninth_trait_and_re_render_from_run_json(
        duel: tuple[vb.Head2Head, Path], capsys: pytest.CaptureFixture[str]) -> None:
    h, out = duel
    md = (out / "report.md").read_text(encoding="utf-8")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert _row(md, TRAIT).startswith(f"| {TRAIT} | 0.500 | 1.000 | ")
    assert "> not scored in this run: age, emotion, accent, tone, naturalness\n" in md
    assert f"<tr><th>{TRAIT}</th><td>0.500</td><td>1.000</td>" in page  # the table row
    assert f">{TRAIT}</text>" in page  # its bars in the per-dimension chart
    assert f"<caption>{TRAIT} — follow" in page  # its confusion matrix
    assert f"**{TRAIT}**" in md and f"<caption>{TRAIT} (dB)</caption>" in page  # per level
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in run["registry"]["traits"]][-1] == TRAIT
    back = load_run(out)
    assert back.registry.get(TRAIT) == h.registry.get(TRAIT)
    assert back.registry.names() == h.registry.names()
    before = {f: (out / f).read_bytes() for f in ("scores.jsonl", "report.md", "report.html")}
    capsys.readouterr()
    assert main(["report", str(out)]) == 0  # re-rendered with the registry run.json restores
    assert TRAIT in capsys.readouterr().out
    assert {f: (out / f).read_bytes() for f in before} == before
    assert verify_run(out) == []


def test_the_default_probe_set_of_a_run_is_built_on_the_run_registry() -> None:
    pitch = TRAITS.get("pitch")
    registry = TraitRegistry(dataclasses.replace(pitch, scoring="categorical")
                             if t is pitch else t for t in TRAITS)
    assert vb.default_probes(registry=registry).registry is registry
    items = vb.load_benchmark("benchmark_v1")[4:7]  # espeak-flat reads medium for high
    h = vb.benchmark(items, vb.EspeakSystem("espeak-flat"), vb.EspeakSystem("espeak-follow"),
                     probes="default", registry=registry, labels=("flat", "follow"), workers=1,
                     progress=False, canaries=False)
    adjacent = 0
    for p in h.pairs:
        for an in (p.analysis_a, p.analysis_b):
            r = an.probes["pitch"]
            assert r.d == desirability("pitch", r.label, p.item.traits["pitch"],
                                       registry=registry)
            adjacent += desirability("pitch", r.label, p.item.traits["pitch"]) == 0.5
    assert adjacent >= 1  # scored 0 here, where the default registry gives 0.5


def test_the_status_lines_name_the_judged_dimensions_of_the_run_registry() -> None:
    assert unscored_words(TRAITS.judged_dimensions()) == "tone and naturalness are"
    registry = custom_registry()
    registry.register(Trait("warmth", "holistic", "rubric", ("cold", "warm"), "Warmth."))
    (line,) = (x for x in status_lines(None, None, None, registry)
               if x.startswith("JUDGE OFF"))
    assert line.startswith("JUDGE OFF: no audio-LLM judge; tone, warmth and naturalness are "
                           "NOT scored")


# ----------------------------------------------------------------------------- the board


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    registry = custom_registry()
    judge, _ = scripted_judge(relative=False)  # one row per item and system: a combined file
    systems = {"flat": vb.EspeakSystem("espeak-flat"), "follow": vb.EspeakSystem("espeak-follow"),
               "breathy": BreathyEspeak(registry)}
    # No registry= here: the run takes it from its probe set, as vb.benchmark does.
    lb = vb.leaderboard(custom_corpus(registry), systems, judge, probes=custom_probes(registry),
                        workers=1, canaries=False,
                        cache=tmp_path_factory.mktemp("cache") / "board.sqlite")
    return lb, lb.save(tmp_path_factory.mktemp("board"))


def test_the_leaderboard_ranks_on_the_ninth_trait_and_publishes_it(
        board: tuple[Any, Path]) -> None:
    lb, out = board
    assert lb.registry.get(TRAIT).values == LEVELS
    means = {s: lb.standings.traits[s][TRAIT] for s in ("flat", "follow", "breathy")}
    assert means == {"flat": 0.5, "follow": 0.5, "breathy": 1.0}
    for h in lb.runs.values():
        assert h.registry is lb.registry and h.metadata["dimensions"][-3:] == \
            ["tone", TRAIT, "naturalness"]
    doc = read_board(out)
    assert {s: doc["traits"][s][TRAIT] for s in means} == means
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    table = md.split("## Mean desirability per dimension")[1].split("## ")[0].splitlines()
    header = next(line for line in table if line.startswith("| system |"))
    assert header == ("| system | gender | pace | pitch | loudness | tone | breathiness | "
                      "naturalness |")
    column = header.split(" | ").index(TRAIT)
    assert {s: next(line for line in table if line.startswith(f"| {s} |")).split(" | ")[column]
            for s in means} == {"flat": "0.500", "follow": "0.500", "breathy": "1.000"}
    page = (out / "leaderboard.html").read_text(encoding="utf-8")
    assert f"<th>{TRAIT}</th>" in page and f">{TRAIT}</text>" in page
    assert f"breathy {TRAIT}: 1.000</title>" in page  # its bar


def test_the_published_leaderboard_is_recomputed_from_its_scores(
        board: tuple[Any, Path], capsys: pytest.CaptureFixture[str]) -> None:
    lb, out = board
    assert (out / "scores.jsonl").is_file()
    rows = [json.loads(line) for line in
            (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(TRAIT in row["d"] for row in rows) and len(rows) == 3 * N_ITEMS
    assert verify(out) == []
    capsys.readouterr()
    assert main(["leaderboard", "--verify", str(out)]) == 0
    for cell, pair in zip(read_board(out)["pairs"], lb.runs, strict=True):
        assert cell["decision"] == lb.runs[pair].decision.to_dict()
