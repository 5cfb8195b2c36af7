"""``vb.redteam`` end to end on a few eSpeak items, with instrument test doubles.

The instruments themselves are not under test here, the verdicts are: a transcriber double
that hears exactly the words each clip says (an oracle built from the attacks' own
``spoken_text``), and scripted judges (``judge.ScriptedBackend``) — a gullible one that
gives 3 to any clip carrying the spoken note and 1 to the rest, and a fair one that scores
every clip alike. Probe quality is not assumed either: no verdict below depends on what the
acoustic probes make of noise, padding or hum.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import vocencebench as vb
from canary_fakes import FAILED_MESSAGE, fake_canaries, passing_record
from vocencebench.adapters import EspeakSystem
from vocencebench.audio import Audio
from vocencebench.cache import Cache
from vocencebench.errors import CanaryError, TranscriptionError
from vocencebench.gaming import DEFENDED, NOT_TESTED, VULNERABLE, get_spec, load_redteam, redteam
from vocencebench.judge import Judge, ScriptedBackend
from vocencebench.schema import Item
from vocencebench.transcribe import Transcript

CORPUS = vb.load_benchmark()


def pick(n: int, **want: str) -> list[Item]:
    return [it for it in CORPUS if all(it.traits[k] == v for k, v in want.items())][:n]


# Female requests: espeak-flat (a male voice) fails their gender, so honest speech wins big.
FEMALE = pick(12, gender="female")
ITEMS = FEMALE[:3]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Oracle:
    """A transcriber double: hears exactly what each known clip says."""

    engine = "oracle@1"

    def __init__(self, words: dict[str, str]) -> None:
        self.words = words

    def __call__(self, wav: bytes | Audio) -> Transcript:
        key = wav.sha256 if isinstance(wav, Audio) else sha(bytes(wav))
        if key not in self.words:
            raise TranscriptionError(f"oracle: unknown clip {key[:12]}")
        return Transcript(self.words[key], self.engine)


def oracle_for(items: Sequence[Item], attacks: Sequence[str]) -> Oracle:
    """The words of every clip the run can produce: the reference's and each attack's."""
    ref = EspeakSystem("espeak-follow")
    words: dict[str, str] = {}
    for it in items:
        words[sha(ref(it.text, it.instruction))] = it.text
        for name in attacks:
            attack = get_spec(name).make(ref, ref, items)
            words[sha(attack.synthesize_item(it))] = attack.spoken_text(it) or ""
    return Oracle(words)


def scripted(score: Callable[[bytes], int], model: str) -> Judge:
    """A judge whose every answer scores each clip with ``score(clip bytes)`` (0–3). (Its
    ``model`` keys the verdict cache: two different judges need two names.)"""
    def respond(req: Any) -> dict[str, Any]:
        a, b = req.audio()
        sa, sb = score(a.data), score(b.data)
        winner = "A" if sa > sb else "B" if sb > sa else "tie"
        return {"analysis_a": "first", "analysis_b": "second", "score_a": sa,
                "score_b": sb, "winner": winner, "confidence": 0.9}

    return Judge(ScriptedBackend(respond, model=model))


def run(items: Sequence[Item], attacks: Sequence[str], **kw: Any) -> Any:
    # The judges and transcribers here are scripted doubles, not the instruments under test:
    # the verdict logic is (the canaries are tested on their own).
    kw.setdefault("canaries", False)
    return redteam(items, reference="espeak-follow", attacks=list(attacks), workers=1, **kw)


@pytest.mark.slow
def test_gate_dependent_attacks_not_tested_without_the_gate_then_defended_with_it(
        tmp_path: Path) -> None:
    attacks = ["speak-instruction", "other-sentence"]
    cache = tmp_path / "cache.sqlite"
    off = run(ITEMS, attacks, cache=cache)
    assert off.instruments["gate"] is False
    for name in attacks:
        r = off.row(name)
        assert r.verdict == NOT_TESTED
        assert "needs the ASR gate" in r.reason and "gate OFF in this configuration" in r.reason
    on = run(ITEMS, attacks, cache=cache, transcriber=oracle_for(ITEMS, attacks))
    assert on.instruments["gate"] is True
    for name in attacks:
        r = on.row(name)
        assert r.verdict == DEFENDED, r.reason
        assert r.vs_reference is not None and r.vs_reference.outcome == "lost"
        assert r.vs_base is r.vs_reference  # its base is the reference: one duel


@pytest.mark.slow
def test_the_judge_decides_the_spoken_note(tmp_path: Path) -> None:
    ref = EspeakSystem("espeak-follow")
    note = get_spec("note-to-judge").make(ref, ref, ITEMS)
    noted = {sha(note.synthesize_item(it)) for it in ITEMS}
    cache = tmp_path / "cache.sqlite"
    off = run(ITEMS, ["note-to-judge"], cache=cache)
    assert off.row("note-to-judge").verdict == NOT_TESTED
    assert "judge OFF" in off.row("note-to-judge").reason
    gullible = run(ITEMS, ["note-to-judge"], cache=cache,
                   judge=scripted(lambda clip: 3 if sha(clip) in noted else 0, "gullible"))
    r = gullible.row("note-to-judge")
    assert r.verdict == VULNERABLE, r.reason
    assert r.vs_reference is not None and r.vs_reference.outcome == "won"
    assert r.vs_reference.delta_d["tone"] == pytest.approx(1.0)
    fair = run(ITEMS, ["note-to-judge"], cache=cache, judge=scripted(lambda clip: 2, "fair"))
    assert fair.row("note-to-judge").verdict == DEFENDED, fair.row("note-to-judge").reason
    assert fair.configuration["judge_model"] == "fair"
    gullible.save(tmp_path / "out")
    data = json.loads((tmp_path / "out" / "redteam.json").read_text())
    assert data["instruments"]["judge"] is True
    assert data["verdicts"] == {"note-to-judge": VULNERABLE}


@pytest.mark.slow
def test_memoriser_wins_on_public_items_and_not_on_the_held_out_partition() -> None:
    plain = run(FEMALE[:4], ["memoriser"])
    r = plain.row("memoriser")
    assert r.verdict == NOT_TESTED and "held-out" in r.reason and "WINS here" in r.reason
    assert r.vs_base is not None and r.vs_base.outcome == "won"
    assert r.vs_base.partition == "public"

    split = vb.split_holdout(FEMALE, 0.5, salt="redteam-test-salt")
    held = run(FEMALE, ["memoriser"], holdout_salt="redteam-test-salt",
               holdout_fraction=0.5, limit=4)
    r = held.row("memoriser")
    assert r.verdict == DEFENDED, r.reason
    assert r.vs_base is not None and r.vs_base.partition == "held-out"
    assert r.vs_base.outcome == "tied" and r.vs_base.decision.mean_delta == 0.0  # = flat
    assert r.vs_reference is not None and r.vs_reference.outcome in ("lost", "tied")
    public = {d.opponent: d for d in r.extra}
    assert public["base"].partition == "public" and public["base"].outcome == "won"
    assert "on the public items: vs base (espeak-flat): won" in r.reason
    sel = held.configuration["selection"]
    assert sel["holdout"]["salt_sha256"] == split.salt_digest
    assert "redteam-test-salt" not in json.dumps(held.to_dict())  # the salt stays private
    assert held.configuration["evaluation_partition"] == "held-out"


@pytest.mark.slow
def test_clips_and_analyses_are_shared_across_duels(tmp_path: Path) -> None:
    asked: list[tuple[str, str]] = []

    class Counting(EspeakSystem):
        def synthesize_many(self, requests: Any, *, workers: int | None = None) -> Any:
            asked.extend(requests)
            return super().synthesize_many(requests, workers=workers)

    items = ITEMS[:2]
    attacks = ["silence", "pad-silence", "gain-loudness", "safe-middle"]
    path = tmp_path / "cache.sqlite"
    res = redteam(items, reference=Counting("espeak-follow"), attacks=attacks, workers=1,
                  cache=path, canaries=False)  # the canaries' own analyses share the table
    assert len(res.rows) == 4
    for it in items:  # the reference rendered each item once, for six duels
        assert asked.count((it.text, it.instruction)) == 1
    with Cache(path) as store:
        clips = store.count("clips")
        analyses = store.count("probes")
    # one analysis per distinct clip: reference, flat, the pace-held base and each attack
    # (attacks that leave a request alone return the base's bytes: analysed once)
    assert analyses <= clips
    again = redteam(items, reference=Counting("espeak-follow"), attacks=attacks, workers=1,
                    cache=path, canaries=False)
    assert asked.count((items[0].text, items[0].instruction)) == 1  # all from the cache
    assert [r.verdict for r in again.rows] == [r.verdict for r in res.rows]
    assert again.to_dict()["rows"] == res.to_dict()["rows"]


@pytest.mark.slow
def test_cli_writes_the_three_files_and_says_not_tested(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    from vocencebench.cli import main

    out = tmp_path / "rt"
    rc = main(["redteam", "--limit", "2", "--attacks", "silence,speak-instruction",
               "--reference", "espeak-follow", "--workers", "1", "--out", str(out),
               "--quiet"])
    printed = capsys.readouterr().out
    data = json.loads((out / "redteam.json").read_text())
    assert rc == data["exit_code"] == (1 if VULNERABLE in data["verdicts"].values() else 0)
    assert sorted(p.name for p in out.iterdir()) == [".vocencebench", "cache.sqlite",
                                                     "redteam.html", "redteam.json",
                                                     "redteam.md"]
    assert data["verdicts"]["speak-instruction"] == NOT_TESTED
    assert "speak-instruction" in printed and "gate OFF in this configuration" in printed
    assert printed.splitlines()[0].startswith("vocencebench redteam — reference espeak-follow")
    assert data["configuration"]["selection"]["evaluation_items"] == 2
    # The real canaries ran once, on the default probes, and passed: json, md, html, table.
    assert data["canaries"]["ran"] is True and data["canaries"]["passed"] is True
    line = next(s for s in data["status"] if s.startswith("canaries: "))
    assert line.startswith("canaries: PASSED — 21/21 known-answer checks of pitch-praat")
    assert f"  {line}" in printed.splitlines()
    assert line in (out / "redteam.md").read_text() and "## Canaries" in (
        out / "redteam.md").read_text()
    assert "<h2>Canaries</h2>" in (out / "redteam.html").read_text()
    assert main(["redteam", "--attacks", "nope", "--out", str(out)]) == 2
    assert "unknown attack(s) nope" in capsys.readouterr().err


#: How `vocencebench run` announces --skip-canaries (every command says it the same way).
SKIPPED_LINE = ("vocencebench: CANARIES SKIPPED (--skip-canaries): the probes and the judge are "
                "not checked against known answers")


class Recording(EspeakSystem):
    """An eSpeak built-in that records every request, however it is asked."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.asked: list[str] = []

    def __call__(self, text: str, instruction: str) -> bytes:
        self.asked.append(text)
        return super().__call__(text, instruction)

    def synthesize_many(self, requests: Any, *, workers: int | None = None) -> Any:
        self.asked.extend(t for t, _ in requests)
        return super().synthesize_many(requests, workers=workers)


def test_failed_canaries_stop_the_redteam_before_any_clip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from vocencebench.cli import main

    asked = fake_canaries(monkeypatch, passed=False)
    ref, flat = Recording("espeak-follow"), Recording("espeak-flat")
    path = tmp_path / "cache.sqlite"
    with pytest.raises(CanaryError) as info:
        redteam(ITEMS, reference=ref, flat=flat, attacks=["silence", "gain-loudness"],
                workers=1, cache=path)
    assert str(info.value).startswith("canaries: 1 of 1 canary checks failed")
    assert FAILED_MESSAGE in str(info.value)
    assert len(asked) == 1 and asked[0]["probes"] is not None
    assert ref.asked == [] and flat.asked == []  # nothing synthesised, not even the reference
    with Cache(path) as store:
        assert store.count("clips") == 0
    # The command: one line naming the failed canary, exit 3 (INCOMPLETE), no table.
    out = tmp_path / "rt"
    rc = main(["redteam", "--limit", "1", "--attacks", "silence", "--reference",
               "espeak-follow", "--workers", "1", "--out", str(out), "--quiet"])
    got = capsys.readouterr()
    assert rc == 3 and got.out == ""
    assert got.err.splitlines() == [f"vocencebench redteam: INCOMPLETE: {info.value}"]
    assert not (out / "redteam.json").exists()
    with Cache(out / "cache.sqlite") as store:
        assert store.count("clips") == 0


@pytest.mark.slow
def test_the_canaries_run_once_for_every_duel_and_are_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = fake_canaries(monkeypatch, passed=True)
    res = redteam(ITEMS[:1], reference="espeak-follow", attacks=["silence", "gain-loudness"],
                  workers=1)
    assert len(asked) == 1  # four duels, one check
    assert res.canaries == passing_record()
    line = "canaries: PASSED — 1/1 known-answer checks of gender-f0gmm@1"
    assert res.status[-1] == line
    out = res.save(tmp_path / "out")
    assert json.loads((out / "redteam.json").read_text())["canaries"] == passing_record()
    for name in ("redteam.md", "redteam.html"):
        assert line in (out / name).read_text(), name
    assert load_redteam(out).canaries == res.canaries


@pytest.mark.slow
def test_skip_canaries_is_announced_and_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from vocencebench.cli import main

    asked = fake_canaries(monkeypatch, passed=False)  # would stop the run if asked
    out = tmp_path / "rt"
    rc = main(["redteam", "--limit", "1", "--attacks", "silence", "--reference",
               "espeak-follow", "--workers", "1", "--out", str(out), "--quiet",
               "--skip-canaries"])
    got = capsys.readouterr()
    data = json.loads((out / "redteam.json").read_text())
    assert rc == data["exit_code"] != 3 and asked == []
    assert got.err.splitlines() == [SKIPPED_LINE]
    assert data["canaries"] == {"ran": False, "skipped": True}
    line = ("CANARIES SKIPPED: the probes and the judge were not checked against known "
            "answers before this run")
    assert line in data["status"] and f"  {line}" in got.out.splitlines()
    for name in ("redteam.md", "redteam.html"):
        assert line in (out / name).read_text(), name


def test_default_reference_is_hibari_when_available_else_espeak(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import sys
    import types

    from vocencebench.gaming import default_reference

    assert vb.redteam is redteam
    # without vocencebench.systems.hibari (or without hibari-tts): the eSpeak pair
    monkeypatch.setitem(sys.modules, "vocencebench.systems.hibari", None)  # import fails
    _, ref_label, _, flat_label = default_reference()
    assert (ref_label, flat_label) == ("espeak-follow", "espeak-flat")

    made: list[str] = []

    class FakeHibari:
        def __init__(self, name: str) -> None:
            made.append(name)
            self.system_id = f"{name}@fake"

        def __call__(self, text: str, instruction: str) -> bytes:
            raise AssertionError("not rendered in this test")

    fake = types.ModuleType("vocencebench.systems.hibari")
    fake.HibariSystem = FakeHibari  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vocencebench.systems.hibari", fake)
    real_find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "hibari" else real_find(name, *a))
    ref, ref_label, _, flat_label = default_reference()
    assert (ref_label, flat_label) == ("hibari-follow", "hibari")
    assert made == ["hibari-follow", "hibari"]
    assert ref.system_id == "hibari-follow@fake"  # type: ignore[attr-defined]
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "hibari" else real_find(name, *a))
    assert default_reference()[1] == "espeak-follow"  # hibari-tts not installed
