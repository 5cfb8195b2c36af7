"""The intelligibility gate: transcribers (Whisper, OpenAI-compatible, PocketSphinx), the WER
gate and the status banner. No test reaches the network: the Whisper model is built locally,
the OpenAI-compatible server runs on 127.0.0.1 inside the test."""

from __future__ import annotations

import email.parser
import email.policy
import json
import logging
import pickle
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from vocencebench.audio import load_audio
from vocencebench.errors import ConfigError, TranscriptionError
from vocencebench.transcribe import (
    GATE_OFF_BANNER,
    Transcriber,
    Transcript,
    UnsuitableGateWarning,
    gate_status,
    openai_transcriber,
    pocketsphinx_transcriber,
    score_transcript,
    whisper_transcriber,
)

FOX = "The quick brown fox jumps over the lazy dog."
BOOK = "Please call Stella and ask her to bring these things from the store."


@pytest.fixture(scope="module")
def clips() -> dict[str, bytes]:
    from vocencebench.tts import synthesize

    return {"fox": synthesize(FOX), "book": synthesize(BOOK)}


# ----------------------------------------------------------------------------- score & banner


def test_score_transcript_perfect_and_failing() -> None:
    ok = score_transcript("Meet me at 10:30 on 12 March.", Transcript(
        "Meet me at ten thirty on March twelfth.", "x@1/y"))
    assert (ok.wer, ok.gate, ok.engine) == (0.0, 1, "x@1/y")
    assert ok.reference_norm == ok.hypothesis_norm == "meet me at 1030 on march 12th"
    bad = score_transcript(FOX, Transcript("the quick brown cat", "x@1/y"))
    assert bad.gate == 0
    assert bad.wer == pytest.approx(6 / 9)


def test_gate_threshold_is_inclusive() -> None:
    ref = " ".join(f"word{i}" for i in range(20))
    hyp = ref.replace("word0", "x").replace("word1 ", "y ").replace("word2 ", "z ")
    res = score_transcript(ref, Transcript(hyp, "e@1/m"))
    assert res.wer == pytest.approx(0.15)
    assert res.gate == 1
    assert score_transcript(ref, Transcript(hyp, "e@1/m"), threshold=0.1).gate == 0
    with pytest.raises(ConfigError):
        score_transcript(ref, Transcript(hyp, "e@1/m"), threshold=float("nan"))


def test_gate_off_banner() -> None:
    lines = gate_status(None)
    assert lines[0].startswith(GATE_OFF_BANNER)
    assert GATE_OFF_BANNER == "intelligibility gate OFF"
    assert "transcriber" in lines[0]


def test_gate_on_line_names_engine() -> None:
    tr = openai_transcriber("http://127.0.0.1:9", "whisper-1")
    lines = gate_status(tr)
    assert lines == ("intelligibility gate ON: openai-compatible@127.0.0.1:9/whisper-1, "
                     "WER threshold τ = 0.15",)


def test_pocketsphinx_as_gate_warns_loudly() -> None:
    ps = pocketsphinx_transcriber()
    assert ps.suitable_for_gate is False
    with pytest.warns(UnsuitableGateWarning, match="diagnostics only"):
        lines = gate_status(ps)
    assert lines[0].startswith("intelligibility gate ON: pocketsphinx@")
    assert lines[1].startswith("WARNING: ")
    assert "0.95" in lines[1] and "0.27" in lines[1] and "0.15" in lines[1]


def test_transcribers_follow_the_protocol() -> None:
    assert isinstance(pocketsphinx_transcriber(), Transcriber)
    assert isinstance(openai_transcriber("http://127.0.0.1:9", "m"), Transcriber)


def test_bad_input_type() -> None:
    with pytest.raises(ConfigError, match="audio bytes, an Audio or a Clip"):
        pocketsphinx_transcriber()("clip.wav")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- PocketSphinx


@pytest.mark.slow
def test_pocketsphinx_transcribes_speech(clips: dict[str, bytes]) -> None:
    ps = pocketsphinx_transcriber()
    tr = ps(clips["fox"])
    assert tr.engine.startswith("pocketsphinx@") and tr.engine.endswith("/en-us")
    assert tr.text.strip()
    res = score_transcript(FOX, tr)
    assert res.wer >= 0.0 and res.gate in (0, 1)


@pytest.mark.slow
def test_pocketsphinx_output_does_not_depend_on_clip_order(clips: dict[str, bytes]) -> None:
    ps = pocketsphinx_transcriber()
    first = ps(load_audio(clips["book"]))
    ps(clips["fox"])
    again = ps(clips["book"])
    assert first == again
    assert pocketsphinx_transcriber()(clips["book"]) == first


# ----------------------------------------------------------------------------- OpenAI API


@dataclass
class _Server:
    url: str
    replies: list[tuple[int, bytes]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def server() -> Iterator[_Server]:
    state = _Server(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            raw = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body
            msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
            parts: dict[str, Any] = {}
            for part in msg.iter_parts():
                name = part.get_param("name", header="content-disposition")
                parts[str(name)] = (part.get_filename(), part.get_content_type(),
                                    part.get_payload(decode=True))
            state.requests.append({"path": self.path, "headers": dict(self.headers),
                                   "parts": parts})
            status, reply = state.replies.pop(0) if state.replies else (
                200, json.dumps({"text": "The quick brown fox."}).encode())
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


SECRET = "sk-test-very-secret-0123456789"


def test_openai_multipart_request(server: _Server, clips: dict[str, bytes],
                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    tr = openai_transcriber(server.url, "whisper-1", api_key=SECRET)
    out = tr(clips["fox"])
    assert out == Transcript("The quick brown fox.", f"openai-compatible@"
                             f"{server.url.removeprefix('http://')}/whisper-1")
    (req,) = server.requests
    assert req["path"] == "/v1/audio/transcriptions"
    assert req["headers"]["Authorization"] == f"Bearer {SECRET}"
    filename, ctype, payload = req["parts"]["file"]
    assert (filename, ctype) == ("clip.wav", "audio/wav")
    sent = load_audio(payload)
    assert sent.sample_rate == 16000
    assert abs(sent.duration - load_audio(clips["fox"]).duration) < 0.01
    assert req["parts"]["model"][2] == b"whisper-1"
    assert req["parts"]["language"][2] == b"en"
    assert req["parts"]["temperature"][2] == b"0"
    assert SECRET not in caplog.text and "/v1/audio/transcriptions" in caplog.text
    assert SECRET not in repr(tr) and SECRET not in tr.engine
    assert SECRET not in pickle.dumps(tr.engine).decode("latin-1")


def test_openai_base_url_with_v1_and_env_key(server: _Server, clips: dict[str, bytes],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VB_TEST_ASR_KEY", SECRET)
    tr = openai_transcriber(server.url + "/v1/", "m", api_key_env="VB_TEST_ASR_KEY")
    tr(clips["fox"])
    assert server.requests[0]["path"] == "/v1/audio/transcriptions"
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    monkeypatch.delenv("VB_TEST_ASR_KEY")
    tr(clips["fox"])
    assert "Authorization" not in server.requests[1]["headers"]


@pytest.mark.parametrize(
    ("replies", "match"),
    [
        ([(400, b'{"error": "bad file"}')], "HTTP 400"),
        ([(401, b'{"error": "no"}')], "HTTP 401.*API key"),
        ([(500, b"boom"), (503, b"down")], "HTTP 503"),
        ([(429, b"slow down"), (429, b"slow down")], "HTTP 429"),
        ([(200, b"not json")], "did not answer JSON"),
        ([(200, b'{"txt": "x"}')], "'text' field"),
        ([(200, b'{"text": 3}')], "not a string"),
    ],
)
def test_openai_errors(server: _Server, clips: dict[str, bytes],
                       replies: list[tuple[int, bytes]], match: str) -> None:
    server.replies.extend(replies)
    tr = openai_transcriber(server.url, "m", api_key=SECRET, max_retries=1, backoff=0)
    with pytest.raises(TranscriptionError, match=match) as err:
        tr(clips["fox"])
    assert SECRET not in str(err.value)


def test_openai_retries_then_succeeds(server: _Server, clips: dict[str, bytes]) -> None:
    server.replies.extend([(503, b"warming up"), (200, b'{"text": "hello there"}')])
    out = openai_transcriber(server.url, "m", max_retries=2, backoff=0)(clips["fox"])
    assert out.text == "hello there"
    assert len(server.requests) == 2


def test_openai_unreachable_server(clips: dict[str, bytes]) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tr = openai_transcriber(f"http://127.0.0.1:{port}", "m", max_retries=0, timeout=5)
    with pytest.raises(TranscriptionError, match="unreachable"):
        tr(clips["fox"])


@pytest.mark.parametrize(("status", "fatal", "calls"),
                         [(401, True, 1), (403, True, 1), (404, True, 1), (503, False, 3)])
def test_openai_failures_carry_the_fatal_flag(server: _Server, clips: dict[str, bytes],
                                              status: int, fatal: bool, calls: int) -> None:
    server.replies.extend([(status, b'{"error": "no"}')] * 3)
    tr = openai_transcriber(server.url, "m", api_key=SECRET, max_retries=2, backoff=0)
    with pytest.raises(TranscriptionError, match=f"HTTP {status}") as err:
        tr(clips["fox"])
    assert err.value.fatal is fatal and err.value.blame == "instrument"
    assert len(server.requests) == calls


def test_openai_credentials_in_the_url_stay_out_of_the_engine() -> None:
    tr = openai_transcriber("http://u:pw-ASR-12345678@127.0.0.1:9/v1?key=Q-ASR-1234", "m")
    for text in (tr.engine, repr(tr), tr.url):
        assert "pw-ASR" not in text and "Q-ASR" not in text
    assert tr.engine == "openai-compatible@127.0.0.1:9/m"


def test_two_servers_behind_one_host_are_two_engines() -> None:
    """The engine keys the transcript cache: /large/v1 and /tiny/v1 on one host shared it."""
    large = openai_transcriber("http://127.0.0.1:9/large/v1", "whisper-1")
    tiny = openai_transcriber("http://127.0.0.1:9/tiny/v1", "whisper-1")
    assert large.engine == "openai-compatible@127.0.0.1:9/large#whisper-1"
    assert tiny.engine == "openai-compatible@127.0.0.1:9/tiny#whisper-1"
    assert openai_transcriber("http://127.0.0.1:9/", "whisper-1").engine == \
        openai_transcriber("http://127.0.0.1:9/v1", "whisper-1").engine == \
        "openai-compatible@127.0.0.1:9/whisper-1"  # the usual URL keeps its old name


def test_a_gated_run_refuses_a_script_the_gate_cannot_score_up_front() -> None:
    """"Hmm. Uh, hmm." normalises to nothing: the run stopped mid-way with no item named."""
    import dataclasses

    import vocencebench as vb
    from vocencebench.transcribe import unscorable_scripts

    items = vb.load_benchmark("benchmark_v1")[:3]
    items[1] = dataclasses.replace(items[1], text="Hmm. Uh, hmm.")
    items[2] = dataclasses.replace(items[2], text="Mm-hmm...")
    assert unscorable_scripts(items) == [items[1].id, items[2].id]
    tr = openai_transcriber("http://127.0.0.1:9/v1", "whisper-1")  # never called
    with pytest.raises(ConfigError, match=rf"2 item\(s\) have a script the intelligibility "
                                          rf"gate cannot score.*{items[1].id}, {items[2].id}"):
        vb.benchmark(items, vb.EspeakSystem("espeak-flat"), vb.EspeakSystem("espeak-follow"),
                     transcriber=tr, labels=("a", "b"), workers=1, progress=False,
                     canaries=False)


def test_openai_config_errors() -> None:
    with pytest.raises(ConfigError):
        openai_transcriber("127.0.0.1:8000", "m")
    with pytest.raises(ConfigError):
        openai_transcriber("http://127.0.0.1:8000", "")


# ----------------------------------------------------------------------------- Whisper

_LANG_CODES = (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no "
    "th ur hr bg lt la mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw "
    "gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl "
    "mg as tt haw ln ha ba jw su"
)
_LANGS = _LANG_CODES.split()


def _byte_chars() -> list[str]:
    """The byte → printable-character table of byte-level BPE (256 entries)."""
    printable = {*range(33, 127), *range(161, 173), *range(174, 256)}
    out, extra = [], 0
    for b in range(256):
        if b in printable:
            out.append(chr(b))
        else:
            out.append(chr(256 + extra))
            extra += 1
    return out


def _build_tiny_whisper(out: Path) -> Path:
    """A random-weight Whisper (d_model 32, 2+2 layers) with a synthetic tokenizer laid out
    like Whisper's multilingual one (51 865 ids), converted to CTranslate2 in ``out/ct2``."""
    import torch
    from ctranslate2.converters import TransformersConverter
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import (
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperTokenizerFast,
    )

    assert len(_LANGS) == 99
    vocab = {c: i for i, c in enumerate(_byte_chars())}
    vocab.update({f"tok{i}": i for i in range(len(vocab), 50256)})
    vocab[""] = 50256  # CTranslate2 treats the model as multilingual only with 51 865 ids
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|startoftranscript|>", *[f"<|{x}|>" for x in _LANGS],
                "<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>",
                "<|nocaptions|>", "<|notimestamps|>"]
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    tok.add_tokens([AddedToken(f"<|{i * 0.02:.2f}|>", normalized=False) for i in range(1501)])
    assert tok.get_vocab_size() == 51865 and tok.token_to_id("<|notimestamps|>") == 50363

    hf = out / "hf"
    WhisperTokenizerFast(
        tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
        unk_token="<|endoftext|>", pad_token="<|endoftext|>",
        additional_special_tokens=specials[2:],
    ).save_pretrained(hf)
    cfg = WhisperConfig(
        vocab_size=51865, num_mel_bins=80, d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
        decoder_ffn_dim=64, max_source_positions=1500, max_target_positions=448,
        decoder_start_token_id=50258, pad_token_id=50257, bos_token_id=50257,
        eos_token_id=50257, suppress_tokens=[], begin_suppress_tokens=[220, 50257],
    )
    torch.manual_seed(0)
    WhisperForConditionalGeneration(cfg).eval().save_pretrained(hf)
    WhisperFeatureExtractor(feature_size=80).save_pretrained(hf)
    ct2 = out / "ct2"
    TransformersConverter(
        str(hf), copy_files=["tokenizer.json", "preprocessor_config.json"]
    ).convert(str(ct2), quantization="float32")
    return ct2


@pytest.fixture(scope="module")
def tiny_whisper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for mod in ("faster_whisper", "ctranslate2", "transformers", "torch", "tokenizers"):
        pytest.importorskip(mod, reason=f"{mod} is not installed (extras 'whisper' and "
                            "'classifiers')")
    return _build_tiny_whisper(tmp_path_factory.mktemp("tiny-whisper"))


@pytest.mark.slow
@pytest.mark.whisper
def test_whisper_tiny_model_runs(tiny_whisper: Path, clips: dict[str, bytes]) -> None:
    tr = whisper_transcriber(str(tiny_whisper), device="cpu", compute_type="float32")
    assert tr.device == "cpu" and tr.compute_type == "float32"
    # the folder's name, the compute type and the weights' digest name the engine
    assert re.fullmatch(r"faster-whisper@[\w.]+/ct2/float32/sha256=[0-9a-f]{64}", tr.engine)
    assert isinstance(tr, Transcriber)
    out = tr(clips["fox"])
    assert isinstance(out, Transcript) and isinstance(out.text, str)
    assert out.engine == tr.engine
    # greedy decoding at temperature 0: the same clip gives the same text, bytes or Audio
    assert tr(load_audio(clips["fox"])) == out
    # the object travels to worker processes without its weights and reloads them there
    clone = pickle.loads(pickle.dumps(tr))
    assert clone._model is None
    assert clone(clips["fox"]) == out


@pytest.mark.whisper
def test_whisper_hub_id_offline_fails_fast(tmp_path: Path) -> None:
    pytest.importorskip("faster_whisper")
    with pytest.raises(ConfigError, match=r"huggingface-cli download "
                       r"Systran/faster-whisper-large-v3") as err:
        whisper_transcriber("large-v3", download_root=str(tmp_path), local_files_only=True)
    assert "model='/path/to/that/folder'" in str(err.value)
    # the default (downloads allowed) also fails at once when the hub is offline
    with pytest.raises(ConfigError, match="not on this machine"):
        whisper_transcriber("small.en", download_root=str(tmp_path))


@pytest.mark.whisper
def test_whisper_bad_paths(tmp_path: Path) -> None:
    pytest.importorskip("faster_whisper")
    with pytest.raises(ConfigError, match=r"no model\.bin"):
        whisper_transcriber(str(tmp_path))
    with pytest.raises(ConfigError, match="does not exist"):
        whisper_transcriber(str(tmp_path / "missing" / "model"))
    with pytest.raises(ConfigError, match="device"):
        whisper_transcriber(str(tmp_path), device="tpu")
