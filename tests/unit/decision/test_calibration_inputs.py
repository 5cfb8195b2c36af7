"""What calibrate lets in: only labels of the run's items and dimensions feed a number (the
rest is left out and named, loudly), and the listening page's export, whose rows name the
left or right clip, is read through its test's key or refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic_run import make_head2head
from vocencebench.calibration import (
    ListeningKey,
    calibrate,
    calibrate_files,
    read_human_csv,
)
from vocencebench.cli import main
from vocencebench.errors import ConfigError
from vocencebench.result import save_run
from vocencebench.schema import Verdict

EXPORT_HEADER = "test,trial,id,dimension,choice,score_left,score_right,rater\n"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    h = make_head2head(n=12)
    return save_run(h, tmp_path_factory.mktemp("calib") / "run", clips=False), h


def _labels(h: object, path: Path, *, extra: list[str] = ()) -> Path:  # type: ignore[assignment]
    rows = ["id,dimension,winner,score_a,score_b,rater"]
    for p in h.pairs:  # type: ignore[attr-defined]
        rows.append(f"{p.item.id},tone,b,,,Ann")
        rows.append(f"{p.item.id},naturalness,b,,,Ann")
    path.write_text("\n".join([*rows, *extra]) + "\n", encoding="utf-8")
    return path


_STRAYS = ([f"nope-{k},tone,a,,,Ann" for k in range(1, 31)]
           + [f"vb-{k:05d},Tone,a,,,Ann" for k in range(1, 13)]
           + [f"vb-{k:05d},naturalnes,a,,,Bo" for k in range(1, 13)])


def test_labels_outside_the_run_change_no_number_and_are_named(
        run: tuple, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, h = run
    clean = calibrate_files(_labels(h, tmp_path / "clean.csv"), path)
    dirty = calibrate_files(_labels(h, tmp_path / "dirty.csv", extra=_STRAYS), path)
    assert clean.human_verdicts["tone"].decision is not None
    assert clean.human_verdicts["tone"].decision.winner == h.labels[1]
    keep = ("overall", "by_dimension", "raters", "inter_rater_alpha", "human_head_to_head",
            "unmatched_human", "unmatched_verdicts")
    assert {k: dirty.to_dict()[k] for k in keep} == {k: clean.to_dict()[k] for k in keep}
    assert dirty.raters == ("Ann",)  # Bo labelled nothing of the run
    assert dirty.left_out == 54 and clean.left_out == 0
    assert dirty.unknown_ids == tuple(sorted(f"nope-{k}" for k in range(1, 31)))
    assert dirty.unknown_dimensions == ("Tone", "naturalnes")
    line = dirty.left_out_line()
    assert line is not None and line.startswith("WARNING: 54 human label row(s) left out")
    assert "'nope-1', 'nope-10', 'nope-11', 'nope-12', 'nope-13' and 25 more" in line
    assert "'Tone', 'naturalnes'" in line
    assert line in dirty.summary() and "WARNING" not in clean.summary()
    assert dirty.to_dict()["left_out"] == 54
    # The CLI says it too, on standard error when standard output is JSON.
    assert main(["calibrate", str(tmp_path / "dirty.csv"), "--run", str(path)]) == 0
    assert line in capsys.readouterr().out
    assert main(["calibrate", str(tmp_path / "dirty.csv"), "--run", str(path), "--json"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["unknown_ids"][0] == "nope-1"
    assert got.err == f"vocencebench calibrate: {line}\n"


def test_report_labels_leaves_the_same_rows_out(run: tuple, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path, h = run
    tables = []
    for name, extra in (("clean", []), ("dirty", _STRAYS)):
        labels = _labels(h, tmp_path / f"{name}.csv", extra=extra)
        assert main(["report", str(path), "--labels", str(labels)]) == 0
        md = (path / "report.md").read_text(encoding="utf-8")
        section = md[md.index("## Human labels"):md.index("## Run metadata")]
        tables.append(section)
    capsys.readouterr()
    rows = [[ln for ln in t.splitlines() if ln.startswith("|")] for t in tables]
    assert rows[0] == rows[1]
    assert "WARNING" not in tables[0]
    assert "**WARNING: 54 human label row(s) left out of every number" in tables[1]
    page = (path / "report.html").read_text(encoding="utf-8")
    assert "WARNING: 54 human label row(s) left out" in page
    assert main(["report", str(path)]) == 0  # leave the run as the fixture made it


def test_without_a_run_the_verdicts_say_what_the_items_are() -> None:
    v = Verdict("a", 3.0, 1.0, "ra", "rb", 0.8, True, "tone", "m", "v")  # type: ignore[arg-type]
    from vocencebench.calibration import HumanLabel

    human = [HumanLabel("i1", "tone", "a", rater="r"), HumanLabel("i1", "instruction", "b",
                                                                  rater="r"),
             HumanLabel("zz", "tone", "b", rater="r")]
    r = calibrate(human, {("i1", "tone"): v})
    assert r.left_out == 1 and r.unknown_ids == ("zz",) and r.unknown_dimensions == ()
    assert r.unmatched_human == 1  # the instruction question: counted, not judged
    assert set(r.human_verdicts) == {"tone", "instruction", "ALL"}
    assert calibrate(human, {}).left_out == 0  # nothing says what the run is: all kept


def _key_folder(folder: Path, test: str = "t0ast") -> ListeningKey:
    """A listening folder as ``listen`` lays it out: key.json, and page/ (what raters get)."""
    key = ListeningKey(test, {1: ("vb-00001", "a"), 2: ("vb-00002", "b")})
    (folder / "page").mkdir(parents=True, exist_ok=True)
    (folder / "key.json").write_text(key.to_json(), encoding="utf-8")
    (folder / "page" / "test.json").write_text(json.dumps({"test": test}), encoding="utf-8")
    return key


_EXPORT = (EXPORT_HEADER + "t0ast,1,vb-00001,tone,left,3,1,Ann\n"
           "t0ast,2,vb-00002,tone,left,3,1,Ann\n" "t0ast,2,vb-00002,naturalness,tie,,,Ann\n"
           "t0ast,1,vb-00001,naturalness,right,,,Ann\n")


def test_a_page_export_is_read_through_its_key(tmp_path: Path) -> None:
    _key_folder(tmp_path / "listen")
    beside = tmp_path / "listen" / "labels-Ann.csv"
    beside.write_text(_EXPORT, encoding="utf-8")
    got = [(h.id, h.dimension, h.winner, h.score_a, h.score_b, h.rater)
           for h in read_human_csv(beside)]
    # Trial 1 shows a on the left, trial 2 shows b there: the same screen answer, two
    # different winners of the run, and the scores follow their clips.
    assert got == [("vb-00001", "tone", "a", 3.0, 1.0, "Ann"),
                   ("vb-00002", "tone", "b", 1.0, 3.0, "Ann"),
                   ("vb-00002", "naturalness", "tie", None, None, "Ann"),
                   ("vb-00001", "naturalness", "b", None, None, "Ann")]
    below = tmp_path / "listen" / "labels" / "x.csv"  # a folder inside the test's: found too
    below.parent.mkdir()
    below.write_text(_EXPORT, encoding="utf-8")
    assert [h.winner for h in read_human_csv(below)] == ["a", "b", "tie", "b"]
    # Saved beside the page (the folder raters got): its key is the one beside page/.
    in_page = tmp_path / "listen" / "page" / "labels-Ann.csv"
    in_page.write_text(_EXPORT, encoding="utf-8")
    assert [h.winner for h in read_human_csv(in_page)] == ["a", "b", "tie", "b"]
    assert not (tmp_path / "listen" / "page" / "key.json").exists()


def test_a_page_export_without_its_key_is_refused(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "Downloads" / "labels-Ann.csv"
    elsewhere.parent.mkdir()
    elsewhere.write_text(_EXPORT, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"labels-Ann\.csv:2: .*test 't0ast'.*key\.json"):
        read_human_csv(elsewhere)
    _key_folder(tmp_path / "Downloads", test="another")  # a key, but of another test
    with pytest.raises(ConfigError, match="test 't0ast'"):
        read_human_csv(elsewhere)
    key = _key_folder(tmp_path / "listen")
    assert [h.winner for h in read_human_csv(elsewhere, [key])] == ["a", "b", "tie", "b"]
    h = make_head2head(n=4)
    run = save_run(h, tmp_path / "run", clips=False)
    assert main(["calibrate", str(elsewhere), "--run", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vocencebench calibrate: error:") and err.count("\n") == 1, err
    # --key takes the listening folder, its key.json or its page/ folder.
    for given in ("listen", "listen/key.json", "listen/page"):
        assert main(["calibrate", str(elsewhere), "--run", str(run), "--key",
                     str(tmp_path / given)]) == 0, given
        assert "raters: 1 (Ann)" in capsys.readouterr().out
    # A folder that is not a listening page/ does not lend its parent's key.
    (tmp_path / "listen" / "stray").mkdir()
    assert main(["calibrate", str(elsewhere), "--run", str(run), "--key",
                 str(tmp_path / "listen" / "stray")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vocencebench calibrate: error:") and err.count("\n") == 1, err


@pytest.mark.parametrize(("row", "match"), [
    ("t0ast,2,vb-00001,tone,left,,,Ann", "trial 2 of test t0ast is not item 'vb-00001'"),
    ("t0ast,9,vb-00001,tone,left,,,Ann", "trial 9 of test t0ast"),
    ("t0ast,x,vb-00001,tone,left,,,Ann", "trial 'x'"),
    ("t0ast,1,vb-00001,tone,a,,,Ann", "choice must be left, right or tie, got 'a'"),
    ("t0ast,1,vb-00001,tone,left,2,,Ann", "give both score_left and score_right"),
])
def test_a_page_export_row_that_is_not_the_keys_is_named(tmp_path: Path, row: str,
                                                         match: str) -> None:
    _key_folder(tmp_path)
    f = tmp_path / "e.csv"
    f.write_text(EXPORT_HEADER + row + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"e\.csv:2: {match}"):
        read_human_csv(f)
