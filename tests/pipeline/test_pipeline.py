"""The whole pipeline on a few real clips: eSpeak systems, real probes, a judge and an ASR
server speaking their HTTP APIs on 127.0.0.1, the cache, the reports and the CLI."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import vocencebench as vb
from judge_fakes import Call, FakeJudgeServer, Reply, answer
from vocencebench.adapters import EspeakSystem
from vocencebench.cli import main
from vocencebench.judge import Judge
from vocencebench.transcribe import openai_transcriber

ITEMS = vb.load_benchmark("benchmark_v1")[:4]


def _longer_wins(call: Call) -> Reply:
    """A position-independent judge: the longer clip is better."""
    a, b = len(call.audio[0]), len(call.audio[1])
    if a == b:
        return Reply(json.dumps(answer("tie", 2, 2)))
    return Reply(json.dumps(answer("A", 3, 1) if a > b else answer("B", 1, 3)))


class _ASRServer:
    """``/v1/audio/transcriptions`` that always hears ``text``."""

    def __init__(self, text: str) -> None:
        self.calls = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.calls += 1
                body = json.dumps({"text": text}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._t = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> _ASRServer:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.slow
def test_full_pipeline_with_judge_and_gate(tmp_path: Path) -> None:
    with _ASRServer(ITEMS[0].text) as asr:
        _full_pipeline(tmp_path, asr)


def _full_pipeline(tmp_path: Path, asr: _ASRServer) -> None:
    with FakeJudgeServer("openai", _longer_wins) as js:
        judge = Judge.local(base_url=js.url, model="fake-omni")
        h2h = vb.benchmark(
            ITEMS, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"), judge,
            probes=vb.default_probes(), transcriber=openai_transcriber(asr.url, "whisper-1"),
            labels=("flat", "follow"), cache=tmp_path / "cache.sqlite", workers=1,
            progress=False, canaries=False,  # this test counts the judge's calls
        )
        first_calls = len(js.calls)
        asr_calls = asr.calls
    # Only item 0's script is "heard": it passes the gate on both sides, the rest fail.
    assert [p.a.gate for p in h2h.pairs] == [1, 0, 0, 0]
    assert [p.b.gate for p in h2h.pairs] == [1, 0, 0, 0]
    assert all(p.a.S == 0.0 and p.b.S == 0.0 for p in h2h.pairs[1:])
    # The judge is asked only where it can change a score: one pair, two dimensions, two orders.
    assert first_calls == 4
    pair0 = h2h.pairs[0]
    assert set(pair0.verdicts) == {"tone", "naturalness"}
    assert set(pair0.a.d) == {"gender", "pace", "pitch", "loudness", "tone", "naturalness"}
    assert pair0.a.S > 0 and pair0.b.S > 0
    assert h2h.metadata["judge_model"] == "fake-omni"
    assert h2h.metadata["asr_engine"].startswith("openai")
    assert "judge_usage" in h2h.metadata
    summary = h2h.summary()
    assert "JUDGE OFF" not in summary and "gate OFF" not in summary
    out = h2h.save(tmp_path / "run")
    assert (out / "report.html").is_file()

    # The same run again: everything comes from the cache, no judge or ASR call is repeated.
    with FakeJudgeServer("openai", _longer_wins) as js2:
        again = vb.benchmark(
            ITEMS, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"),
            Judge.local(base_url=js2.url, model="fake-omni"),
            probes=vb.default_probes(), transcriber=openai_transcriber(asr.url, "whisper-1"),
            labels=("flat", "follow"), cache=tmp_path / "cache.sqlite", workers=1,
            progress=False, canaries=False,
        )
        assert js2.calls == [] and asr.calls == asr_calls == 8
    assert [s.to_dict() for s in again.samples] == [s.to_dict() for s in h2h.samples]
    assert again.decision == h2h.decision


def _strip_volatile(run: dict[str, Any]) -> dict[str, Any]:
    meta = run["metadata"]
    for k in ("timings", "executor", "cache"):
        meta.pop(k, None)
    return run


@pytest.mark.slow
def test_results_identical_for_one_and_two_workers(tmp_path: Path) -> None:
    items = vb.load_benchmark("benchmark_v1")[:6]
    runs = []
    for workers in (1, 2):
        h = vb.benchmark(items, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"),
                         probes=vb.default_probes(), labels=("flat", "follow"),
                         workers=workers, progress=False)
        runs.append(json.dumps(_strip_volatile(json.loads(h.to_json())), sort_keys=True))
    assert runs[0] == runs[1]


@pytest.mark.slow
def test_failing_system_scores_zero_with_reason(tmp_path: Path) -> None:
    calls = {"n": 0}

    def flaky(text: str, instruction: str) -> bytes:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("GPU fell over")
        if calls["n"] == 3:
            return b"RIFF-this-is-not-audio"
        return EspeakSystem("espeak-follow")(text, instruction)

    items = vb.load_benchmark("benchmark_v1")[:3]
    h = vb.benchmark(items, EspeakSystem("espeak-flat"), flaky, probes=vb.default_probes(),
                     labels=("flat", "flaky"), workers=1, progress=False)
    b = [p.b for p in h.pairs]
    assert b[0].failure is None and b[0].S > 0
    assert b[1].S == 0.0 and "GPU fell over" in (b[1].failure or "")
    assert b[2].S == 0.0 and (b[2].failure or "").startswith("audio:")
    assert h.pairs[1].a.S > 0  # the other side is still scored on its own


@pytest.mark.slow
def test_cli_demo_limit_and_decide_reproduces(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--limit", "6", "--out", str(out), "--quiet", "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert "DECISION:" in printed and "gate OFF" in printed and "JUDGE OFF" in printed
    run_text = (out / "run.json").read_text()
    head = "\n".join(run_text.splitlines()[:5])
    assert "gate OFF" in head and "JUDGE OFF" in head  # the JSON says so in its first lines
    run = json.loads(run_text)
    assert main(["decide", str(out / "scores.jsonl"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    for key in ("winner", "lcb", "margin", "mean_a", "mean_b", "n"):
        assert repr(got[key]) == repr(run["decision"][key])


def test_cli_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["run", "--system-a", "espeak-flat", "--system-b", "nonsense", "--limit", "2",
               "--no-cache", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "unknown system 'nonsense'" in err[0]
    rc = main(["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
               "--judge", "local:nourl", "--limit", "2", "--no-cache", "--quiet"])
    assert rc == 2 and "local:URL#MODEL" in capsys.readouterr().err


class _BatchedEmotion:
    """A model-like probe with ``measure_batch``: must run batched in the main process."""

    name, version, traits = "fake-emotion", "1", ("emotion",)

    def __init__(self) -> None:
        self.batches: list[tuple[int, int]] = []

    def _one(self, audio: Any, item: Any) -> dict[str, Any]:
        label = "calm" if audio.duration > 2.5 else "neutral"
        d = 1.0 if item.traits["emotion"] == label else 0.0
        return {"emotion": vb.ProbeResult("emotion", label, "class", label, d,
                                          "fake-emotion@1")}

    def measure(self, audio: Any, item: Any) -> dict[str, Any]:
        return self._one(audio, item)

    def measure_batch(self, audios: Any, items: Any) -> list[dict[str, Any]]:
        self.batches.append((os.getpid(), len(audios)))
        return [self._one(a, it) for a, it in zip(audios, items, strict=True)]


@pytest.mark.slow
def test_batched_probes_run_in_the_main_process(tmp_path: Path) -> None:
    items = vb.load_benchmark("benchmark_v1")[:5]
    fake = _BatchedEmotion()
    base = vb.default_probes()
    probes = vb.ProbeSet((*base.probes, fake))
    h = vb.benchmark(items, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"),
                     probes=probes, labels=("flat", "follow"), workers=2, progress=False,
                     cache=tmp_path / "c.sqlite", canaries=False)  # counts the batches
    assert fake.batches and all(pid == os.getpid() for pid, _ in fake.batches)
    assert sum(n for _, n in fake.batches) == 10
    assert all("emotion" in p.a.d and "pitch" in p.a.d for p in h.pairs)
    # Same numbers as the plain per-clip ProbeSet.measure in one process.
    ref = vb.benchmark(items, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"),
                       probes=vb.ProbeSet((*base.probes, _BatchedEmotion())),
                       labels=("flat", "follow"), workers=1, progress=False)
    assert [s.to_dict() for s in ref.samples] == [s.to_dict() for s in h.samples]


@pytest.mark.slow
def test_cli_holdout_run_records_the_salt_digest_not_the_salt(tmp_path: Path) -> None:
    out = tmp_path / "held"
    salt = "private-salt-7f3a9"
    rc = main(["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
               "--holdout-salt", salt, "--limit", "2", "--out", str(out), "--quiet",
               "--workers", "1"])
    assert rc == 0
    text = (out / "run.json").read_text()
    assert salt not in text
    sel = json.loads(text)["metadata"]["selection"]
    import hashlib

    assert sel["holdout"] == {"salt_sha256": hashlib.sha256(salt.encode()).hexdigest(),
                              "items": 99}
    split = vb.split_holdout(vb.load_benchmark("benchmark_v1"), salt=salt)
    ran = [json.loads(line)["item"] for line in (out / "scores.jsonl").read_text().splitlines()]
    assert ran[::2] == [it.id for it in split.heldout[:2]]


def test_the_run_options_have_their_defaults_in_one_place() -> None:
    """``RunSettings`` holds every run option's default; ``benchmark``, ``compare_models`` and
    ``leaderboard`` take those options through its keywords and declare none of their own, so
    a default cannot drift between them."""
    import dataclasses
    import inspect

    from vocencebench.board import leaderboard
    from vocencebench.compare import RunKeywords, RunSettings

    shared = set(RunKeywords.__optional_keys__)
    fields = {f.name for f in dataclasses.fields(RunSettings)}
    assert fields == shared | {"labels", "progress"}
    for fn in (vb.benchmark, vb.compare_models, leaderboard):
        declared = set(inspect.signature(fn).parameters)
        assert declared & shared == set(), fn.__name__
    assert RunSettings().probes == "default" and RunSettings().votes == 1
    flat = EspeakSystem("espeak-flat")
    with pytest.raises(TypeError, match="unexpected keyword argument 'vote'"):
        vb.benchmark(ITEMS, flat, EspeakSystem("espeak-follow"), vote=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'vote'"):
        vb.compare_models(ITEMS, [None] * 4, [None] * 4, vote=3)  # type: ignore[call-arg]
