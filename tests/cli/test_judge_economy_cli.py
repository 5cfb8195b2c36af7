"""The judge's economics from the command line, counted at a fake judge server on 127.0.0.1:
``run --stop-when-decided`` stops a blowout early with the full run's winner and fewer calls,
judges every item of a close duel, and ``run --dry-run`` prints the number of calls the real
run then makes (canaries included), sending nothing.

The systems are folders of pre-rendered eSpeak clips (``dir:``), rendered once per module,
and every judged run starts from a copy of one cache holding their probe results, so a
command costs the judge calls and the decision only.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import vocencebench as vb
from judge_fakes import Call, FakeJudgeServer, Reply, answer
from vocencebench.audio import Clip
from vocencebench.cli import main
from vocencebench.scores import decide_scores

N_ITEMS = 48


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Clip folders: espeak-flat, espeak-follow and a copy of espeak-follow, plus a cache
    holding their probe results (no verdicts)."""
    root = tmp_path_factory.mktemp("clips")
    items = vb.load_benchmark("benchmark_v1")[:N_ITEMS]
    out: dict[str, Path] = {}
    for name in ("espeak-flat", "espeak-follow"):
        wavs = vb.EspeakSystem(name).synthesize_many([(it.text, it.instruction)
                                                      for it in items])
        d = out[name] = root / name
        d.mkdir()
        for it, w in zip(items, wavs, strict=True):
            assert isinstance(w, bytes)
            (d / f"{it.id}.wav").write_bytes(w)
    shutil.copytree(out["espeak-follow"], root / "follow-copy")
    out["follow-copy"] = root / "follow-copy"
    warm = root / "warm.sqlite"
    for a, b in (("espeak-flat", "espeak-follow"), ("follow-copy", "espeak-follow")):
        assert main(["run", "--system-a", f"dir:{out[a]}", "--system-b", f"dir:{out[b]}",
                     "--limit", str(N_ITEMS), "--cache", str(warm), "--out",
                     str(root / f"warm-{a}"), "--skip-canaries", "--quiet",
                     "--executor", "serial"]) == 0
    out["warm"] = warm
    return out


def _judged_set(folder: Path) -> set[str]:
    """The sha256 of each clip as the judge sends it (16-bit PCM WAV)."""
    return {_sha(Clip.from_bytes(p.read_bytes()).judge_wav()) for p in folder.glob("*.wav")}


def _prefers(favoured: set[str]) -> Callable[[Call], Reply]:
    """A judge that gives the favoured clips 3 and the others 1, wherever they are played."""
    def respond(call: Call) -> Reply:
        fa, fb = (_sha(x) in favoured for x in call.audio)
        sa, sb = (3 if fa else 1), (3 if fb else 1)
        return Reply(json.dumps(answer("A" if sa > sb else "B" if sb > sa else "tie", sa, sb)))
    return respond


class _Coin:
    """A judge that hears no difference but still picks a side per item and dimension, by a
    coin its prompt tosses, and keeps that side in both orders (the judge asks order AB, then
    BA, of each prompt: the second time it sees a prompt, the clips are swapped)."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def __call__(self, call: Call) -> Reply:
        prompt = "".join(call.texts)
        k = self.seen[prompt] = self.seen.get(prompt, -1) + 1
        a_wins = hashlib.sha256(prompt.encode()).digest()[0] % 2 == 0
        win = "A" if a_wins == (k % 2 == 0) else "B"
        return Reply(json.dumps(answer(win, 3 if win == "A" else 1, 1 if win == "A" else 3)))


def _run(clips: dict[str, Path], tmp: Path, name: str, a: str, b: str, url: str,
         *extra: str) -> dict[str, object]:
    cache = tmp / f"{name}.sqlite"
    shutil.copy(clips["warm"], cache)
    out = tmp / name
    rc = main(["run", "--system-a", f"dir:{clips[a]}", "--system-b", f"dir:{clips[b]}",
               "--label-a", a, "--label-b", b, "--limit", str(N_ITEMS), "--judge",
               f"local:{url}#omni", "--cache", str(cache), "--out", str(out),
               "--skip-canaries", "--quiet", "--executor", "serial", *extra])
    assert rc == 0
    run: dict[str, object] = json.loads((out / "run.json").read_text(encoding="utf-8"))
    run["_dir"] = str(out)
    return run


@pytest.mark.slow
def test_a_blowout_stops_early_with_the_full_runs_winner_and_fewer_calls(
        clips: dict[str, Path], tmp_path: Path) -> None:
    follow = _judged_set(clips["espeak-follow"])
    with FakeJudgeServer("openai", _prefers(follow)) as server:
        full = _run(clips, tmp_path, "full", "espeak-flat", "espeak-follow", server.url)
        full_calls = len(server.calls)
        early = _run(clips, tmp_path, "early", "espeak-flat", "espeak-follow", server.url,
                     "--stop-when-decided")
        early_calls = len(server.calls) - full_calls
    assert full_calls == N_ITEMS * 2 * 2  # every item, two dimensions, both orders
    fd, ed = full["decision"], early["decision"]
    assert isinstance(fd, dict) and isinstance(ed, dict)
    assert fd["winner"] == ed["winner"] == "espeak-follow"
    assert early_calls < 0.8 * full_calls, (early_calls, full_calls)
    es = early["metadata"]["early_stopping"]  # type: ignore[index]
    assert es["stopped_early"] and es["judged"] * 4 == early_calls
    assert ed["early_stop"]["unjudged"] == N_ITEMS - es["judged"]
    # The published rows recompute exactly that decision, proof included.
    scores = Path(str(early["_dir"])) / "scores.jsonl"
    assert decide_scores(scores).to_dict() == ed
    rows = [json.loads(x) for x in scores.read_text().splitlines()]
    unjudged = [r for r in rows if r.get("unjudged")]
    assert unjudged and all(r["S"] is None and "tone" not in r["d"] for r in unjudged)
    assert "EARLY STOPPING: judged" in (Path(str(early["_dir"])) / "report.md").read_text()


@pytest.mark.slow
def test_a_close_duel_judges_every_item(clips: dict[str, Path], tmp_path: Path) -> None:
    with FakeJudgeServer("openai", _Coin()) as server:
        early = _run(clips, tmp_path, "close", "follow-copy", "espeak-follow", server.url,
                     "--stop-when-decided")
        calls = len(server.calls)
    es = early["metadata"]["early_stopping"]  # type: ignore[index]
    assert not es["stopped_early"] and es["judged"] == es["needing_judge"] == N_ITEMS
    assert calls == N_ITEMS * 2 * 2
    d = early["decision"]
    assert isinstance(d, dict) and d["winner"] == "tie" and "early_stop" not in d


@pytest.mark.slow
def test_dry_run_prints_the_calls_the_real_run_makes(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from vocencebench.canaries import judge_pairs

    clean = {_sha(Clip.from_bytes(c).judge_wav()) for _, _, c, _ in judge_pairs()}
    follow: set[str] = set()

    def respond(call: Call) -> Reply:
        sums = [_sha(x) for x in call.audio]
        if clean & set(sums):  # a known-answer canary: the clean clip wins
            return _prefers(clean)(call)
        return _prefers(follow)(call)

    out = tmp_path / "run"
    argv = ["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow", "--limit", "6",
            "--judge-price", "0.10,0.40", "--judge-spend-cap", "1.0",
            "--judge-max-output-tokens", "4096", "--out", str(out),
            "--quiet", "--executor", "serial"]
    with FakeJudgeServer("openai", respond) as server:
        judge = ["--judge", f"local:{server.url}#omni"]
        assert main([*argv, *judge, "--dry-run"]) == 0
        printed = capsys.readouterr().out
        assert not server.calls and not out.exists()  # nothing sent, nothing written
        planned = int(re.search(r"judge requests to make: (\d+)", printed).group(1))  # type: ignore[union-attr]
        assert planned == 6 * 2 * 2 + 12  # items × dimensions × orders + the canaries
        assert "tokens per call (estimated):" in printed and "spend cap $1.00: fits" in printed
        # the output projection is the ceiling the cap reserves, not a fixed 2 048 tokens
        assert "+ 4096 output (the ceiling: --judge-max-output-tokens)" in printed
        assert main([*argv, *judge]) == 0
        assert len(server.calls) == planned
        # Run again: everything is cached, and the dry run says so.
        capsys.readouterr()
        assert main([*argv, *judge, "--dry-run", "--force"]) == 0
        again = capsys.readouterr().out
        assert "judge requests to make: 0" in again
        assert len(server.calls) == planned
        # ... and prices nothing: it priced every call, cached or not ($0.01 here, and a
        # resumed run's cap check said DOES NOT FIT for calls already paid for).
        first = re.search(r"estimated cost of the calls to make[^$]*\$(\d+\.\d+)", printed)
        assert first is not None and float(first.group(1)) > 0
        assert re.search(r"estimated cost of the calls to make[^$]*\$0\.00 ", again), again


@pytest.mark.slow
def test_a_first_dry_run_reads_a_dir_systems_clips_without_a_cache_file(
        clips: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # No cache file yet (a first run): it said "already cached: unknown" and estimated
    # every clip's length from its word count, though the clips were files on disk.
    with FakeJudgeServer("openai", _prefers(set())) as server:
        assert main(["run", "--system-a", f"dir:{clips['espeak-flat']}", "--system-b",
                     f"dir:{clips['espeak-follow']}", "--limit", "6", "--judge",
                     f"local:{server.url}#omni", "--judge-price", "2,12",
                     "--cache", str(tmp_path / "new.sqlite"), "--skip-canaries",
                     "--dry-run"]) == 0
        assert not server.calls
    printed = capsys.readouterr().out
    assert "already cached: 0; to make: 24" in printed
    assert "12 clips already made (cached, or a dir: system's files) at their real " \
        "duration" in printed
    assert not (tmp_path / "new.sqlite").exists()


@pytest.mark.slow
def test_the_dry_run_reads_a_dir_systems_clips_and_counts_its_cached_verdicts(
        clips: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Before, a dir: system (its clips are files, never cached) left every count "unknown"
    # and priced all 192 calls, though the real run then made none.
    follow = _judged_set(clips["espeak-follow"])
    with FakeJudgeServer("openai", _prefers(follow)) as server:
        _run(clips, tmp_path, "judged", "espeak-flat", "espeak-follow", server.url)
        made = len(server.calls)
        capsys.readouterr()
        assert main(["run", "--system-a", f"dir:{clips['espeak-flat']}", "--system-b",
                     f"dir:{clips['espeak-follow']}", "--limit", str(N_ITEMS), "--judge",
                     f"local:{server.url}#omni", "--judge-price", "2,12",
                     "--cache", str(tmp_path / "judged.sqlite"), "--skip-canaries",
                     "--dry-run"]) == 0
        printed = capsys.readouterr().out
        assert len(server.calls) == made  # the dry run sent nothing
    assert made == N_ITEMS * 2 * 2
    assert f"already cached: {made}; to make: 0" in printed
    assert "judge requests to make: 0" in printed
    assert f"{2 * N_ITEMS} clips already made (cached, or a dir: system's files) at their real " \
        "duration, 32 tokens/s" in printed
