"""``vocencebench run`` end to end against broken instruments: an INCOMPLETE run names no
winner, exits 3, says what failed in every output, and rerunning the same command against a
working judge resumes it, paying only for the judge calls that are missing.

Re-pointing the judge is the same command for the cache: a verdict's key holds the judge's
*model* name, the prompt and the clips, never its URL or key (``verdict_cache_key``), so a
local judge moved to another port resumes from the cached answers. The judge is a fake
OpenAI-compatible server on 127.0.0.1; the systems are eSpeak; ``--limit 3`` keeps each
command a few CPU-seconds.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import vocencebench as vb
from judge_fakes import Call, FakeJudgeServer, Reply, answer
from vocencebench.cli import EXIT_INCOMPLETE

N_ITEMS = 3
#: The judge's calls for one item: two judged dimensions (tone, naturalness), both orders.
CALLS_PER_ITEM = 2 * 2
WINNER = re.compile(r"^DECISION: (espeak-flat|espeak-follow) wins$", re.MULTILINE)


def _dead_port() -> int:
    with socket.socket() as s:  # bound and closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(args: list[str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vocencebench", *args], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ), check=False)


def _espeak_run(out: Path, judge_url: str, *extra: str) -> list[str]:
    return ["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
            "--judge", f"local:{judge_url}#omni", "--limit", str(N_ITEMS), "--workers", "1",
            "--out", str(out), "--quiet", *extra]


def _answers(call: Call) -> Reply:
    return Reply(json.dumps(answer("A", 3, 2)))


@pytest.mark.slow
@pytest.mark.parametrize("canaries", [True, False])
def test_a_judge_on_a_dead_port_ends_incomplete_quickly_and_names_no_winner(
    tmp_path: Path, canaries: bool
) -> None:
    out = tmp_path / "run"
    skip = [] if canaries else ["--skip-canaries"]
    args = _espeak_run(out, f"http://127.0.0.1:{_dead_port()}", *skip)
    t0 = time.monotonic()
    res = _run(args)
    elapsed = time.monotonic() - t0
    assert res.returncode == EXIT_INCOMPLETE, res.stderr[-2000:]
    # The bound is 30 s for the whole command (interpreter, corpus, 6 eSpeak clips);
    # measured at about 5 s here. A never-answering service fails fast, it is not retried.
    assert elapsed < 30, elapsed
    assert "DECISION: INCOMPLETE — no winner" in res.stdout
    assert " wins" not in res.stdout.split("DECISION:")[1]
    assert "INCOMPLETE: no winner is named" in res.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["decision"]["winner"] == "incomplete"
    rows = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
    # With canaries the judge fails its known-answer checks before any item is synthesised;
    # without, the first judge call fails fatally and every unfinished item stops.
    prefix = "canaries: " if canaries else "judge: "
    assert rows and all(r["S"] is None and r["incomplete"].startswith(prefix) for r in rows)
    assert "cannot be reached" in rows[0]["incomplete"] or "connect" in rows[0]["incomplete"]
    md = (out / "report.md").read_text()
    assert "INCOMPLETE: 3 of 3 items could not be scored" in md and "## Failures" in md
    # The published scores cannot be decided as they are.
    assert _run(["decide", str(out / "scores.jsonl")]).returncode == 2
    if canaries:
        return  # resuming needs a judge that passes the canaries; shown without them below

    # The same command, the judge now up on another port: the run resumes from its cache
    # (the eSpeak clips and probe results are not redone) and is decided. No call succeeded
    # the first time, so every judge call of the three items is the missing one, once.
    with FakeJudgeServer("openai", _answers) as judge:
        again = _run(_espeak_run(out, judge.url, *skip))
        calls = len(judge.calls)
    assert again.returncode == 0, again.stderr[-2000:]
    assert WINNER.search(again.stdout), again.stdout[-1500:]
    assert calls == N_ITEMS * CALLS_PER_ITEM
    run = json.loads((out / "run.json").read_text())
    assert run["decision"]["winner"] in ("espeak-flat", "espeak-follow")
    rows = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * N_ITEMS  # one row per system and item
    assert all(r["S"] is not None and not r.get("incomplete") for r in rows)


@pytest.mark.slow
def test_allow_incomplete_decides_on_the_complete_items_and_a_rerun_fills_the_gap(
    tmp_path: Path
) -> None:
    out = tmp_path / "run"
    last = vb.load_benchmark("benchmark_v1")[N_ITEMS - 1]
    broken = last.text  # the judge fails on the last item's script, answers the others

    def overloaded_on_one_item(call: Call) -> Reply:
        if any(broken in t for t in call.texts):
            return Reply(status=503, body={"error": {"message": "overloaded"}})
        return _answers(call)

    with FakeJudgeServer("openai", overloaded_on_one_item) as judge:
        # --judge-retries 0: the 503 is final at once (no backoff waits in a test).
        args = _espeak_run(out, judge.url, "--skip-canaries", "--judge-retries", "0",
                           "--allow-incomplete")
        res = _run(args)
        first_calls = len(judge.calls)
        assert res.returncode == 0, res.stderr[-2000:]
        assert WINNER.search(res.stdout), res.stdout[-1500:]
        reason = res.stdout.split("DECISION:")[1]
        assert f"decided on {N_ITEMS - 1} of {N_ITEMS} items; 1 incomplete: judge: 1" in reason
        assert "503" in reason
        run = json.loads((out / "run.json").read_text())
        assert run["decision"]["n"] == N_ITEMS - 1
        assert run["decision"]["reason"].startswith(f"decided on {N_ITEMS - 1} of {N_ITEMS}")
        rows = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
        assert {r["item"] for r in rows if r.get("incomplete")} == {last.id}
        assert all(r["S"] is not None for r in rows if r["item"] != last.id)

        # The same command with the judge healthy: only the incomplete item's calls are made
        # (the complete items' verdicts come from the cache), and all items decide.
        judge.respond = _answers
        again = _run(args)
        resumed = judge.calls[first_calls:]
    assert again.returncode == 0, again.stderr[-2000:]
    assert len(resumed) == CALLS_PER_ITEM
    assert all(any(broken in t for t in c.texts) for c in resumed)
    assert WINNER.search(again.stdout)
    assert "decided on" not in again.stdout.split("DECISION:")[1]
    assert json.loads((out / "run.json").read_text())["decision"]["n"] == N_ITEMS
