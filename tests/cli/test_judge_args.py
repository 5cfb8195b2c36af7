"""The shared judge flags (commands/_judge_args.py): every option reaches the request, and
every mistake is a one-line ConfigError before anything is sent."""

from __future__ import annotations

import argparse
import json
import logging
from typing import Any

import pytest

from judge_fakes import CLIP_X, CLIP_Y, KEY, FakeJudgeServer, prefers
from vocencebench.commands._judge_args import add_judge_arguments, judge_from_args, parse_price
from vocencebench.errors import ConfigError


def parse(*argv: str, **kw: Any) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="x")
    add_judge_arguments(p, **kw)
    return p.parse_args(list(argv))


def compare(judge: Any) -> Any:
    return judge.compare(text="Hello there.", instruction="a warm voice", audio_a=CLIP_X,
                         audio_b=CLIP_Y, consistent=False)


def test_defaults_give_no_judge() -> None:
    args = parse()
    assert args.judge == "none" and args.judge_concurrency == 4
    assert judge_from_args(args) is None


def test_gemini_flags_reach_the_request(monkeypatch: pytest.MonkeyPatch,
                                        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("MY_GEMINI_KEY", KEY)
    caplog.set_level(logging.WARNING, logger="vocencebench.judge")
    with FakeJudgeServer("gemini", prefers(CLIP_X)) as srv:
        args = parse("--judge", "gemini:gemini-2.5-flash-lite", "--judge-key-env", "MY_GEMINI_KEY",
                     "--judge-base-url", srv.url, "--judge-price", "0.10,0.40,0.01",
                     "--judge-max-output-tokens", "900", "--judge-thinking-budget", "0",
                     "--judge-rpm", "120", "--judge-concurrency", "2", "--judge-timeout", "30",
                     "--judge-retries", "1", "--judge-spend-cap", "5")
        judge = judge_from_args(args)
        with judge:
            v = compare(judge)
            b = judge.backend
            cost = b.cost_usd()
    call = srv.calls[0]
    assert v.winner == "a" and call.headers["x-goog-api-key"] == KEY
    cfg = call.body["generationConfig"]
    assert cfg["maxOutputTokens"] == 900 and cfg["thinkingConfig"] == {"thinkingBudget": 0}
    assert judge.max_concurrency == 2 and b.requests_per_minute == 120
    assert (b.timeout_s, b.max_retries, b.spend_cap_usd) == (30.0, 1, 5.0)
    assert b.price.input == 0.10 and b.price.cached_input == 0.01
    # 1000 prompt, 100 output + 200 thinking tokens (the fake's defaults)
    assert cost == pytest.approx((1000 * 0.10 + 300 * 0.40) / 1e6)
    assert not [r for r in caplog.records if "no price" in r.getMessage()]


def test_local_judge_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_KEY", KEY)
    with FakeJudgeServer("openai", prefers(CLIP_X)) as srv:
        judge = judge_from_args(parse("--judge", f"local:{srv.url}/v1#omni",
                                      "--judge-key-env", "VLLM_KEY",
                                      "--judge-max-output-tokens", "700"))
        with judge:
            compare(judge)
    assert srv.calls[0].headers["authorization"] == f"Bearer {KEY}"
    assert srv.calls[0].body["max_tokens"] == 700


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--judge", "gpt4"], "unknown judge"),
        (["--judge", "local:nowhere"], "local:URL#MODEL"),
        (["--judge", "gemini", "--judge-key-env", "NOT_SET_ANYWHERE"], "NOT_SET_ANYWHERE"),
        (["--judge", "gemini", "--judge-price", "1"], "IN,OUT"),
        (["--judge", "gemini", "--judge-price", "a,b"], "must be numbers"),
        (["--judge", "gemini", "--judge-price", "1,-2"], ">= 0"),
        (["--judge", "gemini", "--judge-max-output-tokens", "0"], "--judge-max-output-tokens"),
        (["--judge", "gemini", "--judge-rpm", "0"], "--judge-rpm"),
        (["--judge", "gemini", "--judge-timeout", "-1"], "--judge-timeout"),
        (["--judge", "gemini", "--judge-retries", "-1"], "--judge-retries"),
        (["--judge", "gemini", "--judge-concurrency", "0"], "--judge-concurrency"),
        (["--judge", "gemini", "--judge-base-url", "ftp://x"], "--judge-base-url"),
        (["--judge", "local:http://h:1#m", "--judge-base-url", "http://x"], "part of"),
        (["--judge-rpm", "10"], "--judge is none"),
        (["--judge", "gemini:gemini-9", "--judge-spend-cap", "1"], "needs a price"),
        (["--judge", "gemini", "--judge-spend-cap", "1"], "(--judge-max-output-tokens N;"),
    ],
)
def test_mistakes_are_one_line_config_errors(monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                             message: str) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(ConfigError) as err:
        judge_from_args(parse(*argv))
    assert message in str(err.value) and "\n" not in str(err.value)
    assert KEY not in str(err.value)


def test_legacy_aliases() -> None:
    args = parse("--judge", "gemini", "--api-key-env", "K", "--spend-cap", "2",
                 default="gemini", legacy_aliases=True)
    assert (args.judge_key_env, args.judge_spend_cap) == ("K", 2.0)
    with pytest.raises(SystemExit):
        parse("--api-key-env", "K")


def test_parse_price() -> None:
    p = parse_price("2, 12")
    assert (p.input, p.output, p.cached_input, p.source) == (2.0, 12.0, None, "--judge-price")
    assert json.loads(json.dumps(p.to_dict()))["input"] == 2.0
