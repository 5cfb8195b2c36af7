"""Untrusted text on the judge's paths and in system specs is shown, never obeyed, and a
credential in a spec is never printed (the third hostile round's escaping audit).

Each case failed before its fix: the judge section of the run's text summary (an early-stop
reason), the leaderboard's judge section (a bare spec's label such as ``dir:/d/<img …>``),
the red team's progress lines on stderr, ``judge agree``'s text account, the judge's
"invalid answer" log line, and a system spec's error (``openai-speech:`` with a password and
an ``api_key=`` in its URL) — in ``build_system`` and on the CLI's error line."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import pytest

from synthetic_run import make_head2head, make_leaderboard
from vocencebench._util.text import UNSAFE

OSC = "\x1b]0;PWNED\x07\x1b[2J"
IMG = "<img src=x onerror=alert(1)>"
RAW = re.compile(UNSAFE)
PASSWORD, QUERY_KEY = "hunter2hunter2", "QSECRET12345"
CREDENTIAL_SPEC = (f"openai-speech:http://bob:{PASSWORD}@127.0.0.1:9/v1?api_key={QUERY_KEY}"
                   "#tts-1")


def _raw_controls(text: str, allowed: str = "\n") -> list[str]:
    return sorted({repr(c) for c in RAW.findall(text) if c not in allowed})


def test_the_judge_section_of_the_summary_escapes_the_early_stop_reason() -> None:
    from vocencebench.report import render_summary

    h = make_head2head(labels=(f"flat{OSC}", "steer"))
    h.metadata["early_stopping"] = {"judged": 12, "needing_judge": 40, "items": 40,
                                    "batch": 8, "order_seed": 7, "stopped_early": False,
                                    "why": f"not certain after {OSC}"}
    text = render_summary(h)
    assert "early stopping: judged 12 of 40" in text
    assert _raw_controls(text) == [], _raw_controls(text)
    assert "not certain after \\x1b]0;PWNED\\x07" in text


def _judged_leaderboard(names: tuple[str, str]):  # type: ignore[no-untyped-def]
    return make_leaderboard(names, (f"dir:/d/{names[0]}", "espeak-follow"),
                            {"status": [], "canaries": {"skipped": True},
                             "judge_model": "gemini-2.5-flash", "judge_consistent": True})


def test_the_leaderboards_judge_section_escapes_system_names() -> None:
    from vocencebench.board.report import render_markdown, render_summary

    lb = _judged_leaderboard((f"dir-/d/{IMG}{OSC}", "espeak-follow"))
    assert lb.judge_behaviour() is not None
    md = render_markdown(lb)
    judge = md[md.index("## The judge"):md.index("## Failures")]
    assert IMG not in judge and "&lt;img src=x onerror=alert(1)>" in judge
    assert _raw_controls(md) == [], _raw_controls(md)
    # Every row of the judge's per-system table keeps its column count.
    rows = [r for r in judge.splitlines()
            if r.startswith("| tone |") and ("espeak-follow" in r or "dir-" in r)]
    cells = {len(re.split(r"(?<!\\)\|", r)) for r in rows}
    assert len(rows) == 2 and len(cells) == 1, rows
    text = render_summary(lb)
    assert _raw_controls(text) == [], _raw_controls(text)


def test_redteam_progress_on_stderr_is_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from vocencebench.gaming._runner import print_progress

    print_progress(f"redteam: reference cmd-{OSC}, flat espeak-flat")
    err = capsys.readouterr().err
    assert _raw_controls(err) == [] and "cmd-\\x1b]0;PWNED\\x07" in err


def test_judge_agree_text_escapes_the_runs_model_and_failure_reasons() -> None:
    from vocencebench.decide import decide
    from vocencebench.rejudge import AgreeResult

    res = AgreeResult(run=f"/runs/{OSC}", old_model=f"model{OSC}", new_model="new",
                      seed=1, eligible=4, items=("a",), agreements=(), subset_old=None,
                      subset_new=None, headline_old=decide([0.4] * 30, [0.9] * 30),
                      headline_new=None, calls=None, cost_usd=None,
                      failed={"a": f"judge: finish_reason {OSC}"}, notes=(f"n {OSC}",))
    text = "\n".join(res.lines())
    assert _raw_controls(text) == [], _raw_controls(text)
    assert "model\\x1b]0;PWNED\\x07" in text and "finish_reason \\x1b]0;" in text


def test_the_judges_invalid_answer_warning_is_escaped(
        caplog: pytest.LogCaptureFixture) -> None:
    from judge_fakes import FakeJudgeServer, Reply, tone_wav
    from vocencebench.errors import JudgeResponseError
    from vocencebench.judge import Judge

    def empty_candidate(call: object) -> Reply:  # a reason no vendor sends, verbatim
        return Reply(body={"candidates": [{"finishReason": f"ODD{OSC}"}],
                           "usageMetadata": {"promptTokenCount": 10,
                                             "candidatesTokenCount": 0}})

    caplog.set_level(logging.WARNING, logger="vocencebench")
    with FakeJudgeServer("gemini", empty_candidate) as srv:
        judge = Judge.gemini("gemini-2.5-flash", "AIzaFAKEKEY-for-127.0.0.1-only-000000",
                             base_url=srv.url, sleep=lambda s: None)
        with judge, pytest.raises(JudgeResponseError):
            judge.compare(text="Hello there.", instruction="A calm voice.",
                          audio_a=tone_wav(200.0), audio_b=tone_wav(260.0),
                          consistent=False)
    messages = [r.getMessage() for r in caplog.records if "invalid answer" in r.getMessage()]
    assert messages and all(_raw_controls(m) == [] for m in messages), messages
    assert "finishReason ODD\\x1b]0;PWNED" in messages[0], messages[0]


def test_a_spec_error_never_shows_the_credentials_in_its_url() -> None:
    from vocencebench.errors import ConfigError
    from vocencebench.specs import build_system

    for spec in (CREDENTIAL_SPEC, CREDENTIAL_SPEC.replace("openai-speech:", "openai-sp:")):
        with pytest.raises(ConfigError) as err:
            build_system(spec)
        assert PASSWORD not in str(err.value) and QUERY_KEY not in str(err.value), err.value
        assert "127.0.0.1:9" in str(err.value)


def test_the_cli_error_line_never_shows_a_specs_credentials(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vocencebench.cli import main

    code = main(["run", "--system-a", "espeak-flat", "--system-b", CREDENTIAL_SPEC,
                 "--limit", "1", "--skip-canaries", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "error:" in err and PASSWORD not in err and QUERY_KEY not in err, err


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
