"""``vocencebench report RUN --labels FILE…``: a diagnostic table of the raters against the
judge, and not one byte of the decision or the scores moves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic_run import make_head2head
from vocencebench.cli import main
from vocencebench.result import save_run


def test_labels_add_a_diagnostic_table_and_change_no_decision_byte(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    h = make_head2head(n=16)
    run = save_run(h, tmp_path / "run")
    scores_before = (run / "scores.jsonl").read_bytes()
    record_before = json.loads((run / "run.json").read_text(encoding="utf-8"))
    flip = {"a": "b", "b": "a", "tie": "tie"}
    for rater, agree in (("ann", True), ("bo", False)):
        rows = ["id,dimension,winner,score_a,score_b"]  # old style: the rater is the file
        for p in h.pairs:
            for dim, v in p.verdicts.items():
                rows.append(f"{p.item.id},{dim},{v.winner if agree else flip[v.winner]},,")
        (tmp_path / f"{rater}.csv").write_text("\n".join(rows) + "\n")
    assert main(["report", str(run), "--labels", str(tmp_path / "ann.csv"),
                 str(tmp_path / "bo.csv")]) == 0
    capsys.readouterr()
    assert (run / "scores.jsonl").read_bytes() == scores_before
    record = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert record["decision"] == record_before["decision"] == h.decision.to_dict()
    record.pop("files"), record_before.pop("files")
    assert record == record_before  # only the reports' digests moved
    md = (run / "report.md").read_text(encoding="utf-8")
    assert "## Human labels (diagnostic)" in md and "never change the verdict" in md
    table = md[md.index("## Human labels"):md.index("## Run metadata")]
    tone = next(ln for ln in table.splitlines() if ln.startswith("| tone |"))
    cells = [c.strip() for c in tone.strip("|").split("|")]
    # Per item, the share of raters agreeing with the judge: ann always, bo only on a tie.
    tone_winners = [p.verdicts["tone"].winner for p in h.pairs if "tone" in p.verdicts]
    want = sum(1.0 if w == "tie" else 0.5 for w in tone_winners) / len(tone_winners)
    assert cells[2] == f"{want:.3f}" and cells[1] == str(2 * len(tone_winners))
    # ρ has its column, as calibrate prints it (the report left it out): no scores here.
    header = next(ln for ln in table.splitlines() if ln.startswith("| dimension |"))
    assert "| κ | ρ (scores) | judge consistency |" in header and cells[5] == "—"
    page = (run / "report.html").read_text(encoding="utf-8")
    assert 'id="human-labels"' in page and "DIAGNOSTIC" in page
    # Re-rendered without labels, the table is gone and the decision is still the same.
    assert main(["report", str(run)]) == 0
    assert "Human labels" not in (run / "report.md").read_text(encoding="utf-8")
    assert (run / "scores.jsonl").read_bytes() == scores_before
