"""Reports of a saved run: the four files, their round trip, and the CLI that re-reads them.

The run is synthetic (``tests/synthetic_run.py``): real records folded by ``pair.combine``
and decided by ``decide.decide``, without synthesising or measuring audio.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from synthetic_run import LABELS, STATUS, make_head2head
from vocencebench.cli import main
from vocencebench.clips import listening_section
from vocencebench.errors import ConfigError
from vocencebench.report import render_html, render_markdown, render_summary
from vocencebench.result import Head2Head, load_run, save_run
from vocencebench.schema import SCHEMA_VERSION, Decision, ProbeResult, SampleScore

FILES = ("scores.jsonl", "run.json", "report.md", "report.html")


@pytest.fixture(scope="module")
def h2h() -> Head2Head:
    return make_head2head()


@pytest.fixture()
def run_dir(h2h: Head2Head, tmp_path: Path) -> Path:
    return save_run(h2h, tmp_path / "run")


def test_synthetic_run_is_realistic(h2h: Head2Head) -> None:
    # Guards the fixture itself: a decisive, complete duel with a system failure.
    assert len(h2h.pairs) == 40
    assert h2h.decision.winner == LABELS[1]
    assert sum(p.a.failure is not None for p in h2h.pairs) == 1
    assert h2h.complete and h2h.incomplete_items == {}
    assert {"tone", "naturalness"} <= set(h2h.pairs[0].a.d)


def test_save_run_writes_the_four_files(run_dir: Path) -> None:
    # and the marker that makes the new folder a vocencebench run's
    from vocencebench.outputs import MARKER

    assert sorted(p.name for p in run_dir.iterdir()) == sorted([*FILES, MARKER])
    for name in FILES:
        assert (run_dir / name).stat().st_size > 0, name


def test_scores_jsonl_rows_are_sample_scores_in_item_order(h2h: Head2Head, run_dir: Path) -> None:
    lines = (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * len(h2h.pairs)
    rows = [json.loads(line) for line in lines]
    for k, pair in enumerate(h2h.pairs):
        ra, rb = rows[2 * k], rows[2 * k + 1]
        assert (ra["item"], ra["system"]) == (pair.item.id, LABELS[0])
        assert (rb["item"], rb["system"]) == (pair.item.id, LABELS[1])
        assert ra["kind"] == "sample_score" and ra["schema_version"] == 1
        assert SampleScore.from_dict(ra) == pair.a
        assert SampleScore.from_dict(rb) == pair.b
    failed = [r for r in rows if r["failure"] is not None]
    assert len(failed) == 1 and failed[0]["S"] == 0.0 and "TimeoutError" in failed[0]["failure"]


def test_run_json_round_trips_to_an_equal_head2head(h2h: Head2Head, run_dir: Path) -> None:
    data = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert data["schema_version"] == 1 and data["kind"] == "head2head"
    back = load_run(run_dir)
    assert back == h2h
    assert back.to_json() == h2h.to_json()
    assert back.summary() == h2h.summary()


def test_load_run_refuses_a_directory_without_run_json(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"run\.json is missing"):
        load_run(tmp_path)
    (tmp_path / "run.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_run(tmp_path)


def _with_version(run_dir: Path, version: object) -> None:
    path = run_dir / "run.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["schema_version"] = version
    path.write_text(json.dumps(data), encoding="utf-8")


def test_load_run_reads_its_own_version_and_refuses_a_newer_one(
    h2h: Head2Head, run_dir: Path
) -> None:
    _with_version(run_dir, SCHEMA_VERSION)
    assert load_run(run_dir) == h2h
    _with_version(run_dir, SCHEMA_VERSION + 1)
    with pytest.raises(ConfigError) as info:
        load_run(run_dir)
    msg = str(info.value)
    assert f"newer schema_version ({SCHEMA_VERSION + 1})" in msg
    assert f"reads schema_version {SCHEMA_VERSION}" in msg and "upgrade vocencebench" in msg
    for unknown in ("2.0-beta", None, 0):
        _with_version(run_dir, unknown)
        with pytest.raises(ConfigError, match=f"unknown schema_version .*reads schema_version "
                                              f"{SCHEMA_VERSION}"):
            load_run(run_dir)


def test_report_command_refuses_a_run_json_of_a_newer_version(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (run_dir / "report.md").read_bytes()
    _with_version(run_dir, SCHEMA_VERSION + 1)
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("vocencebench report: error:")
    assert f"newer schema_version ({SCHEMA_VERSION + 1})" in err[0]
    assert f"reads schema_version {SCHEMA_VERSION}" in err[0]
    assert (run_dir / "report.md").read_bytes() == before  # nothing was re-rendered
    _with_version(run_dir, SCHEMA_VERSION)
    assert main(["report", str(run_dir)]) == 0


def test_markdown_opens_with_status_then_decision(h2h: Head2Head, run_dir: Path) -> None:
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    # The saved report adds the listening pointer (this synthetic run has no cache).
    assert md == render_markdown(h2h, extra=["## Listen", "", "clips: run.json records no "
                                             "cache, so there are no clips to play"])
    lines = md.splitlines()
    assert lines[0] == f"# vocencebench: {LABELS[0]} vs {LABELS[1]}"
    quoted = [ln[2:] for ln in lines[1:] if ln.startswith("> ")]
    assert quoted[: len(STATUS)] == STATUS
    assert quoted[0].startswith("intelligibility gate OFF")
    assert any(s.startswith("judge: gemini") for s in quoted)
    first_heading = next(i for i, ln in enumerate(lines) if ln.startswith("## "))
    decision_at = lines.index(f"**Decision: {LABELS[1]} wins**")
    status_end = max(i for i, ln in enumerate(lines) if ln.startswith("> "))
    assert status_end < decision_at < first_heading
    assert h2h.decision.reason in lines
    assert "| **composite S** |" in md


def test_summary_opens_with_status_and_ends_with_decision(h2h: Head2Head) -> None:
    text = render_summary(h2h).splitlines()
    assert [ln.strip() for ln in text[1 : 1 + len(STATUS)]] == STATUS
    assert text[-2] == f"DECISION: {LABELS[1]} wins"
    assert text[-1] == h2h.decision.reason


def test_html_is_self_contained(h2h: Head2Head, run_dir: Path) -> None:
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    section, _, files = listening_section(h2h.pairs, h2h.labels, h2h.registry, h2h.metadata,
                                          run_dir)
    assert files == {}  # no cache recorded: nothing to play, one line says so
    assert page == render_html(h2h, extra=[section])
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    low = page.lower()
    # Nothing is fetched: no remote or protocol-relative src/href, no scripts, no fonts,
    # no stylesheet links, no CSS imports or url() references.
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", low)
    assert not re.search(r"<script[^>]*\bsrc\b", low)
    assert "<link" not in low and "@import" not in low and "@font-face" not in low
    assert "url(" not in low
    assert "fonts.googleapis" not in low
    # What the page must show.
    assert f'<div class="decision">{LABELS[1]} wins</div>' in page
    assert "intelligibility gate OFF" in page
    assert page.count("<svg") == 2
    assert "LCB (5th pct)" in page and "margin" in page
    for trait in ("gender", "pace", "pitch", "loudness"):
        assert f"<caption>{trait} — {LABELS[0]}" in page
        assert f"<caption>{trait} — {LABELS[1]}" in page
    assert "<caption>age" not in page  # numeric: no confusion matrix


def test_html_escapes_labels_and_marks_a_tie() -> None:
    h = make_head2head(12, seed=5, labels=("<b>x&y", 'q"z'), skill_a=0.6, skill_b=0.6)
    assert h.decision.winner == "tie"  # equal skills on 12 items: no audible lead
    page = render_html(h)
    assert "<b>x&y" not in page and "&lt;b&gt;x&amp;y" in page
    assert 'q"z' not in page and "q&quot;z" in page
    assert '<div class="decision tie">tie</div>' in page
    assert "**Decision: tie**" in render_markdown(h)


def test_report_command_rerenders_a_saved_run(
    h2h: Head2Head, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {n: (run_dir / n).read_bytes() for n in FILES}
    for name in ("scores.jsonl", "report.md", "report.html"):
        (run_dir / name).unlink()
    assert main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert f"DECISION: {LABELS[1]} wins" in out
    assert out.splitlines()[1].strip() == STATUS[0]
    after = {n: (run_dir / n).read_bytes() for n in FILES}
    assert after == before


def test_report_command_on_a_missing_run_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("vocencebench report: error:")
    assert "run.json is missing" in err[0]


def test_decide_cli_reproduces_the_decision_bit_for_bit(
    h2h: Head2Head, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["decide", str(run_dir / "scores.jsonl"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = h2h.decision.to_dict()
    assert set(got) == set(want)
    for key, value in want.items():
        assert repr(got[key]) == repr(value), key
    assert Decision.from_dict(got) == h2h.decision


# ----------------------------------------------------------------------------- failures


def test_failures_section_names_system_and_instrument_failures(tmp_path: Path) -> None:
    from vocencebench.report import failure_summary

    h = make_head2head(incomplete_items=(3, 11))
    f = failure_summary(h)
    sys_a, sys_b = f.systems
    assert (sys_a.name, sys_a.items, sys_a.by_cause) == (LABELS[0], 1, {"synthesis": 1})
    assert sys_b.items == 0
    assert [(g.name, g.items) for g in f.instruments] == [("judge", 2)]
    assert f.incomplete == 2 and f.total == 40
    assert "HTTP 503" in f.instruments[0].first[0][1]
    d = save_run(h, tmp_path / "run")
    md = (d / "report.md").read_text(encoding="utf-8")
    page = (d / "report.html").read_text(encoding="utf-8")
    text = render_summary(h)
    for out in (md, page, text):
        assert "INCOMPLETE: 2 of 40 items could not be scored" in out
        assert "HTTP 503 after 4 attempts" in out
        assert "TimeoutError: no audio after 300 s" in out
    assert "DECISION: INCOMPLETE — no winner" in text
    assert "**Decision: INCOMPLETE — no winner**" in md
    assert 'class="decision incomplete"' in page and 'class="banner"' in page
    assert md.index("INCOMPLETE: 2 of 40") < md.index("## Dimensions")


def test_allow_incomplete_decides_and_says_so() -> None:
    h = make_head2head(incomplete_items=(3,), allow_incomplete=True)
    assert h.decision.winner == LABELS[1]
    assert h.decision.reason.startswith("decided on 39 of 40 items; 1 incomplete")
    text = render_summary(h)
    assert "decided on the complete items only (--allow-incomplete)" in text
    assert f"DECISION: {LABELS[1]} wins" in text


def test_a_clean_run_reports_no_failures(h2h: Head2Head) -> None:
    from dataclasses import replace

    clean = replace(h2h, pairs=tuple(p for p in h2h.pairs if p.a.failure is None))
    md = render_markdown(clean)
    assert "None: every clip was produced and every instrument answered." in md
    assert "INCOMPLETE" not in md


def test_unpriced_judge_cost_is_reported_as_unknown(h2h: Head2Head) -> None:
    from dataclasses import replace

    unknown = replace(h2h, metadata={**h2h.metadata, "judge_cost_usd": None})
    assert "judge cost:   unknown" in render_summary(unknown)


def test_level_response_shows_a_flat_system_whatever_its_buckets_say() -> None:
    from dataclasses import replace

    h = make_head2head()
    lufs_b = {"quiet": -27.0, "normal": -20.5, "loud": -15.5}
    pairs = []
    for p in h.pairs:
        if p.a.failure is not None:
            pairs.append(p)
            continue
        want = p.item.traits["loudness"]

        def put(an: Any, value: float, want: str = want) -> Any:
            r = ProbeResult("loudness", value, "LUFS", want, 1.0, "loudness@1")
            return replace(an, probes={**an.probes, "loudness": r})

        # a renders every request at -26 LUFS (labels claim the requested bucket anyway)
        pairs.append(replace(p, analysis_a=put(p.analysis_a, -26.0),
                             analysis_b=put(p.analysis_b, lufs_b[want])))
    flat = replace(h, pairs=tuple(pairs))
    text = render_summary(flat)
    assert f"FLAT (measured value does not move with the requested level): {LABELS[0]} " \
           "loudness (span 0.00 LUFS)" in text
    assert f"{LABELS[1]} loudness" not in text.split("FLAT")[1].split("\n")[0]
    md = render_markdown(flat)
    section = md[md.index("## Measured value per requested level"):md.index("## Failures")]
    assert "| quiet | -26.00 LUFS ± 0.00" in section
    assert f"{LABELS[0]} 0.00 LUFS — FLAT | {LABELS[1]} 11." in section  # b moves
    assert 'class="flat"' in render_html(flat)
