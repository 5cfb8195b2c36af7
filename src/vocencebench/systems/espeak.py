"""The built-in eSpeak NG systems (``espeak-follow``, ``espeak-flat``) as an adapter.

The engine itself is :mod:`vocencebench.tts`, imported when a system is built (it forks clip
processes and loads nothing until then).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["EspeakSystem"]


class EspeakSystem:
    """A built-in eSpeak NG system (``espeak-follow`` or ``espeak-flat``); offline."""

    def __init__(self, name: str = "espeak-follow") -> None:
        from .. import tts

        self._impl = tts.get_system(name)
        self.name = name
        self.system_id = f"{name}@{tts.ENGINE_VERSION}"

    def __call__(self, text: str, instruction: str) -> bytes:
        return self._impl(text, instruction)

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        from .. import tts

        return tts.synthesize_requests(self.name, requests, workers=workers)

    def __repr__(self) -> str:
        return f"EspeakSystem({self.name!r})"
