"""Truncation in the audio containers besides RIFF/WAVE: RF64, Sony Wave64, AIFF/AIFC, CAF.

libsndfile clamps a clip whose header declares more audio than the file holds to the frames
present and reports no error, so a cut file decodes as a shorter, complete-looking clip. Each
of these containers states the size of its audio chunk; :func:`shortfall` compares it with the
bytes the file really holds. RIFF/WAVE itself is handled by :func:`vocencebench.audio.wav_layout`
(its size placeholders included). Sizes are in bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

__all__ = ["shortfall"]

# Wave64 chunk GUIDs end with these 12 bytes after the four-letter name.
_W64_TAIL = bytes.fromhex("f3acd3118cd100c04f8edb8a")
# RF64's and CAF's "size unknown" (the audio runs to the end of the file).
_RF64_UNKNOWN = 0xFFFFFFFFFFFFFFFF
_CAF_UNKNOWN = -1


def _message(kind: str, declared: int, have: int) -> str:
    return (f"truncated {kind}: the header declares {declared} bytes of audio but the file "
            f"holds {have}")


def _chunks(raw: bytes, pos: int, size_format: str, *, even: bool
            ) -> Iterator[tuple[bytes, int, int]]:
    """(id, declared size, offset of the body) of each chunk from ``pos``: a four-byte id
    then a size packed as ``size_format``; ``even``: bodies are padded to an even length."""
    head = 4 + struct.calcsize(size_format)
    while pos + head <= len(raw):
        (size,) = struct.unpack(size_format, raw[pos + 4:pos + head])
        body = pos + head
        yield raw[pos:pos + 4], size, body
        if size < 0:
            return  # a size marked unknown: nothing after it can be found
        pos = body + size + (size & 1 if even else 0)


def _rf64(raw: bytes) -> str | None:
    data_size: int | None = None
    for cid, size, body in _chunks(raw, 12, "<I", even=True):
        if cid == b"ds64" and body + 16 <= len(raw):
            (data_size,) = struct.unpack("<Q", raw[body + 8:body + 16])
        elif cid == b"data":
            declared = data_size if size == 0xFFFFFFFF and data_size is not None else size
            have = len(raw) - body
            if declared in (0, _RF64_UNKNOWN, 0xFFFFFFFF) or declared <= have:
                return None
            return _message("RF64", declared, have)
    return None


def _w64(raw: bytes) -> str | None:
    pos = 40  # after the riff GUID, its 8-byte size and the wave GUID
    while pos + 24 <= len(raw):
        (size,) = struct.unpack("<Q", raw[pos + 16:pos + 24])  # the 24-byte header included
        if raw[pos:pos + 4] == b"data" and raw[pos + 4:pos + 16] == _W64_TAIL:
            declared, have = size - 24, len(raw) - pos - 24
            return None if declared <= have else _message("Wave64", declared, have)
        if size < 24:
            return None  # a damaged chunk: left to libsndfile
        pos += size + (-size % 8)
    return None


def _audio_chunk(raw: bytes, kind: str, start: int, size_format: str, audio_id: bytes, *,
                 even: bool) -> str | None:
    """The shortfall of the audio chunk ``audio_id`` (AIFF's SSND, CAF's data)."""
    for cid, size, body in _chunks(raw, start, size_format, even=even):
        if cid == audio_id:
            have = len(raw) - body
            return None if size == _CAF_UNKNOWN or size <= have else _message(
                kind, size, have)
    return None


def shortfall(raw: bytes) -> str | None:
    """Why ``raw`` is a truncated RF64, Wave64, AIFF/AIFC or CAF file (its audio chunk declares
    more bytes than follow it), or None: complete, a size marked unknown, or another format."""
    if raw[:4] == b"RF64" and raw[8:12] == b"WAVE":
        return _rf64(raw)
    if raw[:4] == b"riff" and raw[4:16] == bytes.fromhex("2e91cf11a5d628db04c10000"):
        return _w64(raw)
    if raw[:4] == b"FORM" and raw[8:12] in (b"AIFF", b"AIFC"):
        return _audio_chunk(raw, "AIFF", 12, ">I", b"SSND", even=True)
    if raw[:4] == b"caff":
        return _audio_chunk(raw, "CAF", 8, ">q", b"data", even=False)
    return None
