"""Judge-vs-human agreement on small hand-made tables (values computed by hand)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from vocencebench.calibration import (
    HumanLabel,
    agreement,
    calibrate,
    calibrate_files,
    cohen_kappa,
    read_human_csv,
    spearman,
)
from vocencebench.cli import main
from vocencebench.errors import ConfigError
from vocencebench.schema import Verdict

HUMAN = ["a", "a", "b", "tie", "b", "a"]
JUDGE = ["a", "b", "b", "tie", "a", "a"]
CONSISTENT = [True, True, False, True, True, True]
HUMAN_SCORES = [(3, 1), (2, 1), (0, 2), (2, 2), (1, 3), None]
JUDGE_SCORES = [(3.0, 1.0), (1.0, 2.0), (1.0, 3.0), (2.0, 2.0), (2.0, 1.0), (2.0, 0.0)]


def verdict(i: int, dimension: str = "tone") -> Verdict:
    sa, sb = JUDGE_SCORES[i]
    return Verdict(JUDGE[i], sa, sb, "ra", "rb", 0.7, CONSISTENT[i], dimension,  # type: ignore[arg-type]
                   "m", "v", ("{}",))


def human(i: int, dimension: str = "tone") -> HumanLabel:
    s = HUMAN_SCORES[i]
    return HumanLabel(f"item{i}", dimension, HUMAN[i], *(map(float, s) if s else (None, None)))


def test_kappa_by_hand() -> None:
    # p_o = 4/6; marginals human a3 b2 t1, judge a3 b2 t1 → p_e = (9+4+1)/36 = 7/18
    # κ = (12/18 − 7/18) / (11/18) = 5/11
    assert cohen_kappa(HUMAN, JUDGE) == pytest.approx(5 / 11)
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # p_e = 1: undefined
    assert cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("x", "y", "rho"),
    [
        ([1, 2, 3, 4], [1, 3, 2, 4], 0.8),  # 1 − 6·2 / (4·15)
        ([1, 1, 2, 3], [1, 2, 3, 4], math.sqrt(0.9)),  # average ranks 1.5,1.5,3,4
        ([1, 2, 3], [3, 2, 1], -1.0),
        ([1, 1, 1], [1, 2, 3], None),
        ([1], [1], None),
    ],
)
def test_spearman_by_hand(x: list[float], y: list[float], rho: float | None) -> None:
    got = spearman(x, y)
    assert got == (None if rho is None else pytest.approx(rho))


def test_agreement_by_hand() -> None:
    a = agreement([(human(i), verdict(i)) for i in range(6)])
    assert a.n == 6 and a.accuracy == pytest.approx(4 / 6)
    assert a.kappa == pytest.approx(5 / 11)
    assert a.consistency_rate == pytest.approx(5 / 6)
    assert a.confusion["a"] == {"a": 2, "b": 1, "tie": 0}
    assert a.confusion["b"] == {"a": 1, "b": 1, "tie": 0}
    # scored pairs 0-4 → 10 clips: human 3,1,2,1,0,2,2,2,1,3 vs judge 3,1,1,2,1,3,2,2,2,1
    # average ranks: human 9.5,3,6.5,3,1,6.5,6.5,6.5,3,9.5 ; judge 9.5,2.5,2.5,6.5,2.5,9.5,
    # 6.5,6.5,6.5,2.5 ; both mean 5.5 → Σ dh·dj = 23, Σ dh² = 75, Σ dj² = 72
    assert a.n_scored == 5
    assert a.spearman == pytest.approx(23 / math.sqrt(75 * 72))


def test_calibrate_matches_and_splits_dimensions() -> None:
    humans = [human(i) for i in range(6)] + [human(0, "naturalness"),
                                             HumanLabel("zzz", "tone", "a")]
    verdicts = {(f"item{i}", "tone"): verdict(i) for i in range(6)}
    verdicts[("item0", "naturalness")] = verdict(0, "naturalness")
    verdicts[("lonely", "tone")] = verdict(1)
    r = calibrate(humans, verdicts)
    assert r.overall.n == 7 and r.unmatched_verdicts == 1
    # "zzz" is no item the verdicts know: left out of every number and named.
    assert r.unmatched_human == 0 and r.left_out == 1 and r.unknown_ids == ("zzz",)
    assert list(r.by_dimension) == ["naturalness", "tone"]
    assert r.by_dimension["naturalness"].accuracy == 1.0
    assert r.by_dimension["naturalness"].kappa is None
    assert r.by_dimension["tone"].kappa == pytest.approx(5 / 11)
    with pytest.raises(ConfigError, match="two human labels"):
        calibrate([human(0), human(0)], verdicts)


def write_files(tmp_path: Path) -> tuple[Path, Path]:
    csv = tmp_path / "human.csv"
    rows = ["id,dimension,winner,score_a,score_b"]
    for i in range(6):
        s = HUMAN_SCORES[i]
        rows.append(f"item{i},tone,{HUMAN[i].upper() if i == 0 else HUMAN[i]},"
                    + (f"{s[0]},{s[1]}" if s else ","))
    csv.write_text("\n".join(rows) + "\n")
    jsonl = tmp_path / "verdicts.jsonl"
    lines = []
    for i in range(6):
        d = verdict(i).to_dict()
        lines.append(json.dumps({"id": f"item{i}", **d} if i % 2 else
                                {"id": f"item{i}", "verdict": d}))
    jsonl.write_text("\n".join(lines) + "\n\n")
    return csv, jsonl


def test_files_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv, jsonl = write_files(tmp_path)
    r = calibrate_files(csv, jsonl)
    assert r.overall.accuracy == pytest.approx(4 / 6) and r.overall.n_scored == 5
    assert main(["calibrate", str(csv), str(jsonl), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["kappa"] == pytest.approx(5 / 11)
    assert main(["calibrate", str(csv), str(jsonl)]) == 0
    out = capsys.readouterr().out
    assert "tone" in out and "0.667" in out and "Diagnostic only" in out


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("id,winner\nx,a\n", "missing column"),
        ("id,dimension,winner\nx,tone,maybe\n", "not a, b or tie"),
        ("id,dimension,winner,score_a,score_b\nx,tone,a,4,1\n", "outside 0-3"),
        ("id,dimension,winner,score_a,score_b\nx,tone,a,2,\n", "both score_a and score_b"),
        ("id,dimension,winner,score_a,score_b\nx,tone,a,two,1\n", "not a number"),
    ],
)
def test_bad_human_csv(tmp_path: Path, content: str, match: str) -> None:
    p = tmp_path / "h.csv"
    p.write_text(content)
    with pytest.raises(ConfigError, match=match):
        read_human_csv(p)


def test_bad_verdicts_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv, _ = write_files(tmp_path)
    bad = tmp_path / "v.jsonl"
    bad.write_text('{"id": "x", "winner": "a"}\n')
    assert main(["calibrate", str(csv), str(bad)]) == 2
    assert "v.jsonl:1" in capsys.readouterr().err
    assert main(["calibrate", str(csv), str(tmp_path / "missing.jsonl")]) == 2


def test_a_spreadsheets_byte_order_mark_and_a_huge_field(tmp_path: Path) -> None:
    bom = tmp_path / "excel.csv"
    bom.write_bytes("\ufeffid,dimension,winner\nx,tone,a\n".encode())
    assert [(h.id, h.dimension, h.winner) for h in read_human_csv(bom)] == [("x", "tone", "a")]
    big = tmp_path / "big.csv"
    big.write_text("id,dimension,winner,note\nx,tone,a," + "n" * 200_000 + "\n")
    with pytest.raises(ConfigError, match=r"big\.csv:\d+: not a readable CSV row"):
        read_human_csv(big)


_GOOD = {"id": "item0", "winner": "a", "score_a": 3.0, "score_b": 1.0, "reasoning_a": "ra",
         "reasoning_b": "rb", "confidence": 0.7, "consistent": True, "dimension": "tone",
         "model": "m", "prompt_version": "v"}


@pytest.mark.parametrize(("change", "match"), [
    ({"score_a": 9}, "score_a must be a number in 0-3, not 9"),
    ({"score_b": float("nan")}, "score_b must be a number in 0-3, not nan"),
    ({"confidence": 5}, "confidence must be a number in 0-1, not 5"),
    ({"confidence": float("nan")}, "confidence must be a number in 0-1"),
    ({"consistent": "no"}, "consistent must be true or false, not 'no'"),
    ({"reasoning_a": 5}, "reasoning_a must be text, not 5"),
    ({"score_a": True}, "score_a must be a number in 0-3, not True"),
])
def test_a_verdicts_file_with_impossible_fields_names_the_line(
        tmp_path: Path, change: dict[str, object], match: str) -> None:
    from vocencebench.calibration import read_verdicts_jsonl

    p = tmp_path / "v.jsonl"
    p.write_text(json.dumps(_GOOD) + "\n" + json.dumps({**_GOOD, "id": "item1", **change})
                 + "\n")
    with pytest.raises(ConfigError, match=rf"v\.jsonl:2: verdict {match}"):
        read_verdicts_jsonl(p)


def test_a_verdicts_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    from vocencebench.calibration import read_verdicts_jsonl

    p = tmp_path / "latin1.jsonl"
    p.write_bytes(json.dumps({**_GOOD, "reasoning_a": "caf\u00e9"}, ensure_ascii=False)
                  .encode("latin-1") + b"\n")
    with pytest.raises(ConfigError, match=r"latin1\.jsonl is not UTF-8 text"):
        read_verdicts_jsonl(p)


def test_a_mistyped_dimension_is_named(tmp_path: Path) -> None:
    verdicts = {("item0", "tone"): verdict(0)}
    r = calibrate([human(0), HumanLabel("item0", "tonee", "a")], verdicts)
    assert r.unknown_dimensions == ("tonee",) and r.left_out == 1 and r.unmatched_human == 0
    assert ("WARNING: 1 human label row(s) left out of every number; dimension(s) not the "
            "run's: 'tonee'") in r.summary()
    assert r.to_dict()["unknown_dimensions"] == ["tonee"]
    assert calibrate([human(0)], {}).unknown_dimensions == ()  # no judge: nothing to compare
