"""Output directories and saved file sets: ours or refused, atomic, consistent after a kill."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import vocencebench.outputs as outputs
from synthetic_run import make_head2head
from vocencebench.cli import main
from vocencebench.commands.decide import check_against_run
from vocencebench.errors import ConfigError, ScoresError
from vocencebench.outputs import MARKER, atomic_write, claim_directory, verify_set, write_set
from vocencebench.result import RUN_FILES, load_run, save_run, verify_run


def test_atomic_write_replaces_whole_files_and_leaves_no_temporaries(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write(target, "one")
    atomic_write(target, b"two")
    assert target.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_a_failed_atomic_write_keeps_the_old_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.txt"
    atomic_write(target, "old")

    def boom(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_claim_directory_accepts_new_empty_and_own_directories(tmp_path: Path) -> None:
    new = claim_directory(tmp_path / "a" / "b", kind="run")
    assert json.loads((new / MARKER).read_text())["kind"] == "run"
    (new / "scores.jsonl").write_text("x")
    assert claim_directory(new, kind="run") == new  # ours: accepted again
    empty = tmp_path / "empty"
    empty.mkdir()
    assert claim_directory(empty, kind="run") == empty


def test_claim_directory_refuses_a_strangers_directory_unless_forced(tmp_path: Path) -> None:
    foreign = tmp_path / "theirs"
    foreign.mkdir()
    (foreign / "scores.jsonl").write_text("their data\n")
    (foreign / "cache.sqlite").write_bytes(b"SQLite format 3\x00their db")
    before = {p.name: p.read_bytes() for p in foreign.iterdir()}
    with pytest.raises(ConfigError, match=r"not created by vocencebench.*--force"):
        claim_directory(foreign, kind="run")
    assert {p.name: p.read_bytes() for p in foreign.iterdir()} == before  # untouched
    assert claim_directory(foreign, kind="run", force=True) == foreign
    assert (foreign / MARKER).is_file()


def test_claim_directory_refuses_another_kind_and_files(tmp_path: Path) -> None:
    lb = claim_directory(tmp_path / "lb", kind="leaderboard")
    with pytest.raises(ConfigError, match="'leaderboard'"):
        claim_directory(lb, kind="run")
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        claim_directory(f, kind="run")


def _set_state(d: Path) -> str:
    """'old', 'new' or 'none' — what a reader of the directory sees."""
    if not (d / "run.json").exists():
        return "none"
    assert verify_set(d, manifest_name="run.json") == []
    return json.loads((d / "run.json").read_text())["generation"]


def _dies_after(n: int, real: Callable[..., object]) -> Callable[..., object]:
    calls = [0]

    def dying(*args: object) -> object:
        calls[0] += 1
        if calls[0] > n:
            raise KeyboardInterrupt  # the process dies here
        return real(*args)

    return dying


@pytest.mark.parametrize("step", ["write_temporary", "replace"])
def test_a_save_killed_at_any_step_leaves_the_old_set_none_or_the_new_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str,
) -> None:
    files_old = {"scores.jsonl": "old scores\n", "report.md": "old", "report.html": "old"}
    files_new = {"scores.jsonl": "new scores\n", "report.md": "new", "report.html": "new"}
    where = outputs if step == "write_temporary" else os
    real = getattr(where, step)
    seen: set[str] = set()
    for kill_at in range(6):
        d = tmp_path / f"k{kill_at}"
        write_set(d, files_old, manifest_name="run.json", manifest={"generation": "old"})
        monkeypatch.setattr(where, step, _dies_after(kill_at, real))
        with contextlib.suppress(KeyboardInterrupt):
            write_set(d, files_new, manifest_name="run.json", manifest={"generation": "new"})
        monkeypatch.setattr(where, step, real)
        seen.add(_set_state(d))
        assert not [p.name for p in d.iterdir() if p.name.endswith(".tmp")]
    # Killed while the temporaries are written: the old set, untouched. Killed between the
    # renames: no manifest (it goes first, the new one comes last). Never a torn set.
    assert seen == ({"old", "new"} if step == "write_temporary" else {"none", "new"})


def test_a_real_sigkill_during_saves_never_leaves_a_torn_set(tmp_path: Path) -> None:
    script = tmp_path / "saver.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        from vocencebench.outputs import write_set
        d = {str(tmp_path / "run")!r}
        g = 0
        print("ready", flush=True)
        while True:
            g += 1
            body = "x" * 200_000 + str(g)
            write_set(d, {{"scores.jsonl": body, "report.md": body, "report.html": body}},
                      manifest_name="run.json", manifest={{"generation": str(g)}})
    """), encoding="utf-8")
    for delay in (0.05, 0.13, 0.31):
        with subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                              env=dict(os.environ)) as proc:
            assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
            time.sleep(delay)  # anywhere in the loop; the assertion holds at every instant
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        d = tmp_path / "run"
        if (d / "run.json").exists():
            assert verify_set(d, manifest_name="run.json") == []
            g = json.loads((d / "run.json").read_text())["generation"]
            assert (d / "scores.jsonl").read_text().endswith(g)


def test_save_run_records_the_set_and_decide_refuses_edited_scores(tmp_path: Path) -> None:
    h2h = make_head2head()
    d = save_run(h2h, tmp_path / "run")
    record = json.loads((d / "run.json").read_text())["files"]
    assert sorted(record) == sorted(RUN_FILES)
    assert verify_run(d) == []
    assert load_run(d) == h2h
    check_against_run(str(d / "scores.jsonl"))
    lines = (d / "scores.jsonl").read_text().splitlines()
    (d / "scores.jsonl").write_text("\n".join(lines[:-2]) + "\n")  # drop an item's rows
    with pytest.raises(ScoresError, match=r"does not match the run\.json"):
        check_against_run(str(d / "scores.jsonl"))
    assert main(["decide", str(d / "scores.jsonl")]) == 2
    assert main(["report", str(d)]) == 0  # rewrites the set from run.json
    assert verify_run(d) == []
    assert main(["decide", str(d / "scores.jsonl")]) == 0


def _empty_unwritable_dir() -> str | None:
    """An existing empty directory that even root cannot create files in (sysfs), if any."""
    base = Path("/sys/class")
    with contextlib.suppress(OSError):
        for d in sorted(base.iterdir()):
            with contextlib.suppress(OSError):
                if d.is_dir() and not d.is_symlink() and not any(d.iterdir()):
                    return str(d)
    return None


@pytest.mark.slow
def test_cli_input_errors_are_one_line_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    import vocencebench.compare

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started before its arguments were checked")

    monkeypatch.setattr(vocencebench.compare, "benchmark", no_work)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "report.html").write_text("<p>theirs</p>")
    cases = [
        (["--workers", "0"], "--workers: must be ≥ 1"),
        (["--limit", "-3"], "--limit: must be ≥ 1"),
        (["--executor", "bogus"], "unknown executor 'bogus'"),
        (["--system-a", "cmd:say 'unbalanced {out}"], "No closing quotation"),
        (["--out", str(foreign)], "not created by vocencebench"),
        (["--out", str(foreign / "report.html")], "is a file"),
    ]
    # An --out that cannot be created or written (the tests may run as root, so chmod would
    # not bite: sysfs and procfs refuse even root), with the default cache inside it and
    # with --no-cache (where nothing else would notice before the save, after all the work).
    unwritable = [("/sys/vocencebench-out", "cannot create output directory"),
                  ("/proc/vocencebench-out/run", "cannot create output directory")]
    empty = _empty_unwritable_dir()
    if empty is not None:  # exists and is empty, so only the write probe can refuse it
        unwritable.append((empty, "is not writable"))
    for path, message in unwritable:
        cases += [(["--out", path], message), (["--out", path, "--no-cache"], message)]
    for extra, message in cases:
        argv = ["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
                "--out", str(tmp_path / "ok"), *extra]
        with pytest.raises(SystemExit) as info:
            code = main(argv)
            raise SystemExit(code)
        assert info.value.code == 2, extra
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, (extra, err)
        assert "Traceback" not in err
    assert (foreign / "report.html").read_text() == "<p>theirs</p>"
    assert not (tmp_path / "ok" / "run.json").exists()  # nothing ran


def test_report_on_a_run_json_that_is_not_a_run(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "run.json").write_text("{}")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a vocencebench run record" in err
    (tmp_path / "run.json").write_text('{"kind": "head2head"}')
    assert main(["report", str(tmp_path)]) == 2
    assert "not a complete run record" in capsys.readouterr().err


def test_markdown_report_carries_no_raw_html_from_labels(tmp_path: Path) -> None:
    from dataclasses import replace

    from vocencebench.report import render_markdown

    h2h = make_head2head()
    evil = replace(h2h, labels=("<script>alert(1)</script>", "b|c"))
    md = render_markdown(evil)
    assert "<script>" not in md and "&lt;script>" in md
    assert "b\\|c" in md


def test_a_folder_the_library_saves_a_run_into_is_a_run_folder_for_the_cli(
        tmp_path: Path) -> None:
    # h2h.save("runs/quick") (the README's quickstart, its cache inside) wrote no marker:
    # `vocencebench run --out runs/quick` then refused the folder as not vocencebench's.
    h = make_head2head(n=4)
    quick = tmp_path / "runs" / "quick"
    quick.mkdir(parents=True)
    (quick / "cache.sqlite").write_bytes(b"")
    save_run(h, quick, clips=False)
    assert json.loads((quick / MARKER).read_text())["kind"] == "run"
    assert claim_directory(quick, kind="run") == quick
    # A user's own folder holding other files is written into as asked, and left unmarked.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    save_run(h, mine, clips=False)
    assert not (mine / MARKER).exists() and (mine / "run.json").is_file()
