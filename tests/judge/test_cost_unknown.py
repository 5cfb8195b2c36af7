"""An unpriced judge model end to end (issue 11, item 5): the run finishes and is decided, its
cost is *unknown* (None, never a crash after paying and never a made-up $0), a WARNING says
so once, and the saved run.json records the cost as null.

The judge is :meth:`Judge.gemini` on a model absent from the price table, pointed at a fake
Gemini server on 127.0.0.1; the systems are sine tones and the probe a one-trait fake, so the
whole run is a fraction of a second of work.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import vocencebench as vb
from judge_fakes import KEY, Call, FakeJudgeServer, PitchProbe, Reply, Tone, answer
from vocencebench.judge import PRICES, Judge
from vocencebench.schema import INCOMPLETE

UNPRICED = "gemini-2.5-flash-lite"
ITEMS = vb.load_benchmark("benchmark_v1")[:2]


def _prefers_first(call: Call) -> Reply:
    return Reply(json.dumps(answer("A", 3, 2)), usage={"prompt": 1200, "output": 80})


def test_an_unpriced_judge_model_finishes_with_cost_unknown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert UNPRICED not in PRICES  # the premise: this model has no built-in price
    caplog.set_level(logging.WARNING, logger="vocencebench")
    with FakeJudgeServer("gemini", _prefers_first) as srv:
        judge = Judge.gemini(UNPRICED, KEY, base_url=srv.url, sleep=lambda s: None)
        h = vb.benchmark(ITEMS, Tone(200.0, "a"), Tone(260.0, "b"), judge,
                         probes=vb.ProbeSet([PitchProbe()], check_speech=False),
                         labels=("a", "b"), workers=1, progress=False, canaries=False,
                         judge_concurrency=1)
        calls = len(srv.calls)
        judge.close()
    # Every call was made and answered; the run is complete and decided.
    assert calls > 0 and all(c.path == f"/v1beta/models/{UNPRICED}:generateContent"
                             for c in srv.calls)
    assert h.complete and h.decision.winner != INCOMPLETE
    assert all(p.a.S is not None and p.b.S is not None for p in h.pairs)
    assert h.metadata["judge_usage"]["calls"] == calls
    assert h.metadata["judge_cost_usd"] is None  # unknown, not $0
    assert "judge cost:   unknown (no price for this model" in h.summary()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [w for w in warnings if "no price" in w and UNPRICED in w], warnings

    out = h.save(tmp_path / "run")
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert "judge_cost_usd" in run["metadata"] and run["metadata"]["judge_cost_usd"] is None
    assert run["metadata"]["judge_model"] == UNPRICED
    assert run["decision"]["winner"] == h.decision.winner
