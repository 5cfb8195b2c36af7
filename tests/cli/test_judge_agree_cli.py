"""``vocencebench judge agree``: a finished run re-judged by another judge (fake OpenAI
servers on 127.0.0.1), its clips read back from the run's cache."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

import vocencebench as vb
from judge_fakes import Call, FakeJudgeServer, PitchProbe, Reply, Tone, answer
from vocencebench.cli import main
from vocencebench.judge import Judge
from vocencebench.probes import ProbeSet

N_ITEMS = 200
SYS_A, SYS_B = Tone(220.0, "a"), Tone(330.0, "b")
FLIP_SEED = 20


def _b_clips(items: list[vb.Item]) -> set[bytes]:
    return {SYS_B(it.text, it.instruction) for it in items}


def _base(b_clips: set[bytes]):  # type: ignore[no-untyped-def]
    """The run's judge: per prompt (item and dimension) it favours one system's clip, by a
    coin its prompt tosses, wherever that clip is played."""
    def respond(call: Call) -> tuple[str, int, int]:
        prompt = "".join(call.texts)
        favour_b = hashlib.sha256(prompt.encode()).digest()[0] % 2 == 0
        first_is_favoured = (call.audio[0] in b_clips) == favour_b
        return ("A", 3, 1) if first_is_favoured else ("B", 1, 3)
    return respond


def _server(b_clips: set[bytes], *, flip: float) -> FakeJudgeServer:
    base = _base(b_clips)

    def respond(call: Call) -> Reply:
        win, sa, sb = base(call)
        # A second judge that flips a seeded fifth of the answers (per prompt and order).
        key = f"{FLIP_SEED}|{''.join(call.texts)}|{hashlib.sha256(call.audio[0]).hexdigest()}"
        if random.Random(key).random() < flip:
            win, sa, sb = ("B", 1, 3) if win == "A" else ("A", 3, 1)
        return Reply(json.dumps(answer(win, sa, sb)))

    return FakeJudgeServer("openai", respond)


@pytest.mark.slow
def test_judge_agree_finds_about_80_percent_against_a_judge_that_flips_a_fifth(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = vb.load_benchmark("benchmark_v1")[:N_ITEMS]
    b_clips = _b_clips(items)
    run = tmp_path / "run"
    with _server(b_clips, flip=0.0) as old:
        judge = Judge.local(old.url, "base-judge")
        h = vb.benchmark(items, SYS_A, SYS_B, judge, probes=ProbeSet([PitchProbe()]),
                         labels=("low", "high"), cache=tmp_path / "cache.sqlite",
                         progress=False, canaries=False)
        h.save(run)
        # The same judge again: its test–retest agreement (a deterministic judge: all of it).
        assert main(["judge", "agree", str(run), "--judge", f"local:{old.url}#base-judge",
                     "--items", "20", "--json"]) == 0
        same = json.loads(capsys.readouterr().out)
    assert all(a["raw"] == 1.0 and a["kappa"] == pytest.approx(1.0) for a in same["agreement"])
    assert same["headline"]["changes"] is False
    with _server(b_clips, flip=0.2) as new:
        assert main(["judge", "agree", str(run), "--judge", f"local:{new.url}#flipping-judge",
                     "--items", str(N_ITEMS), "--json"]) == 0
        got = json.loads(capsys.readouterr().out)
        calls = len(new.calls)
    assert calls == N_ITEMS * 2 * 2 and got["calls"] == calls
    assert len(got["items"]) == N_ITEMS and got["new_model"] == "flipping-judge"
    assert [a["dimension"] for a in got["agreement"]] == list(h.registry.judged_dimensions())
    for a in got["agreement"]:
        assert a["n"] == 2 * N_ITEMS  # both orders of every item
        assert 0.75 <= a["raw"] <= 0.85, a
        assert a["low"] < a["kappa"] < a["high"]
    assert got["subset_verdict"]["old"]["winner"] in ("low", "high", "tie")
    assert isinstance(got["headline"]["changes"], bool)
    # The plain-text account says the same.
    with _server(b_clips, flip=0.2) as new:
        assert main(["judge", "agree", str(run), "--judge", f"local:{new.url}#flipping-judge",
                     "--items", "30"]) == 0
    text = capsys.readouterr().out
    assert "judge agree:" in text and "on 30 of 200 judged items" in text
    assert "headline verdict" in text and "kappa" in text


@pytest.mark.slow
def test_judge_agree_refuses_a_run_without_a_judge(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    items = vb.load_benchmark("benchmark_v1")[:2]
    h = vb.benchmark(items, SYS_A, SYS_B, None, probes=ProbeSet([PitchProbe()]),
                     labels=("low", "high"), progress=False, canaries=False)
    h.save(tmp_path / "run")
    assert main(["judge", "agree", str(tmp_path / "run"), "--judge",
                 "local:http://127.0.0.1:9#x"]) == 2
    assert "had no judge" in capsys.readouterr().err


def _judged_run(tmp_path: Path, n: int = 4) -> tuple[Path, Path, list[vb.Item]]:
    items = vb.load_benchmark("benchmark_v1")[:n]
    with _server(_b_clips(items), flip=0.0) as old:
        h = vb.benchmark(items, SYS_A, SYS_B, Judge.local(old.url, "base-judge"),
                         probes=ProbeSet([PitchProbe()]), labels=("low", "high"),
                         cache=tmp_path / "cache.sqlite", progress=False, canaries=False)
    h.save(tmp_path / "run")
    return tmp_path / "run", tmp_path / "cache.sqlite", items


def test_judge_agree_without_the_clips_is_an_error_not_an_unchanged_verdict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Before, it re-judged 0 items, printed "headline verdict …: unchanged" and exited 0.
    run, _, _ = _judged_run(tmp_path)
    with vb.Cache(tmp_path / "empty.sqlite"):
        pass  # a cache that holds none of the run's clips (as for a dir: system)
    with FakeJudgeServer("openai", lambda c: Reply(json.dumps(answer("A", 3, 1)))) as new:
        assert main(["judge", "agree", str(run), "--judge", f"local:{new.url}#new",
                     "--cache", str(tmp_path / "empty.sqlite")]) == 2
        assert not new.calls
    err = capsys.readouterr().err
    assert "none of the 4 chosen items has both clips in the cache" in err
    assert "nothing can be re-judged" in err and "unchanged" not in err


def test_judge_agree_whose_new_judge_fails_everywhere_says_nothing_is_known(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, _, _ = _judged_run(tmp_path)
    with FakeJudgeServer("openai", lambda c: Reply(status=400, body={"error": "no"})) as new:
        assert main(["judge", "agree", str(run), "--judge", f"local:{new.url}#new"]) == 3
    out = capsys.readouterr().out
    assert "0 of 4 judged items" in out
    assert "headline verdict" in out and "cannot be decided" in out and "unchanged" not in out
    assert "no item was re-judged (the new judge failed on all 4)" in out


def test_agree_reports_this_comparisons_cost_not_the_judges_lifetime_cost(
        tmp_path: Path) -> None:
    # The same Judge asked twice reported 0.0512 and then 0.1024 for the same 16 calls.
    from vocencebench.judge import Price
    from vocencebench.rejudge import agree

    run, _, _ = _judged_run(tmp_path)
    with FakeJudgeServer("openai", lambda c: Reply(json.dumps(answer("B", 1, 3)))) as new:
        judge = Judge.local(base_url=new.url, model="new", price=Price(2.0, 12.0))
        first, second = agree(run, judge, items=4), agree(run, judge, items=4)
    assert first.calls == second.calls == 16
    assert first.cost_usd is not None and first.cost_usd > 0
    assert second.cost_usd == pytest.approx(first.cost_usd)
    assert judge.backend.cost_usd() == pytest.approx(2 * first.cost_usd)
