"""Kill a real run with SIGKILL in the middle of judging, run the same command again, and
check that nothing finished is redone: no clip re-synthesised, no judge call re-paid, and the
result identical to an uninterrupted run."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

_SLOW_TTS = """
import sys, time
from vocencebench.tts import get_system
text, instruction, out, log = sys.argv[1:5]
with open(log, "a") as f:
    f.write(text + "\\n")
time.sleep(0.1)
open(out, "wb").write(get_system("espeak-follow")(text, instruction))
"""


class _Judge:
    """OpenAI-compatible chat server; the longer clip wins; records finished answers."""

    def __init__(self, delay_s: float, hold_after: int) -> None:
        self.answered: list[str] = []
        self.requested: list[str] = []
        # After `hold_after` answers, further requests wait here: the kill then lands while
        # nothing is half-answered, so "finished" is exact on both sides.
        self.release = threading.Event()
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                key = hashlib.sha256(raw).hexdigest()
                with lock:
                    outer.requested.append(key)
                    hold = len(outer.answered) >= hold_after
                if hold:
                    outer.release.wait()
                body = json.loads(raw)
                import base64

                clips = [base64.b64decode(p["input_audio"]["data"])
                         for p in body["messages"][-1]["content"] if p["type"] == "input_audio"]
                a, b = len(clips[0]), len(clips[1])
                win = "A" if a > b else "B" if b > a else "tie"
                ans = {"analysis_a": "x", "analysis_b": "y", "score_a": 3 if win == "A" else 1,
                       "score_b": 3 if win == "B" else 1, "winner": win, "confidence": 0.9}
                if win == "tie":
                    ans["score_a"] = ans["score_b"] = 2
                time.sleep(delay_s)
                payload = json.dumps({
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": json.dumps(ans)}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 20},
                }).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client was killed
                with lock:
                    outer.answered.append(key)

            def log_message(self, *args: object) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._t = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._t.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _cmd(tmp: Path, judge_url: str, out: Path, log: Path) -> list[str]:
    script = tmp / "slow_tts.py"
    script.write_text(_SLOW_TTS)
    return [sys.executable, "-m", "vocencebench.cli", "run",
            "--system-a", "espeak-flat",
            "--system-b", f"cmd:{sys.executable} {script} {{text}} {{instruction}} {{out}} {log}",
            "--label-a", "flat", "--label-b", "slow",
            "--judge", f"local:{judge_url}#fake-omni", "--limit", "5", "--workers", "1",
            "--out", str(out), "--quiet", "--skip-canaries"]  # the fake judge counts calls


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow
@pytest.mark.signals
def test_sigkill_mid_judging_then_resume(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    judge = _Judge(delay_s=0.2, hold_after=6)
    try:
        out, log = tmp_path / "run", tmp_path / "synth.log"
        cmd = _cmd(tmp_path, judge.url, out, log)
        errlog = tmp_path / "stderr.txt"
        with open(errlog, "wb") as err:
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 240
        # 5 pairs x 2 dimensions x 2 orders = 20 calls. The stages stream, so judging starts
        # while later items still synthesise: wait for both (the judge holds after six).
        while len(judge.answered) < 6 or len(_lines(log)) < 5:
            assert proc.poll() is None, errlog.read_text()
            assert time.monotonic() < deadline, "the run never reached the judge"
            time.sleep(0.02)
        time.sleep(1.0)  # let the client commit the six answers it has received
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        done_before = set(judge.answered)
        synth_before = log.read_text().splitlines()
        assert len(synth_before) == 5 and not (out / "run.json").exists()

        judge.release.set()
        n_requested = len(judge.requested)
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        assert "DECISION:" in res.stdout
        # No clip synthesised again, no finished judge call paid for again.
        assert log.read_text().splitlines() == synth_before
        second = judge.requested[n_requested:]
        assert not done_before & set(second)
        assert len(done_before) >= 6 and len(set(second)) == 20 - len(done_before)
        assert len(set(judge.answered)) == 20

        # Identical to a run that was never interrupted.
        fresh_out = tmp_path / "fresh"
        res2 = subprocess.run(_cmd(tmp_path, judge.url, fresh_out, tmp_path / "fresh.log"),
                              env=env, capture_output=True, text=True, timeout=300)
        assert res2.returncode == 0, res2.stderr
        assert (out / "scores.jsonl").read_bytes() == (fresh_out / "scores.jsonl").read_bytes()
    finally:
        judge.close()
