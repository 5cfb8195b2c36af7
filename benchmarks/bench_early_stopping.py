"""Judge calls with and without ``--stop-when-decided``, side by side.

Three measurements, each on a cache that already holds every clip and probe result (built
once, then copied for each mode), so the modes differ only in their judging; the judge is a
scripted, in-process one (``ScriptedBackend``) whose calls are counted:

* **blowout**: the demo's duel (espeak-flat vs espeak-follow, the acoustic probes, the first
  ``--items`` items of benchmark_v1) with a judge that prefers espeak-follow's clip
  (3 against 1, in both orders);
* **close**: espeak-follow against a copy of itself (the same clips under another system id)
  with a judge that picks a side per item and dimension by a coin its prompt tosses;
* **leaderboard**: the four offline built-ins (espeak-flat, espeak-follow, hibari,
  hibari-follow when installed) on the first ``--board-items`` items, every pair, with a
  judge that scores each system by a fixed rank plus a per-clip wobble of −1, 0 or +1.

    .venv/bin/python benchmarks/bench_early_stopping.py --items 496 --board-items 248
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import vocencebench as vb
from vocencebench.board import leaderboard
from vocencebench.board.demo import demo_systems
from vocencebench.cache import Cache
from vocencebench.compare import cached_clips
from vocencebench.judge import Judge, JudgeRequest, ScriptedBackend


def _answer(sa: int, sb: int) -> dict[str, Any]:
    win = "A" if sa > sb else "B" if sb > sa else "tie"
    return {"analysis_a": "first", "analysis_b": "second", "score_a": sa, "score_b": sb,
            "winner": win, "confidence": 0.8}


def _judge(respond: Callable[[JudgeRequest], dict[str, Any]]) -> tuple[Judge, ScriptedBackend]:
    backend = ScriptedBackend(respond)
    return Judge(backend, validate_audio=False), backend


class _Copy:
    """espeak-follow's clips under another system id (a close duel: the same audio)."""

    system_id = "copy-of-espeak-follow"

    def __init__(self) -> None:
        self.inner = vb.EspeakSystem("espeak-follow")

    def __call__(self, text: str, instruction: str) -> bytes:
        return self.inner(text, instruction)

    def synthesize_many(self, requests: Any, *, workers: int | None = None) -> Any:
        return self.inner.synthesize_many(requests, workers=workers)


def _coin() -> Callable[[JudgeRequest], dict[str, Any]]:
    seen: dict[str, int] = {}

    def respond(request: JudgeRequest) -> dict[str, Any]:
        prompt = "".join(p for p in request.parts if isinstance(p, str))
        k = seen[prompt] = seen.get(prompt, -1) + 1  # order AB first, then BA
        a_wins = hashlib.sha256(prompt.encode()).digest()[0] % 2 == 0
        first_wins = a_wins == (k % 2 == 0)
        return _answer(3, 1) if first_wins else _answer(1, 3)
    return respond


def _duel(items: list[vb.Item], a: Any, b: Any, labels: tuple[str, str], base: Path,
          respond: Callable[[], Callable[[JudgeRequest], dict[str, Any]]], tmp: Path
          ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for stop in (False, True):
        cache = tmp / f"{labels[1]}-{stop}.sqlite"
        shutil.copy(base, cache)
        judge, backend = _judge(respond())
        t0 = time.perf_counter()
        h = vb.benchmark(items, a, b, judge, labels=labels, cache=cache, progress=False,
                         canaries=False, stop_when_decided=stop)
        out[stop] = {"calls": len(backend.requests), "winner": h.decision.winner,
                     "seconds": time.perf_counter() - t0,
                     "judged": (h.metadata.get("early_stopping") or {}).get("judged")}
    return out


def _row(name: str, n: int, got: dict[str, Any]) -> str:
    full, stop = got[False], got[True]
    saved = 1 - stop["calls"] / full["calls"] if full["calls"] else 0.0
    return (f"{name:<34} {n:>5} {full['calls']:>10} {stop['calls']:>10} {100 * saved:>6.1f}% "
            f"{stop['judged']:>7} {full['winner']} / {stop['winner']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=496)
    ap.add_argument("--board-items", type=int, default=248)
    ap.add_argument("--skip-board", action="store_true")
    args = ap.parse_args()
    items = vb.load_benchmark("benchmark_v1")[: args.items]
    flat, follow = vb.EspeakSystem("espeak-flat"), vb.EspeakSystem("espeak-follow")
    with tempfile.TemporaryDirectory(prefix="bench-early-") as t:
        tmp = Path(t)
        base = tmp / "base.sqlite"
        t0 = time.perf_counter()
        for x in (flat, _Copy()):  # clips and probe results, no judge
            vb.benchmark(items, x, follow, None, cache=base, progress=False, canaries=False)
        print(f"base cache (clips, probes) of {len(items)} items: "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
        with Cache(base) as store:
            good = {c for c in cached_clips(items, follow, store) if c is not None}

        def prefers() -> Callable[[JudgeRequest], dict[str, Any]]:
            def respond(request: JudgeRequest) -> dict[str, Any]:
                fa, fb = (x.data in good for x in request.audio())
                return _answer(3 if fa else 1, 3 if fb else 1)
            return respond

        print(f"{'duel':<34} {'items':>5} {'calls full':>10} {'calls stop':>10} {'saved':>7} "
              f"{'judged':>7} verdict full / stop")
        blow = _duel(items, flat, follow, ("espeak-flat", "espeak-follow"), base, prefers, tmp)
        print(_row("blowout: espeak-flat vs follow", len(items), blow), flush=True)
        close = _duel(items, _Copy(), follow, ("follow-copy", "espeak-follow"), base, _coin,
                      tmp)
        print(_row("close: follow copy vs follow", len(items), close), flush=True)
        if not args.skip_board:
            _board(args.board_items, tmp)
    return 0


def _board(n: int, tmp: Path) -> None:
    items = vb.load_benchmark("benchmark_v1")[:n]
    systems, notes = demo_systems()
    rank = {"espeak-flat": 0, "hibari": 1, "espeak-follow": 2, "hibari-follow": 3}
    base = tmp / "board.sqlite"
    t0 = time.perf_counter()
    leaderboard(items, systems, None, cache=base, canaries=False)
    print(f"\nboard base cache ({', '.join(systems)}; {n} items): "
          f"{time.perf_counter() - t0:.0f} s {'; '.join(notes)}", file=sys.stderr)
    with Cache(base) as store:
        owner = {c: s for s in systems for c in cached_clips(items, systems[s], store)
                 if c is not None}

    def score(clip: bytes) -> int:
        wobble = hashlib.sha256(clip).digest()[0] % 3 - 1
        return max(0, min(3, rank[owner[clip]] + wobble))

    def respond(request: JudgeRequest) -> dict[str, Any]:
        a, b = (x.data for x in request.audio())
        return _answer(score(a), score(b))

    got: dict[bool, Any] = {}
    for stop in (False, True):
        cache = tmp / f"board-{stop}.sqlite"
        shutil.copy(base, cache)
        judge, backend = _judge(respond)
        lb = leaderboard(items, systems, judge, cache=cache, canaries=False,
                         stop_when_decided=stop)
        got[stop] = (len(backend.requests), lb)
    full, stop = got[False][1], got[True][1]
    print(f"\nleaderboard: {len(systems)} systems, {len(full.runs)} pairs, {n} items")
    print(f"{'pair':<34} {'calls full':>10} {'calls stop':>10} {'judged':>7} winner full / stop")
    for (x, y), h_full in full.runs.items():
        h_stop = stop.runs[(x, y)]
        es = h_stop.metadata.get("early_stopping") or {}
        print(f"{x + ' vs ' + y:<34} {4 * es.get('needing_judge', 0):>10} "
              f"{4 * es.get('judged', 0):>10} {es.get('judged', 0):>7} "
              f"{h_full.decision.winner} / {h_stop.decision.winner}")
    cf, cs = got[False][0], got[True][0]
    print(f"{'all pairs':<34} {cf:>10} {cs:>10}   saved {100 * (1 - cs / cf):.1f}%")


if __name__ == "__main__":
    raise SystemExit(main())
