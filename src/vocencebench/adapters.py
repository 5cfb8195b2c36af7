"""Any TTS model as a ``(text, instruction) -> wav bytes`` callable.

The extension point is :class:`TTSSystem`. Systems may also offer

* ``system_id`` — a stable identity for the cache (else the class/function name is used);
* ``synthesize_item(item) -> bytes`` — when the system needs the item itself (directories);
* ``synthesize_many(requests) -> list[bytes | Exception]`` — batched synthesis (GPU models);
* ``cache_clips = False`` — do not keep this system's clips in the run cache.

A system that raises or times out on an item scores S = 0 on it, with the reason kept; the
pipeline catches :class:`~vocencebench.errors.VocenceError` and any other exception alike.
"""

from __future__ import annotations

import abc
import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import httpx

from .errors import ConfigError, MissingDependencyError, SynthesisError
from .schema import Item

__all__ = [
    "CommandAdapter",
    "DirectoryAdapter",
    "EspeakSystem",
    "OpenAISpeechAdapter",
    "ParlerTTSAdapter",
    "Qwen3TTSAdapter",
    "TTSSystem",
    "parse_system_spec",
    "synthesize_item",
    "system_id",
]


@runtime_checkable
class TTSSystem(Protocol):
    """A prompt-controllable TTS system: script + voice instruction → WAV bytes."""

    def __call__(self, text: str, instruction: str) -> bytes: ...


def system_id(system: Callable[[str, str], bytes]) -> str:
    """A stable identity for ``system`` (cache key part): its ``system_id`` or its name."""
    sid = getattr(system, "system_id", None)
    if isinstance(sid, str) and sid:
        return sid
    mod = getattr(system, "__module__", "") or ""
    name = getattr(system, "__qualname__", None) or type(system).__qualname__
    return f"callable:{mod}.{name}"


def synthesize_item(system: Callable[[str, str], bytes], item: Item) -> bytes:
    """Synthesise ``item`` with ``system``; raises SynthesisError naming the item on failure."""
    try:
        fn = getattr(system, "synthesize_item", None)
        wav = fn(item) if fn is not None else system(item.text, item.instruction)
    except SynthesisError:
        raise
    except Exception as exc:  # a user's system may raise anything
        raise SynthesisError(
            f"{system_id(system)} failed on {item.id}: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(wav, bytes | bytearray) or not wav:
        raise SynthesisError(
            f"{system_id(system)} returned {type(wav).__name__} instead of WAV bytes "
            f"for {item.id}"
        )
    return bytes(wav)


class EspeakSystem:
    """A built-in eSpeak NG system (``espeak-follow`` or ``espeak-flat``); offline."""

    def __init__(self, name: str = "espeak-follow") -> None:
        from . import tts

        self._impl = tts.get_system(name)
        self.name = name
        self.system_id = f"{name}@{tts.ENGINE_VERSION}"

    def __call__(self, text: str, instruction: str) -> bytes:
        return self._impl(text, instruction)

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        from . import tts

        return tts.synthesize_requests(self.name, requests, workers=workers)

    def __repr__(self) -> str:
        return f"EspeakSystem({self.name!r})"


class CommandAdapter:
    """Runs a command per item, without a shell: ``{text}``, ``{instruction}``, ``{out}``.

    The template is split with :func:`shlex.split` first and placeholders are filled per
    argument, so a script containing quotes or ``;`` is passed verbatim, never interpreted.
    The command must write a WAV file to ``{out}``. ``timeout`` is in seconds.
    """

    def __init__(self, template: str, *, timeout: float = 300.0, name: str | None = None) -> None:
        self.argv_template = shlex.split(template)
        if not self.argv_template:
            raise ConfigError("command template is empty")
        if not any("{out}" in a for a in self.argv_template):
            raise ConfigError(f"command template {template!r} must contain {{out}}")
        self.timeout = timeout
        self.system_id = name or f"cmd:{template}"

    def __call__(self, text: str, instruction: str) -> bytes:
        with tempfile.TemporaryDirectory(prefix="vocence-cmd-") as tmp:
            out = os.path.join(tmp, "out.wav")
            values = {"text": text, "instruction": instruction, "out": out}
            argv = [_fill(a, values) for a in self.argv_template]
            try:
                proc = subprocess.run(
                    argv, capture_output=True, timeout=self.timeout, check=False
                )
            except FileNotFoundError as exc:
                raise SynthesisError(f"command not found: {argv[0]}") from exc
            except subprocess.TimeoutExpired as exc:
                raise SynthesisError(
                    f"command timed out after {self.timeout:g} s: {argv[0]}"
                ) from exc
            if proc.returncode != 0:
                err = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
                raise SynthesisError(
                    f"command exited {proc.returncode}: {argv[0]}: {' | '.join(err)}"
                )
            if not os.path.exists(out):
                raise SynthesisError(f"command {argv[0]} wrote no file to {{out}}")
            return Path(out).read_bytes()

    def __repr__(self) -> str:
        return f"CommandAdapter({self.system_id!r})"


def _fill(arg: str, values: dict[str, str]) -> str:
    # Replace only our three placeholders; other braces stay as they are.
    return re.sub(r"\{(text|instruction|out)\}", lambda m: values[m.group(1)], arg)


_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class DirectoryAdapter:
    """Pre-synthesised clips: ``<dir>/<item id>.wav``. Refuses ids that leave the folder.

    Its clips are read afresh on every run (``cache_clips = False``): replacing a file in
    place is seen at once; analyses and verdicts are still cached by the audio's sha256.
    """

    #: Reading a file is cheaper than caching it, and a cached copy could go stale.
    cache_clips = False

    def __init__(self, path: str | os.PathLike[str], *, suffix: str = ".wav") -> None:
        self.root = Path(path).resolve()
        if not self.root.is_dir():
            raise ConfigError(f"clip directory {self.root} does not exist")
        self.suffix = suffix
        self.system_id = f"dir:{self.root}"

    def path_for(self, item_id: str) -> Path:
        if not _SAFE_ID.match(item_id) or ".." in item_id:
            raise SynthesisError(f"refusing item id {item_id!r}: not a plain file name")
        p = (self.root / f"{item_id}{self.suffix}").resolve()
        if p.parent != self.root:
            raise SynthesisError(f"refusing item id {item_id!r}: leaves {self.root}")
        return p

    def synthesize_item(self, item: Item) -> bytes:
        p = self.path_for(item.id)
        if not p.is_file():
            raise SynthesisError(f"no clip for {item.id}: {p} is missing")
        return p.read_bytes()

    def __call__(self, text: str, instruction: str) -> bytes:
        raise ConfigError(
            "DirectoryAdapter serves clips by item id; use it through vb.benchmark or "
            "call .synthesize_item(item)"
        )

    def __repr__(self) -> str:
        return f"DirectoryAdapter({str(self.root)!r})"


class OpenAISpeechAdapter:
    """Any ``/v1/audio/speech`` server with an ``instructions`` field (e.g. gpt-4o-mini-tts).

    The key comes from ``api_key`` or ``OPENAI_API_KEY`` and is never stored in ``repr`` or
    ``system_id``.
    """

    def __init__(
        self,
        base_url: str = "https://api.openai.com",
        model: str = "gpt-4o-mini-tts",
        voice: str = "alloy",
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.voice = voice
        self._key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._client = httpx.Client(timeout=timeout, transport=transport)
        self.system_id = f"openai-speech:{self.base_url}#{model}#{voice}"

    def __call__(self, text: str, instruction: str) -> bytes:
        url = self.base_url + ("/audio/speech" if self.base_url.endswith("/v1")
                               else "/v1/audio/speech")
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        body = {"model": self.model, "voice": self.voice, "input": text,
                "instructions": instruction, "response_format": "wav"}
        try:
            r = self._client.post(url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise SynthesisError(f"{self.system_id}: {type(exc).__name__}: {exc}") from exc
        if r.status_code != 200:
            raise SynthesisError(
                f"{self.system_id}: HTTP {r.status_code}: {r.text[:200]}"
            )
        return r.content

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __repr__(self) -> str:
        return f"OpenAISpeechAdapter({self.base_url!r}, model={self.model!r}, voice={self.voice!r})"


def _in_batches(
    sid: str,
    requests: Sequence[tuple[str, str]],
    size: int,
    render: Callable[[Sequence[tuple[str, str]]], list[bytes]],
) -> list[bytes | Exception]:
    """``render`` each chunk of ``size`` requests; a chunk that raises fails its own items."""
    out: list[bytes | Exception] = []
    for start in range(0, len(requests), size):
        chunk = requests[start : start + size]
        try:
            wavs = render(chunk)
            if len(wavs) != len(chunk):
                raise SynthesisError(f"{len(wavs)} clips for {len(chunk)} requests")
            out.extend(wavs)
        except Exception as exc:  # one bad batch fails its items, not the run
            out.extend(SynthesisError(f"{sid}: {type(exc).__name__}: {exc}") for _ in chunk)
    return out


def _torch_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda:0" if torch.cuda.is_available() else "cpu"


class _BatchedModelAdapter(abc.ABC):
    """A local model that renders batches: one clip is a batch of one."""

    @abc.abstractmethod
    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]: ...

    def __call__(self, text: str, instruction: str) -> bytes:
        res = self.synthesize_many([(text, instruction)])[0]
        if isinstance(res, Exception):
            raise res
        return res


class Qwen3TTSAdapter(_BatchedModelAdapter):
    """Qwen3-TTS VoiceDesign (``qwen-tts``): ``generate_voice_design(text, language,
    instruct)``, 24 kHz output. Loaded lazily on first use; batched by ``batch_size``."""

    def __init__(
        self,
        checkpoint: str,
        *,
        language: str = "English",
        device: str = "auto",
        batch_size: int = 8,
        dtype: str = "bfloat16",
    ) -> None:
        self.checkpoint = checkpoint
        self.language = language
        self.device = device
        self.batch_size = batch_size
        self.dtype = dtype
        self.system_id = f"qwen3:{checkpoint}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                import torch
                from qwen_tts import Qwen3TTSModel
            except ImportError as exc:
                raise MissingDependencyError(
                    "Qwen3TTSAdapter", "qwen3", package="qwen-tts"
                ) from exc
            self._model = Qwen3TTSModel.from_pretrained(
                self.checkpoint,
                device_map=_torch_device(self.device),
                dtype=getattr(torch, self.dtype),
            )
        return self._model

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        from .audio import to_wav_bytes

        model = self._load()

        def render(chunk: Sequence[tuple[str, str]]) -> list[bytes]:
            wavs, sr = model.generate_voice_design(
                text=[t for t, _ in chunk],
                language=[self.language] * len(chunk),
                instruct=[i for _, i in chunk],
            )
            return [to_wav_bytes(w, int(sr)) for w in wavs]

        return _in_batches(self.system_id, requests, self.batch_size, render)


class ParlerTTSAdapter(_BatchedModelAdapter):
    """Parler-TTS: the instruction is the voice *description*, the script the *prompt*."""

    def __init__(self, checkpoint: str, *, device: str = "auto", batch_size: int = 8) -> None:
        self.checkpoint = checkpoint
        self.device = device
        self.batch_size = batch_size
        self.system_id = f"parler:{checkpoint}"
        self._loaded: tuple[Any, Any, str] | None = None

    def _load(self) -> tuple[Any, Any, str]:
        if self._loaded is None:
            try:
                from parler_tts import ParlerTTSForConditionalGeneration
                from transformers import AutoTokenizer
            except ImportError as exc:
                raise MissingDependencyError(
                    "ParlerTTSAdapter", "parler", package="parler-tts"
                ) from exc
            dev = _torch_device(self.device)
            model = ParlerTTSForConditionalGeneration.from_pretrained(self.checkpoint).to(dev)
            tok = AutoTokenizer.from_pretrained(self.checkpoint)
            self._loaded = (model, tok, dev)
        return self._loaded

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        from .audio import to_wav_bytes

        model, tok, dev = self._load()
        sr = int(model.config.sampling_rate)

        def render(chunk: Sequence[tuple[str, str]]) -> list[bytes]:
            desc = tok([i for _, i in chunk], return_tensors="pt", padding=True).to(dev)
            prompt = tok([t for t, _ in chunk], return_tensors="pt", padding=True).to(dev)
            gen = model.generate(
                input_ids=desc.input_ids, attention_mask=desc.attention_mask,
                prompt_input_ids=prompt.input_ids,
                prompt_attention_mask=prompt.attention_mask,
                do_sample=False, return_dict_in_generate=True,
            )
            return [
                to_wav_bytes(gen.sequences[k, : int(gen.audios_length[k])].float().cpu().numpy(),
                             sr)
                for k in range(len(chunk))
            ]

        return _in_batches(self.system_id, requests, self.batch_size, render)


def parse_system_spec(spec: str) -> Callable[[str, str], bytes]:
    """A system from a CLI spec: a built-in name (``espeak-follow``, ``espeak-flat``),
    ``cmd:TEMPLATE``, ``dir:PATH``, ``openai-speech:URL#MODEL#VOICE``, ``qwen3:CHECKPOINT``
    or ``parler:CHECKPOINT``."""
    if spec.startswith("cmd:"):
        return CommandAdapter(spec[4:])
    if spec.startswith("dir:"):
        return DirectoryAdapter(spec[4:])
    if spec.startswith("openai-speech:"):
        parts = spec[len("openai-speech:"):].split("#")
        if len(parts) != 3 or not all(parts):
            raise ConfigError(f"expected openai-speech:URL#MODEL#VOICE, got {spec!r}")
        return OpenAISpeechAdapter(parts[0], parts[1], parts[2])
    if spec.startswith("qwen3:"):
        return Qwen3TTSAdapter(spec[len("qwen3:"):])
    if spec.startswith("parler:"):
        return ParlerTTSAdapter(spec[len("parler:"):])
    from . import tts
    from .neural import NEURAL_SYSTEMS, HibariSystem

    if spec in tts.builtin_systems():
        return EspeakSystem(spec)
    if spec in NEURAL_SYSTEMS:
        return HibariSystem(spec)
    raise ConfigError(
        f"unknown system {spec!r}; use one of "
        f"{', '.join((*tts.builtin_systems(), *NEURAL_SYSTEMS))}, "
        "cmd:TEMPLATE, dir:PATH, openai-speech:URL#MODEL#VOICE, qwen3:CHECKPOINT, "
        "parler:CHECKPOINT"
    )
