"""The leaderboard runner: one synthesis per system, one cache across pairs, every published
cell reproduced by ``vocencebench decide`` bit for bit, O(N) judge calls in anchor mode."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import vocencebench as vb
from board_fakes import CountingEspeak, scripted_judge
from canary_fakes import FAILED_MESSAGE, fake_canaries, passing_record
from vocencebench.board import Leaderboard, leaderboard, plan_judge_calls, verify
from vocencebench.cache import Cache
from vocencebench.cli import main
from vocencebench.corpus import load_benchmark
from vocencebench.errors import CanaryError, ConfigError, JudgeError
from vocencebench.schema import ProbeResult
from vocencebench.scores import decide_scores

N_ITEMS = 4
DIMS = 2  # tone and naturalness
ORDERS = 2
FIRST_FOUR = ("flat", "follow", "follow-fast", "follow-slow")


@pytest.fixture(scope="module")
def items() -> list[vb.Item]:
    return load_benchmark("benchmark_v1")[:N_ITEMS]


@pytest.fixture(scope="module")
def probes() -> Any:
    return vb.default_probes()


def _systems() -> dict[str, CountingEspeak]:
    return {
        "flat": CountingEspeak("flat", "espeak-flat"),
        "follow": CountingEspeak("follow"),
        "follow-fast": CountingEspeak("follow-fast", rate=60),
        "follow-slow": CountingEspeak("follow-slow", rate=-40),
        "follow-high": CountingEspeak("follow-high", pitch=30),
    }


def _run(items: list[vb.Item], systems: dict[str, Any], probes: Any, judge: Any = None,
         **kw: Any) -> Leaderboard:
    kw.setdefault("canaries", False)  # the judge here is scripted and counts its calls
    return leaderboard(items, systems, judge, probes=probes, executor="serial", **kw)


def _cells(lb: Leaderboard) -> dict[tuple[str, str], Any]:
    return {(c.incumbent, c.challenger): (c.decision.to_dict() if c.decision else None)
            for c in lb.standings.cells}


def _distinct(lb: Leaderboard, pairs: Any = None) -> tuple[int, int]:
    """(distinct clip pairs the judge must hear, distinct clips to analyse) of ``lb``: two
    systems can render the same bytes for an item (espeak-follow's settings for a neutral
    request are espeak-flat's), and the cache then shares the analysis and the verdicts."""
    duels: set[tuple[str | None, str | None]] = set()
    clips: set[tuple[str, str | None]] = set()
    for key, h in lb.runs.items():
        for p in h.pairs:
            clips |= {(p.item.id, p.analysis_a.sha256), (p.item.id, p.analysis_b.sha256)}
            if pairs is None or key in pairs:
                duels.add((p.analysis_a.sha256, p.analysis_b.sha256))
    return len(duels), len(clips)


def _decide_cli(path: Path, x: str, y: str, capsys: pytest.CaptureFixture[str]) -> Any:
    capsys.readouterr()
    assert main(["decide", str(path), "--incumbent", x, "--challenger", y, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def judged(items: list[vb.Item], probes: Any, tmp_path_factory: pytest.TempPathFactory
           ) -> dict[str, Any]:
    """Four systems with a judge; then a fifth added; then one removed — one cache file."""
    base = tmp_path_factory.mktemp("judged")
    systems = _systems()
    four = {k: systems[k] for k in FIRST_FOUR}
    store = Cache(base / "cache.sqlite")
    rec: dict[str, Any] = {}
    judge, backend = scripted_judge()
    rec["first"] = _run(items, four, probes, judge, cache=store)
    rec["out1"] = rec["first"].save(base / "four")
    rec["calls1"] = {k: s.calls for k, s in systems.items()}
    rec["judge_calls1"] = len(backend.requests)
    rec["probe_misses1"] = store.misses["probes"]
    judge, backend = scripted_judge()
    rec["fifth"] = _run(items, systems, probes, judge, cache=store)
    rec["calls2"] = {k: s.calls for k, s in systems.items()}
    rec["judge_calls2"] = len(backend.requests)
    rec["probe_misses2"] = store.misses["probes"] - rec["probe_misses1"]
    judge, backend = scripted_judge()
    three = {k: systems[k] for k in ("flat", "follow", "follow-slow")}
    rec["removed"] = _run(items, three, probes, judge, cache=store)
    rec["calls3"] = {k: s.calls for k, s in systems.items()}
    rec["judge_calls3"] = len(backend.requests)
    store.close()
    return rec


@pytest.mark.slow
def test_each_system_is_synthesised_once_and_every_pair_judged(judged: dict[str, Any]
                                                                ) -> None:
    calls = judged["calls1"]
    assert all(calls[k] == N_ITEMS for k in FIRST_FOUR) and calls["follow-high"] == 0
    first: Leaderboard = judged["first"]
    duels, clips = _distinct(first)
    # Every distinct pair of clips judged once (at most 6 pairs × 4 items), every distinct
    # clip analysed once, although each system sits in three pairs.
    assert judged["judge_calls1"] == duels * DIMS * ORDERS
    assert 4 * N_ITEMS < duels <= 6 * N_ITEMS
    assert judged["probe_misses1"] == clips
    assert first.judge_calls == judged["judge_calls1"]
    assert first.plan.total_calls == judged["judge_calls1"]
    assert first.complete and first.mode == "all-pairs"


@pytest.mark.slow
def test_adding_a_fifth_system_reuses_every_clip_analysis_and_verdict(
        judged: dict[str, Any]) -> None:
    calls = judged["calls2"]
    assert {k: calls[k] for k in FIRST_FOUR} == {k: N_ITEMS for k in FIRST_FOUR}
    assert calls["follow-high"] == N_ITEMS
    fifth: Leaderboard = judged["fifth"]
    # Only the four new pairs are judged, and only the new clips analysed.
    new_pairs = [p for p in fifth.runs if "follow-high" in p]
    duels_all, clips_all = _distinct(fifth)
    duels_old, clips_old = _distinct(judged["first"])
    assert judged["judge_calls2"] == (duels_all - duels_old) * DIMS * ORDERS
    assert judged["judge_calls2"] == _distinct(fifth, new_pairs)[0] * DIMS * ORDERS
    assert judged["probe_misses2"] == clips_all - clips_old == N_ITEMS
    # Before the run, the plan knew the old pairs' verdicts were cached (their clips are).
    assert fifth.plan.cached_calls is None  # the fifth system's clips were not cached yet
    old = _cells(judged["first"])
    new = _cells(fifth)
    assert all(new[p] == old[p] for p in old)
    assert len(new) == 10


@pytest.mark.slow
def test_removing_a_system_changes_no_other_cell(judged: dict[str, Any]) -> None:
    assert judged["calls3"] == judged["calls2"]  # nothing synthesised
    assert judged["judge_calls3"] == 0  # nothing judged
    old = _cells(judged["first"])
    kept = _cells(judged["removed"])
    assert kept and all(kept[p] == old[p] for p in kept)


@pytest.mark.slow
def test_every_published_cell_is_decide_bit_for_bit_per_pair_files(
        judged: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    lb: Leaderboard = judged["first"]
    out: Path = judged["out1"]
    # A judge scores each system against each opponent: one scores file per pair.
    assert lb.combined_scores() is None
    doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert doc["scores"]["layout"] == "per-pair"
    assert not (out / "scores.jsonl").exists()
    for cell in doc["pairs"]:
        x, y = cell["incumbent"], cell["challenger"]
        f = out / cell["scores_file"]
        mine = lb.standings.cell(x, y)
        assert mine is not None and mine.decision is not None
        assert cell["decision"] == mine.decision.to_dict()
        assert decide_scores(f, incumbent=x, challenger=y).to_dict() == cell["decision"]
        assert _decide_cli(f, x, y, capsys) == cell["decision"]
        assert cell["recompute"].startswith(f"vocencebench decide {cell['scores_file']} ")
        # And the pair's own Head2Head decided the same.
        assert lb.runs[(x, y)].decision.to_dict() == cell["decision"]
    assert verify(out) == []


@pytest.mark.slow
def test_verify_catches_an_edited_scores_file(judged: dict[str, Any], tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(judged["out1"], out)
    f = sorted((out / "pairs").glob("*.jsonl"))[0]
    rows = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
    rows[0]["S"] = 1.0 if rows[0]["S"] < 0.5 else 0.0
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    problems = verify(out)
    assert problems and "recomputed" in problems[0]
    assert main(["leaderboard", "--verify", str(out)]) == 1


@pytest.mark.slow
def test_anchor_mode_makes_o_n_judge_calls_and_the_plan_counts_them(
        items: list[vb.Item], probes: Any, tmp_path: Path) -> None:
    systems = _systems()
    judge, backend = scripted_judge(relative=False)
    cache = tmp_path / "cache.sqlite"
    plan = plan_judge_calls(items, systems, judge, anchor="follow", cache=cache)
    bound = (len(systems) - 1) * N_ITEMS * DIMS * ORDERS
    # no cache file yet: nothing is cached (this read "unknown" before)
    assert plan.total_calls == bound and plan.cached_calls == 0
    assert plan.pairs[0] == ("follow", "flat") and len(plan.pairs) == 4
    assert plan.estimated_cost_usd == 0.0  # the scripted backend is free
    lines: list[str] = []
    lb = _run(items, systems, probes, judge, anchor="follow", cache=cache,
              announce=lines.append)
    expected = _distinct(lb)[0] * DIMS * ORDERS
    assert len(backend.requests) == expected == lb.judge_calls
    assert (len(systems) - 2) * N_ITEMS * DIMS * ORDERS < expected <= bound
    assert lines[0].startswith("MODE: anchor 'follow'") and "NOT COMPARED" in lines[0]
    assert lb.order[0] == "follow"
    assert lb.standings.outcome("flat", "follow-fast") == "not compared"
    assert lb.standings.outcome("flat", "follow") != "not compared"
    doc = lb.to_dict()
    assert doc["mode"] == "anchor" and ["flat", "follow-fast"] in doc["not_compared"]
    assert len(doc["not_compared"]) == 6 and len(doc["pairs"]) == 4
    assert "NOT COMPARED" in doc["status"][0]
    # This judge scores a clip on its own, so one combined scores file holds every cell.
    assert doc["scores"]["layout"] == "combined"
    # Everything is cached now: the plan knows, and a rerun calls nothing.
    again = plan_judge_calls(items, systems, judge, anchor="follow", cache=cache)
    assert again.cached_calls == bound and again.calls_to_make == 0
    assert all(s.calls == N_ITEMS for s in systems.values())


@pytest.mark.slow
def test_no_judge_writes_one_combined_scores_file_that_reproduces_every_cell(
        items: list[vb.Item], probes: Any, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    systems = {k: v for k, v in _systems().items() if k in ("flat", "follow", "follow-fast")}
    lb = _run(items, systems, probes)
    out = lb.save(tmp_path / "board")
    rows = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
    # Item-major, systems in leaderboard order: the pairing order of every cell.
    assert [(r["item"], r["system"]) for r in rows] == [
        (it.id, s) for it in items for s in ("flat", "follow", "follow-fast")]
    for c in lb.standings.cells:
        assert c.decision is not None
        assert _decide_cli(out / "scores.jsonl", c.incumbent, c.challenger, capsys) \
            == c.decision.to_dict()
        sc = lb.standings.scores[c.incumbent]
        assert sc is not None and sc.mean == c.decision.mean_a
    assert verify(out) == []
    assert lb.plan.total_calls == 0 and lb.judge_calls is None
    # The standings recompute from the published file alone.
    from vocencebench.board import standings_from_scores

    again = standings_from_scores(out / "scores.jsonl")
    assert again.to_dict() == {**lb.standings.to_dict(), "traits": again.to_dict()["traits"]}


def test_runner_input_checks(items: list[vb.Item], probes: Any) -> None:
    systems = _systems()
    with pytest.raises(ConfigError, match="anchor 'nope'"):
        _run(items, systems, probes, anchor="nope")
    with pytest.raises(ConfigError, match="at least two"):
        _run(items, {"flat": systems["flat"]}, probes)
    with pytest.raises(ConfigError, match="empty"):
        _run([], systems, probes)
    # Every pair is labelled with its systems' names; a keyword no run knows is refused too.
    for bad in ({"labels": ("x", "y")}, {"vote": 3}):
        with pytest.raises(TypeError, match=f"unexpected keyword argument {next(iter(bad))!r}"):
            leaderboard(items, systems, None, probes=probes, **bad)  # type: ignore[arg-type]
    assert all(s.calls == 0 for s in systems.values())


@pytest.mark.slow
def test_a_failing_judge_is_an_instrument_failure_never_a_silent_verdict(
        items: list[vb.Item], probes: Any) -> None:
    from vocencebench.judge import Judge, ScriptedBackend

    def answer(request: Any) -> Any:
        if "naturalness" in str(request.parts[-1]).lower():
            raise JudgeError("HTTP 503 after 5 attempts")
        return {"analysis_a": "a", "analysis_b": "b", "score_a": 2, "score_b": 1,
                "winner": "A", "confidence": 0.9}

    judge = Judge(ScriptedBackend(answer, model="flaky"), validate_audio=False)
    systems = {k: v for k, v in _systems().items() if k in ("flat", "follow")}
    lb = _run(items, systems, probes, judge)
    fails = lb.to_dict()["failures"]
    # However the pipeline records it (the dimension dropped, or the item INCOMPLETE), the
    # judge's failure is counted against the judge, never against a system.
    assert fails["instruments"].get("judge", 0) >= 1
    assert all(v["synthesis"] == v["audio"] == 0 for v in fails["systems"].values())
    cell = lb.standings.cells[0]
    if not cell.decided:
        assert fails["incomplete_pairs"] and not lb.complete


# ------------------------------------------------------------------ the canaries


def test_failed_canaries_stop_the_leaderboard_before_any_clip(
        items: list[vb.Item], probes: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    asked = fake_canaries(monkeypatch, passed=False)
    systems = {k: v for k, v in _systems().items() if k in FIRST_FOUR[:3]}
    judge, backend = scripted_judge("canary-judge")
    path = tmp_path / "cache.sqlite"
    with pytest.raises(CanaryError) as info:
        _run(items, systems, probes, judge, canaries=True, cache=path)
    assert str(info.value).startswith("canaries: 1 of 1 canary checks failed")
    assert FAILED_MESSAGE in str(info.value)
    assert len(asked) == 1 and asked[0]["probes"] is probes and asked[0]["judge"] is judge
    assert all(s.calls == 0 for s in systems.values())  # no system was asked for a clip
    assert backend.requests == []  # nor the judge for a verdict
    with Cache(path) as store:
        assert store.count("clips") == 0
    # The command: one line naming the failed canary, exit 3 (INCOMPLETE), nothing written.
    out = tmp_path / "board"
    rc = main(["leaderboard", "--system", "a=espeak-flat", "--system", "b=espeak-follow",
               "--limit", "1", "--out", str(out), "--executor", "serial", "--quiet"])
    got = capsys.readouterr()
    assert rc == 3 and got.out == ""
    assert got.err.splitlines() == [f"vocencebench leaderboard: INCOMPLETE: {info.value}"]
    assert not (out / "leaderboard.json").exists()


@pytest.mark.slow
def test_the_canaries_run_once_for_every_pair_and_are_recorded(
        items: list[vb.Item], probes: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked = fake_canaries(monkeypatch, passed=True)
    systems = {k: v for k, v in _systems().items() if k in FIRST_FOUR[:3]}
    lb = _run(items[:1], systems, probes, canaries=True)
    assert len(asked) == 1 and len(lb.runs) == 3  # three pairs, one check
    line = "canaries: PASSED — 1/1 known-answer checks of gender-f0gmm@1"
    assert lb.to_dict()["canaries"] == {"status": "passed", "line": line, **passing_record()}
    assert line in lb.status() and line in lb.summary()
    for h in lb.runs.values():  # each pair's record is the leaderboard's check
        assert h.metadata["canaries"] == passing_record() and h.metadata["status"][-1] == line
    out = lb.save(tmp_path / "board")
    doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert doc["canaries"]["status"] == "passed" and "canaries" not in doc["metadata"]
    for name in ("leaderboard.md", "leaderboard.html"):
        assert line in (out / name).read_text(encoding="utf-8"), name


# ------------------------------------------------------------------ a ninth trait


class _Breath:
    """A fake probe of the ninth trait and of pace (constant results: only the layout of the
    reports is under test)."""

    name, version, traits = "breath-fake", "1", ("breathiness", "pace")

    def measure(self, audio: Any, item: Any) -> dict[str, ProbeResult]:
        return {"breathiness": ProbeResult("breathiness", 0.2, "ratio", "slight", 0.5,
                                           "breath-fake@1"),
                "pace": ProbeResult("pace", 3.0, "syll/s", "moderate", 0.75, "breath-fake@1")}


def test_a_ninth_trait_is_laid_out_by_the_leaderboards_own_registry(tmp_path: Path) -> None:
    from judge_fakes import tone_wav
    from vocencebench.corpus import generate_template_corpus
    from vocencebench.traits import TRAITS, Trait, TraitRegistry

    # The ninth trait first: TRAITS would put pace before it.
    registry = TraitRegistry([Trait("breathiness", "objective", "ordinal",
                                    ("clear", "slight", "breathy"), "Audible breath noise."),
                              *TRAITS])
    its = generate_template_corpus(15, registry=registry)[:3]

    class Hum:
        def __init__(self, hz: float) -> None:
            self.system_id = f"hum:{hz}"
            self.hz = hz

        def __call__(self, text: str, instruction: str) -> bytes:
            return tone_wav(self.hz, seconds=0.5)

    lb = leaderboard(its, {"low": Hum(150.0), "high": Hum(260.0)}, None,
                     probes=vb.ProbeSet([_Breath()], registry=registry), registry=registry,
                     executor="serial", canaries=False)
    assert lb.registry is registry
    out = lb.save(tmp_path / "board")
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "| system | breathiness | pace |" in md
    page = (out / "leaderboard.html").read_text(encoding="utf-8")
    assert page.index("<th>breathiness</th>") < page.index("<th>pace</th>")


@pytest.mark.slow
def test_the_board_plays_each_pairs_decisive_items_and_listen_takes_a_pair(
        judged: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = judged["out1"]
    page = (out / "leaderboard.html").read_text(encoding="utf-8")
    section = page[page.index('id="listening"'):page.index("<h2>Failures")]
    for c in judged["first"].standings.cells:
        assert f"<h3>{c.incumbent} vs {c.challenger}</h3>" in section
    srcs = set(re.findall(r'src="(clips/[0-9a-f]{20}\.flac)"', section))
    assert srcs and all((out / s).is_file() for s in srcs)
    doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    first = doc["pairs"][0]
    assert (out / first["record"] / "run.json").is_file()
    pair = f"{first['challenger']},{first['incumbent']}"  # either order names the pair
    assert main(["listen", str(out), "--pair", pair, "--out", str(tmp_path / "t"),
                 "--items", "3"]) == 0
    assert "3 items of" in capsys.readouterr().out
    assert main(["listen", str(out), "--out", str(tmp_path / "u")]) == 2
    assert "pick a pair with --pair" in capsys.readouterr().err
