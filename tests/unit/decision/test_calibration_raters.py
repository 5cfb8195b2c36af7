"""Several raters: Krippendorff's α by hand and against the maintained library, the append-only
label files, the agreement interval, the human head-to-head under the run's rule, and the
judge's verdicts read straight from a run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from synthetic_run import make_head2head
from vocencebench.calibration import (
    HumanLabel,
    calibrate,
    calibrate_files,
    human_head_to_head,
    krippendorff_alpha,
    preference_scores,
    read_human_csv,
    read_judge,
)
from vocencebench.cli import main
from vocencebench.decide import decide
from vocencebench.errors import ConfigError
from vocencebench.metrics import bootstrap_ci
from vocencebench.result import save_run
from vocencebench.schema import Verdict


def test_alpha_by_hand() -> None:
    # Units (a, a), (a, b), (b, b), (tie, tie, a): coincidences o_aa = 2 + 0 + 0 + 0 = 2,
    # o_ab = o_ba = 1 (unit 2), o_bb = 2, o_tt = 2/2 = 1, o_ta = o_at = 2 · 1/2 = 1;
    # n_a = 2 + 1 + 1 = 4, n_b = 1 + 2 = 3, n_t = 1 + 1 = 2, n = 9.
    # D_o = Σ_{c≠k} o = 1 + 1 + 1 + 1 = 4; Σ_{c≠k} n_c n_k = 2 (4·3 + 4·2 + 3·2) = 52;
    # α = 1 − (n − 1) · 4 / 52 = 1 − 32 / 52 = 5 / 13.
    units = [["a", "a"], ["a", "b"], ["b", "b"], ["tie", "tie", "a"], ["b"]]
    assert krippendorff_alpha(units) == pytest.approx(5 / 13)
    assert krippendorff_alpha([["a", "a"], ["a", "a"]]) is None  # no disagreement possible
    assert krippendorff_alpha([["a"], ["b"]]) is None  # nothing pairable


def test_alpha_matches_the_krippendorff_library() -> None:
    kd = pytest.importorskip("krippendorff")
    import numpy as np

    from seeding import make_rng

    rng = make_rng(7)
    code = {"a": 0.0, "b": 1.0, "tie": 2.0}
    for _ in range(20):
        raters, items = int(rng.integers(2, 5)), int(rng.integers(3, 30))
        table = np.full((raters, items), np.nan)
        units = []
        for j in range(items):
            given = []
            for r in range(raters):
                if rng.random() < 0.8:
                    lab = ("a", "b", "tie")[int(rng.integers(3))]
                    table[r, j] = code[lab]
                    given.append(lab)
            units.append(given)
        ours = krippendorff_alpha(units)
        try:
            theirs = kd.alpha(reliability_data=table, level_of_measurement="nominal")
        except ValueError:  # the library refuses data with one value only
            theirs = None
        if ours is None or theirs is None or not math.isfinite(theirs):
            continue
        assert ours == pytest.approx(theirs, abs=1e-12)


def test_preference_scores_and_the_human_verdict_by_hand() -> None:
    assert preference_scores([HumanLabel("x", "tone", "a")]) == (1.0, 0.0)
    assert preference_scores([HumanLabel("x", "tone", w) for w in ("a", "b", "tie")]) == (
        0.5, 0.5)
    # 12 items: b preferred on 9, a on 1, tie on 2 → S_a = 0,…,1,½,½.
    labels = ([HumanLabel(f"i{k}", "tone", "b", rater="r1") for k in range(9)]
              + [HumanLabel("i9", "tone", "a", rater="r1")]
              + [HumanLabel(f"i{k}", "tone", "tie", rater="r1") for k in (10, 11)])
    got = human_head_to_head(labels, labels=("flat", "steer"), run_winner="steer")
    sa = [0.0] * 9 + [1.0, 0.5, 0.5]
    want = decide(sa, [1 - x for x in sa], labels=("flat", "steer"))
    assert got["tone"].decision == want and got["ALL"].decision == want
    assert want.winner == "steer" and got["tone"].same_as_run is True
    other = human_head_to_head(labels, labels=("flat", "steer"), run_winner="flat")
    assert other["tone"].same_as_run is False


def _v(winner: str, dim: str = "tone", consistent: bool = True) -> Verdict:
    sa, sb = {"a": (3.0, 1.0), "b": (1.0, 3.0), "tie": (2.0, 2.0)}[winner]
    return Verdict(winner, sa, sb, "ra", "rb", 0.8, consistent, dim, "m", "v")  # type: ignore[arg-type]


def test_two_raters_agreement_interval_and_alpha() -> None:
    judge = ["a", "b", "b", "tie", "a", "b"]
    r1 = ["a", "b", "a", "tie", "a", "b"]
    r2 = ["a", "a", "b", "b", "a", "b"]
    verdicts = {(f"i{k}", "tone"): _v(w, consistent=k != 2) for k, w in enumerate(judge)}
    human = ([HumanLabel(f"i{k}", "tone", w, rater="ann") for k, w in enumerate(r1)]
             + [HumanLabel(f"i{k}", "tone", w, rater="bo") for k, w in enumerate(r2)])
    rep = calibrate(human, verdicts, labels=("x", "y"), run_winner="y")
    tone = rep.by_dimension["tone"]
    # Per item, the share of raters agreeing with the judge: 1, ½, ½, ½, 1, 1 → mean 3/4.
    shares = [1.0, 0.5, 0.5, 0.5, 1.0, 1.0]
    assert tone.accuracy == pytest.approx(0.75) and tone.items == 6 and tone.n == 12
    ci = bootstrap_ci(shares, level=0.95)
    assert (tone.ci_low, tone.ci_high) == (ci.low, ci.high)
    assert tone.consistency_rate == pytest.approx(10 / 12)
    assert rep.raters == ("ann", "bo")
    units = [[a, b] for a, b in zip(r1, r2, strict=True)]
    assert rep.inter_rater["tone"] == pytest.approx(krippendorff_alpha(units))
    with pytest.raises(ConfigError, match="rater 'ann': two human labels"):
        calibrate([*human, HumanLabel("i0", "tone", "b", rater="ann")], verdicts)


def test_label_files_with_a_rater_column_are_logs(tmp_path: Path) -> None:
    f = tmp_path / "ann.csv"
    f.write_text("id,dimension,winner,score_a,score_b,rater\n"
                 "i1,tone,a,,,Ann\ni2,tone,b,1,3,Ann\ni1,tone,tie,2,2,Ann\n")
    got = read_human_csv(f)
    assert [(h.id, h.winner, h.rater) for h in got] == [("i2", "b", "Ann"), ("i1", "tie", "Ann")]
    old = tmp_path / "old-style.csv"
    old.write_text("id,dimension,winner\ni1,tone,a\n")
    assert read_human_csv(old)[0].rater == "old-style"


def test_calibrate_reads_the_judge_from_a_run(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    h = make_head2head(n=12)
    run = save_run(h, tmp_path / "run", clips=False)
    src = read_judge(run)
    assert src.labels == h.labels and src.winner == h.decision.winner
    want = {(p.item.id, d): v for p in h.pairs for d, v in p.verdicts.items()}
    assert src.verdicts == want
    rows = ["id,dimension,winner,score_a,score_b,rater"]
    for p in h.pairs:
        v = p.verdicts.get("tone")
        if v is not None:
            rows.append(f"{p.item.id},tone,{v.winner},,,ann")  # agrees with the judge
    (tmp_path / "ann.csv").write_text("\n".join(rows) + "\n")
    rep = calibrate_files([tmp_path / "ann.csv"], run)
    assert rep.by_dimension["tone"].accuracy == 1.0
    assert main(["calibrate", str(tmp_path / "ann.csv"), "--run", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by_dimension"]["tone"]["accuracy"] == 1.0
    assert data["labels"] == list(h.labels)
    assert data["human_head_to_head"]["tone"]["run_winner"] == h.decision.winner
    assert main(["calibrate", str(tmp_path / "ann.csv"), str(run)]) == 0
    out = capsys.readouterr().out
    assert "raters: 1 (ann)" in out and "Diagnostic only" in out
    assert main(["calibrate", str(tmp_path / "ann.csv")]) == 2
    assert "give the human-label file(s)" in capsys.readouterr().err


def _verdicts_file(path: Path, rows: list[tuple[str, str, bool]]) -> Path:
    path.write_text("".join(json.dumps({
        "id": i, "winner": w, "score_a": 3 if w == "a" else 1, "score_b": 1 if w == "a" else 3,
        "reasoning_a": "", "reasoning_b": "", "confidence": 0.8, "consistent": c,
        "dimension": "tone", "model": "m", "prompt_version": "p"}) + "\n" for i, w, c in rows),
        encoding="utf-8")
    return path


def test_judge_consistency_counts_each_verdict_once_however_many_raters(tmp_path: Path) -> None:
    # Three raters on the inconsistent verdict, one on the consistent one: 0.250 was
    # reported, weighted by label rows; the share of the 2 verdicts is 1/2.
    from vocencebench.calibration import calibrate_files

    v = _verdicts_file(tmp_path / "v.jsonl", [("i1", "a", False), ("i2", "a", True)])
    files = []
    for rater, ids in (("ann", ("i1", "i2")), ("bo", ("i1",)), ("cy", ("i1",))):
        f = tmp_path / f"{rater}.csv"
        f.write_text("id,dimension,winner\n" + "".join(f"{i},tone,a\n" for i in ids))
        files.append(str(f))
    assert calibrate_files(files, v).by_dimension["tone"].consistency_rate == 0.5


def test_a_human_win_for_a_shows_the_numbers_that_decided_it(tmp_path: Path) -> None:
    # "a (n=10, LCB -1.000 vs 0.015)" printed b's bound against a's margin: a failed win.
    from vocencebench.calibration import calibrate_files

    v = _verdicts_file(tmp_path / "v.jsonl", [(f"i{k}", "a", True) for k in range(10)])
    labels = tmp_path / "ann.csv"
    labels.write_text("id,dimension,winner\n" + "".join(f"i{k},tone,a\n" for k in range(10)))
    text = calibrate_files(str(labels), v).summary()
    assert "a (n=10, LCB(a−b) +1.000 vs margin(b) 0.100)" in text, text


def test_a_bad_row_after_a_quoted_line_break_is_named_by_its_physical_line(
        tmp_path: Path) -> None:
    from vocencebench.calibration import read_human_csv
    from vocencebench.errors import ConfigError

    f = tmp_path / "labels.csv"
    f.write_text('id,dimension,winner,score_a,score_b,rater\nx1,tone,a,,,"Ann\nSmith"\n'
                 "x2,tone,a,,,Ann\nx3,tone,q,,,Ann\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"labels\.csv:5: winner 'q' is not a, b or tie"):
        read_human_csv(f)
