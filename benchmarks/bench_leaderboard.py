"""Judge calls and wall time of a 4-system leaderboard: all pairs vs anchor mode.

A real OpenAI-compatible judge server on 127.0.0.1 (``tests/judge_fakes.py``) answers every
call after a fixed latency. Four eSpeak-based systems are synthesised and analysed once into a
base cache; each mode then runs on its own copy of that cache (clips and analyses cached, no
verdict), so the difference between the modes is the judging. Prints both side by side.

    .venv/bin/python benchmarks/bench_leaderboard.py --items 20 --latency 0.05 --concurrency 4
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import vocencebench as vb
from board_fakes import CountingEspeak
from judge_fakes import Call, FakeJudgeServer, Reply
from vocencebench.board import leaderboard
from vocencebench.cache import Cache


def _systems() -> dict[str, Any]:
    return {"flat": CountingEspeak("flat", "espeak-flat"),
            "follow": CountingEspeak("follow"),
            "follow-fast": CountingEspeak("follow-fast", rate=60),
            "follow-slow": CountingEspeak("follow-slow", rate=-40)}


def _responder(latency: float) -> Any:
    def respond(call: Call) -> Reply:
        a, b = call.audio[0], call.audio[1]
        sa = hashlib.sha256(a + b).digest()[0] % 4
        sb = hashlib.sha256(b + a).digest()[0] % 4
        win = "A" if sa > sb else "B" if sb > sa else "tie"
        ans = {"analysis_a": "x", "analysis_b": "y", "score_a": sa, "score_b": sb,
               "winner": win, "confidence": 0.8}
        return Reply(json.dumps(ans), delay_s=latency)

    return respond


def _mode(items: list[vb.Item], base: Path, tmp: Path, anchor: str | None, latency: float,
          concurrency: int) -> dict[str, Any]:
    cache = tmp / f"cache-{anchor or 'all'}.sqlite"
    shutil.copyfile(base, cache)
    with FakeJudgeServer("openai", _responder(latency)) as server:
        judge = vb.Judge.local(server.url, "fake-omni", max_retries=0)
        t0 = time.perf_counter()
        lb = leaderboard(items, _systems(), judge, anchor=anchor, cache=Cache(cache),
                         executor="serial", judge_concurrency=concurrency)
        wall = time.perf_counter() - t0
        calls = len(server.calls)
        judge.close()
    judge_s = sum(h.metadata["timings"]["judge_s"] for h in lb.runs.values())
    return {"mode": "anchor" if anchor else "all pairs", "pairs": len(lb.runs),
            "cells": sum(1 for c in lb.standings.cells if c.decided),
            "planned": lb.plan.total_calls, "calls": calls, "wall_s": wall, "judge_s": judge_s,
            "tiers": [list(t.systems) for t in lb.standings.tiers]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--items", type=int, default=20)
    ap.add_argument("--latency", type=float, default=0.05, help="seconds per judge answer")
    ap.add_argument("--concurrency", type=int, default=4, help="judge calls in flight")
    args = ap.parse_args()
    items = vb.load_benchmark("benchmark_v1")[: args.items]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        base = tmp / "base.sqlite"
        t0 = time.perf_counter()
        leaderboard(items, _systems(), None, cache=base, executor="serial")
        warm = time.perf_counter() - t0
        rows = [_mode(items, base, tmp, None, args.latency, args.concurrency),
                _mode(items, base, tmp, "follow", args.latency, args.concurrency)]
    print(f"4 systems, {len(items)} items, judge latency {args.latency * 1000:.0f} ms, "
          f"concurrency {args.concurrency}, 2 dimensions × 2 orders per pair of clips")
    print(f"clips and analyses (once, shared by both modes): {warm:.2f} s")
    print(f"{'mode':<12}{'pairs':>6}{'cells':>7}{'planned':>9}{'calls':>7}{'judge s':>9}"
          f"{'wall s':>8}")
    for r in rows:
        print(f"{r['mode']:<12}{r['pairs']:>6}{r['cells']:>7}{r['planned']:>9}{r['calls']:>7}"
              f"{r['judge_s']:>9.2f}{r['wall_s']:>8.2f}")
    a, b = rows
    print(f"anchor vs all pairs: {b['calls'] / a['calls']:.2f}× the calls, "
          f"{b['wall_s'] / a['wall_s']:.2f}× the wall time")
    for r in rows:
        print(f"tiers ({r['mode']}): {r['tiers']}")


if __name__ == "__main__":
    main()
