"""An interrupted run's process pool: its exit never waits on CPython's pool internals.

Found by the stack dump of ``test_process_hygiene.py`` (1 run in about 20 under load hung after
Ctrl-C): the engine cancelled the pool's pending futures itself, then the pool's abort killed
the workers; when CPython's pool manager thread noticed the dead workers before the shutdown,
it raised ``InvalidStateError`` on a cancelled future and died, the pipe to the workers stayed
open, and the exit waited forever for the queue's feeder thread, blocked writing a clip.
Both halves are checked here, each in a subprocess of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proc_tools import SLOW_ASR_MODULE, as_in_a_terminal
from repo_paths import SRC

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="forkserver pools and /proc"),
              pytest.mark.signals]

# Units that take a second and carry a megabyte each (a clip is more than a pipe holds).
_SLOW = """
import time


def work(payload):
    time.sleep(1.0)
    return len(payload)
"""

_POOL = """
import sys, time
from slowunit import work
from vocencebench.executor import LocalExecutor


def main():
    exe = LocalExecutor(2)
    futures = [exe.submit(work, b"x" * 1_000_000) for _ in range(12)]
    time.sleep(0.5)
    for f in futures[4:]:  # code outside the pool cancels what is still pending
        f.cancel()
    for p in list(exe._pool._processes.values()):  # the workers die first (as under load)
        p.kill()
    time.sleep(0.3)  # and the pool's manager thread notices before the abort's shutdown
    exe.abort()
    return 130


if __name__ == "__main__":
    sys.exit(main())
"""

_RUN = """
import json, os, signal, sys, threading, time
import vocencebench as vb
from slowasr import SlowASR
from vocencebench.executor import LocalExecutor


class Watched(LocalExecutor):
    '''A local pool that sends the run a Ctrl-C once six units are queued, and counts, when
    the engine aborts it, how many of its futures someone else had cancelled.'''

    def __init__(self):
        super().__init__(2)
        self.futures = []
        self.cancelled_before_abort = None

    def submit(self, fn, item):
        fut = super().submit(fn, item)
        self.futures.append(fut)
        if len(self.futures) == 6:
            threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        return fut

    def abort(self):
        if self.cancelled_before_abort is None:
            self.cancelled_before_abort = sum(f.cancelled() for f in self.futures)
        super().abort()


def main():
    exe = Watched()
    try:
        vb.benchmark(vb.load_benchmark()[:6], vb.EspeakSystem("espeak-flat"),
                     vb.EspeakSystem("espeak-follow"), transcriber=SlowASR(), executor=exe,
                     progress=False, canaries=False)
    except KeyboardInterrupt:
        print(json.dumps({"interrupted": True, "submitted": len(exe.futures),
                          "cancelled_before_abort": exe.cancelled_before_abort}))
        return 130
    print(json.dumps({"interrupted": False}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
"""


def _run_script(tmp: Path, name: str, body: str) -> subprocess.CompletedProcess[str]:
    (tmp / "slowunit.py").write_text(_SLOW)
    (tmp / "slowasr.py").write_text(SLOW_ASR_MODULE)
    (tmp / name).write_text(body)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(tmp)])}
    try:
        return subprocess.run([sys.executable, str(tmp / name)], env=env, cwd=tmp,
                              capture_output=True, text=True, timeout=120, check=False,
                              preexec_fn=as_in_a_terminal)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{name} had not exited after 120 s: {exc}")


def test_an_aborted_pool_exits_even_when_cpythons_manager_thread_died(tmp_path: Path) -> None:
    res = _run_script(tmp_path, "pool.py", _POOL)
    assert res.returncode == 130, res.stderr[-3000:]


def test_an_interrupted_run_leaves_the_pools_futures_to_the_pool(tmp_path: Path) -> None:
    res = _run_script(tmp_path, "run.py", _RUN)
    assert res.returncode == 130, res.stderr[-3000:]
    got = json.loads(res.stdout.splitlines()[-1])
    assert got["interrupted"] and got["submitted"] >= 6, got
    assert got["cancelled_before_abort"] == 0, got
    assert "InvalidStateError" not in res.stderr, res.stderr[-3000:]
