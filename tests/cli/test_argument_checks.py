"""Arguments the command line used to take silently or check too late (the docs audit): an
empty path or label, a negative ``--show``, options a mode of ``leaderboard`` ignores, a bad
``--anchor`` or ``--reference`` found only after the output folder was claimed, a bare
``vocencebench judge``, and the name the error line gives a sub-command. Each is now one
error line (exit status 2) before anything is written."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import DOCS, ROOT
from vocencebench.cli import build_parser, main

RUN = ["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow", "--limit", "1"]


def _status(argv: list[str]) -> object:
    """main()'s status; argparse's own errors end it with SystemExit."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _one_error(capsys: pytest.CaptureFixture[str], argv: list[str], prefix: str) -> str:
    assert _status(argv) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 1 and lines[0].startswith(prefix), err
    return lines[0]


@pytest.mark.parametrize(("argv", "prefix"), [
    ([*RUN, "--out", ""], "vocencebench run: error: argument --out: must not be empty"),
    ([*RUN, "--label-a", ""], "vocencebench run: error: argument --label-a: must not be empty"),
    ([*RUN, "--label-b", ""], "vocencebench run: error: argument --label-b: must not be empty"),
    ([*RUN, "--cache", ""], "vocencebench run: error: argument --cache: must not be empty"),
    (["decide", ""], "vocencebench decide: error: argument SCORES.jsonl: must not be empty"),
    (["corpus", "check", ""], "vocencebench corpus check: error: argument FILE: must not be "
                              "empty"),
    (["corpus", "stats", ""], "vocencebench corpus stats: error: argument FILE: must not be "
                              "empty"),
    (["cache", "check", ""], "vocencebench cache check: error: argument PATH: must not be empty"),
    (["report", ""], "vocencebench report: error: argument run: must not be empty"),
    (["leaderboard", "--verify", ""], "vocencebench leaderboard: error: argument --verify: "
                                      "must not be empty"),
    (["leaderboard", "--demo", "--out", ""], "vocencebench leaderboard: error: argument --out: "
                                             "must not be empty"),
])
def test_an_empty_path_or_label_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                           prefix: str) -> None:
    # (Before: --out "" wrote runs/A-vs-B, --label-a "" fell back to the spec's name,
    # decide "" / corpus check "" / cache check "" reported on ".")
    monkeypatch.chdir(tmp_path)
    _one_error(capsys, argv, prefix)
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_corpus_check_refuses_a_negative_show(capsys: pytest.CaptureFixture[str]) -> None:
    _one_error(capsys, ["corpus", "check", "benchmark_v1", "--show", "-1"],
               "vocencebench corpus check: error: argument --show: must be ≥ 0, got -1")


@pytest.mark.parametrize(("argv", "message"), [
    (["leaderboard", "--demo", "--system", "a=espeak-flat"],
     "--demo ranks the offline built-ins; it takes no --system: drop it"),
    (["leaderboard", "--demo", "--anchor", "a"],
     "--demo ranks the offline built-ins; it takes no --anchor: drop it"),
    (["leaderboard", "--demo", "--verify", "DIR"],
     "--verify recomputes a published leaderboard; it takes no --demo: drop it"),
    (["leaderboard", "--verify", "DIR", "--system", "a=espeak-flat", "--system", "b=espeak-follow"],
     "--verify recomputes a published leaderboard; it takes no --system: drop it"),
])
def test_a_leaderboard_mode_refuses_the_options_it_would_ignore(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    line = _one_error(capsys, argv, "vocencebench leaderboard: error: ")
    assert line.endswith(message), line
    assert list(tmp_path.iterdir()) == []  # (--demo ran into runs/demo-leaderboard before)


def test_a_bad_anchor_is_refused_before_the_folder_is_claimed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "board"
    line = _one_error(capsys, ["leaderboard", "--system", "a=espeak-flat", "--system",
                               "b=espeak-follow", "--anchor", "zed", "--limit", "1",
                               "--out", str(out)], "vocencebench leaderboard: error: ")
    assert "--anchor 'zed' is not one of the systems: a, b" in line, line
    assert not out.exists()  # before: the folder and its marker, and the start line


def test_a_bad_reference_is_refused_before_the_folder_is_claimed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rt"
    line = _one_error(capsys, ["redteam", "--reference", "foo", "--limit", "1", "--out",
                               str(out)], "vocencebench redteam: error: ")
    assert "unknown system 'foo'" in line, line
    assert not out.exists()


@pytest.mark.parametrize("group", ["judge", "cache", "corpus"])
def test_a_command_group_without_its_sub_command_is_one_line(
        capsys: pytest.CaptureFixture[str], group: str) -> None:
    # (Before: a bare `vocencebench judge` printed its whole help.)
    assert _status([group]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [
        f"vocencebench {group}: error: the following arguments are required: SUBCOMMAND "
        f"(see vocencebench {group} --help)"]


def test_an_error_names_the_sub_command_as_the_docs_say(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_error(capsys, ["corpus", "check", str(tmp_path / "missing.jsonl")],
                      "vocencebench corpus check: error: ")
    assert "does not exist" in line, line
    line = _one_error(capsys, ["cache", "check", str(tmp_path / "missing.sqlite")],
                      "vocencebench cache check: error: no cache file at ")
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert "`vocencebench corpus check: error:`" in page


def test_the_docs_list_every_decide_option() -> None:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    section = page.split("## `decide`", 1)[1].split("\n## ", 1)[0]
    table = section.split("**Options.**", 1)[1].split("\n\n", 2)[1]
    documented: set[str] = set()
    for row in table.splitlines()[2:]:
        documented.update(w.split()[0] for w in row.split("|")[1].split("`")[1::2])
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    flags = {flag for action in sub.choices["decide"]._actions
             for flag in action.option_strings if flag.startswith("--")} - {"--help"}
    assert flags <= documented, sorted(flags - documented)


def test_quiet_says_it_hides_the_start_line(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "demo", "leaderboard"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert "--quiet no start line" in out, (command, out)


def test_make_sample_scores_refuses_too_few_items_in_one_line(tmp_path: Path) -> None:
    script = ROOT / "examples" / "make_sample_scores.py"
    for n in ("0", "-3", "14"):
        done = subprocess.run([sys.executable, str(script), "--n", n, "--out",
                               str(tmp_path / "s.jsonl")], capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.splitlines()[-1].startswith(
            f"make_sample_scores.py: error: --n {n}: "), done.stderr
        assert not (tmp_path / "s.jsonl").exists()
