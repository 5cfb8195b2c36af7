"""`vocencebench decide SCORES --robustness` recomputes a saved run's robustness section bit for
bit, and every report of a run carries the section."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from seeding import make_rng
from synthetic_run import make_head2head
from vocencebench.cli import main
from vocencebench.decide import gate
from vocencebench.pair import combine, covered_dimensions
from vocencebench.result import Head2Head, load_run, save_run
from vocencebench.schema import dumps_canonical
from vocencebench.scores import decide_pairs


def _gated(n: int = 40, labels: tuple[str, str] = ("flat-v1", "steer-v2")) -> Head2Head:
    """The synthetic duel with a gate: a WER per clip, folded again by ``pair.combine`` (so an
    item whose clips are both vetoed is not judged, as in a real run)."""
    h = make_head2head(n, labels=labels)
    rng = make_rng(23)
    pairs = []
    for p in h.pairs:
        def with_wer(an: object) -> object:
            if getattr(an, "failure", None) is not None:
                return an
            wer = float(rng.choice([0.0, 0.0, 0.05, 0.12, 0.18, 0.25, 0.5]))
            return replace(an, wer=wer, gate=gate(wer), asr_engine="fake-asr@1")  # type: ignore[type-var]

        pairs.append(combine(p.item, with_wer(p.analysis_a), with_wer(p.analysis_b),  # type: ignore[arg-type]
                             p.verdicts, labels=h.labels,
                             dimensions=covered_dimensions(("gender", "age", "pace", "pitch",
                                                            "loudness"), True)))
    return Head2Head(labels=h.labels, pairs=tuple(pairs),
                     decision=decide_pairs(pairs, h.labels), metadata=h.metadata,
                     registry=h.registry)


def _decide_json(capsys: pytest.CaptureFixture[str], scores: Path) -> dict[str, object]:
    assert main(["decide", str(scores), "--robustness", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out, dict)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("gated", [False, True])
def test_decide_robustness_reproduces_run_json_bit_for_bit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gated: bool,
) -> None:
    h = _gated() if gated else make_head2head(40)
    save_run(h, tmp_path)
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    out = _decide_json(capsys, tmp_path / "scores.jsonl")
    assert dumps_canonical(out["robustness"]) == dumps_canonical(run["robustness"])
    assert out["decision"] == run["decision"]  # type: ignore[comparison-overlap]
    rob = run["robustness"]
    assert rob["winner"] == run["decision"]["winner"]  # never a different verdict
    gates = [v for v in rob["variants"] if v["group"] in ("tau", "gate-off")]
    assert all(v["computed"] is gated for v in gates)
    if gated:
        assert any("never scored on" in (v["note"] or "") for v in gates)
    # Re-rendering the run (vocencebench report) writes the same section again.
    assert main(["report", str(tmp_path)]) == 0
    capsys.readouterr()
    again = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert dumps_canonical(again["robustness"]) == dumps_canonical(rob)
    assert load_run(tmp_path).robustness.to_dict() == rob


@pytest.mark.slow
def test_an_incomplete_run_decided_on_its_complete_items_reproduces_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    h = make_head2head(24, incomplete_items=(3, 9), allow_incomplete=True)
    assert h.decision.winner != "incomplete" and h.robustness.n == 22
    save_run(h, tmp_path)
    run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert main(["decide", str(tmp_path / "scores.jsonl"), "--robustness", "--json",
                 "--allow-incomplete"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert dumps_canonical(out["robustness"]) == dumps_canonical(run["robustness"])


@pytest.mark.slow
def test_decide_robustness_prints_the_section(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    h = make_head2head(30)
    save_run(h, tmp_path)
    assert main(["decide", str(tmp_path / "scores.jsonl"), "--robustness"]) == 0
    out = capsys.readouterr().out
    assert "verdict: " in out and f"ROBUSTNESS: {h.robustness.summary}" in out
    assert "random dimension weights (1000 Dirichlet(1) draws" in out
    assert main(["decide", str(tmp_path / "scores.jsonl")]) == 0
    assert "ROBUSTNESS" not in capsys.readouterr().out  # only when asked


def test_every_report_carries_the_section_escaped(tmp_path: Path) -> None:
    h = make_head2head(20, labels=("<b>a</b>", "b|<script>x</script>"))
    save_run(h, tmp_path)
    line = h.robustness.summary
    assert line.startswith(("robust:", "fragile:"))
    assert f"ROBUSTNESS: {line}" in h.summary()
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    section = md[md.index("## How robust is the verdict"):md.index("## Dimensions")]
    assert f"**{line}**" in section and "<script>" not in section
    assert "b\\|&lt;script>x&lt;/script>" in section  # report.py's Markdown escaping
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<h2>How robust is the verdict</h2>" in page and "<script>x" not in page
    assert "&lt;script&gt;" in page


@pytest.mark.slow
def test_a_real_demo_run_reproduces_its_section(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--limit", "6", "--out", str(out), "--quiet", "--workers", "1",
                 "--no-cache"]) == 0
    printed = capsys.readouterr().out
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert f"ROBUSTNESS: {run['robustness']['summary']}" in printed
    got = _decide_json(capsys, out / "scores.jsonl")
    assert dumps_canonical(got["robustness"]) == dumps_canonical(run["robustness"])
    assert "cannot be computed (τ, gate off): no clip has a WER" in run["robustness"]["summary"]
