"""`vocencebench decide` and the scores-file API it shares with the library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import DATA, ROOT
from vocencebench.cli import main
from vocencebench.errors import ScoresError
from vocencebench.schema import Decision, SampleScore
from vocencebench.scores import decide_scores, read_scores, write_scores

GOLDEN_SCORES = DATA / "golden_scores.jsonl"
GOLDEN_DECISION = json.loads((DATA / "golden_decision.json").read_text(encoding="utf-8"))
EXAMPLE = ROOT / "examples" / "sample_scores.jsonl"


def _write(tmp_path: Path, lines: list[str], name: str = "scores.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return p


def _row(item: str, system: str, s: object, **extra: object) -> str:
    return json.dumps({"item": item, "system": system, "S": s, **extra})


def _opt(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args else None


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["decide", *args])
    out, err = capsys.readouterr()
    return rc, out, err


# ------------------------------------------------------------------ happy paths


def test_json_output_is_the_golden_decision_bit_for_bit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, out, err = _run(capsys, str(GOLDEN_SCORES), "--json")
    # the golden rows carry S alone (no d, gate): decide says it took them as given
    assert rc == 0 and err.startswith("vocencebench decide: note: S taken as given for 240 of "
                                      "240 rows"), err
    got = json.loads(out)
    assert got.keys() == GOLDEN_DECISION.keys()
    for key, value in GOLDEN_DECISION.items():
        assert repr(got[key]) == repr(value), key
    assert Decision.from_dict(got).winner == "challenger"


def test_human_output_has_verdict_table_and_reason(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, str(GOLDEN_SCORES))
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "verdict: challenger wins"
    table = "\n".join(lines[:6])
    assert "incumbent   incumbent    0.6611      -0.1007   0.0269" in table
    assert "challenger  challenger   0.7307      +0.0382   0.0339" in table
    assert "n = 120 paired items; 2000 resamples, seed 3151662" in out
    assert f"reason: {GOLDEN_DECISION['reason']}" in out


def test_naming_the_roles_swaps_them(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, str(GOLDEN_SCORES), "--incumbent", "challenger", "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["labels"] == ["challenger", "incumbent"] and d["winner"] == "challenger"
    assert repr(d["lcb_reverse"]) == repr(GOLDEN_DECISION["lcb"])
    # naming only the challenger also determines the incumbent when there are two systems
    rc, out2, _ = _run(capsys, str(GOLDEN_SCORES), "--challenger", "incumbent", "--json")
    assert rc == 0 and json.loads(out2) == d


def test_extra_fields_blank_lines_and_interleaving_are_fine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _write(tmp_path, [
        _row("i1", "x", 0.5, d={"pace": 0.5}, wer=0.1),  # S follows from d (one dimension)
        _row("i2", "x", 0.25),
        "",
        _row("i2", "y", 0.75, note="extra"),
        _row("i1", "y", 1),
    ])
    table = read_scores(p)
    assert table.systems == ("x", "y") and table.items == ("i1", "i2")
    paired = table.pair()
    assert (paired.incumbent, paired.challenger) == ("x", "y")
    assert paired.items == ("i1", "i2") and paired.a == (0.5, 0.25) and paired.b == (1.0, 0.75)
    assert table.lines[("i2", "y")] == 4
    rc, out, _ = _run(capsys, str(p))
    assert rc == 0 and out.startswith("verdict: ")


def test_api_and_cli_agree_and_write_scores_round_trips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        SampleScore(item=f"it-{i}", system=s, S=v, d={"pace": v}, gate=1, wer=0.0)
        for i in range(12)
        for s, v in (("old", 0.4 + 0.01 * i), ("new", 0.6 + 0.01 * i))
    ]
    p = tmp_path / "s.jsonl"
    assert write_scores(rows, p) == 24
    d = decide_scores(p)
    assert d.labels == ("old", "new") and d.winner == "new"
    rc, out, _ = _run(capsys, str(p), "--json")
    assert rc == 0 and Decision.from_dict(json.loads(out)) == d


def test_shipped_example_is_decidable(capsys: pytest.CaptureFixture[str]) -> None:
    table = read_scores(EXAMPLE)
    assert table.systems == ("flat-v1", "steer-v2") and len(table.items) == 60
    rc, out, _ = _run(capsys, str(EXAMPLE))
    assert rc == 0 and "reason: n=60 paired items" in out


# ------------------------------------------------------------------ errors


ERROR_CASES: list[tuple[str, list[str], list[str], str]] = [
    ("unpaired", [_row("i1", "a", 0.5), _row("i1", "b", 0.5), _row("i2", "a", 0.5)], [],
     r"unpaired items — 1 item\(s\) scored for 'a' but not 'b': 'i2' \(line 3\)"),
    ("duplicate", [_row("i1", "a", 0.5), _row("i1", "b", 0.5), _row("i1", "a", 0.6)], [],
     r":3: duplicate row for item 'i1' system 'a' \(first on line 1\)"),
    ("nan", [_row("i1", "a", 0.5), '{"item": "i1", "system": "b", "S": NaN}'], [],
     r":2: item 'i1' system 'b': S=nan is not finite"),
    ("range", [_row("i1", "a", 1.5), _row("i1", "b", 0.5)], [],
     r":1: item 'i1' system 'a': S=1.5 is outside \[0, 1\]"),
    ("negative", [_row("i1", "a", 0.5), _row("i1", "b", -0.2)], [],
     r":2: item 'i1' system 'b': S=-0.2 is outside"),
    ("missing S", [_row("i1", "a", 0.5), '{"item": "i1", "system": "b"}'], [],
     r":2: missing S; each row needs item, system and S"),
    ("string S", [_row("i1", "a", "0.5")], [], r":1: item 'i1' system 'a': S='0.5' is not a"),
    ("bool S", [_row("i1", "a", True)], [], r"S=True is not a number"),
    ("bad item", ['{"item": 3, "system": "a", "S": 0.1}'], [], r":1: item must be a non-empty"),
    ("invalid json", [_row("i1", "a", 0.5), '{"item": "i1", "system": '], [],
     r":2: invalid JSON \(.*\); each line must be one JSON object"),
    ("not an object", ["[1, 2]"], [], r":1: expected a JSON object, got list"),
    ("one system", [_row("i1", "a", 0.5), _row("i2", "a", 0.5)], [],
     r"a decision needs two systems, found only 'a'"),
    ("three systems", [_row("i1", s, 0.5) for s in "abc"], [],
     r"3 systems \('a', 'b', 'c'\); choose two with --incumbent NAME --challenger NAME"),
    ("unknown system", [_row("i1", "a", 0.5), _row("i1", "b", 0.5)], ["--incumbent", "zed"],
     r"no system named 'zed'; systems in the file: 'a', 'b'"),
    ("same system", [_row("i1", "a", 0.5), _row("i1", "b", 0.5)],
     ["--incumbent", "a", "--challenger", "a"], r"both 'a'"),
    ("empty", [], [], r"empty scores file"),
    ("blank only", ["", "   "], [], r"empty scores file"),
    # The fourth audit: each of these was a wrong verdict or a traceback.
    ("system named tie", [_row("i1", "a", 0.1), _row("i1", "tie", 0.9)], [],
     r":2: 'tie' cannot name a system: it is a decision outcome"),
    ("system named incomplete", [_row("i1", "incomplete", 0.1), _row("i1", "b", 0.9)], [],
     r":1: 'incomplete' cannot name a system"),
    ("401-digit S", [_row("i1", "a", 0.5), '{"item": "i1", "system": "b", "S": 1' + "0" * 400
                     + "}"], [], r":2: item 'i1' system 'b': S=inf is not finite"),
    ("5001-digit S", [_row("i1", "a", 0.5), '{"item": "i1", "system": "b", "S": 1' + "0" * 5000
                      + "}"], [], r":2: not a scores row \(Exceeds the limit"),
    ("deep nesting", [_row("i1", "a", 0.5), '{"item": "i1", "system": "b", "S": 0.5, "x": '
                      + "[" * 100_000 + "]" * 100_000 + "}"], [], r":2: not a scores row"),
    ("duplicate key", [_row("i1", "a", 0.5), '{"item": "i1", "system": "b", "S": 0.1, "S": 1}'],
     [], r":2: not a scores row \(key 'S' appears twice in one row\)"),
    ("failed but S 1", [_row("i1", "a", 0.5), _row("i1", "b", 1.0, failure="synthesis: x")], [],
     r":2: item 'i1' system 'b': S=1.0 does not follow from its d and gate .* gives 0.0"),
    ("vetoed but S 1", [_row("i1", "a", 0.5), _row("i1", "b", 1.0, gate=0)], [],
     r":2: item 'i1' system 'b': S=1.0 does not follow"),
    ("empty d", [_row("i1", "a", 0.5), _row("i1", "b", 1.0, d={})], [],
     r":2: item 'i1' system 'b': d is empty: a sample with no scored dimension"),
    ("bad gate without d", [_row("i1", "a", 0.5), _row("i1", "b", 0.5, gate="banana")], [],
     r":2: item 'i1' system 'b': gate='banana' must be 0, 1 or null"),
    ("dimension left out", [_row("i1", "a", 1.0, d={"pitch": 1.0, "pace": 1.0}),
                            _row("i1", "b", 1.0, d={"pitch": 1.0})], [],
     r":2: item 'i1' system 'b' is scored on pitch but its pair on pace, pitch"),
]


@pytest.mark.parametrize(("lines", "args", "match"), [c[1:] for c in ERROR_CASES],
                         ids=[c[0] for c in ERROR_CASES])
def test_bad_scores_files_fail_with_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], args: list[str],
    match: str,
) -> None:
    p = _write(tmp_path, lines)
    with pytest.raises(ScoresError, match=match):
        read_scores(p).pair(_opt(args, "--incumbent"), _opt(args, "--challenger"))
    rc, out, err = _run(capsys, str(p), *args)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("vocencebench decide: error: ")


def test_three_systems_work_once_two_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _write(tmp_path, [_row(f"i{i}", s, 0.5) for i in range(5) for s in "abc"])
    rc, out, _ = _run(capsys, str(p), "--incumbent", "c", "--challenger", "a", "--json")
    assert rc == 0 and json.loads(out)["labels"] == ["c", "a"]


def test_unpaired_lists_at_most_five_items(tmp_path: Path) -> None:
    lines = [_row("i0", "a", 0.1), _row("i0", "b", 0.1)]
    lines += [_row(f"only{i}", "b", 0.1) for i in range(8)]
    with pytest.raises(ScoresError, match=r"8 item\(s\) scored for 'b' but not 'a'.* and 3 more"):
        read_scores(_write(tmp_path, lines)).pair()


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _run(capsys, str(tmp_path / "nope.jsonl"))
    assert rc == 2 and "nope.jsonl: no such scores file" in err
    rc, _, err = _run(capsys, str(tmp_path))
    assert rc == 2 and "is a directory" in err


@pytest.mark.slow
def test_console_script_end_to_end() -> None:
    exe = Path(sys.executable).with_name("vocencebench")
    assert exe.exists(), f"console script missing at {exe}; pip install -e . first"
    done = subprocess.run(
        [str(exe), "decide", str(GOLDEN_SCORES), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert {k: repr(v) for k, v in got.items()} == {
        k: repr(v) for k, v in GOLDEN_DECISION.items()
    }
    bad = subprocess.run(
        [str(exe), "decide", str(DATA / "does-not-exist.jsonl")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert bad.returncode == 2 and "no such scores file" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_an_incomplete_run_is_refused_and_decided_only_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from synthetic_run import make_head2head
    from vocencebench.result import save_run
    from vocencebench.schema import Decision

    refused = save_run(make_head2head(incomplete_items=(3, 11)), tmp_path / "inc")
    rows = [json.loads(x) for x in (refused / "scores.jsonl").read_text().splitlines()]
    gaps = [r for r in rows if r.get("incomplete")]
    assert len(gaps) == 4 and all(r["S"] is None for r in gaps)
    assert main(["decide", str(refused / "scores.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "2 item(s) are incomplete" in err and "--allow-incomplete" in err

    # Decided on the complete items, the published file gives the run's own Decision.
    h = make_head2head(incomplete_items=(3, 11), allow_incomplete=True)
    run = save_run(h, tmp_path / "allowed")
    assert main(["decide", str(run / "scores.jsonl"), "--allow-incomplete", "--json"]) == 0
    got = Decision.from_json(capsys.readouterr().out)
    assert got.to_dict() == h.decision.to_dict()
    assert got.reason.startswith("decided on 38 of 40 items; 2 incomplete: judge: 2")


def test_an_incomplete_row_must_have_a_null_score(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text('{"item":"x","system":"a","S":0.5,"incomplete":"judge: 503"}\n'
                 '{"item":"x","system":"b","S":0.5}\n')
    with pytest.raises(ScoresError, match=r"incomplete but has S=0\.5"):
        read_scores(f)


def test_both_clips_of_an_item_are_scored_on_the_pairs_dimensions(tmp_path: Path) -> None:
    """The forgery the audit built: every dimension a row missed dropped from its d and S
    recomputed honestly from the rest. Only the rule's own exceptions may differ: a failed
    side (the other keeps its probe dimensions) and an item the gate vetoed on both sides
    (neither was judged)."""
    full = {"pitch": 1.0, "pace": 0.5, "tone": 1.0}
    probes = {"pitch": 1.0, "pace": 0.5}
    ok = [_row("i1", "a", 0.7937005259840998, d=full), _row("i1", "b", 0.7937005259840998,
                                                           d=full),
          _row("i2", "a", 0.0, d={}, failure="synthesis: boom"),
          _row("i2", "b", 0.7071067811865476, d=probes),
          _row("i3", "a", 0.0, d=probes, gate=0), _row("i3", "b", 0.0, d=probes, gate=0)]
    assert decide_scores(_write(tmp_path, ok)).n == 3
    forged = [*ok, _row("i4", "a", 0.7071067811865476, d=probes),
              _row("i4", "b", 0.7937005259840998, d=full)]
    with pytest.raises(ScoresError, match=r":7: item 'i4' system 'a' is scored on pace, pitch "
                                          r"but its pair on pace, pitch, tone"):
        decide_scores(_write(tmp_path, forged, "forged.jsonl"))
    vetoed = [*ok, _row("i4", "a", 0.0, d=probes, gate=0),
              _row("i4", "b", 0.0, d={"pitch": 1.0}, gate=0)]
    with pytest.raises(ScoresError, match=r"item 'i4' system 'b' is scored on pitch but its "
                                          r"pair on pace, pitch"):
        decide_scores(_write(tmp_path, vetoed, "vetoed.jsonl"))


def test_a_row_with_s_alone_is_still_taken_as_given(tmp_path: Path) -> None:
    p = _write(tmp_path, [_row("i1", "a", 0.2), _row("i1", "b", 0.9, d=None)])
    table = read_scores(p)
    assert table.given == 2 and table.scored == 2


def test_the_arithmetic_refuses_an_outcome_word_as_a_label() -> None:
    from vocencebench.board.cells import check_names
    from vocencebench.decide import decide
    from vocencebench.errors import ConfigError

    for word in ("tie", "incomplete"):
        with pytest.raises(ScoresError, match=f"'{word}' cannot label a system"):
            decide([0.1, 0.2], [0.9, 0.9], labels=("x", word))
        with pytest.raises(ConfigError, match=f"'{word}' cannot name a system"):
            check_names(["x", word])


def test_an_error_after_pairing_names_the_file(tmp_path: Path) -> None:
    rows = [json.dumps({"item": f"i{k}", "system": s, "S": None, "d": {"pitch": 1.0},
                        "unjudged": ["tone"], "gate": 1}) for k in range(3) for s in "ab"]
    p = _write(tmp_path, rows)
    with pytest.raises(ScoresError, match=rf"^{p}: 3 of 3 items were never judged"):
        decide_scores(p)
