"""No secret reaches a run's files or its terminal output (issue 12, finding 12), end to end.

A real ``vocencebench run`` (both eSpeak systems, two items, gate off) judges through a local
server that rejects every request — a 500, a 429, then 401s — and echoes everything it was
sent into its error bodies: every request header (the ``Authorization`` value, Bearer or
Basic), the path with its ``?key=`` query, the bare token and the query key. Twice, into the
same output directory: with the key from the environment (the canaries meet the errors), then
with ``user:password@`` and ``?key=`` in the URL (``--skip-canaries``: the items meet them).
After each, not one secret, nor its first 10 characters, may be found in any file under the
output directory (run.json, scores.jsonl, both reports, the cache and any WAL file) or in
stdout/stderr: the grep docs/reproducibility.md ("Secrets") promises."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from judge_fakes import Call, FakeJudgeServer, Reply
from repo_paths import SRC as SRC_DIR

SRC = str(SRC_DIR)

# Deliberately not key-shaped (no sk-/AIza/hf_ prefix), and the key's variable is not named
# like a credential (VB_E2E_JUDGE, not *_KEY): only the registration of the secrets the
# process was handed can mask them, not the key-shape regex or the environment scan.
KEY = "Qv7e2eKeyFromTheEnvironment93xw"
PASSWORD = "Pw4e2eUrlPassword71kd"
QUERY_KEY = "Qk2e2eQueryParamSecret58zt"
USER = "judgeuser"


def _echo(call: Call) -> Reply:
    """Reject the call and echo what it carried, as a careless proxy or server would."""
    sent = "; ".join(f"{k}: {v}" for k, v in sorted(call.headers.items()))
    token = call.headers.get("authorization", "").rpartition(" ")[2]
    query = parse_qs(urlsplit(call.path).query)
    status = (500, 429)[call.index] if call.index < 2 else 401
    message = (f"request {call.path} refused (token {token!r} unknown, key "
               f"{query.get('key', ['-'])[0]!r} revoked); you sent: {sent}")
    return Reply(status=status, body={"error": {"message": message, "type": "invalid_request",
                                                "headers": dict(call.headers)}},
                 headers={"retry-after-ms": "5"})


def _run(judge: str, out: Path, *extra: str, key: bool = True
         ) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": SRC, "VB_E2E_JUDGE": KEY}
    with_key = ["--judge-key-env", "VB_E2E_JUDGE"] if key else []
    return subprocess.run(
        [sys.executable, "-m", "vocencebench", "run", "--system-a", "espeak-flat",
         "--system-b", "espeak-follow", "--limit", "2", "--asr", "none", "--judge", judge,
         *with_key, "--judge-retries", "2", "--workers", "1",
         "--out", str(out), "--quiet", *extra],
        env=env, capture_output=True, timeout=300, check=False)


def _leaks(res: subprocess.CompletedProcess[bytes], out: Path) -> list[tuple[str, str]]:
    """(where, secret prefix) for every secret, or its first 10 characters, found."""
    secrets = [KEY, PASSWORD, QUERY_KEY,
               base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode("ascii")]
    blobs = {"stdout": res.stdout, "stderr": res.stderr}
    blobs.update({str(p.relative_to(out)): p.read_bytes()
                  for p in sorted(out.rglob("*")) if p.is_file()})
    assert {"run.json", "scores.jsonl", "report.md", "report.html", "cache.sqlite"} <= set(blobs)
    return [(where, s[:10]) for where, data in blobs.items() for s in secrets
            if s[:10].encode() in data]


def _check_run(res: subprocess.CompletedProcess[bytes], out: Path, calls: list[Call]) -> None:
    assert len(calls) >= 3  # a 500, a 429 and a 401 were all answered
    # the run ended as a run does when its judge fails: incomplete, its files written ...
    assert res.returncode == 3, res.stderr.decode(errors="replace")[-2000:]
    leaks = _leaks(res, out)
    assert not leaks, leaks
    stored = (out / "run.json").read_text(encoding="utf-8")
    assert "[REDACTED]" in stored  # ... the echoed bodies among them, masked


@pytest.mark.slow
def test_no_secret_in_the_run_directory_cache_or_output(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # 1. The key from the environment, sent as "Authorization: Bearer KEY" and echoed.
    with FakeJudgeServer("openai", _echo) as srv:
        res = _run(f"local:{srv.url}/v1#omni-fake", out)
    assert srv.calls, res.stderr.decode(errors="replace")[-2000:]
    assert {c.headers.get("authorization") for c in srv.calls} == {f"Bearer {KEY}"}
    _check_run(res, out, srv.calls)

    # 2. Credentials in the URL: user:password (sent as Basic auth) and ?key=. The same
    # --out again, so the cache written by the first run is read back and grepped too.
    with FakeJudgeServer("openai", _echo) as srv:
        host = srv.url.removeprefix("http://")
        judge = f"local:http://{USER}:{PASSWORD}@{host}/v1?key={QUERY_KEY}#omni-fake"
        # A password in the URL *and* a key: refused before any work (Basic auth would
        # replace the key), in one line that names neither.
        both = _run(judge, tmp_path / "refused", "--skip-canaries")
        assert both.returncode == 2 and not srv.calls
        err_lines = both.stderr.decode().strip().splitlines()
        assert "user:password@" in err_lines[-1] and len(err_lines) <= 2, err_lines
        for secret in (KEY, PASSWORD, QUERY_KEY):
            assert secret[:10].encode() not in both.stdout + both.stderr
        res = _run(judge, out, "--skip-canaries", key=False)
    assert srv.calls, res.stderr.decode(errors="replace")[-2000:]
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode("ascii")
    assert {c.headers.get("authorization") for c in srv.calls} == {f"Basic {basic}"}
    assert all(parse_qs(urlsplit(c.path).query) == {"key": [QUERY_KEY]} for c in srv.calls)
    _check_run(res, out, srv.calls)
