"""The clips a judge is given, made ready to send: 16-bit PCM WAV and the digest of the clip
as it was given (the cache key's), validated first unless told not to."""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

from ..audio import Clip
from ..errors import AudioError, ConfigError, MissingDependencyError

__all__ = ["AudioLike", "SentClip", "as_clip", "for_judge"]

log = logging.getLogger("vocencebench.judge")

#: What the judge accepts as a clip: encoded bytes (WAV, FLAC, OGG, MP3, ...) or a Clip.
AudioLike = bytes | bytearray | memoryview | Clip


class SentClip(NamedTuple):
    """One clip as the judge sends it: the digest of the clip as given, and the WAV bytes."""

    sha256: str
    wav: bytes


def as_clip(audio: Any, name: str) -> Clip:
    """``audio`` (encoded bytes, a Clip, or anything with ``wav`` bytes) as a Clip named
    ``name``; a ConfigError for anything else, an AudioError for no bytes."""
    if isinstance(audio, Clip):
        return audio
    if isinstance(audio, bytes | bytearray | memoryview):
        data = bytes(audio)
    else:
        wav = getattr(audio, "wav", None)
        if not isinstance(wav, bytes):
            raise ConfigError(f"{name} must be audio bytes or a Clip, got {type(audio).__name__}")
        data = wav
    if not data:
        raise AudioError(f"{name}: empty audio (0 bytes); the system returned no data")
    return Clip(data, name=name)


def _is_wav(data: bytes) -> bool:
    return data[:4] == b"RIFF" and data[8:12] == b"WAVE"


_warned_no_decoder = False


def for_judge(clip: Clip, validate: bool) -> SentClip:
    """The bytes to send for ``clip``: validated (when ``validate``) and 16-bit PCM WAV.

    Without the decoder (the core install lacks soundfile) a WAV clip is still sent as it is,
    unvalidated, and the log says so once; any other format needs the decoder.
    """
    global _warned_no_decoder
    if not validate and _is_wav(clip.data):
        return SentClip(clip.sha256, clip.data)
    try:
        return SentClip(clip.sha256, clip.judge_wav())
    except MissingDependencyError as exc:
        if not _is_wav(clip.data):
            raise MissingDependencyError("sending non-WAV audio to the judge", "probes",
                                         package="soundfile") from exc
        if not _warned_no_decoder:
            _warned_no_decoder = True
            log.warning("judge: clips are sent unvalidated (%s); install "
                        '"vocencebench[probes]" to check them before paying for a call', exc)
        return SentClip(clip.sha256, clip.data)
