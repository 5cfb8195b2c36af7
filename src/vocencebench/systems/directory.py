"""Pre-synthesised clips in a folder: ``<dir>/<item id>.wav``."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import ConfigError, SynthesisError
from ..schema import Item
from .base import CLIP_MAX_BYTES, check_max_bytes, read_clip

__all__ = ["DirectoryAdapter"]

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class DirectoryAdapter:
    """Pre-synthesised clips: ``<dir>/<item id>.wav``. Refuses ids that leave the folder.

    Its clips are read afresh on every run (``cache_clips = False``): replacing a file in
    place is seen at once; analyses and verdicts are still cached by the audio's sha256.
    A clip over ``max_bytes`` (default :data:`CLIP_MAX_BYTES`) fails its item unread.
    """

    #: Reading a file is cheaper than caching it, and a cached copy could go stale.
    cache_clips = False

    def __init__(self, path: str | os.PathLike[str], *, suffix: str = ".wav",
                 max_bytes: int = CLIP_MAX_BYTES) -> None:
        self.root = Path(path).resolve()
        if not self.root.is_dir():
            raise ConfigError(f"clip directory {self.root} does not exist")
        self.suffix = suffix
        self.max_bytes = check_max_bytes(max_bytes)
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
        wav = read_clip(p, self.max_bytes, f"clip {p.name}")
        if wav is None:
            raise SynthesisError(f"no clip for {item.id}: {p} is missing")
        return wav

    def __call__(self, text: str, instruction: str) -> bytes:
        raise ConfigError(
            "DirectoryAdapter serves clips by item id; use it through vb.benchmark or "
            "call .synthesize_item(item)"
        )

    def __repr__(self) -> str:
        return f"DirectoryAdapter({str(self.root)!r})"
