"""A full disk while the reports are saved: one line naming the directory, exit status 2,
and the previous complete set untouched (issue 25, defect 4; and the stale temporaries a
killed save leaves are removed by the next save of that directory).

The audit filled a 6 MB tmpfs used as ``--out`` (cache elsewhere): rc 1, two ``OSError:
[Errno 28]`` tracebacks from ``atomic_write``, no summary. The CLI test here does the same
with a real size-limited file system: a tmpfs mounted in a private mount namespace
(``unshare -rm``, so no root and no clean-up are needed; skipped where the kernel refuses
user namespaces), filled up to its last pages. The library tests inject ``ENOSPC`` at the
temporary-file write, which also covers ``vocencebench report DIR``: before, a full disk
there lost ``run.json`` itself (removed first, never rewritten)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import vocencebench.outputs as outputs
from repo_paths import SRC
from synthetic_run import make_head2head
from vocencebench.cli import main
from vocencebench.errors import ConfigError
from vocencebench.outputs import write_set
from vocencebench.result import save_run, verify_run

TMPFS_BYTES = 6 * 1024 * 1024
#: What is left free on the tmpfs once it is filled: room for the directory's marker and a
#: small file or two, not for the reports.
LEFT_BYTES = 16 * 1024


def _namespaces_work() -> bool:
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs "
                            "/mnt 2>/dev/null || mount -t tmpfs -o size=64k tmpfs /tmp"],
                           capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _namespaces_work(), reason="no user/mount namespaces for a tmpfs")
def test_a_full_disk_under_out_is_one_line_and_exit_2(tmp_path: Path) -> None:
    mnt = tmp_path / "small"
    mnt.mkdir()
    cache = tmp_path / "cache.sqlite"
    fill = TMPFS_BYTES - LEFT_BYTES
    # In a private mount namespace: a 6 MB tmpfs on `small`, filled to its last 16 KB, then
    # the run with --out on it and the cache elsewhere.
    script = (f'mount -t tmpfs -o size={TMPFS_BYTES} tmpfs "$0" && head -c {fill} /dev/zero '
              '> "$0/filler" && exec "$@"')
    argv = ["unshare", "-rm", "sh", "-c", script, str(mnt), sys.executable, "-m",
            "vocencebench", "run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
            "--limit", "2", "--workers", "1", "--skip-canaries", "--cache", str(cache),
            "--out", str(mnt / "run"), "--quiet"]
    res = subprocess.run(argv, env={**os.environ, "PYTHONPATH": str(SRC)}, capture_output=True,
                         text=True, timeout=300, check=False)
    lines = [x for x in res.stderr.strip().splitlines() if "CANARIES SKIPPED" not in x]
    assert res.returncode == 2, res.stderr[-3000:]
    assert "Traceback" not in res.stderr, res.stderr[-3000:]
    assert len(lines) == 1, lines
    assert str(mnt / "run") in lines[0] and "disk is full" in lines[0], lines
    assert "DECISION:" in res.stdout  # the result is still shown
    assert cache.exists()  # the finished work is kept: the same command resumes


def _enospc_on(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real = outputs.write_temporary

    def full(target: os.PathLike[str], raw: bytes) -> str:
        if Path(target).name == name:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(target, raw)

    monkeypatch.setattr(outputs, "write_temporary", full)


@pytest.mark.parametrize("name", ["scores.jsonl", "report.md", "report.html", "run.json"])
def test_a_full_disk_during_a_save_keeps_the_previous_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    h = make_head2head()
    save_run(h, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    _enospc_on(name, monkeypatch)
    with pytest.raises(ConfigError) as err:
        save_run(h, tmp_path)
    msg = str(err.value)
    assert str(tmp_path) in msg and "disk is full" in msg and "\n" not in msg, msg
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no temporary
    assert verify_run(tmp_path) == []


def test_report_on_a_full_disk_is_one_line_and_keeps_run_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    save_run(make_head2head(), tmp_path)
    record = (tmp_path / "run.json").read_bytes()
    _enospc_on("report.html", monkeypatch)
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(tmp_path) in err[0] and "disk is full" in err[0], err
    assert (tmp_path / "run.json").read_bytes() == record
    assert verify_run(tmp_path) == []


# ----------------------------------------------------------------------------- temporaries


def _stale(d: Path, name: str, age_s: float, tag: str = "x1y2z3ab") -> Path:
    tmp = d / f".{name}.{tag}.tmp"
    tmp.write_text("half a file")
    old = time.time() - age_s
    os.utime(tmp, (old, old))
    return tmp


def test_the_next_save_removes_stale_temporaries_of_a_killed_save(tmp_path: Path) -> None:
    files = {"scores.jsonl": "s\n", "report.md": "m", "report.html": "h"}
    write_set(tmp_path, files, manifest_name="run.json", manifest={"g": 1})
    stale = [_stale(tmp_path, n, 3600) for n in (*files, "run.json")]
    fresh = _stale(tmp_path, "report.md", 0, "fr3shn0w")  # a concurrent save's, maybe
    other = tmp_path / ".notes.x1y2z3ab.tmp"  # not one of ours: never touched
    other.write_text("mine")
    os.utime(other, (time.time() - 3600,) * 2)
    foreign = tmp_path / "report.md.bak"
    foreign.write_text("keep")
    write_set(tmp_path, files, manifest_name="run.json", manifest={"g": 2})
    assert not any(p.exists() for p in stale)
    assert fresh.exists() and other.exists() and foreign.exists()
    assert verify_run(tmp_path) == []
