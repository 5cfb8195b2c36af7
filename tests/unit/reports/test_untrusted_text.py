"""Untrusted text is shown, never obeyed (issue 25, defect 5): escape sequences from a
system's stderr, a label, a reason or corpus text reach no terminal and no report raw.

The hostile strings: an OSC title plus a screen clear (``\\x1b]0;PWNED\\x07\\x1b[2J``), a C1
CSI (``\\x9b``), a right-to-left override (U+202E, "Trojan Source"), a forged line
(``\\nDECISION: …``). Every renderer — the run's summary, Markdown and HTML (report.py), the
leaderboard's (board/report.py), the red team's (gaming/_result.py), ``decide``'s table, the
CLI's error line — must show each as an escape (``\\x1b``, ``\\u202e``) and isolate
right-to-left text in ``<bdi>`` in HTML; the helpers live in one place,
:mod:`vocencebench._util.text`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from synthetic_run import make_head2head, make_leaderboard
from vocencebench._util.text import (
    UNSAFE,
    html_attr_safe,
    html_safe,
    markdown_block,
    markdown_safe,
    terminal_safe,
)
from vocencebench.cli import main
from vocencebench.report import render_html, render_markdown, render_summary

OSC = "\x1b]0;PWNED\x07\x1b[2J"
HOSTILE_A = f"flat{OSC}"
HOSTILE_B = "steer\u202egnp.exe\x9b31m"
FORGED_LINE = "x\nDECISION: flat wins"
RAW = re.compile(UNSAFE)


def _raw_controls(text: str, allowed: str = "\n") -> list[str]:
    return sorted({repr(c) for c in RAW.findall(text) if c not in allowed})


def test_the_helpers() -> None:
    assert terminal_safe(OSC) == "\\x1b]0;PWNED\\x07\\x1b[2J"
    assert terminal_safe(FORGED_LINE) == "x\\nDECISION: flat wins"
    assert terminal_safe("a\u202eb\u2066c\x9bd\x00e\x7f") == \
        "a\\u202eb\\u2066c\\u009bd\\x00e\\x7f"
    assert terminal_safe("naïve 日本語 🙂 é") == "naïve 日本語 🙂 é"  # text passes unchanged
    assert markdown_safe("a|b <i>&c [x](http://e) \x1b") == \
        "a\\|b &lt;i>&amp;c \\[x\\](http://e) \\x1b"
    assert markdown_block('{\n "k": "\x1b\u202e"\n}') == '{\n "k": "\\x1b\\u202e"\n}'
    assert json.loads(markdown_block(json.dumps("\u202e\x9b", ensure_ascii=False))) == \
        "\u202e\x9b"  # the escapes are JSON's own: the block stays the same JSON
    assert html_safe("<b>\x1b</b>") == "&lt;b&gt;\\x1b&lt;/b&gt;"
    assert html_safe("abc \u05e9\u05dc\u05d5\u05dd") == "<bdi>abc \u05e9\u05dc\u05d5\u05dd</bdi>"
    assert html_safe("x\u202ey") == "<bdi>x\\u202ey</bdi>"
    assert html_safe("plain") == "plain"
    assert html_attr_safe('a"\u202e') == "a&quot;\\u202e"


def _hostile_run():  # type: ignore[no-untyped-def]
    h = make_head2head(labels=(HOSTILE_A, HOSTILE_B), incomplete_items=(3,),
                       allow_incomplete=True)
    h.metadata["status"] = [f"probes: {OSC}", FORGED_LINE]
    return h


def test_the_run_reports_escape_every_untrusted_string() -> None:
    h = _hostile_run()
    summary, md, page = render_summary(h), render_markdown(h), render_html(h)
    for text, shown in ((summary, terminal_safe(OSC)), (md, markdown_safe(OSC))):
        assert _raw_controls(text) == [], _raw_controls(text)
        assert shown in text
        assert "\\u202e" in text
        assert "\nDECISION: flat wins" not in text  # the forged line stays inside its line
    assert _raw_controls(page, "\n\t") == []
    assert "<bdi>steer\\u202egnp.exe\\u009b31m</bdi>" in page


def _leaderboard():  # type: ignore[no-untyped-def]
    return make_leaderboard((HOSTILE_A, HOSTILE_B), (f"cmd:{OSC}", "qwen3:x"),
                            {"status": [f"judge: {OSC}"], "canaries": {"skipped": True}})


def test_the_leaderboard_reports_escape_every_untrusted_string() -> None:
    from vocencebench.board.report import render_html as board_html
    from vocencebench.board.report import render_markdown as board_md
    from vocencebench.board.report import render_summary as board_summary

    lb = _leaderboard()
    for text in (board_summary(lb), board_md(lb)):
        assert _raw_controls(text) == [], _raw_controls(text)
        assert "\\x1b" in text and "0;PWNED" in text and "\\u202e" in text
    page = board_html(lb)
    assert _raw_controls(page, "\n\t") == []
    assert "<bdi>" in page


def test_the_redteam_reports_escape_every_untrusted_string() -> None:
    from vocencebench.decide import decide
    from vocencebench.gaming import AttackRow, Duel, RedteamResult

    d = decide([0.4] * 30, [0.9] * 30, labels=(HOSTILE_A, "atk"))
    duel = Duel(opponent="base", partition="evaluation", attacker="atk",
                opponent_label=HOSTILE_A, decision=d,
                mean_d={HOSTILE_A: {"pace": 0.5}, "atk": {"pace": 1.0}},
                delta_d={"pace": 0.5}, n=30)
    row = AttackRow(name=f"atk{OSC}", summary=f"does {OSC}", defence="the defence",
                    needs=("probes",), decided_by=("base",), system_id=f"redteam/{OSC}",
                    base_label=HOSTILE_A, vs_base=duel, vs_reference=None,
                    moved=("pace", 0.5), verdict="VULNERABLE", reason=f"because {FORGED_LINE}")
    r = RedteamResult(rows=(row,), configuration={"reference": {"label": HOSTILE_B}},
                      instruments={"probes": True}, status=[f"gate: {OSC}"],
                      timings={"total_s": 1.0})
    from vocencebench.gaming._result import render_html as rt_html
    from vocencebench.gaming._result import render_markdown as rt_md

    for text in (r.table(), rt_md(r)):
        assert _raw_controls(text) == [], _raw_controls(text)
        assert "\\x1b" in text and "0;PWNED" in text
    page = rt_html(r)
    assert _raw_controls(page, "\n\t") == []
    assert "<bdi>" in page


def test_decide_and_the_cli_error_line_escape_what_they_print(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scores.jsonl"
    rows = [{"item": f"i{i}", "system": s, "S": v} for i in range(8)
            for s, v in ((HOSTILE_A, 0.4), (HOSTILE_B, 0.8))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["decide", str(path)]) == 0
    out = capsys.readouterr().out
    assert _raw_controls(out) == [] and "\\x1b]0;PWNED" in out, out
    assert main(["decide", str(path), "--incumbent", f"zed{OSC}"]) == 2
    err = capsys.readouterr().err
    assert _raw_controls(err) == [] and "\\x1b]0;PWNED" in err, err
