"""The pipeline's clip type: :class:`vocencebench.audio.Clip` (services stream), or until that
lands a minimal stand-in with the same interface (``data``, ``sha256``, ``audio()``,
``judge_wav()``, ``from_bytes``). The pipeline imports ``Clip`` from here only, so switching
is this one file."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .audio import Audio

try:  # pragma: no cover - depends on which streams are merged
    from .audio import Clip  # type: ignore[attr-defined, unused-ignore]
except ImportError:  # pragma: no cover

    @dataclass(frozen=True, eq=False)
    class Clip:  # type: ignore[no-redef]
        """Encoded bytes as the system returned them, their sha256, the decoded audio (made
        once, on first use) and the 16-bit WAV a judge is sent."""

        data: bytes
        sha256: str
        _memo: dict[str, Any] = field(default_factory=dict, repr=False)
        _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

        @classmethod
        def from_bytes(cls, data: bytes) -> Clip:
            raw = bytes(data)
            return cls(raw, hashlib.sha256(raw).hexdigest())

        def audio(self) -> Audio:
            with self._lock:
                got = self._memo.get("audio")
                if got is None:
                    from .audio import load_audio

                    got = self._memo["audio"] = load_audio(self.data)
                return got  # type: ignore[no-any-return]

        def judge_wav(self) -> bytes:
            with self._lock:
                got = self._memo.get("wav")
            if got is not None:
                return got  # type: ignore[no-any-return]
            audio = self.audio()
            if audio.format == "WAV/PCM_16":
                wav = self.data
            else:
                from .audio import to_wav_bytes

                wav = to_wav_bytes(audio.samples, audio.sample_rate)
            with self._lock:
                self._memo["wav"] = wav
            return wav

        @property
        def wav(self) -> bytes:
            """What the current judge reads from an object that is not bytes."""
            return self.judge_wav()

        def __getstate__(self) -> dict[str, Any]:
            return {"data": self.data, "sha256": self.sha256}

        def __setstate__(self, state: dict[str, Any]) -> None:
            object.__setattr__(self, "data", state["data"])
            object.__setattr__(self, "sha256", state["sha256"])
            object.__setattr__(self, "_memo", {})
            object.__setattr__(self, "_lock", threading.Lock())

__all__ = ["Clip"]
