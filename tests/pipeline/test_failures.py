"""Failure semantics of a run, as a hostile or unlucky user meets them.

A system's failure scores that side S = 0; an instrument's failure (judge, probe, transcriber,
a speech service after its retries) makes the item INCOMPLETE: no winner is named, nothing is
cached as done, and rerunning the same command retries exactly what is missing. Fast fakes
(tone clips, a one-trait probe) keep every test well under a second of work.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import vocencebench as vb
from judge_fakes import Call, FakeJudgeServer, PitchProbe, Reply, Tone, answer
from vocencebench.cache import Cache, clip_key, failed_clip_key
from vocencebench.errors import ConfigError, JudgeError, ProbeError, ServiceError
from vocencebench.judge import Judge, JudgeReply, JudgeRequest, OpenAIChatBackend
from vocencebench.schema import INCOMPLETE, Item, ProbeResult

ITEMS = vb.load_benchmark("benchmark_v1")[:6]
N_JOBS = 2 * len(ITEMS)  # tone + naturalness per pair
N_CALLS = 2 * N_JOBS  # both orders per job


class CrashingProbe(PitchProbe):
    name = "crashing-pitch"

    def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
        raise ProbeError("the classifier returned NaN")


def _probes() -> vb.ProbeSet:
    # The systems here render tones: the real speech check would (rightly) hear no speech.
    return vb.ProbeSet([PitchProbe()], check_speech=False)


def _systems() -> tuple[Tone, Tone]:
    return Tone(200.0, "a"), Tone(260.0, "b")


def _run(*, judge: Any = None, probes: Any = None, cache: Any = None, systems: Any = None,
         **kw: Any) -> vb.Head2Head:
    a, b = systems or _systems()
    kw.setdefault("judge_concurrency", 1)
    kw.setdefault("canaries", False)  # the instruments here are fakes; canaries tested below
    return vb.benchmark(ITEMS, a, b, judge, probes=probes or _probes(), labels=("a", "b"),
                        cache=cache, workers=1, progress=False, **kw)


def _judge(url: str) -> Judge:
    return Judge(OpenAIChatBackend(url, "fake-omni", max_retries=0, backoff_s=0.0))


def _tie(call: Call) -> Reply:
    return Reply(json.dumps(answer("tie", 2, 2)))


# --------------------------------------------------------------------------- the judge


def test_judge_503_forever_is_incomplete_and_a_rerun_resumes(tmp_path: Path) -> None:
    ok_first = 3

    def flaky(call: Call) -> Reply:
        return _tie(call) if call.index < ok_first else Reply(status=503, body={"error": "down"})

    cache = tmp_path / "cache.sqlite"
    with FakeJudgeServer("openai", flaky) as js:
        h = _run(judge=_judge(js.url), cache=cache)
        assert len(js.calls) > ok_first
    assert h.decision.winner == INCOMPLETE and not h.complete
    assert len(h.incomplete_items) == len(ITEMS)
    assert all(r.startswith("judge: ") and "503" in r for r in h.incomplete_items.values())
    assert all(p.a.S is None and p.b.S is None for p in h.pairs)
    assert "no winner" in h.decision.reason and "Rerun" in h.decision.reason
    rows = [json.loads(line) for line in _save_scores(h, tmp_path / "run1")]
    assert all(r["S"] is None and r["incomplete"].startswith("judge: ") for r in rows)

    with FakeJudgeServer("openai", _tie) as js2:
        again = _run(judge=_judge(js2.url), cache=cache)
        # The three calls answered the first time are not paid for again.
        assert len(js2.calls) == N_CALLS - ok_first
    assert again.complete and again.decision.winner in ("a", "b", "tie")
    assert all(p.a.S is not None for p in again.pairs)


def _save_scores(h: vb.Head2Head, out: Path) -> list[str]:
    h.save(out)
    return (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()


class _Refusing:
    """A judge backend that answers like a server rejecting the key (fatal: retrying is
    pointless), counting the calls it receives."""

    model = "refusing"

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def complete(self, request: JudgeRequest) -> JudgeReply:
        with self._lock:
            self.calls += 1
        raise JudgeError("openai judge (refusing): HTTP 401: invalid key — check the API key",
                         fatal=True)


def test_a_fatal_judge_error_stops_the_run_early(tmp_path: Path) -> None:
    backend = _Refusing()
    judge = Judge(backend)
    h = _run(judge=judge, cache=tmp_path / "c.sqlite", judge_concurrency=2)
    # Far fewer calls than the run needs: the first 401 stopped it (in flight: ≤ 2).
    assert 1 <= backend.calls <= 2 < N_CALLS
    assert h.decision.winner == INCOMPLETE
    assert len(h.incomplete_items) == len(ITEMS)
    assert all("401" in r and r.startswith("judge: ") for r in h.incomplete_items.values())
    assert h.metadata["incomplete"]["stopped"].startswith("judge: ")
    # Finished work stays cached: clips and analyses are not redone on the next run.
    with Cache(tmp_path / "c.sqlite") as c:
        assert c.count("clips") == 2 * len(ITEMS)


def test_a_judge_object_can_serve_two_runs(tmp_path: Path) -> None:
    with FakeJudgeServer("openai", _tie) as js:
        judge = _judge(js.url)
        first = _run(judge=judge, cache=tmp_path / "one.sqlite")
        second = _run(judge=judge, cache=tmp_path / "two.sqlite")
        assert len(js.calls) == 2 * N_CALLS  # the second cache starts empty
    assert judge.cache is None  # the caller's judge was never tied to a run's cache
    assert [s.to_dict() for s in first.samples] == [s.to_dict() for s in second.samples]


# -------------------------------------------------------------------------- the systems


def test_a_raising_system_scores_zero_and_a_failing_service_is_incomplete(tmp_path: Path
                                                                          ) -> None:
    a, b = _systems()

    def down(text: str, instruction: str) -> bytes:
        if text == ITEMS[1].text:
            raise RuntimeError("CUDA out of memory")
        if text == ITEMS[2].text:
            raise ServiceError("openai-speech: HTTP 503 after 5 attempts", status=503, calls=5)
        return b(text, instruction)

    down.system_id = "tone:b"  # type: ignore[attr-defined]
    h = _run(systems=(a, down), cache=tmp_path / "c.sqlite")
    p1, p2 = h.pairs[1], h.pairs[2]
    assert p1.incomplete is None and p1.b.S == 0.0
    assert (p1.b.failure or "").startswith("synthesis: ") and "CUDA" in (p1.b.failure or "")
    assert p1.a.S is not None and p1.a.S > 0  # the other side is scored on its own
    assert p2.incomplete is not None and p2.incomplete.startswith("synthesis-service: ")
    assert p2.b.S is None  # not the system's fault: never scored 0
    assert h.decision.winner == INCOMPLETE and list(h.incomplete_items) == [ITEMS[2].id]

    # A rerun retries only what failed: the raising item and the service's item.
    retried: list[str] = []

    def recovered(text: str, instruction: str) -> bytes:
        retried.append(text)
        return b(text, instruction)

    recovered.system_id = down.system_id  # type: ignore[attr-defined]
    again = _run(systems=(a, recovered), cache=tmp_path / "c.sqlite")
    assert retried == [ITEMS[1].text, ITEMS[2].text] and again.complete
    ok = _run(systems=(a, b), cache=tmp_path / "fresh.sqlite")
    assert [s.to_dict() for s in again.samples] == [s.to_dict() for s in ok.samples]


def test_undecodable_audio_is_not_cached_and_a_recovered_system_is_scored(tmp_path: Path
                                                                          ) -> None:
    a, b = _systems()
    broken = {ITEMS[0].text, ITEMS[3].text}

    def garbling(text: str, instruction: str) -> bytes:
        return b"RIFF\x00\x00\x00\x00WAVEnot audio" if text in broken else b(text, instruction)

    garbling.system_id = "tone:b"  # type: ignore[attr-defined]  # the same system, recovered
    cache = tmp_path / "c.sqlite"
    h = _run(systems=(a, garbling), cache=cache)
    assert [p.b.S == 0.0 and (p.b.failure or "").startswith("audio: ")
            for p in h.pairs] == [True, False, False, True, False, False]
    assert h.complete  # a system's bad audio decides (S = 0); it is not incomplete
    with Cache(cache) as c:
        # The bad clips are not kept where a run reads clips (so the next run asks again),
        # only aside, for the report's listening section.
        for it in ITEMS:
            bad = it.text in broken
            assert (c.get_bytes("clips", clip_key("tone:b", it)) is None) == bad
            assert (c.get_bytes("clips", failed_clip_key("tone:b", it)) is not None) == bad
        assert c.count("clips") == 2 * len(ITEMS)

    again = _run(systems=(a, b), cache=cache)
    assert all(p.b.failure is None and p.b.S is not None for p in again.pairs)
    fresh = _run(systems=(a, b), cache=tmp_path / "fresh.sqlite")
    assert [s.to_dict() for s in again.samples] == [s.to_dict() for s in fresh.samples]


def test_a_misspelt_hook_is_refused_before_any_work() -> None:
    a, b = _systems()
    b.cache_clip = False  # type: ignore[attr-defined]  # meant: cache_clips
    with pytest.raises(ConfigError, match=r"'cache_clip'.*'cache_clips'"):
        _run(systems=(a, b))
    a2, b2 = _systems()
    b2.cache_clips = "no"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="cache_clips must be a bool"):
        _run(systems=(a2, b2))


def test_concurrent_requests_and_order_independent_results() -> None:
    a, b = _systems()
    gate = threading.Barrier(4, timeout=30)
    seen = {"calls": 0, "max": 0, "now": 0}
    lock = threading.Lock()

    def parallel(text: str, instruction: str) -> bytes:
        with lock:
            seen["calls"] += 1
            first_four = seen["calls"] <= 4
            seen["now"] += 1
            seen["max"] = max(seen["max"], seen["now"])
        try:
            if first_four:
                gate.wait()  # the first four calls meet here: they must be in flight at once
        finally:
            with lock:
                seen["now"] -= 1
        return b(text, instruction)

    parallel.system_id = "tone:b"  # type: ignore[attr-defined]
    h = _run(systems=(a, parallel), concurrency=(1, 4))
    assert seen["max"] == 4 and not gate.broken
    serial = _run(systems=(a, b))
    assert [s.to_dict() for s in h.samples] == [s.to_dict() for s in serial.samples]


# --------------------------------------------------------------------------- the probes


def test_an_item_whose_probes_all_crash_is_incomplete_never_one() -> None:
    h = _run(probes=vb.ProbeSet([CrashingProbe()], check_speech=False))
    assert h.decision.winner == INCOMPLETE
    assert all(p.a.S is None and p.b.S is None for p in h.pairs)
    assert all(r.startswith("probes: ") and "NaN" in r for r in h.incomplete_items.values())


def test_a_run_that_scores_no_dimension_is_incomplete_never_one() -> None:
    a, b = _systems()
    h = vb.benchmark(ITEMS[:2], a, b, probes=None, labels=("a", "b"), workers=1,
                     progress=False, canaries=False)
    assert h.decision.winner == INCOMPLETE
    assert all("no dimension was scored" in r for r in h.incomplete_items.values())


def test_allow_incomplete_decides_on_the_complete_items(tmp_path: Path) -> None:
    bad = ITEMS[4].text

    class HalfBroken(PitchProbe):
        def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
            if item.text == bad:
                raise ProbeError("model file missing")
            return super().measure(audio, item)

    strict = _run(probes=vb.ProbeSet([HalfBroken()], check_speech=False))
    lenient = _run(probes=vb.ProbeSet([HalfBroken()], check_speech=False),
                   allow_incomplete=True)
    assert strict.decision.winner == INCOMPLETE
    assert lenient.decision.winner != INCOMPLETE
    assert lenient.decision.n == len(ITEMS) - 1 == strict.decision.n
    assert lenient.decision.reason.startswith(f"decided on {len(ITEMS) - 1} of {len(ITEMS)} "
                                              "items; 1 incomplete: probes: 1")
    assert lenient.decision.lcb == strict.decision.lcb  # the same numbers, only named


def test_a_clip_without_speech_gets_unmeasurable_batched_traits_without_the_model() -> None:
    from types import SimpleNamespace

    from dask_fakes import BatchedLoudness

    class Counting(BatchedLoudness):
        seen = 0

        def measure_batch(self, audios: Any, items: Any) -> Any:
            Counting.seen += len(audios)
            return super().measure_batch(audios, items)

    class VadSet(vb.ProbeSet):
        """A set whose speech check hears nothing in the shorter clips."""

        def speech_check(self, audio: Any) -> Any:
            return SimpleNamespace(present=audio.duration > 0.52, reason="no voiced frames")

        def unmeasurable_results(self, item: Item, reason: str, traits: Any = None) -> Any:
            return {t: ProbeResult(t, None, "", vb.UNMEASURABLE, 0.0, "batched-loudness@1",
                                   detail={"unmeasurable": reason})
                    for t in (self.traits if traits is None else traits)}

    h = _run(probes=VadSet([PitchProbe(), Counting()]))
    silent = [an for p in h.pairs for an in (p.analysis_a, p.analysis_b)
              if an.duration is not None and an.duration <= 0.52]
    assert silent and Counting.seen == 2 * len(ITEMS) - len(silent)
    for an in silent:
        r = an.probes["loudness"]
        assert r.label == vb.UNMEASURABLE and r.d == 0.0
        assert r.detail == {"unmeasurable": "no voiced frames"}
    assert h.complete


def test_a_judge_server_answering_401_stops_the_run_after_its_first_calls(tmp_path: Path
                                                                          ) -> None:
    def refuse(call: Call) -> Reply:
        return Reply(status=401, body={"error": {"message": "invalid api key"}})

    with FakeJudgeServer("openai", refuse) as js:
        h = _run(judge=_judge(js.url), cache=tmp_path / "c.sqlite", judge_concurrency=2)
        calls = len(js.calls)
    assert 1 <= calls <= 2 < N_CALLS  # fatal: no call after the first answers
    assert h.decision.winner == INCOMPLETE and len(h.incomplete_items) == len(ITEMS)
    assert all(r.startswith("judge: ") and "401" in r for r in h.incomplete_items.values())


def test_failed_canaries_stop_the_run_before_any_item(monkeypatch: pytest.MonkeyPatch) -> None:
    from vocencebench.canaries import _run as canary_run
    from vocencebench.errors import InstrumentError

    verdict: dict[str, Any] = {"fail": True}

    class Report:
        passed = True

        def to_dict(self) -> dict[str, Any]:
            return {"passed": True, "checks": 3}

    def run_canaries(**kw: Any) -> Report:
        assert kw["probes"] is not None and kw["registry"] is not None
        if verdict["fail"]:
            raise InstrumentError("the gender probe calls the man's clip female", fatal=True)
        return Report()

    # Where every run's preflight calls it.
    monkeypatch.setattr(canary_run, "run_canaries", run_canaries)
    calls: list[str] = []
    a, b = _systems()

    def counted(text: str, instruction: str) -> bytes:
        calls.append(text)
        return b(text, instruction)

    h = _run(systems=(a, counted), canaries=True)
    assert calls == [] and h.decision.winner == INCOMPLETE
    assert all(r.startswith("canaries: ") for r in h.incomplete_items.values())
    assert h.metadata["canaries"]["passed"] is False
    verdict["fail"] = False
    ok = _run(systems=(a, counted), canaries=True)
    assert ok.complete, ok.incomplete_items
    assert ok.metadata["canaries"] == {"ran": True, "passed": True,
                                                       "report": {"passed": True, "checks": 3}}
    assert _run().metadata["canaries"] == {"ran": False, "skipped": True}
