from __future__ import annotations

import io
import json
import sys
import threading
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from vocencebench.adapters import (
    CommandAdapter,
    DirectoryAdapter,
    OpenAISpeechAdapter,
    synthesize_item,
    system_id,
)
from vocencebench.errors import ConfigError, ServiceError, SynthesisError
from vocencebench.schema import Item
from vocencebench.specs import build_system

ITEM = Item("vb-00001", "a calm voice", "Hello there.", {}, 0)


def _wav(seconds: float = 0.5, rate: int = 16000) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\x10\x00\xf0\xff" * int(seconds * rate / 2))
    return buf.getvalue()


# A tiny "TTS" program: writes a WAV to argv[3] and echoes its text/instruction arguments.
_SCRIPT = """
import sys, wave, json
text, instruction, out = sys.argv[1], sys.argv[2], sys.argv[3]
if text == "FAIL":
    sys.stderr.write("model exploded\\n"); sys.exit(3)
if text == "SLEEP":
    import time; time.sleep(30)
with wave.open(out, "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    w.writeframes(b"\\x00\\x01" * 8000)
open(out + ".json", "w").write(json.dumps([text, instruction]))
"""


@pytest.fixture()
def tts_script(tmp_path: Path) -> Path:
    p = tmp_path / "fake_tts.py"
    p.write_text(_SCRIPT)
    return p


def test_command_adapter_passes_arguments_verbatim_without_shell(tts_script: Path) -> None:
    adapter = CommandAdapter(f"{sys.executable} {tts_script} {{text}} {{instruction}} {{out}}")
    nasty = "it's; rm -rf / $(whoami) `id` \"quoted\" {text}"
    wav = adapter(nasty, "calm & slow | loud")
    assert wav[:4] == b"RIFF"
    assert system_id(adapter).startswith("cmd:")


def test_a_key_typed_into_a_command_template_is_masked_in_its_id(tts_script: Path) -> None:
    """The id goes into run.json, the reports and the cache: the key was there in full."""
    key = "sk-proj-LITERALCANARY0123456789abcdef"
    adapter = CommandAdapter(f"{sys.executable} {tts_script} {{text}} --key {key} {{out}}")
    assert key not in system_id(adapter) and key[:12] not in system_id(adapter)
    assert "--key [REDACTED]" in system_id(adapter)
    assert key in adapter.argv_template  # the command itself still gets it


@pytest.mark.slow
def test_command_adapter_errors(tts_script: Path) -> None:
    adapter = CommandAdapter(f"{sys.executable} {tts_script} {{text}} {{instruction}} {{out}}",
                             timeout=2)
    with pytest.raises(SynthesisError, match=r"exited 3.*model exploded"):
        adapter("FAIL", "x")
    with pytest.raises(SynthesisError, match="timed out after 2 s"):
        adapter("SLEEP", "x")
    with pytest.raises(SynthesisError, match="command not found"):
        CommandAdapter("/nonexistent/tts {out}")("a", "b")
    with pytest.raises(ConfigError, match="must contain"):
        CommandAdapter("tts {text}")


def test_directory_adapter_refuses_traversal(tmp_path: Path) -> None:
    (tmp_path / "clips").mkdir()
    (tmp_path / "clips" / "vb-00001.wav").write_bytes(_wav())
    (tmp_path / "secret.wav").write_bytes(b"secret")
    d = DirectoryAdapter(tmp_path / "clips")
    assert synthesize_item(d, ITEM)[:4] == b"RIFF"
    for bad in ("../secret", "..", "/etc/passwd", "a/../../secret", "sub/x", ""):
        with pytest.raises(SynthesisError, match="refusing item id"):
            d.path_for(bad)
    with pytest.raises(SynthesisError, match="no clip for vb-00002"):
        d.synthesize_item(Item("vb-00002", "i", "t", {}, 0))
    with pytest.raises(ConfigError, match="does not exist"):
        DirectoryAdapter(tmp_path / "missing")


def test_failing_system_raises_synthesis_error_naming_item() -> None:
    def broken(text: str, instruction: str) -> bytes:
        raise RuntimeError("CUDA out of memory")

    with pytest.raises(SynthesisError, match="vb-00001: RuntimeError: CUDA out of memory"):
        synthesize_item(broken, ITEM)

    def empty(text: str, instruction: str) -> bytes:
        return b""

    with pytest.raises(SynthesisError, match="instead of WAV bytes"):
        synthesize_item(empty, ITEM)


class _SpeechHandler(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body,
                                    "auth": self.headers.get("Authorization")})
        if body["input"] == "ERR":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"boom")
            return
        data = _wav()
        self.send_response(200)
        self.send_header("Content-Type", "audio/wav")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return None


def test_openai_speech_adapter_against_local_server() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SpeechHandler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        ad = OpenAISpeechAdapter(url, "gpt-4o-mini-tts", "alloy", api_key="sk-secret-123",
                                 max_retries=1, sleep=lambda s: None)
        wav = ad("Hello there.", "a calm elderly voice")
        assert wav[:4] == b"RIFF"
        req = _SpeechHandler.requests[-1]
        assert req["path"] == "/v1/audio/speech"
        assert req["body"] == {"model": "gpt-4o-mini-tts", "voice": "alloy",
                               "input": "Hello there.", "instructions": "a calm elderly voice",
                               "response_format": "wav"}
        assert req["auth"] == "Bearer sk-secret-123"
        assert "sk-secret" not in repr(ad) and "sk-secret" not in ad.system_id
        # a server error after the retries is infrastructure, not the system's failure
        with pytest.raises(ServiceError, match="HTTP 500 after 2 attempts") as err:
            ad("ERR", "x")
        assert err.value.blame == "instrument" and not err.value.fatal
        assert err.value.calls == 2 and err.value.status == 500
        ad.close()
    finally:
        server.shutdown()
        server.server_close()


def test_build_system_errors() -> None:
    with pytest.raises(ConfigError, match="openai-speech:URL#MODEL#VOICE"):
        build_system("openai-speech:http://x#m")
    with pytest.raises(ConfigError, match="unknown system 'nope'"):
        build_system("nope")
    assert isinstance(build_system("cmd:tts {text} {out}"), CommandAdapter)


class _FakeQwenModel:
    """Stands in for qwen_tts.Qwen3TTSModel: records batches, fails one on request."""

    batches: ClassVar[list[list[str]]] = []
    loaded: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    @classmethod
    def from_pretrained(cls, path: str, **kw: Any) -> _FakeQwenModel:
        cls.loaded.append((path, kw))
        return cls()

    def generate_voice_design(self, *, text: list[str], language: list[str],
                              instruct: list[str]) -> tuple[list[Any], int]:
        import numpy as np

        type(self).batches.append(list(text))
        assert language == ["English"] * len(text) and len(instruct) == len(text)
        if "BOOM" in text:
            raise RuntimeError("CUDA error: device-side assert")
        return [np.full(12000 * (k + 1), 0.1, dtype=np.float32) for k in range(len(text))], 24000


def test_qwen3_adapter_batches_and_isolates_a_failing_batch(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    import types

    pytest.importorskip("torch")
    from vocencebench.adapters import Qwen3TTSAdapter
    from vocencebench.audio import load_audio

    fake = types.ModuleType("qwen_tts")
    fake.Qwen3TTSModel = _FakeQwenModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "qwen_tts", fake)
    ad = Qwen3TTSAdapter("/ckpt/voice-design", device="cpu", batch_size=2)
    assert ad.system_id == "qwen3:/ckpt/voice-design" and _FakeQwenModel.loaded == []  # lazy
    reqs = [("one", "i1"), ("two", "i2"), ("BOOM", "i3"), ("four", "i4"), ("five", "i5")]
    out = ad.synthesize_many(reqs)
    assert _FakeQwenModel.batches == [["one", "two"], ["BOOM", "four"], ["five"]]
    assert isinstance(out[2], SynthesisError) and isinstance(out[3], SynthesisError)
    assert "device-side assert" in str(out[2])
    good = [load_audio(o) for o in out if isinstance(o, bytes)]
    assert [a.sample_rate for a in good] == [24000] * 3
    assert [round(a.duration, 2) for a in good] == [0.5, 1.0, 0.5]
    assert len(_FakeQwenModel.loaded) == 1 and _FakeQwenModel.loaded[0][1]["device_map"] == "cpu"


class _FakeQwenOnSmallGPU(_FakeQwenModel):
    """:class:`_FakeQwenModel` on a device that holds at most ``fits`` requests at once
    (torch's OutOfMemoryError beyond), and never a script containing HUGE."""

    fits: ClassVar[int] = 2

    def generate_voice_design(self, *, text: list[str], language: list[str],
                              instruct: list[str]) -> tuple[list[Any], int]:
        import torch

        if len(text) > self.fits or any("HUGE" in t for t in text):
            type(self).batches.append(list(text))
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
        return super().generate_voice_design(text=text, language=language, instruct=instruct)


def _small_gpu_qwen(monkeypatch: pytest.MonkeyPatch, batch_size: int) -> Any:
    import types

    pytest.importorskip("torch")
    from vocencebench.adapters import Qwen3TTSAdapter

    _FakeQwenOnSmallGPU.batches = []
    fake = types.ModuleType("qwen_tts")
    fake.Qwen3TTSModel = _FakeQwenOnSmallGPU  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "qwen_tts", fake)
    return Qwen3TTSAdapter("/ckpt/voice-design", device="cpu", batch_size=batch_size)


def test_a_batch_that_runs_out_of_memory_is_rendered_in_halves_and_costs_no_item(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    ad = _small_gpu_qwen(monkeypatch, batch_size=5)
    reqs = [(w, "i") for w in ("one", "two", "three", "four", "five", "six")]
    out = ad.synthesize_many(reqs)
    # the old code failed the first five items as the system's synthesis failures
    assert all(isinstance(o, bytes) for o in out), out
    assert _FakeQwenOnSmallGPU.batches == [
        ["one", "two", "three", "four", "five"],  # out of memory: 3 + 2
        ["one", "two", "three"],                  # out of memory: 2 + 1
        ["one", "two"], ["three"], ["four", "five"], ["six"]]
    assert "out of memory on a batch of 5 requests; rendering it as 3 + 2" in caplog.text


def test_one_request_that_does_not_fit_even_alone_fails_only_itself(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ad = _small_gpu_qwen(monkeypatch, batch_size=2)
    out = ad.synthesize_many([("one", "i"), ("HUGE", "i"), ("three", "i")])
    assert isinstance(out[0], bytes) and isinstance(out[2], bytes)  # its batch-mate is heard
    err = out[1]
    assert isinstance(err, SynthesisError)  # S = 0, like a timeout (design.md, Composite)
    assert "out of memory on a single request, after splitting its batch" in str(err)
    assert "OutOfMemoryError: CUDA out of memory" in str(err)
    assert _FakeQwenOnSmallGPU.batches == [["one", "HUGE"], ["one"], ["HUGE"], ["three"]]


def test_only_out_of_memory_is_retried_in_halves() -> None:
    from vocencebench.systems.models import _in_batches

    calls: list[int] = []

    def render(chunk: Any) -> list[bytes]:
        calls.append(len(chunk))
        raise RuntimeError("CUDA error: device-side assert triggered")

    out = _in_batches("m", [("a", "i"), ("b", "i")], 2, render)
    assert calls == [2] and all(isinstance(o, SynthesisError) for o in out)
    calls.clear()

    def old_torch(chunk: Any) -> list[bytes]:  # torch < 2.5 raised a plain RuntimeError
        calls.append(len(chunk))
        if len(chunk) > 1:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [b"RIFF"]

    assert _in_batches("m", [("a", "i"), ("b", "i")], 2, old_torch) == [b"RIFF", b"RIFF"]
    assert calls == [2, 1, 1]


def test_model_adapters_name_their_extra_when_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from vocencebench.adapters import ParlerTTSAdapter, Qwen3TTSAdapter
    from vocencebench.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "qwen_tts", None)
    monkeypatch.setitem(sys.modules, "parler_tts", None)
    with pytest.raises(MissingDependencyError, match=r"vocencebench\[qwen3\]"):
        Qwen3TTSAdapter("/x")("a", "b")
    with pytest.raises(MissingDependencyError, match=r"vocencebench\[parler\]"):
        ParlerTTSAdapter("/x")("a", "b")


# A command that floods stderr (20 MB), says why it fails last, and before it exits records
# how large the file behind its stderr has grown in the adapter's temp directory.
_FLOOD = """
import glob, os, sys
chunk = b"x" * 65536 + b"\\n"
for _ in range(305):
    os.write(2, chunk)
os.write(2, b"the real reason\\n")
sizes = [os.path.getsize(p) for p in glob.glob(os.path.join(sys.argv[1], "vocence-cmd-*", "*"))]
open(sys.argv[2], "w").write(str(max(sizes, default=0)))
sys.exit(3)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the guard is POSIX")
def test_a_command_flooding_stderr_fills_no_disk_and_its_last_line_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from vocencebench.systems._cmdguard import STDERR_KEEP_BYTES

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    script, size = tmp_path / "flood.py", tmp_path / "size.txt"
    script.write_text(_FLOOD)
    adapter = CommandAdapter(f"{sys.executable} {script} {temp} {size} {{out}}")
    with pytest.raises(SynthesisError, match=r"exited 3: .*the real reason"):
        adapter("Hello.", "calm")
    # The command wrote 20 MB to stderr; nothing of it was on disk while it ran (the guard
    # keeps the last 64 KiB in memory and writes them when the command is over).
    assert int(size.read_text()) <= STDERR_KEEP_BYTES



def test_the_failure_reason_of_a_command_keeps_its_last_stderr_line(tmp_path: Path) -> None:
    # A long warning line before the error: the stored reason (cut to a few hundred
    # characters) must still hold the error, which comes last.
    from vocencebench._util import failures

    script = tmp_path / "warns.py"
    script.write_text("import sys\nsys.stderr.write('UserWarning: ' + 'w' * 400 + '\\n')\n"
                      "sys.stderr.write(\"ERROR: voice 'x' not found\\n\")\nsys.exit(1)\n")
    adapter = CommandAdapter(f"{sys.executable} {script} {{out}}")
    with pytest.raises(SynthesisError) as info:
        adapter("Hello.", "calm")
    stored = failures.reason(failures.SYNTHESIS, info.value)
    assert stored.endswith("ERROR: voice 'x' not found"), stored
    assert "…" in stored and len(stored) < 300


@pytest.mark.parametrize("template", [
    "sh -c 'mytts \"{text}\" > {out}'",
    "bash -ec 'mytts {instruction} {out}'",
    "/usr/bin/env A=1 python3 -c \"import t; t.say('{text}', '{out}')\"",
    "perl -e 'print q({text})' {out}",
])
def test_a_placeholder_inside_code_an_interpreter_runs_is_refused(template: str) -> None:
    with pytest.raises(ConfigError, match=r"into the code that .* runs: .*\$\(…\) would run as "
                       r"commands. Pass it as an argument instead"):
        CommandAdapter(template)


@pytest.mark.parametrize("template", [
    "sh -c 'mytts \"$1\" > \"$2\"' sh {text} {out}",  # the safe form the message shows
    "sh -c 'mytts > {out}'",
    "python3 mytts.py -c {text} {out}",  # the script's own -c
    "bash run.sh -c {text} {out}",
])
def test_the_safe_forms_with_an_interpreter_are_accepted(template: str) -> None:
    CommandAdapter(template)


def test_the_safe_shell_form_passes_a_hostile_text_literally(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    script = tmp_path / "tts.py"
    script.write_text("import sys, wave\nopen(sys.argv[2] + '.txt', 'w').write(sys.argv[1])\n"
                      "w = wave.open(sys.argv[2], 'wb'); w.setnchannels(1); w.setsampwidth(2)\n"
                      "w.setframerate(16000); w.writeframes(b'\\x00\\x10' * 8000); w.close()\n")
    adapter = CommandAdapter(f"sh -c '{sys.executable} {script} \"$1\" \"$2\"' sh {{text}} "
                             "{out}")
    assert adapter(f"Hi $(touch {marker}).", "calm")[:4] == b"RIFF"
    assert not marker.exists()
