"""An API key with a control character or a space never reaches any output (issue 25,
defect 3).

The audit: ``OPENAI_API_KEY=$'sk-X\\r'`` (openai-speech system) or ``GEMINI_API_KEY=$'…\\r'``
(judge) made the HTTP library raise ``Illegal header value b'Bearer sk-X\\r'``, and that text
(the key in a bytes repr, so the registered secret did not match it) was copied into the
failure reason: stdout, report.md, report.html, run.json and scores.jsonl, after 5 retries.

Now such a key is refused where the component is configured — one line, exit status 2, the
variable named, the value never printed — for every component that takes a key: the judge
(local and Gemini), the openai-speech system, the OpenAI-compatible transcriber and the
corpus LLM writer. The CLI tests run a real ``vocencebench run`` against servers on
127.0.0.1 (that echo what they were sent, as a careless server would) and grep stdout,
stderr and every file under ``--out`` (the cache included) for the key and its first 10
characters. NUL cannot be put in an environment variable, so it is tested through the
library's ``api_key=`` arguments, with the rest; and the redaction layer itself is tested on
a vendor's repr of the key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from judge_fakes import Call, FakeJudgeServer, Reply
from repo_paths import SRC
from vocencebench.errors import ConfigError

# Not key-shaped, so only the refusal (or the registration of the exact value) can keep it
# out; the control character sits after the first 10 characters, and at the end.
BASE = "Qv7ctrlKeyFromTheEnvironment93xw"
CONTROLS = {"CR": "\r", "LF": "\n", "CRLF": "\r\n", "space": " ", "tab": "\t"}


def _keys(ctrl: str) -> list[str]:
    """The key with ``ctrl`` after its 20th character, and at its end."""
    return [BASE[:20] + ctrl + BASE[20:], BASE + ctrl]


def _echo(call: Call) -> Reply:
    sent = "; ".join(f"{k}: {v}" for k, v in sorted(call.headers.items()))
    return Reply(status=500, body={"error": {"message": f"you sent: {sent}"}},
                 headers={"retry-after-ms": "5"})


def _leaks(key: str, res: subprocess.CompletedProcess[bytes], out: Path) -> list[str]:
    blobs = {"stdout": res.stdout, "stderr": res.stderr}
    if out.exists():
        blobs.update({str(p.relative_to(out)): p.read_bytes()
                      for p in sorted(out.rglob("*")) if p.is_file()})
    probes = {key.encode(), key[:10].encode(), key.strip().encode(),
              repr(key.encode())[2:-1].encode()}
    return sorted(where for where, data in blobs.items() for p in probes if p in data)


def _run(tmp: Path, env_name: str, key: str, *extra: str
         ) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    out = tmp / "run"
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env.update({"PYTHONPATH": str(SRC), env_name: key})
    res = subprocess.run(
        [sys.executable, "-m", "vocencebench", "run", "--system-a", "espeak-flat",
         "--limit", "1", "--workers", "1", "--skip-canaries", "--out", str(out),
         "--cache", str(out / "cache.sqlite"), "--quiet", *extra],
        env=env, capture_output=True, timeout=300, check=False)
    return res, out


def _component(which: str, url: str) -> tuple[str, list[str]]:
    """(the variable the key is read from, the run's options) for one component."""
    if which == "judge-local":
        return "VB_CTRL_JUDGE", ["--system-b", "espeak-follow", "--judge",
                                 f"local:{url}/v1#omni-fake", "--judge-key-env",
                                 "VB_CTRL_JUDGE", "--judge-retries", "1"]
    if which == "judge-gemini":
        return "GEMINI_API_KEY", ["--system-b", "espeak-follow", "--judge",
                                  "gemini:gemini-fake", "--judge-base-url", url,
                                  "--judge-retries", "1"]
    if which == "openai-speech":
        return "OPENAI_API_KEY", ["--system-b", f"openai-speech:{url}#tts-fake#alloy"]
    assert which == "asr-openai"
    return "OPENAI_API_KEY", ["--system-b", "espeak-follow", "--asr",
                              f"openai:{url}/v1#asr-fake"]


# Through the CLI: the audit's case (CR at the end), LF inside, a space inside, CRLF at the end.
CLI_KEYS = {"CR-end": BASE + "\r", "LF-inside": BASE[:20] + "\n" + BASE[20:],
            "space-inside": BASE[:20] + " " + BASE[20:], "CRLF-end": BASE + "\r\n"}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CLI_KEYS))
@pytest.mark.parametrize("which", ["judge-local", "judge-gemini", "openai-speech",
                                   "asr-openai"])
def test_a_key_with_a_control_character_is_refused_and_never_shown(
        tmp_path: Path, which: str, case: str) -> None:
    key = CLI_KEYS[case]
    with FakeJudgeServer("gemini" if which == "judge-gemini" else "openai", _echo) as srv:
        env_name, extra = _component(which, srv.url)
        res, out = _run(tmp_path, env_name, key, *extra)
    lines = res.stderr.decode(errors="replace").strip().splitlines()
    leaks = _leaks(key, res, out)
    assert (res.returncode, leaks) == (2, []), (leaks, lines[-5:])
    assert len(lines) == 1 and env_name in lines[0], lines
    assert "not shown" in lines[0]
    assert not srv.calls  # refused before any request


# ----------------------------------------------------------------------------- the library

LIB_CONTROLS = {**CONTROLS, "NUL": "\0", "DEL": "\x7f", "nbsp": "\u00a0"}


def _builders() -> dict[str, object]:
    from vocencebench.adapters import OpenAISpeechAdapter
    from vocencebench.corpus_llm import LLMCorpusWriter
    from vocencebench.judge import Judge
    from vocencebench.judge._gemini import GeminiBackend
    from vocencebench.transcribe import OpenAITranscriber

    return {
        "Judge.local": lambda k: Judge.local("http://127.0.0.1:9/v1", "m", api_key=k),
        "Judge.gemini": lambda k: Judge.gemini("m", api_key=k),
        "GeminiBackend": lambda k: GeminiBackend("m", k),
        "OpenAISpeechAdapter": lambda k: OpenAISpeechAdapter("http://127.0.0.1:9", api_key=k),
        "OpenAITranscriber": lambda k: OpenAITranscriber("http://127.0.0.1:9/v1", "m",
                                                         api_key=k),
        "LLMCorpusWriter": lambda k: LLMCorpusWriter("http://127.0.0.1:9/v1", "m", api_key=k),
    }


@pytest.mark.parametrize("ctrl", sorted(LIB_CONTROLS))
def test_every_component_refuses_such_a_key_without_showing_it(ctrl: str) -> None:
    for name, build in _builders().items():
        for key in _keys(LIB_CONTROLS[ctrl]):
            with pytest.raises(ConfigError) as err:
                build(key)  # type: ignore[operator]
            msg = str(err.value)
            assert "api_key" in msg or "key" in msg, (name, msg)
            assert BASE[:10] not in msg and "\n" not in msg and "\r" not in msg, (name, msg)


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "VB_CTRL_SPEECH"])
def test_the_speech_adapter_names_the_variable(monkeypatch: pytest.MonkeyPatch,
                                               name: str) -> None:
    from vocencebench.adapters import OpenAISpeechAdapter

    monkeypatch.setenv(name, BASE + "\r")
    with pytest.raises(ConfigError, match=f"environment variable {name} .*carriage return"):
        OpenAISpeechAdapter("http://127.0.0.1:9", api_key_env=name)


def test_the_corpus_writer_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from vocencebench.corpus_llm import LLMCorpusWriter

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("VOCENCE_LLM_API_KEY", BASE + "\n")
    with pytest.raises(ConfigError, match=r"environment variable VOCENCE_LLM_API_KEY .*line feed"):
        LLMCorpusWriter.from_env(base_url="http://127.0.0.1:9/v1", model="m")


def test_the_transcriber_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from vocencebench.transcribe import OpenAITranscriber

    monkeypatch.setenv("OPENAI_API_KEY", BASE + " ")
    with pytest.raises(ConfigError, match=r"environment variable OPENAI_API_KEY .*space"):
        OpenAITranscriber("http://127.0.0.1:9/v1", "m")


def test_redaction_catches_a_secret_inside_a_vendors_repr() -> None:
    from vocencebench.redact import MASK, redact, register_secret

    key = "Zr8reprSecret\r\nWithControls41"
    register_secret(key)
    for text in (f"Illegal header value b'Bearer {key}'".encode(),  # bytes: its repr
                 repr(f"Bearer {key}"), repr(f"Bearer {key}".encode()),
                 f"Illegal header value {f'Bearer {key}'.encode()!r}",
                 '{"authorization": ' + __import__("json").dumps(key) + "}",
                 f"header was {key.strip()} only", f"first line {key.splitlines()[0]}"):
        shown = redact(text, limit=None)
        assert key[:10] not in shown, shown
        assert MASK in shown, shown
