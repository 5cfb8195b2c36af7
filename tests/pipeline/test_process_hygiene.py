"""Process hygiene (issue 12, findings 6, 7, 11): nothing a run starts outlives it, command
systems die as a process group, a huge clip fails its item unread, worker counts are capped.

The kill tests are the hostile case itself: a real run (both eSpeak systems, two workers) in
a subprocess of its own session, killed while its worker processes exist; every process it
started must be gone 5 s later. Ctrl-C is also sent through the real CLI while a command
system hangs: one line, exit 130, nothing left, and the rerun resumes from the cache."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from judge_fakes import tone_wav
from proc_tools import (
    SLOW_ASR_MODULE,
    alive,
    as_in_a_terminal,
    cmdline,
    descendants,
    session,
    wait_gone,
)
from repo_paths import SRC as SRC_DIR
from vocencebench.adapters import CLIP_MAX_BYTES, CommandAdapter, DirectoryAdapter
from vocencebench.errors import ConfigError, MissingDependencyError, SynthesisError
from vocencebench.schema import Item

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="reads the process tree from /proc"),
              pytest.mark.signals]

SRC = str(SRC_DIR)

_RUN = """
import json, sys, time


def main():
    import faulthandler, signal
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test's view of a hang
    import vocencebench as vb
    from vocencebench._util.procs import sigterm_as_interrupt
    from vocencebench.cache import Cache

    phase, path = sys.argv[1], sys.argv[2]
    kw = {}
    if phase == "synthesis":  # slow clip processes: the kill lands mid-synthesis
        import vocencebench._tts.render as render

        real = render._render_wav_in_clip_process

        def slow(engine, text, settings):
            time.sleep(1.0)
            return real(engine, text, settings)

        render._render_wav_in_clip_process = slow
    elif phase == "analysis":
        from slowasr import SlowASR

        kw["transcriber"] = SlowASR()
    cache = Cache(path)
    try:
        with sigterm_as_interrupt():  # what the CLI does: SIGTERM stops a run like Ctrl-C
                vb.benchmark(vb.load_benchmark()[:6], vb.EspeakSystem("espeak-flat"),
                         vb.EspeakSystem("espeak-follow"), cache=cache,
                         workers=1 if phase == "resume" else 2, progress=False, **kw)
    except KeyboardInterrupt:
        print("run: interrupted; finished work is kept in the cache", file=sys.stderr)
        return 130
    finally:
        cache.close()
    print(json.dumps({"clip_hits": cache.hits["clips"], "clip_misses": cache.misses["clips"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
"""



def _start(tmp: Path, phase: str) -> tuple[subprocess.Popen[bytes], Path]:
    (tmp / "slowasr.py").write_text(SLOW_ASR_MODULE)
    (tmp / "run.py").write_text(_RUN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(tmp)])}
    err = tmp / f"stderr-{phase}.txt"
    with open(err, "wb") as f:
        proc = subprocess.Popen([sys.executable, str(tmp / "run.py"), phase,
                                 str(tmp / "cache.sqlite")], env=env, stdout=subprocess.PIPE,
                                stderr=f, start_new_session=True, preexec_fn=as_in_a_terminal)
    return proc, err


def _wait_for_workers(proc: subprocess.Popen[bytes], phase: str) -> set[int]:
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, "the run ended before its workers could be seen"
        assert time.monotonic() < deadline, "no worker processes appeared"
        kids = descendants(proc.pid)
        if phase == "synthesis":  # two eSpeak templates, each with a clip process
            ready = len(kids) >= 4
        else:  # the forkserver and two pool workers
            ready = sum("multiprocessing.forkserver" in cmdline(p) for p in kids) >= 3
        if ready:
            return kids
        time.sleep(0.02)


def _ended(proc: subprocess.Popen[bytes], err: Path, timeout: float = 60.0) -> int:
    """The run's exit status once it ends; a run still going after ``timeout`` s fails the
    test with every thread's stack (the run script dumps them on SIGUSR1)."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGUSR1)
        time.sleep(2.0)
        pytest.fail(f"the run had not ended {timeout:g} s after the signal; its threads:\n"
                    + err.read_text(errors="replace")[-12000:])


def _reap(pids: set[int]) -> None:
    for p in pids:  # never leave a leak behind for the next test
        if alive(p):
            os.kill(p, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["synthesis", "analysis"])
def test_no_process_of_a_run_outlives_its_sigkilled_parent(tmp_path: Path,
                                                           phase: str) -> None:
    proc, _ = _start(tmp_path, phase)
    try:
        started = _wait_for_workers(proc, phase)
        snapshot = started | descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)  # the parent only, as `kill -9` would
        proc.wait(timeout=30)
        left = wait_gone(snapshot, proc.pid, 5.0)
        assert not left, [cmdline(p) for p in left]
    finally:
        _reap(session(proc.pid) | descendants(proc.pid))
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_an_interrupted_run_ends_with_one_line_and_resumes(tmp_path: Path, how: str) -> None:
    proc, err = _start(tmp_path, "analysis")
    try:
        _wait_for_workers(proc, "analysis")
        snapshot = descendants(proc.pid)
        if how == "ctrl-c":  # what Ctrl-C in a terminal does: SIGINT to the whole group
            os.killpg(proc.pid, signal.SIGINT)
        else:  # `kill PID`: the main process only
            os.kill(proc.pid, signal.SIGTERM)
        assert _ended(proc, err) == 130
        assert not wait_gone(snapshot, proc.pid, 5.0)
    finally:
        _reap(session(proc.pid) | descendants(proc.pid) | {proc.pid})
        proc.wait()  # reaped here: a failure leaves no zombie to warn in the next test
        if proc.stdout is not None:
            proc.stdout.close()
    lines = err.read_text().splitlines()
    assert lines == ["run: interrupted; finished work is kept in the cache"], lines
    if how == "sigterm":
        return
    # The cache is consistent: the same run resumes, every clip finished before the interrupt
    # comes from it (the streaming pipeline analyses while it still synthesises, so some
    # clips may not have been made yet).
    import sqlite3

    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        kept = int(db.execute("SELECT COUNT(*) FROM clips").fetchone()[0])
    assert kept >= 1
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(tmp_path)])}
    res = subprocess.run([sys.executable, str(tmp_path / "run.py"), "resume",
                          str(tmp_path / "cache.sqlite")], env=env, capture_output=True,
                         text=True, timeout=240, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.splitlines()[-1]) == {"clip_hits": kept,
                                                        "clip_misses": 12 - kept}


# A command system for the CLI test: its first clip comes at once (a tone copied into {out});
# while STATE/hold exists every later call says so in STATE/started and then hangs, so the
# run is certainly in the middle of its work when Ctrl-C arrives.
_HOLDING_TTS = """
import os, shutil, sys, time

out, state = sys.argv[1], sys.argv[2]
try:
    os.close(os.open(os.path.join(state, "first"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    first = True
except FileExistsError:
    first = False
if not first and os.path.exists(os.path.join(state, "hold")):
    open(os.path.join(state, "started"), "w").close()
    time.sleep(600)
shutil.copyfile(os.path.join(state, "tone.wav"), out)
"""


def _cached_clips(path: Path) -> int:
    """Clip rows in the cache at ``path`` (0 while it does not exist yet), read-only."""
    import sqlite3

    if not path.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT COUNT(*) FROM clips").fetchone()[0])
    except sqlite3.Error:  # created but its tables not yet committed
        return 0


@pytest.mark.slow
def test_ctrl_c_on_the_cli_ends_with_one_line_and_the_rerun_resumes(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "tone.wav").write_bytes(tone_wav(180.0, seconds=1.5))
    (state / "hold").touch()
    (tmp_path / "holding_tts.py").write_text(_HOLDING_TTS)
    system = (f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'holding_tts.py'))}"
              f" {{out}} {shlex.quote(str(state))}")
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "vocencebench", "run", "--system-a", "espeak-flat",
            "--system-b", system, "--label-b", "holding", "--limit", "2", "--out", str(out),
            "--quiet"]
    env = {**os.environ, "PYTHONPATH": SRC}
    err = tmp_path / "stderr.txt"
    with open(err, "wb") as f:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=f,
                                start_new_session=True, preexec_fn=as_in_a_terminal)
    snapshot: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        # Under way: the held command is running and some clip is already in the cache.
        while not ((state / "started").exists() and _cached_clips(out / "cache.sqlite")):
            assert proc.poll() is None, err.read_text()[-2000:]
            assert time.monotonic() < deadline, "the run never got under way"
            time.sleep(0.05)
        snapshot = descendants(proc.pid)  # the held command's guard and python among them
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal: the foreground group
        assert proc.wait(timeout=60) == 130, err.read_text()[-2000:]
        left = wait_gone(snapshot, proc.pid, 5.0)
        assert not left, [cmdline(p) for p in left]
    finally:  # the held command is in a session of its own: reap it from the snapshot too
        _reap(session(proc.pid) | descendants(proc.pid) | snapshot)
    assert err.read_text().splitlines() == [
        "vocencebench: interrupted; finished work is kept in the cache, run the same command "
        "to resume."], err.read_text()
    assert not (out / "run.json").exists()

    kept = _cached_clips(out / "cache.sqlite")
    assert 1 <= kept < 4
    (state / "hold").unlink()
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300,
                         check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    cache = json.loads((out / "run.json").read_text())["metadata"]["cache"]
    # every clip finished before Ctrl-C came from the cache; only the rest was synthesised
    assert (cache["hits"]["clips"], cache["misses"]["clips"]) == (kept, 4 - kept)


# --------------------------------------------------------------------------- command systems


def _pid_file_command(pids: Path) -> str:
    # sh starts `sleep` in the background (a grandchild of the guard) and waits for it.
    return f"sh -c 'sleep 300 & echo $! > {pids}; wait' {{out}}"


def _read_pid(path: Path) -> int:
    deadline = time.monotonic() + 30
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.02)
    return int(path.read_text())


@pytest.mark.slow
def test_timed_out_command_leaves_no_grandchild(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    adapter = CommandAdapter(_pid_file_command(pids), timeout=2)
    with pytest.raises(SynthesisError, match="timed out after 2 s"):
        adapter("hello", "calm")
    sleeper = _read_pid(pids)
    try:
        assert not wait_gone({sleeper}, None, 5.0), "the sleep grandchild survived"
    finally:
        _reap({sleeper})


def test_command_dies_with_a_killed_run(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    code = textwrap.dedent(f"""
        from vocencebench.adapters import CommandAdapter
        CommandAdapter({_pid_file_command(pids)!r}, timeout=300)("hello", "calm")
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC},
                            start_new_session=True)
    try:
        sleeper = _read_pid(pids)
        snapshot = descendants(proc.pid) | {sleeper}
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        left = wait_gone(snapshot, None, 5.0)
        assert not left, [cmdline(p) for p in left]
    finally:
        _reap(descendants(proc.pid) | {sleeper} if pids.exists() else set())


def test_command_errors_keep_their_messages(tmp_path: Path) -> None:
    with pytest.raises(SynthesisError, match=r"exited 3: sh: boom"):
        CommandAdapter("sh -c 'echo boom >&2; exit 3' {out}")("a", "b")
    with pytest.raises(SynthesisError, match=r"exited -9"):
        CommandAdapter("sh -c 'kill -9 $$' {out}")("a", "b")
    with pytest.raises(SynthesisError, match="wrote no file"):
        CommandAdapter("true {out}")("a", "b")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(SynthesisError, match="not a regular file"):
        CommandAdapter(f"sh -c 'ln -s {fifo} $0' {{out}}")("a", "b")


# --------------------------------------------------------------------------- size caps


def test_a_1_1_gb_clip_fails_its_item_unread(tmp_path: Path) -> None:
    big = 1_100_000_000  # sparse: truncate allocates no disk
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    adapter = CommandAdapter(f"{sys.executable} -c \"import sys; "
                             f"open(sys.argv[1], 'wb').truncate({big})\" {{out}}")
    with pytest.raises(SynthesisError, match=r"1\.10 GB, over the 50\.0 MB size cap") as err:
        adapter("a", "b")
    assert "\n" not in str(err.value)
    clips = tmp_path / "clips"
    clips.mkdir()
    with open(clips / "vb-00001.wav", "wb") as f:
        f.truncate(big)
    item = Item("vb-00001", "a calm voice", "Hello.", {}, 0)
    with pytest.raises(SynthesisError, match=r"over the 50\.0 MB size cap"):
        DirectoryAdapter(clips).synthesize_item(item)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 200_000, f"peak memory grew by {grown} KiB"  # nothing was read
    assert CLIP_MAX_BYTES == 50_000_000


def test_the_size_cap_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "vb-00001.wav").write_bytes(b"RIFF" + b"\0" * 2000)
    item = Item("vb-00001", "a calm voice", "Hello.", {}, 0)
    assert len(DirectoryAdapter(tmp_path, max_bytes=4004).synthesize_item(item)) == 2004
    with pytest.raises(SynthesisError, match=r"max_bytes=1000"):
        DirectoryAdapter(tmp_path, max_bytes=1000).synthesize_item(item)
    cmd = CommandAdapter(f"{sys.executable} -c \"import sys; open(sys.argv[1], 'wb')"
                         f".write(bytes(5000))\" {{out}}", max_bytes=4999)
    with pytest.raises(SynthesisError, match="size cap"):
        cmd("a", "b")
    with pytest.raises(ConfigError, match="max_bytes"):
        DirectoryAdapter(tmp_path, max_bytes=0)


# --------------------------------------------------------------------------- worker caps


def test_worker_counts_are_capped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    from vocencebench import executor as ex
    from vocencebench import specs

    monkeypatch.setattr(ex, "default_workers", lambda: 2)
    exe = specs.make_executor(workers=1000)
    assert isinstance(exe, ex.LocalExecutor) and exe.workers == 2
    assert exe.note == "workers capped at 2 (asked for 1000; 2 CPU(s) available)"
    exe.close()
    one = specs.make_executor(workers=1000, units=1)
    assert isinstance(one, ex.SerialExecutor)
    assert one.note == "workers capped at 1 (asked for 1000; 2 CPU(s) available and 1 unit(s) " \
                       "of work)"
    assert specs.make_executor(workers=2).note is None
    assert ex.LocalExecutor(units=5).workers == 2 and ex.LocalExecutor().note is None


def test_a_pool_starts_no_more_processes_than_units(monkeypatch: pytest.MonkeyPatch) -> None:
    from vocencebench import executor as ex

    monkeypatch.setattr(ex, "default_workers", lambda: 8)
    exe = ex.LocalExecutor(8)
    try:
        assert sorted(i for i, _ in exe.map_unordered(abs, [-1, -2])) == [0, 1]
        assert exe._pool is not None and len(exe._pool._processes) <= 2
    finally:
        exe.close()


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "4"])
def test_workers_below_one_are_an_error_not_all_cpus(bad: object) -> None:
    from vocencebench.executor import LocalExecutor, check_workers
    from vocencebench.specs import make_executor

    for call in (lambda: make_executor(workers=bad),  # type: ignore[arg-type]
                 lambda: LocalExecutor(bad),  # type: ignore[arg-type]
                 lambda: check_workers(bad)):
        with pytest.raises(ConfigError, match="workers must be a whole number ≥ 1"):
            call()


def test_bogus_executor_is_rejected_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from vocencebench.specs import make_executor, validate_executor_spec

    for spec in ("bogus", "ray", "dask:"):
        with pytest.raises(ConfigError):
            validate_executor_spec(spec)
        with pytest.raises(ConfigError):
            make_executor(spec)
    for spec in (None, "", "local", "serial"):
        validate_executor_spec(spec)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingDependencyError):
        validate_executor_spec("dask:tcp://127.0.0.1:8786")
