"""A forged verdict is never re-published (issue 25, defect 6), and ``decide`` recomputes
S from each row's ``d`` and ``gate``.

The audit: edit ``run.json`` (``decision.winner``, and every a-side S to 1.0), run
``vocencebench report DIR``: it printed and rendered "espeak-flat wins" while ``decide`` on
the scores.jsonl it had just rewritten said tie — and it rewrote the manifest, so the forged
set passed decide's checksum. Now ``report`` recomputes every S from its ``d`` and gate and
the decision from the S values (the published rule, :mod:`vocencebench.decide`), refuses a
run.json that disagrees in one line naming the fields, and writes nothing: the manifest's
checksums are never re-issued over a decision the scores do not support."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from repo_paths import SRC
from synthetic_run import make_head2head
from vocencebench.cli import main
from vocencebench.result import save_run, verify_run


def _files(d: Path) -> dict[str, bytes]:
    """Every file under ``d`` (the exported clips too) -> its bytes."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _edit(d: Path, change: Any) -> dict[str, bytes]:
    """Apply ``change`` to run.json's object and save it; the directory's bytes after."""
    path = d / "run.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return _files(d)


def _forge_winner_and_a_scores(data: dict[str, Any]) -> None:
    data["decision"]["winner"] = data["labels"][0]
    for p in data["pairs"]:
        if p["a"]["S"] is not None:
            p["a"]["S"] = 1.0


def _forge_consistently(data: dict[str, Any]) -> None:
    """Every a-side d (and so S) raised to 1, the decision left as it was: each row is
    self-consistent, the decision is not."""
    for p in data["pairs"]:
        a = p["a"]
        if a["S"] is not None and a["failure"] is None:
            a["d"] = dict.fromkeys(a["d"], 1.0)
            a["S"] = 1.0


def _forge_winner(data: dict[str, Any]) -> None:
    data["decision"]["winner"] = data["labels"][0]


def _forge_one_s(data: dict[str, Any]) -> None:
    data["pairs"][3]["b"]["S"] = 0.999


FORGERIES = {"winner-and-a-scores": (_forge_winner_and_a_scores, ["S", "winner"]),
             "consistent-rows": (_forge_consistently, ["winner", "mean_a"]),
             "winner-only": (_forge_winner, ["winner"]),
             "one-S": (_forge_one_s, ["S"])}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_report_refuses_a_forged_run_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], forgery: str) -> None:
    change, named = FORGERIES[forgery]
    save_run(make_head2head(), tmp_path)
    before = _edit(tmp_path, change)
    assert main(["report", str(tmp_path)]) == 2
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, lines
    assert "run.json" in lines[0] and "does not follow" in lines[0], lines
    for field in named:
        assert field in lines[0], (field, lines[0])
    assert "wins" not in out.out  # no summary re-published
    assert _files(tmp_path) == before


def test_report_re_renders_an_honest_run(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    h = make_head2head(incomplete_items=(2, 5), allow_incomplete=True)
    save_run(h, tmp_path)
    run_json = (tmp_path / "run.json").read_bytes()
    (tmp_path / "report.md").unlink()
    assert main(["report", str(tmp_path)]) == 0
    assert (tmp_path / "run.json").read_bytes() == run_json
    assert verify_run(tmp_path) == []
    assert "decided on 38 of 40 items" in capsys.readouterr().out


@pytest.mark.slow
def test_the_audits_forgery_through_the_real_cli(tmp_path: Path) -> None:
    """espeak-flat vs espeak-follow, run.json forged to "espeak-flat wins": ``report``
    refuses, and ``decide`` on the untouched scores.jsonl still gives the run's verdict."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = tmp_path / "run"

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "vocencebench", *argv], env=env,
                              capture_output=True, text=True, timeout=600, check=False)

    res = cli("run", "--system-a", "espeak-flat", "--system-b", "espeak-follow", "--limit",
              "12", "--workers", "1", "--skip-canaries", "--out", str(out), "--quiet")
    assert res.returncode == 0, res.stderr[-2000:]
    honest = json.loads((out / "run.json").read_text())["decision"]
    assert honest["winner"] != "espeak-flat"
    before = _edit(out, _forge_winner_and_a_scores)
    rep = cli("report", str(out))
    assert rep.returncode == 2, rep.stdout[-2000:] + rep.stderr[-2000:]
    assert "espeak-flat wins" not in rep.stdout
    assert len(rep.stderr.strip().splitlines()) == 1, rep.stderr
    assert _files(out) == before
    # scores.jsonl was not rewritten, so it still matches the checksum run.json records
    # for it, and decides as the run did
    dec = cli("decide", str(out / "scores.jsonl"), "--json")
    assert dec.returncode == 0, dec.stderr
    assert json.loads(dec.stdout)["winner"] == honest["winner"]


# ----------------------------------------------------------------------------- decide


def _rows(tmp: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _pairs(n: int = 6) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        for sys_, d in (("a", {"pace": 0.5, "pitch": 1.0}), ("b", {"pace": 1.0, "pitch": 1.0})):
            from vocencebench.decide import composite

            rows.append({"item": f"i{i}", "system": sys_, "S": composite(d, None), "d": d,
                         "gate": None})
    return rows


def test_decide_refuses_an_s_that_does_not_follow_from_d_and_gate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _pairs()
    rows[4] = {**rows[4], "S": 1.0, "d": {"pace": 0.0, "pitch": 0.0}}  # S = 1 with every d = 0
    assert main(["decide", str(_rows(tmp_path, rows))]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert ":5:" in err and "'i2'" in err and "'a'" in err, err
    assert "S=1.0" in err and "0.01" in err, err  # both values: given and recomputed


@pytest.mark.parametrize("gate, failure, expected", [(0, None, 0.0), (1, None, None),
                                                      (None, "synthesis: boom", 0.0)])
def test_decide_recomputes_with_the_gate_and_failures(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], gate: int | None,
        failure: str | None, expected: float | None) -> None:
    rows = _pairs()
    d = rows[0]["d"]
    from vocencebench.decide import composite

    good = expected if expected is not None else composite(d, gate)
    rows[0] = {**rows[0], "gate": gate, "failure": failure,
               "d": {} if failure else d, "S": good}
    assert main(["decide", str(_rows(tmp_path, rows))]) == 0
    rows[0]["S"] = 0.5
    assert main(["decide", str(_rows(tmp_path, rows))]) == 2
    assert "does not follow from its d and gate" in capsys.readouterr().err


def test_rows_with_only_s_are_taken_as_given_and_the_output_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"item": r["item"], "system": r["system"], "S": r["S"]} for r in _pairs()]
    path = _rows(tmp_path, rows)
    assert main(["decide", str(path)]) == 0
    assert "S taken as given for 12 of 12 rows" in capsys.readouterr().out
    assert main(["decide", str(path), "--json"]) == 0
    cap = capsys.readouterr()
    json.loads(cap.out)  # still exactly the Decision record
    assert "S taken as given for 12 of 12 rows" in cap.err
    full = _rows(tmp_path, _pairs())
    assert main(["decide", str(full)]) == 0
    assert "taken as given" not in capsys.readouterr().out
