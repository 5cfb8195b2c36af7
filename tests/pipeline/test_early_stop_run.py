"""``stop_when_decided`` through the real pipeline (benchmark and leaderboard): the verdict is
the full run's, fewer calls are made, the bytes do not depend on thread timing, a resumed run
pays nothing twice, the published rows recompute the decision — and rows that do not prove a
stopped-early verdict are refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vocencebench as vb
from judge_fakes import Tone, answer
from vocencebench.board import leaderboard, verify
from vocencebench.errors import JudgeError, ScoresError
from vocencebench.judge import Judge, JudgeRequest, ScriptedBackend
from vocencebench.probes import ProbeSet
from vocencebench.result import load_run
from vocencebench.schema import ProbeResult
from vocencebench.scores import decide_scores

ITEMS = vb.load_benchmark("benchmark_v1")[:80]
LOW, HIGH = Tone(220.0, "low"), Tone(330.0, "high")


class ToneProbe:
    """Three probe traits that the higher tone realises and the lower one mostly misses (as
    the demo's probes tell espeak-follow from espeak-flat): d by the zero-crossing rate."""

    name, version, traits = "tone-probe", "1", ("pitch", "pace", "loudness")

    def measure(self, audio: Any, item: vb.Item) -> dict[str, ProbeResult]:
        x = np.asarray(audio.samples)
        rate = float(np.count_nonzero(np.diff(np.signbit(x)))) / (2 * audio.duration)
        d = 1.0 if rate > 300 else 0.25
        return {t: ProbeResult(t, rate, "Hz", "x", d, "tone-probe@1") for t in self.traits}


PROBES = ProbeSet([ToneProbe()], check_speech=False)


def _prefers(good: set[bytes]) -> Any:
    def respond(request: JudgeRequest) -> dict[str, Any]:
        fa, fb = (x.data in good for x in request.audio())
        sa, sb = (3 if fa else 1), (3 if fb else 1)
        return answer("A" if sa > sb else "B" if sb > sa else "tie", sa, sb)
    return respond


def _duel(stop: bool, *, cache: Path | None = None, concurrency: int = 4
          ) -> tuple[vb.Head2Head, ScriptedBackend]:
    good = {HIGH(it.text, it.instruction) for it in ITEMS}
    backend = ScriptedBackend(_prefers(good))
    h = vb.benchmark(ITEMS, LOW, HIGH, Judge(backend, validate_audio=False),
                     probes=PROBES, labels=("low", "high"), cache=cache,
                     progress=False, canaries=False, judge_concurrency=concurrency,
                     stop_when_decided=stop)
    return h, backend


@pytest.mark.slow
def test_a_stopped_run_names_the_full_winner_with_fewer_calls_and_fixed_bytes(
        tmp_path: Path) -> None:
    full, fb = _duel(False)
    early, eb = _duel(True, concurrency=4)
    again, _ = _duel(True, concurrency=1)  # other thread timing, the same judged items
    assert early.decision.winner == full.decision.winner == "high"
    assert len(eb.requests) < len(fb.requests) == len(ITEMS) * 4
    rec = early.metadata["early_stopping"]
    assert rec["stopped_early"] and rec["judged"] * 4 == len(eb.requests)
    assert rec["judged"] % 16 == 0 and rec["evaluations"][-1]["certain"] == "high"
    # Judged items are a prefix of the seeded order, not the corpus order.
    from vocencebench.early_stopping import judge_order

    judged = [k for k, p in enumerate(early.pairs) if not p.a.unjudged]
    assert judged == sorted(judge_order(len(ITEMS))[: rec["judged"]])
    assert judged != list(range(rec["judged"]))
    early.save(tmp_path / "a")
    again.save(tmp_path / "b")
    # The same bytes (timings in the reports' metadata aside).
    assert (tmp_path / "a" / "scores.jsonl").read_bytes() == \
        (tmp_path / "b" / "scores.jsonl").read_bytes()
    assert early.decision == again.decision and early.pairs == again.pairs
    assert decide_scores(tmp_path / "a" / "scores.jsonl") == early.decision
    back = load_run(tmp_path / "a")  # the unjudged samples and the proof survive a reload
    assert back.decision == early.decision and tuple(back.pairs) == tuple(early.pairs)
    assert "EARLY STOPPING: judged" in early.summary()
    assert "over every outcome of the" in early.summary()
    # The composite row shows interval ends, and says so (a plain "composite S" read as
    # the means, with the most flattering gap for the winner).
    label = "composite S (stopped early: interval ends, worst for the verdict)"
    for name in ("report.md", "report.html"):
        assert label in (tmp_path / "a" / name).read_text(encoding="utf-8"), name
    assert label in early.summary()
    assert "composite S (stopped" not in full.summary()


@pytest.mark.slow
def test_a_resumed_stopped_run_pays_nothing_twice(tmp_path: Path) -> None:
    first, _ = _duel(True, cache=tmp_path / "c.sqlite")
    second, b2 = _duel(True, cache=tmp_path / "c.sqlite")
    assert len(b2.requests) == 0 and second.decision == first.decision


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.slow
def test_decide_refuses_rows_that_do_not_prove_the_claim(tmp_path: Path) -> None:
    early, _ = _duel(True)
    early.save(tmp_path / "run")
    rows = _rows(tmp_path / "run" / "scores.jsonl")
    # Claim more unjudged items than the proof allows: turn judged rows into unjudged ones.
    weak = []
    for r in rows:
        if not r.get("unjudged"):
            r = dict(r, S=None, d={k: v for k, v in r["d"].items()
                                   if k not in ("tone", "naturalness")},
                     unjudged=["tone", "naturalness"])
        weak.append(r)
    with pytest.raises(ScoresError, match="do not support a stopped-early verdict"):
        decide_scores(_write(tmp_path / "weak.jsonl", weak))
    u = next(r for r in rows if r.get("unjudged"))
    for bad, why in ((dict(u, S=0.5), "has S null"),
                     (dict(u, d={**u["d"], "tone": 1.0}), "both in d and unjudged"),
                     (dict(u, unjudged=[]), "list of distinct dimension names"),
                     (dict(u, gate=2), "gate must be")):
        bad_rows = [bad if r is u else r for r in rows]
        with pytest.raises(ScoresError, match=why):
            decide_scores(_write(tmp_path / "bad.jsonl", bad_rows))
    # An old file (no unjudged rows) decides as it always did.
    assert decide_scores(tmp_path / "run" / "scores.jsonl").early_stop is not None


@pytest.mark.slow
def test_a_stopped_leaderboard_keeps_every_cell_and_verifies(tmp_path: Path) -> None:
    systems = {"low": LOW, "mid": Tone(275.0, "mid"), "high": HIGH}
    rank = {"low": 0, "mid": 1, "high": 2}
    clips = {sys(it.text, it.instruction): rank[name] for name, sys in systems.items()
             for it in ITEMS}

    def respond(request: JudgeRequest) -> dict[str, Any]:
        ra, rb = (clips[x.data] for x in request.audio())
        sa, sb = ra + 1, rb + 1
        return answer("A" if sa > sb else "B" if sb > sa else "tie", sa, sb)

    out: dict[bool, Any] = {}
    calls: dict[bool, int] = {}
    for stop in (False, True):
        backend = ScriptedBackend(respond)
        out[stop] = leaderboard(ITEMS, systems, Judge(backend, validate_audio=False),
                                probes=PROBES, canaries=False,
                                stop_when_decided=stop)
        calls[stop] = len(backend.requests)
    assert [c.winner for c in out[True].standings.cells] == \
        [c.winner for c in out[False].standings.cells]
    assert calls[True] < calls[False]
    assert out[True].standings.tiers == out[False].standings.tiers
    assert set(out[True].metadata["early_stopping"]) == {"low vs mid", "low vs high",
                                                          "mid vs high"}
    path = out[True].save(tmp_path / "board")
    assert verify(path) == []
    # The judge's behaviour over every pair, in every leaderboard file.
    doc = json.loads((path / "leaderboard.json").read_text(encoding="utf-8"))
    rows = doc["judge_behaviour"]["dimensions"]
    assert rows and all(r["swap_disagreement"] == 0.0 for r in rows)
    assert {r["system"] for r in doc["judge_behaviour"]["systems"]} == set(systems)
    assert "judge behaviour" in out[True].summary()
    assert "## The judge" in (path / "leaderboard.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_fatal_judge_error_mid_schedule_ends_incomplete() -> None:
    good = {HIGH(it.text, it.instruction) for it in ITEMS}
    ok = _prefers(good)
    calls = {"n": 0}

    def respond(request: JudgeRequest) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] > 40:  # the key is revoked during the third batch
            raise JudgeError("401: key revoked", fatal=True)
        return ok(request)  # type: ignore[no-any-return]

    backend = ScriptedBackend(respond)
    h = vb.benchmark(ITEMS, LOW, HIGH, Judge(backend, validate_audio=False), probes=PROBES,
                     labels=("low", "high"), progress=False, canaries=False,
                     judge_concurrency=1, stop_when_decided=True)
    assert h.decision.winner == "incomplete"
    assert len(backend.requests) <= 41 + 4  # nothing asked after the fatal error
    missing = h.incomplete_items
    assert missing and all(why.startswith("judge: ") for why in missing.values())
    # Parked pairs keep their analyses when the run stops.
    parked = [p for p in h.pairs if p.incomplete and p.analysis_a.probes]
    assert parked
    # The record and the status line say judging was cut short, not that every item was
    # judged ("every item that needed the judge was judged", "all 16 items ... were judged").
    rec = h.metadata["early_stopping"]
    answered = sum(1 for p in h.pairs if p.verdicts and p.incomplete is None)
    assert rec["halted"].startswith("judge: ") and rec["unjudged"] > 0
    assert rec["answered"] == answered < rec["judged"] < rec["needing_judge"]
    assert rec["why"].startswith("judging stopped before the verdict was certain: judge: ")
    assert f"of the {rec['needing_judge']} items that needed the judge were never asked" in \
        rec["why"]
    status = "\n".join(h.status())
    assert "EARLY STOPPING cut short: judging stopped on an error" in status
    assert "were judged" not in status


@pytest.mark.slow
def test_a_stopped_run_says_why_it_has_no_robustness_section(tmp_path: Path) -> None:
    """The robustness variants re-decide on every S; a run that stopped judging early knows
    some S only as intervals, so the section says so (in the run, its reports and in
    ``decide --robustness`` from its scores) instead of computing on made-up composites."""
    from vocencebench.robustness import robustness_of_file

    h, _ = _duel(True)
    assert h.decision.early_stop is not None
    rob = h.robustness
    assert rob.robust is None and "the judge stopped early" in rob.summary
    assert "rerun without --stop-when-decided" in rob.summary
    out = h.save(tmp_path / "run")
    run = json.loads((out / "run.json").read_text())
    assert run["robustness"] == rob.to_dict()
    assert robustness_of_file(out / "scores.jsonl").to_dict() == rob.to_dict()
    assert "the judge stopped early" in (out / "report.md").read_text()


def test_report_recomputes_a_stopped_run_to_its_own_decision(tmp_path: Path) -> None:
    """``vocencebench report`` never copies a verdict (issue 25): it recomputes it from the
    per-sample scores. A stopped run's unjudged samples are intervals, and the recomputation
    gives back exactly the decision the run published (its early-stopping proof included)."""
    from vocencebench.result import recompute_decision

    h, _ = _duel(True)
    assert h.decision.early_stop is not None
    out = h.save(tmp_path / "run")
    back = load_run(out)
    assert recompute_decision(back, source=str(out / "run.json")) == h.decision
