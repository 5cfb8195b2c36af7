"""The sha256 of a file's bytes, read in blocks: model weights run to gigabytes, and a
digest must not hold the whole file in memory. The gate's recogniser
(``_asr/digest.py``, which remembers digests) and the classifier checkpoints' fingerprint
(``probes/_checkpoints.py``) both hash through here."""

from __future__ import annotations

import hashlib
import os
from typing import Final

__all__ = ["READ_BLOCK_BYTES", "sha256_file"]

#: Bytes read per digest update (1 MiB).
READ_BLOCK_BYTES: Final = 1 << 20


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of the bytes of the file at ``path`` (OSError when it cannot be read)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(READ_BLOCK_BYTES):
            h.update(block)
    return h.hexdigest()
