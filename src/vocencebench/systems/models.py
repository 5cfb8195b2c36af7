"""Local torch models as batched systems: Qwen3-TTS VoiceDesign and Parler-TTS.

Each model is loaded lazily on first use (its package is an optional extra) and renders
requests in batches of ``batch_size``. They declare ``placement = "worker"``: on a Dask
cluster they run on the workers (where the GPUs are), every other system in the client.
"""

from __future__ import annotations

import abc
import gc
import logging
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .._util.deps import require
from ..errors import SynthesisError
from ..redact import redact
from .base import Placement

__all__ = ["ParlerTTSAdapter", "Qwen3TTSAdapter"]

log = logging.getLogger(__name__)


def _in_batches(
    sid: str,
    requests: Sequence[tuple[str, str]],
    size: int,
    render: Callable[[Sequence[tuple[str, str]]], list[bytes]],
) -> list[bytes | Exception]:
    """``render`` each chunk of ``size`` requests; a chunk that raises fails its own items.

    A chunk that runs out of memory is rendered again in halves, down to single requests:
    the batch size is the adapter's choice, so it must not cost the system a score. A single
    request that still does not fit fails like any request the system cannot render (a
    :class:`~vocencebench.errors.SynthesisError`, S = 0 with the reason: design.md counts
    a system's resource limits, like its timeouts, against it)."""
    out: list[bytes | Exception] = []
    for start in range(0, len(requests), size):
        out.extend(_render_fitting(sid, requests[start : start + size], render))
    return out


def _render_fitting(
    sid: str,
    chunk: Sequence[tuple[str, str]],
    render: Callable[[Sequence[tuple[str, str]]], list[bytes]],
) -> list[bytes | Exception]:
    """One chunk's results, split in halves while it runs out of memory (see _in_batches)."""
    oom: str | None = None
    try:
        wavs = render(chunk)
        if len(wavs) != len(chunk):
            raise SynthesisError(f"{len(wavs)} clips for {len(chunk)} requests")
        return list(wavs)
    except Exception as exc:  # one bad batch fails its items, not the run
        if not _out_of_memory(exc):
            return [SynthesisError(f"{sid}: {type(exc).__name__}: {exc}") for _ in chunk]
        oom = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    # Outside the handler: the traceback's frames, and the tensors they hold, are released.
    _free_device_memory()
    if len(chunk) == 1:
        return [SynthesisError(f"{sid}: out of memory on a single request, after splitting "
                               f"its batch ({redact(oom)})")]
    half = (len(chunk) + 1) // 2
    log.warning("%s: out of memory on a batch of %d requests; rendering it as %d + %d (a "
                "smaller batch_size avoids the retry)", sid, len(chunk), half, len(chunk) - half)
    return (_render_fitting(sid, chunk[:half], render)
            + _render_fitting(sid, chunk[half:], render))


def _out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` says the device ran out of memory: torch's ``OutOfMemoryError``, the
    ``RuntimeError("CUDA out of memory ...")`` of older torch releases, a ``MemoryError``."""
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def _free_device_memory() -> None:
    """Hand the memory of a failed batch back before the retry (torch caches CUDA blocks)."""
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def _torch_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda:0" if torch.cuda.is_available() else "cpu"


class _BatchedModelAdapter(abc.ABC):
    """A local model that renders batches: one clip is a batch of one.

    ``placement = "worker"``: on a Dask cluster the model runs on the workers."""

    placement: Placement = "worker"

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
            torch = require("torch", "Qwen3TTSAdapter", "qwen3", package="qwen-tts")
            qwen_tts = require("qwen_tts", "Qwen3TTSAdapter", "qwen3", package="qwen-tts")
            self._model = qwen_tts.Qwen3TTSModel.from_pretrained(
                self.checkpoint,
                device_map=_torch_device(self.device),
                dtype=getattr(torch, self.dtype),
            )
        return self._model

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        from ..audio import to_wav_bytes

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
            parler_tts = require("parler_tts", "ParlerTTSAdapter", "parler", package="parler-tts")
            transformers = require("transformers", "ParlerTTSAdapter", "parler",
                                   package="parler-tts")
            dev = _torch_device(self.device)
            model = parler_tts.ParlerTTSForConditionalGeneration.from_pretrained(
                self.checkpoint).to(dev)
            tok = transformers.AutoTokenizer.from_pretrained(self.checkpoint)
            self._loaded = (model, tok, dev)
        return self._loaded

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        from ..audio import to_wav_bytes

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
