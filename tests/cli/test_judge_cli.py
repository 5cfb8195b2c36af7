"""``vocencebench judge compare`` end to end against a local OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge_fakes import CLIP_X, CLIP_Y, KEY, FakeJudgeServer, position_biased, prefers
from vocencebench.cli import main


@pytest.fixture
def clips(tmp_path: Path) -> tuple[str, str]:
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    a.write_bytes(CLIP_X)
    b.write_bytes(CLIP_Y)
    return str(a), str(b)


def args(clips: tuple[str, str], judge: str, *extra: str) -> list[str]:
    return ["judge", "compare", *clips, "--text", "Hello there.", "--instruction",
            "a warm voice", "--judge", judge, *extra]


def test_cli_compare_json(clips: tuple[str, str], capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_JUDGE_KEY", KEY)
    with FakeJudgeServer("openai", prefers(CLIP_Y)) as srv:
        rc = main(args(clips, f"local:{srv.url}#omni", "--votes", "2", "--json",
                       "--dimension", "naturalness", "--category", "urls",
                       "--api-key-env", "MY_JUDGE_KEY"))
    out = capsys.readouterr().out
    assert rc == 0 and len(srv.calls) == 4
    assert srv.calls[0].headers["authorization"] == f"Bearer {KEY}"
    data = json.loads(out)
    assert data["verdict"]["winner"] == "b" and data["verdict"]["dimension"] == "naturalness"
    assert data["usage"]["calls"] == 4 and data["cost_usd"] == 0.0
    assert KEY not in out


def test_cli_compare_text_no_swap(clips: tuple[str, str],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    with FakeJudgeServer("openai", position_biased) as srv:
        rc = main(args(clips, f"local:{srv.url}#omni", "--no-swap"))
    out = capsys.readouterr().out
    assert rc == 0 and len(srv.calls) == 1
    assert out.startswith("tone: clip A wins") and "1 call(s)" in out


@pytest.mark.parametrize(
    ("judge", "extra", "message"),
    [
        ("gemini:gemini-3.1-pro-preview", [], "GEMINI_API_KEY"),
        ("local:nowhere", [], "local:URL#MODEL"),
        ("openai:x", [], "unknown judge"),
        ("local:http://127.0.0.1:9#m", ["--dimension", "vibe"], "unknown dimension"),
        ("local:http://127.0.0.1:9#m", ["--api-key-env", "NOPE_NOT_SET"], "NOPE_NOT_SET"),
    ],
)
def test_cli_errors_are_one_line(clips: tuple[str, str], capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch, judge: str,
                                 extra: list[str], message: str) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("NOPE_NOT_SET", raising=False)
    rc = main(args(clips, judge, *extra))
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1


def test_cli_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(args((str(tmp_path / "no.wav"), str(tmp_path / "no2.wav")), "local:http://x#m"))
    assert rc == 2 and "cannot read" in capsys.readouterr().err
