"""``vocencebench leaderboard`` end to end: three eSpeak-based systems, --limit 4, every cell
recomputed by ``vocencebench decide``; --dry-run; --demo; --verify."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import vocencebench as vb
from canary_fakes import fake_canaries
from vocencebench import tts
from vocencebench.cli import main
from vocencebench.commands.leaderboard import parse_named_system
from vocencebench.errors import ConfigError

#: How `vocencebench run` announces --skip-canaries (every command says it the same way).
SKIPPED_LINE = ("vocencebench: CANARIES SKIPPED (--skip-canaries): the probes and the judge are "
                "not checked against known answers")


@pytest.mark.parametrize(("text", "expected"), [
    ("flat=espeak-flat", ("flat", "espeak-flat")),
    ("espeak-follow", ("espeak-follow", "espeak-follow")),
    ("mine=cmd:tts --rate=1 {text} {out}", ("mine", "cmd:tts --rate=1 {text} {out}")),
    ("cmd:tts --rate=1 {out}", ("cmd-tts --rate=1 {out}", "cmd:tts --rate=1 {out}")),
    ("v2=dir:/data/clips", ("v2", "dir:/data/clips")),
])
def test_parse_named_system(text: str, expected: tuple[str, str]) -> None:
    assert parse_named_system(text) == expected


@pytest.mark.parametrize("text", ["ñ=espeak-flat", "../x=espeak-flat", "=espeak-flat",
                                  "flat=", "a b=espeak-flat",
                                  "x" * 65 + "=espeak-flat"])
def test_a_bad_name_is_called_a_bad_name(text: str) -> None:
    """These read as 'unknown system', or (a long name) ran the whole board and failed at
    the save."""
    with pytest.raises(ConfigError, match="the name before '=' must be 1-64 letters"):
        parse_named_system(text)
    assert parse_named_system("x" * 64 + "=espeak-flat")[0] == "x" * 64


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A third eSpeak-based system as a directory of clips (espeak-follow, 50 wpm faster);
    the fourth item's clip is missing, so that system fails it (S = 0, reason kept)."""
    d = tmp_path_factory.mktemp("clips")
    follow = tts.get_system("espeak-follow")
    items = vb.load_benchmark("benchmark_v1")[:3]
    jobs = []
    for it in items:
        s = follow.settings(it.instruction)
        jobs.append((it.text, replace(s, rate=min(450, s.rate + 50))))
    for it, wav in zip(items, tts.render_many(jobs, workers=1), strict=True):
        (d / f"{it.id}.wav").write_bytes(wav)
    return d


@pytest.fixture(scope="module")
def board(clip_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("board") / "out"
    rc = main(["leaderboard", "--system", "flat=espeak-flat", "--system", "espeak-follow",
               "--system", f"fast=dir:{clip_dir}", "--limit", "4", "--out", str(out),
               "--executor", "serial", "--quiet"])
    assert rc == 0
    return out


@pytest.mark.slow
def test_cli_writes_every_output(board: Path) -> None:
    for name in ("leaderboard.json", "leaderboard.md", "leaderboard.html", "scores.jsonl",
                 "cache.sqlite"):
        assert (board / name).is_file(), name
    assert not list(board.glob(".*.tmp"))  # atomic writes leave no temporary file
    doc = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    assert doc["kind"] == "leaderboard" and doc["schema_version"] == 1
    assert [s["name"] for s in doc["systems"]] == ["flat", "espeak-follow", "fast"]
    assert doc["mode"] == "all-pairs" and len(doc["pairs"]) == 3 and doc["not_compared"] == []
    assert doc["items"] == 4 and doc["scores"]["layout"] == "combined"
    assert "JUDGE OFF" in " ".join(doc["status"])
    assert doc["bradley_terry"]["label"].startswith("Bradley–Terry summary")
    assert {t for tier in doc["tiers"] for t in tier["systems"]} == {"flat", "espeak-follow",
                                                                       "fast"}
    fails = doc["failures"]["systems"]["fast"]
    assert fails["synthesis"] == 1 and "no clip for vb-00004" in fails["examples"][0]
    canaries = doc["canaries"]  # checked once, before the pairs: the default probes pass
    assert canaries["status"] == "passed" and canaries["ran"] is True
    assert canaries["line"].startswith("canaries: PASSED — 21/21 known-answer checks of ")
    assert canaries["line"] in doc["status"]
    assert canaries["line"] in (board / "leaderboard.html").read_text(encoding="utf-8")
    assert set(doc["traits"]["flat"]) >= {"pitch", "pace", "loudness", "gender"}
    md = (board / "leaderboard.md").read_text(encoding="utf-8")
    assert "## Tiers" in md and "not the verdict" in md and "vocencebench decide" in md
    assert f"## Canaries\n\n{canaries['line']}\n" in md


@pytest.mark.slow
def test_cli_cells_are_recomputed_by_decide(board: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    for cell in doc["pairs"]:
        capsys.readouterr()
        rc = main(["decide", str(board / cell["scores_file"]), "--incumbent",
                   cell["incumbent"], "--challenger", cell["challenger"], "--json"])
        assert rc == 0
        assert json.loads(capsys.readouterr().out) == cell["decision"]
    capsys.readouterr()
    assert main(["leaderboard", "--verify", str(board)]) == 0
    assert "OK: every cell" in capsys.readouterr().out


@pytest.mark.slow
def test_rerun_reuses_the_cache_and_gives_the_same_file(
        board: Path, clip_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (board / "leaderboard.json").read_text(encoding="utf-8")
    rc = main(["leaderboard", "--system", "flat=espeak-flat", "--system", "espeak-follow",
               "--system", f"fast=dir:{clip_dir}", "--limit", "4", "--out", str(board),
               "--executor", "serial", "--quiet"])
    assert rc == 0
    after = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    first = json.loads(before)
    assert after["pairs"] == first["pairs"] and after["tiers"] == first["tiers"]
    cache = after["metadata"]["cache"]
    assert cache["misses"]["clips"] == 0 and cache["misses"]["probes"] == 0
    assert "vocencebench" in capsys.readouterr().out


def test_dry_run_prints_the_mode_calls_and_cost(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["leaderboard", "--system", "a=espeak-flat", "--system", "b=espeak-follow",
            "--system", "c=espeak-follow", "--judge", "local:http://127.0.0.1:9#omni",
            "--limit", "5", "--out", str(tmp_path / "x"), "--dry-run"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "MODE: all pairs — 3 pairs of 3 systems" in out
    assert "judge calls: 60 at most = 3 pairs × 5 items × 2 dimensions × 2 orders × 1 vote" \
        in out
    assert "estimated cost of the calls to make (canaries included): $0.00 [omni at $0.0/M input" \
        in out
    assert "nothing was synthesised" in out
    assert not (tmp_path / "x").exists()
    assert main([*argv, "--anchor", "c", "--votes", "3", "--no-swap"]) == 0
    out = capsys.readouterr().out
    assert "MODE: anchor 'c' — 2 pairs" in out and "NOT COMPARED" in out
    assert "judge calls: 60 at most = 2 pairs × 5 items × 2 dimensions × 1 order × 3 votes" \
        in out
    assert main(["leaderboard", "--system", "a=espeak-flat", "--system", "b=espeak-follow",
                 "--anchor", "a", "--limit", "2", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "judge calls: 0" in out and "anchor mode saves nothing" in out


def test_dry_run_cost_uses_the_backend_price_table_or_says_unknown() -> None:
    from vocencebench.board import plan_judge_calls
    from vocencebench.judge import PRICES, Judge

    items = vb.load_benchmark("benchmark_v1")[:3]
    systems = {"a": vb.EspeakSystem("espeak-flat"), "b": vb.EspeakSystem("espeak-follow")}
    priced = plan_judge_calls(items, systems, Judge.gemini("gemini-2.5-flash", "k"))
    assert priced.total_calls == 12 and priced.estimated_cost_usd is not None
    # Each call costs at least its 2048-token output ceiling at the model's output price.
    floor = 12 * 2048 * PRICES["gemini-2.5-flash"].output / 1e6
    assert floor < priced.estimated_cost_usd < 3 * floor
    assert "gemini-2.5-flash at $0.3/M input" in priced.describe()[-1]
    unpriced = plan_judge_calls(items, systems, Judge.gemini("gemini-unpriced-x", "k"))
    assert unpriced.estimated_cost_usd is None
    assert "unknown (no price for this model)" in unpriced.describe()[-1]
    assert unpriced.to_dict()["calls_to_make"] == 12


def test_cli_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", "--system", "a=espeak-flat", "--dry-run"]) == 2
    assert "at least two" in capsys.readouterr().err
    assert main(["leaderboard", "--system", "a=espeak-flat", "--system", "a=espeak-follow",
                 "--dry-run"]) == 2
    assert "two systems are named 'a'" in capsys.readouterr().err
    assert main(["leaderboard", "--system", "a=espeak-flat", "--system", "b=espeak-follow",
                 "--anchor", "z", "--dry-run"]) == 2
    assert "--anchor 'z'" in capsys.readouterr().err
    with pytest.raises(ConfigError):
        parse_named_system("")


@pytest.mark.slow
def test_demo_leaderboard_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    """`vocencebench demo --leaderboard` (the code path of `leaderboard --demo`): every
    offline built-in that is installed, two items (the smallest run that decides anything)."""
    from vocencebench.board import demo_systems

    systems, notes = demo_systems()
    assert list(systems)[:2] == ["espeak-flat", "espeak-follow"]
    assert ("hibari" in systems) == (not notes)
    out = tmp_path / "demo"
    assert main(["demo", "--leaderboard", "--limit", "2", "--out", str(out), "--quiet",
                 "--workers", "1"]) == 0
    doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in doc["systems"]] == list(systems)
    assert doc["items"] == 2 and len(doc["pairs"]) == len(systems) * (len(systems) - 1) // 2
    assert doc["metadata"]["selection"]["demo"] is True
    assert doc["canaries"]["status"] == "passed"
    if notes:
        assert any("hibari" in s and "skipped" in s for s in doc["status"])
    assert "TIERS" in capsys.readouterr().out
    assert main(["demo", "--leaderboard", "--systems", "a,b", "--out", str(out)]) == 2


@pytest.mark.slow
def test_demo_duel_of_the_neural_builtins(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`vocencebench demo --systems hibari,hibari-follow` offline, two items; with
    --skip-canaries, which `run` announces on stderr and records."""
    pytest.importorskip("hibari")
    out = tmp_path / "duel"
    rc = main(["demo", "--systems", "hibari,hibari-follow", "--limit", "2", "--out", str(out),
               "--quiet", "--workers", "1", "--skip-canaries"])
    got = capsys.readouterr()
    assert rc == 0, got.err
    assert SKIPPED_LINE in got.err.splitlines()
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert list(run["labels"]) == ["hibari", "hibari-follow"]
    assert run["metadata"]["systems"]["hibari-follow"].startswith("hibari-follow@hibari-tts-")
    assert run["metadata"]["canaries"] == {"ran": False, "skipped": True}
    assert all(p["a"]["S"] is not None and p["b"]["S"] is not None for p in run["pairs"])
    assert "DECISION:" in got.out


@pytest.mark.slow
def test_skip_canaries_is_announced_and_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    asked = fake_canaries(monkeypatch, passed=False)  # would stop the run if asked
    out = tmp_path / "board"
    rc = main(["leaderboard", "--system", "a=espeak-flat", "--system", "b=espeak-follow",
               "--limit", "1", "--out", str(out), "--executor", "serial", "--quiet",
               "--skip-canaries"])
    got = capsys.readouterr()
    assert rc == 0 and asked == []
    assert got.err.splitlines() == [SKIPPED_LINE]
    doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    line = ("CANARIES SKIPPED: the probes and the judge were not checked against known "
            "answers before this run")
    assert doc["canaries"] == {"status": "skipped", "line": line, "ran": False,
                               "skipped": True}
    assert line in doc["status"] and f"  {line}" in got.out.splitlines()
    for name in ("leaderboard.md", "leaderboard.html"):
        assert line in (out / name).read_text(encoding="utf-8"), name


@pytest.mark.slow
def test_demo_with_neural_systems_runs_the_documented_subset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vocencebench.board import demo as cmd

    def three(*, neural: bool = True) -> tuple[dict[str, object], list[str]]:
        return ({"espeak-flat": vb.EspeakSystem("espeak-flat"),
                 "espeak-follow": vb.EspeakSystem("espeak-follow"),
                 "hibari": vb.EspeakSystem("espeak-follow")}, [])

    monkeypatch.setattr(cmd, "demo_systems", three)
    monkeypatch.setattr(cmd, "DEMO_ITEMS_WITH_NEURAL", 2)
    lb = cmd.demo_leaderboard(out=tmp_path / "demo", workers=1)
    assert len(lb.items) == 2 and len(lb.runs) == 3
    assert any(s.startswith("demo subset: the first 2 of 496 items") for s in lb.status())


def test_outputs_are_replaced_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    import os

    from vocencebench.outputs import atomic_write as write_atomic

    target = tmp_path / "leaderboard.json"
    write_atomic(target, "old\n")

    def broken(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "new and partial")
    assert target.read_text() == "old\n"  # the previous complete file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["leaderboard.json"]  # no temp file left


def _published(directory: Path, version: object) -> Path:
    """The smallest leaderboard directory `--verify` reads: one combined scores file, and a
    leaderboard.json naming the order and each cell's file (as `save` writes them)."""
    from vocencebench.board import LEADERBOARD_SCHEMA_VERSION, standings_from_scores
    from vocencebench.board.run import decide_command, pair_folder

    directory.mkdir(exist_ok=True)
    rows = [{"item": f"i{k}", "system": s, "S": v}
            for k in range(6) for s, v in (("a", 0.2 + 0.01 * k), ("b", 0.8 - 0.01 * k))]
    (directory / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                            encoding="utf-8")
    doc: dict[str, object] = {
        "kind": "leaderboard", "schema_version": LEADERBOARD_SCHEMA_VERSION, "anchor": None,
        "systems": [{"name": "a"}, {"name": "b"}],
        "pairs": [{"incumbent": "a", "challenger": "b", "scores_file": "scores.jsonl"}]}
    (directory / "leaderboard.json").write_text(json.dumps(doc), encoding="utf-8")
    st = standings_from_scores(directory)  # the version this install writes is read
    again = json.loads(json.dumps(st.to_dict()))
    doc.update({k: v for k, v in again.items() if k not in ("systems", "pairs")})
    doc["pairs"] = [{**c, "scores_file": "scores.jsonl", "record": pair_folder(0, ("a", "b")),
                     "recompute": decide_command("scores.jsonl", ("a", "b"))}
                    for c in again["pairs"]]
    doc["not_compared"] = []
    doc["items"] = 6
    doc["schema_version"] = version
    (directory / "leaderboard.json").write_text(json.dumps(doc), encoding="utf-8")
    return directory


def test_a_leaderboard_json_of_a_newer_version_is_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vocencebench.board import LEADERBOARD_SCHEMA_VERSION, standings_from_scores, verify

    current = _published(tmp_path / "current", LEADERBOARD_SCHEMA_VERSION)
    assert verify(current) == []
    assert main(["leaderboard", "--verify", str(current)]) == 0
    capsys.readouterr()
    newer = _published(tmp_path / "newer", LEADERBOARD_SCHEMA_VERSION + 1)
    want = (f"newer schema_version ({LEADERBOARD_SCHEMA_VERSION + 1}); this vocencebench "
            f"{vb.__version__} reads schema_version {LEADERBOARD_SCHEMA_VERSION}")
    for read in (verify, standings_from_scores):
        with pytest.raises(ConfigError) as info:
            read(newer)
        assert want in str(info.value) and "leaderboard.json" in str(info.value)
    assert main(["leaderboard", "--verify", str(newer)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("vocencebench leaderboard: error:")
    assert want in err[0]
    unknown = _published(tmp_path / "unknown", None)
    with pytest.raises(ConfigError, match="unknown schema_version"):
        verify(unknown)


def _tampered(board: Path, tmp_path: Path, edit: Any) -> Path:
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(board, out)
    doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    doc = edit(doc)
    (out / "leaderboard.json").write_text(json.dumps(doc), encoding="utf-8")
    return out


def _set_key(key: str, value: Any) -> Any:
    def edit(doc: dict[str, Any]) -> dict[str, Any]:
        doc[key] = value
        return doc
    return edit


def _cell(key: str, value: Any) -> Any:
    def edit(doc: dict[str, Any]) -> dict[str, Any]:
        doc["pairs"][0][key] = value
        return doc
    return edit


def _flip_records(doc: dict[str, Any]) -> dict[str, Any]:
    r = doc["records"]
    first, second = list(r)[:2]
    r[first], r[second] = r[second], r[first]
    return doc


@pytest.mark.slow
@pytest.mark.parametrize(("case", "edit", "field"), [
    ("winner", _cell("winner", "nobody"), "winner"),
    ("matrix", _set_key("matrix", None), "matrix:"),
    ("system-scores", _set_key("system_scores", {}), "system_scores."),
    ("bradley-terry", _set_key("bradley_terry", {}), "bradley_terry."),
    ("traits", _set_key("traits", {}), "traits."),
    ("records", _flip_records, "records."),
    ("not-compared", _set_key("not_compared", [["flat", "fast"]]), "not_compared:"),
    # The fourth audit: these passed as "recomputed bit for bit".
    ("recompute", _cell("recompute", "rm -rf /"), 'recompute: published "rm -rf /", '
                                                  'recomputed "vocencebench decide '),
    ("record", _cell("record", "pairs/elsewhere"), 'record: published "pairs/elsewhere"'),
    ("items", _set_key("items", 999), "items: published 999, recomputed "),
    ("lcb", lambda d: {**d, "pairs": [{**d["pairs"][0], "decision": {
        **d["pairs"][0]["decision"], "lcb": d["pairs"][0]["decision"]["lcb"] + 1e-12}},
        *d["pairs"][1:]]}, "decision.lcb: published "),
])
def test_verify_catches_every_edited_standing(board: Path, tmp_path: Path, case: str,
                                              edit: Any, field: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """--verify said OK after the standings were edited: it compared only the decisions and
    the tiers. Every field the scores determine is now compared."""
    from vocencebench.board import verify

    assert verify(board) == []
    problems = verify(_tampered(board, tmp_path, edit))
    assert any(field in p for p in problems), problems


@pytest.mark.slow
@pytest.mark.parametrize(("case", "edit", "message"), [
    ("no-systems", lambda d: {k: v for k, v in d.items() if k != "systems"},
     "'systems' must be a list of objects with a 'name'"),
    ("names-only", _set_key("systems", ["flat", "fast"]), "'systems' must be a list"),
    ("no-pairs", lambda d: {k: v for k, v in d.items() if k != "pairs"},
     "'pairs' must be a list"),
    ("no-scores-file", _cell("scores_file", None), "pairs[0] needs"),
    ("outside", _cell("scores_file", "/etc/passwd"), "is not a file inside the leaderboard"),
    ("dot-dot", _cell("scores_file", "../elsewhere.jsonl"), "is not a file inside"),
    ("a-list", lambda d: [1, 2], "is not a leaderboard file"),
])
def test_verify_on_a_damaged_leaderboard_json_is_one_error_line(
        board: Path, tmp_path: Path, case: str, edit: Any, message: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = _tampered(board, tmp_path, edit)
    assert main(["leaderboard", "--verify", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    (out / "leaderboard.json").write_bytes(b"\xff\xfe{}")
    assert main(["leaderboard", "--verify", str(out)]) == 2
    assert "is not valid JSON" in capsys.readouterr().err
