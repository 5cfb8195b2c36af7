"""Files a run wrote, read back after a hand edit or with unusual text in them: every problem
is one ConfigError/ScoresError naming the file, never a traceback and never a number taken
on trust (the third hostile round's bad-input audit)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from synthetic_run import make_head2head
from vocencebench.errors import ConfigError, CorpusError
from vocencebench.result import load_run, save_run
from vocencebench.robustness import robustness_of_file
from vocencebench.scores import decide_scores


def test_a_label_with_a_unicode_line_separator_round_trips_through_scores_jsonl(
        tmp_path: Path) -> None:
    """JSON Lines rows end at "\\n" only: U+2028, U+2029 and U+0085 inside a label (left
    raw by the canonical writer) are text, not line breaks."""
    labels = ("flat", "new\u2028model\u2029v\x852")
    h = make_head2head(12, labels=labels)
    out = save_run(h, tmp_path / "run", clips=False)
    assert "\u2028" in (out / "scores.jsonl").read_text(encoding="utf-8")
    d = decide_scores(out / "scores.jsonl", incumbent=labels[0], challenger=labels[1])
    assert d.to_dict() == h.decision.to_dict()
    rob = robustness_of_file(out / "scores.jsonl", incumbent=labels[0], challenger=labels[1])
    assert rob.to_dict() == h.robustness.to_dict()  # what the run itself recorded


def _edit(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], Path]:
    def run(tmp: Path) -> Path:
        out = save_run(make_head2head(12), tmp / "run", clips=False)
        path = out / "run.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data), encoding="utf-8")  # NaN is written as NaN
        return out
    return run


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node = data
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    return change


def _swap_items(data: dict[str, Any]) -> None:
    data["pairs"][0]["a"]["item"] = data["pairs"][1]["item"]["id"]


def _swap_systems(data: dict[str, Any]) -> None:
    p = data["pairs"][2]
    p["a"]["system"], p["b"]["system"] = p["b"]["system"], p["a"]["system"]


EDITS = [
    ("item-null", _set(("pairs", 0, "item"), None), "not a complete run record"),
    ("decision-null", _set(("decision",), None), "not a complete run record"),
    ("probes-a-list", _set(("pairs", 0, "analysis_b", "probes"), []),
     "not a complete run record"),
    ("verdicts-a-list", _set(("pairs", 0, "verdicts"), []), "not a complete run record"),
    ("probe-d-nan", _set(("pairs", 0, "analysis_a", "probes", "pitch", "d"), float("nan")),
     r"probe result for 'pitch': d must be a number in \[0, 1\], not nan"),
    ("probe-d-2", _set(("pairs", 0, "analysis_a", "probes", "pitch", "d"), 2.0),
     r"d must be a number in \[0, 1\], not 2\.0"),
    ("probe-value-inf", _set(("pairs", 0, "analysis_a", "probes", "pitch", "value"),
                             float("inf")), "value must be a finite number, text or null"),
    ("wer-text", _set(("pairs", 0, "analysis_a", "wer"), "x"),
     r"clip analysis 'vb-00001'/'flat-v1': wer must be a number ≥ 0 or null, not 'x'"),
    ("wer-negative", _set(("pairs", 0, "analysis_a", "wer"), -1), "wer must be a number ≥ 0"),
    ("duration-negative", _set(("pairs", 1, "analysis_b", "duration"), -2.5),
     r"'vb-00002'/'steer-v2': duration must be seconds > 0 or null, not -2\.5"),
    ("gate-2", _set(("pairs", 1, "analysis_b", "gate"), 2), "gate must be 0, 1 or null"),
    ("score-of-another-item", _swap_items,
     r"pair 0 \(item 'vb-00001'\): side a's score is for item 'vb-00002'"),
    ("systems-swapped", _swap_systems,
     r"pair 2 \(item 'vb-00003'\): side a's score is for item 'vb-00003' system 'steer-v2', "
     r"not item 'vb-00003' system 'flat-v1'"),
]


@pytest.mark.parametrize(("case", "edit", "match"), EDITS, ids=[e[0] for e in EDITS])
def test_an_edited_run_json_is_one_named_error(tmp_path: Path, case: str,
                                               edit: Callable[[dict[str, Any]], None],
                                               match: str) -> None:
    out = _edit(edit)(tmp_path)
    with pytest.raises(ConfigError, match=match) as err:
        load_run(out)
    assert str(out / "run.json") in str(err.value)


def test_the_cli_report_on_an_edited_run_says_so_and_keeps_the_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vocencebench.cli import main

    out = _edit(_swap_items)(tmp_path)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert "not a consistent run record" in err and "Traceback" not in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_a_garbled_pin_file_reads_as_a_pin_that_does_not_match(tmp_path: Path) -> None:
    import vocencebench as vb
    from vocencebench.corpus import write_corpus

    corpus = vb.load_benchmark("benchmark_v1")[:3]

    path = tmp_path / "mine.jsonl"
    write_corpus(corpus, path)
    pin = path.with_suffix(".sha256")
    pin.write_bytes(b"\xff\xfe x\n")
    with pytest.raises(CorpusError, match=r"mine\.sha256: not a SHA-256 pin"):
        vb.load_benchmark(str(path))
