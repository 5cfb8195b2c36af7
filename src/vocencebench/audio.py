"""One audio entry point: :func:`load_audio` decodes a clip once, validates it, and every stage
(gate, probes, judge, cache) works on the :class:`Audio` it returns. :class:`Clip` carries a
system's encoded bytes through the pipeline and decodes them at most once.

Accepted input: whatever libsndfile (through ``soundfile``) decodes — WAV with 8/16/24/32-bit
integer or 32/64-bit float samples, FLAC, OGG/Vorbis and OGG/Opus, MP3 (libsndfile ≥ 1.1.0,
bundled with soundfile ≥ 0.12.1), and the other formats of the installed libsndfile — given as
bytes or a file path. WAV headers written by streaming encoders carry a size placeholder
instead of the real size (0, 0x7FFFFFFF, 2 000 000 000, 0xFFFFFFFF, in the RIFF and/or the
``data`` chunk size): a declared size of 0 or of at least :data:`WAV_PLACEHOLDER_MIN` bytes
means "unknown", and the samples actually present are decoded. The checks, in order, each
raising :class:`~vocencebench.errors.AudioError` with the clip name when one is known:

==========================  =====================================================================
problem                     rule
==========================  =====================================================================
empty file                  0 bytes
too large                   more than ``max_bytes`` (default 50 MB), checked before decoding
not audio                   libsndfile does not recognise the format
truncated / corrupt         libsndfile fails while decoding, or the audio chunk of a WAV, RF64,
                            Wave64, AIFF or CAF file declares more bytes than the file holds
                            (and the size is not a placeholder)
more than 2 channels        surround/multitrack is rejected, not guessed down to mono
zero length                 no sample frames
odd sample rate             under :data:`MIN_SAMPLE_RATE` (8 kHz)
too long                    duration > ``max_seconds`` (default 60 s), checked before decoding
too short                   duration < ``min_seconds`` (default 0.3 s)
NaN / Inf                   any non-finite sample (float files)
far beyond full scale       any sample with |x| > :data:`OVERSHOOT_PEAK` (+6 dBFS; float or
                            lossy files — a lossy decoder's small overshoot passes)
all silent                  peak |x| < :data:`SILENCE_PEAK` (−60 dBFS) after mixing to mono;
                            stereo whose channels carry sound but cancel in the mix (one
                            inverted) is named as such
==========================  =====================================================================

Stereo is mixed to mono by averaging the two channels; :attr:`Audio.mixed_down` records that it
happened, :attr:`Audio.channels` keeps the original count and :attr:`Audio.channel_samples`
keeps the per-channel samples (for measurements that sum channel powers, such as BS.1770).
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import struct
import threading
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from ._numbers import is_whole_number
from ._util.containers import shortfall
from ._util.deps import require
from .errors import AudioError, ConfigError, MissingDependencyError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_MIN_SECONDS",
    "MIN_SAMPLE_RATE",
    "OVERSHOOT_PEAK",
    "RESAMPLE_QUALITY",
    "SILENCE_PEAK",
    "TARGET_RATE",
    "WAV_PLACEHOLDER_MIN",
    "Audio",
    "Clip",
    "WavLayout",
    "load_audio",
    "to_wav_bytes",
    "wav_duration_s",
    "wav_layout",
]

#: Largest encoded clip accepted by default, in bytes (50 MB: ten times a 60 s, 48 kHz, 16-bit
#: stereo WAV). Checked before anything is decoded.
DEFAULT_MAX_BYTES = 50_000_000
#: A WAV size field of 0 or of at least this many bytes (1 GiB) is read as a streaming
#: placeholder ("size unknown"), never as a real size: the encoded files we accept are capped
#: far below it. Covers 0x7FFFFFFF (ElevenLabs), 2 000 000 000 (pocket-tts), 0xFFFFFFFF.
WAV_PLACEHOLDER_MIN = 1 << 30
#: Longest clip accepted by default, in seconds. The longest script a corpus may hold
#: (``corpus.MAX_TEXT_CHARS``, 1 000 characters, about 170 words) read slowly, as a brief may
#: ask, at 80 words a minute, lasts about 130 s; a 60 s cap scored such an obedient reading
#: S = 0. A clip past 3 minutes is a runaway system, not a slow reading.
DEFAULT_MAX_SECONDS = 180.0
#: Shortest clip accepted by default, in seconds.
DEFAULT_MIN_SECONDS = 0.3
#: A clip whose mono peak magnitude (full scale = 1.0) stays below this is "all silent":
#: 0.001 = −60 dBFS, about 33 steps of 16-bit PCM. Speech at any usable level peaks far above.
SILENCE_PEAK = 1e-3
#: Largest sample magnitude accepted (full scale = 1.0): 2.0 = +6 dBFS. Lossy decoders
#: overshoot full scale on a clip mastered to 0 dBFS (eSpeak through OGG/Vorbis peaks at
#: 1.08, Opus 1.10, MP3 1.02), so 1.0 would refuse real servers' audio; a float file at many
#: times full scale is no recording, and would read as "loud" while the judge hears it clipped.
OVERSHOOT_PEAK = 2.0
#: Lowest sample rate accepted, in Hz (telephone band): below it speech loses its formants
#: and the BS.1770 K-weighting filters of the loudness probe are not defined.
MIN_SAMPLE_RATE = 8_000
#: Sample rate of :meth:`Audio.at_16k`, in Hz (what ASR and the classifier probes expect).
TARGET_RATE = 16_000
#: soxr quality recipe for :meth:`Audio.at_16k` ("HQ": 20-bit precision, deterministic).
RESAMPLE_QUALITY = "HQ"

FloatArray = npt.NDArray[np.float32]
_T = TypeVar("_T")


@dataclass(frozen=True)
class Audio:
    """A decoded, validated clip.

    ``samples``: float32 mono in [-1, 1] at the file's own rate (read-only array).
    ``sample_rate``: Hz. ``sha256``: hex digest of the original encoded bytes.
    ``channels``: channel count of the file (1 or 2). ``mixed_down``: True when a stereo file
    was averaged to mono. ``format``: libsndfile's ``FORMAT/SUBTYPE``, e.g. ``WAV/PCM_16``.
    ``name``: the clip label used in error messages (``None`` when unknown).
    ``channel_data``: the per-channel samples of a stereo file, float32 ``(frames, 2)``
    (read-only), or None for mono; read it through :attr:`channel_samples`.

    Equality compares everything but the sample arrays (which the digest already pins).
    """

    samples: FloatArray = field(compare=False, repr=False)
    sample_rate: int
    sha256: str
    channels: int
    mixed_down: bool
    format: str
    name: str | None = None
    channel_data: FloatArray | None = field(default=None, compare=False, repr=False)
    _cache: dict[str, object] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    @property
    def channel_samples(self) -> FloatArray:
        """The samples per channel: float32 ``(frames, channels)`` in [-1, 1], read-only.

        Mono: a ``(frames, 1)`` view of :attr:`samples` (no copy). Stereo: the two channels as
        decoded, before the mix-down, so that a loudness meter can sum channel powers
        (ITU-R BS.1770) instead of measuring the mono average.
        """
        if self.channel_data is not None:
            return self.channel_data
        return self.samples[:, None]

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return int(self.samples.shape[0]) / self.sample_rate

    @property
    def num_samples(self) -> int:
        """Number of (mono) samples at :attr:`sample_rate`."""
        return int(self.samples.shape[0])

    def at_16k(self) -> FloatArray:
        """The clip resampled to 16 kHz (float32 mono, read-only), computed once and cached.

        soxr with the :data:`RESAMPLE_QUALITY` recipe: the same input gives the same output
        bits on every call and process.
        """
        return self.derived("16k", lambda: _resample(self.samples, self.sample_rate,
                                                      TARGET_RATE))

    def derived(self, key: str, compute: Callable[[], _T]) -> _T:
        """``compute()``, run once per clip and kept with it under ``key`` (the 16 kHz version,
        the probes' shared pitch track). ``compute`` must be a pure function of the samples:
        a race between threads computes the same value twice, which is harmless."""
        got = self._cache.get(key)
        if got is None:
            got = compute()
            self._cache[key] = got
        return cast(_T, got)


def _resample(x: FloatArray, sr_in: int, sr_out: int) -> FloatArray:
    if sr_in == sr_out:
        return x
    soxr = require("soxr", "resampling audio", "probes", package="soxr")
    y = np.ascontiguousarray(soxr.resample(x, sr_in, sr_out, quality=RESAMPLE_QUALITY),
                             dtype=np.float32)
    y.setflags(write=False)
    return y


def _fail(name: str | None, problem: str) -> AudioError:
    return AudioError(f"{name}: {problem}" if name else problem)


def _too_large(label: str | None, size: int, max_bytes: int) -> AudioError:
    return _fail(label, f"too large: {size / 1e6:.1f} MB exceeds the {max_bytes / 1e6:g} MB "
                 "cap (an adapter's max_bytes=, or load_audio(max_bytes=), raises it)")


def _read_input(data: bytes | bytearray | memoryview | str | os.PathLike[str],
                name: str | None, max_bytes: int) -> tuple[bytes, str | None]:
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        if len(raw) > max_bytes:
            raise _too_large(name, len(raw), max_bytes)
        return raw, name
    if isinstance(data, str | os.PathLike):
        path = os.fspath(data)
        label = name or path
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size > max_bytes:
                    raise _too_large(label, size, max_bytes)
                raw = fh.read(max_bytes + 1)
        except OSError as exc:
            raise _fail(label, f"cannot read audio file: {exc.strerror or exc}; "
                        "check the path and its permissions") from exc
        if len(raw) > max_bytes:  # grew while we read it
            raise _too_large(label, len(raw), max_bytes)
        return raw, label
    raise ConfigError(
        f"load_audio expects bytes or a file path, got {type(data).__name__}"
    )


@dataclass(frozen=True)
class WavLayout:
    """Where the parts of a RIFF/WAVE file are, as its header declares them (all in bytes).

    ``riff_size``: the RIFF header's size field. ``byte_rate`` / ``block_align``: from the
    ``fmt `` chunk (0 when it is missing or short). ``data_at``: offset of the ``data``
    chunk's header (None: no ``data`` chunk). ``data_size``: its declared size.
    ``data_have``: bytes after that header in the file. A size field of 0 or of at least
    :data:`WAV_PLACEHOLDER_MIN` is a streaming placeholder (:meth:`is_placeholder`).
    """

    riff_size: int
    byte_rate: int = 0
    block_align: int = 0
    data_at: int | None = None
    data_size: int = 0
    data_have: int = 0

    @staticmethod
    def is_placeholder(size: int) -> bool:
        """Whether a size field means "unknown" (see the module docstring)."""
        return size == 0 or size >= WAV_PLACEHOLDER_MIN

    @property
    def audio_bytes(self) -> int:
        """Bytes of samples the file holds: all of them, cut to whole frames, behind a
        placeholder; else the declared size, or less when the file is shorter."""
        if self.is_placeholder(self.data_size):
            have = self.data_have
            return have - have % self.block_align if self.block_align > 0 else have
        return min(self.data_size, self.data_have)


def wav_layout(raw: bytes) -> WavLayout | None:
    """The :class:`WavLayout` of RIFF/WAVE bytes (None for anything else): the one walk over
    a WAV file's chunks, shared by the decoder, the judge and the leaderboard's cost plan."""
    if len(raw) < 12 or raw[:4] != b"RIFF" or raw[8:12] != b"WAVE":
        return None
    (riff,) = struct.unpack("<I", raw[4:8])
    pos, byte_rate, block_align = 12, 0, 0
    while pos + 8 <= len(raw):
        cid = raw[pos:pos + 4]
        (size,) = struct.unpack("<I", raw[pos + 4:pos + 8])
        body = pos + 8
        if cid == b"fmt ":
            if size >= 12 and body + 12 <= len(raw):
                (byte_rate,) = struct.unpack("<I", raw[body + 8:body + 12])
            if size >= 14 and body + 14 <= len(raw):
                (block_align,) = struct.unpack("<H", raw[body + 12:body + 14])
        elif cid == b"data":
            return WavLayout(riff, byte_rate, block_align, pos, size, len(raw) - body)
        pos = body + size + (size & 1)
    return WavLayout(riff, byte_rate, block_align)


def wav_duration_s(raw: bytes) -> float | None:
    """Seconds of audio in RIFF/WAVE bytes, read from the header alone (placeholders read as
    the samples present); None when it is not a WAV or lacks its ``fmt `` or ``data``."""
    lay = wav_layout(raw)
    if lay is None or lay.byte_rate <= 0 or lay.data_at is None:
        return None
    return lay.audio_bytes / lay.byte_rate


def _wav_fix_sizes(raw: bytes) -> tuple[bytes, str | None]:
    """For RIFF/WAVE bytes: ``(bytes to decode, problem)``.

    A size placeholder in the RIFF header or the ``data`` chunk is replaced by the size the
    file really holds (the samples present are decoded, cut to whole frames); a real
    ``data`` size larger than the file is reported as truncation. Other input is returned
    unchanged, with no problem.
    """
    lay = wav_layout(raw)
    if lay is None:
        return raw, None
    fixed: bytearray | None = None
    if lay.is_placeholder(lay.riff_size) or lay.riff_size > len(raw) - 8:
        fixed = bytearray(raw)
        fixed[4:8] = struct.pack("<I", min(len(raw) - 8, 0xFFFFFFFF))
    if lay.data_at is not None:
        if lay.is_placeholder(lay.data_size):
            fixed = fixed if fixed is not None else bytearray(raw)
            fixed[lay.data_at + 4:lay.data_at + 8] = struct.pack("<I", lay.audio_bytes)
        elif lay.data_size > lay.data_have:
            return raw, (f"truncated WAV: the header declares {lay.data_size} bytes of audio "
                         f"but the file holds {lay.data_have}")
    return (bytes(fixed) if fixed is not None else raw), None


def _wav_header_is_sound(raw: bytes) -> bool:
    """True for RIFF/WAVE bytes whose size fields need no repair (no placeholder)."""
    fixed, problem = _wav_fix_sizes(raw)
    return problem is None and fixed is raw and raw[:4] == b"RIFF"


class _Bytes(io.BytesIO):
    """The bytes libsndfile decodes from. A corrupt header can make libsndfile seek before
    the start; BytesIO raises ValueError there, inside soundfile's cffi callback, which
    prints a traceback on stderr. Here the position stays put, and libsndfile, seeing that
    the seek failed, reports the file as corrupt."""

    def seek(self, offset: int, whence: int = 0) -> int:
        try:
            return super().seek(offset, whence)
        except ValueError:
            return self.tell()


def _looks_like_mp3(raw: bytes) -> bool:
    return raw[:3] == b"ID3" or (len(raw) > 1 and raw[0] == 0xFF and raw[1] & 0xE0 == 0xE0)


def load_audio(
    data: bytes | bytearray | memoryview | str | os.PathLike[str],
    *,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    min_seconds: float = DEFAULT_MIN_SECONDS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    name: str | None = None,
) -> Audio:
    """Decode ``data`` (encoded bytes or a path) once, validate it, and return an :class:`Audio`.

    ``max_seconds`` / ``min_seconds`` bound the duration (seconds); ``max_bytes`` bounds the
    encoded size (bytes), checked before decoding (a file is not even read past it). ``name``
    labels the clip in error messages (a path is its own label). Raises :class:`AudioError`
    naming the problem.
    """
    if not (math.isfinite(max_seconds) and math.isfinite(min_seconds)
            and 0 <= min_seconds < max_seconds):
        raise ConfigError(
            f"need 0 <= min_seconds < max_seconds (finite), got {min_seconds}, {max_seconds}"
        )
    if not is_whole_number(max_bytes) or max_bytes < 1:
        raise ConfigError(f"max_bytes must be a positive integer, got {max_bytes!r}")
    raw, label = _read_input(data, name, max_bytes)
    if not raw:
        raise _fail(label, "empty audio (0 bytes); the system returned no data")
    sf = require("soundfile", "decoding audio", "probes", package="soundfile")

    decodable, truncated = _wav_fix_sizes(raw)
    truncated = truncated or shortfall(raw)
    if truncated:
        raise _fail(label, f"{truncated}; re-export the clip")
    if _looks_like_mp3(raw) and "MP3" not in sf.available_formats():
        raise MissingDependencyError(  # pragma: no cover - the pinned wheel reads MP3
            f"decoding MP3 (libsndfile {sf.__libsndfile_version__} cannot; needs >= 1.1.0)",
            "probes", package="soundfile>=0.12.1")
    try:
        with sf.SoundFile(_Bytes(decodable)) as fh:
            channels, sr, frames = int(fh.channels), int(fh.samplerate), int(fh.frames)
            fmt = f"{fh.format}/{fh.subtype}"
            if channels > 2:
                raise _fail(label, f"{channels} channels; only mono or stereo is accepted — "
                            "export a mono or stereo mix")
            if frames == 0:
                raise _fail(label, "zero length: the file holds no samples")
            if sr < MIN_SAMPLE_RATE:
                raise _fail(label, f"odd sample rate: {sr} Hz is under the {MIN_SAMPLE_RATE} Hz "
                            "minimum (no speech band, and loudness filters are undefined "
                            "there); export at 8 kHz or more")
            if frames / sr > max_seconds:
                raise _fail(label, f"too long: {frames / sr:.2f} s exceeds the "
                            f"{max_seconds:g} s cap on one clip")
            # GSM 6.10 and some ADPCM WAVs are not seekable in libsndfile: they must be read
            # by their frame count (soundfile refuses frames=-1 there).
            block = fh.read(-1 if fh.seekable() else frames, dtype="float32",
                            always_2d=True)
    except sf.LibsndfileError as exc:
        msg = exc.error_string
        if "not recognised" in msg or "unimplemented" in msg:
            raise _fail(label, f"not audio: libsndfile says {msg!r}; expected WAV, FLAC, "
                        "OGG or MP3 bytes") from exc
        raise _fail(label, f"corrupt or truncated audio: libsndfile says {msg!r}") from exc
    except (RuntimeError, TypeError, ValueError) as exc:
        raise _fail(label, f"cannot decode audio: {exc}") from exc

    n = block.shape[0]
    if n == 0:
        raise _fail(label, "zero length: the file holds no samples")
    if n < frames and not fmt.startswith("MP3/"):  # an MP3's frame count is an estimate
        raise _fail(label, f"truncated audio: the header declares {frames} frames, "
                    f"only {n} could be decoded")
    if not np.isfinite(block).all():
        bad = int((~np.isfinite(block)).sum())
        raise _fail(label, f"{bad} NaN/Inf sample value(s); the system produced invalid audio")
    over = np.abs(block) > OVERSHOOT_PEAK  # only float and lossy files can hold such samples
    if over.any():
        top = float(np.max(np.abs(block)))
        raise _fail(label, f"{int(over.sum())} sample value(s) beyond "
                    f"{20 * math.log10(OVERSHOOT_PEAK):+.0f} dBFS (peak "
                    f"{20 * math.log10(top):+.1f} dBFS): far beyond full scale, which any "
                    "player clips, so probes and judge would hear different audio — "
                    "normalise or limit the clip")
    if channels == 2:
        mono = ((block[:, 0] + block[:, 1]) * np.float32(0.5)).astype(np.float32)
    else:
        mono = np.ascontiguousarray(block[:, 0])
    duration = n / sr
    if duration < min_seconds:
        raise _fail(label, f"too short: {duration:.3f} s is under the {min_seconds:g} s minimum")
    peak = float(np.max(np.abs(mono)))
    if peak < SILENCE_PEAK:
        level = "-inf" if peak == 0 else f"{20 * math.log10(peak):.1f}"
        loudest = float(np.max(np.abs(block))) if channels == 2 else peak
        if loudest >= SILENCE_PEAK:
            # Each channel carries sound but their average does not: one channel is the other
            # inverted. Saying "all silent" would send the user hunting for a missing signal.
            raise _fail(label, f"the two channels cancel when mixed to mono (one is the "
                        f"other with its polarity inverted): a channel peaks at "
                        f"{20 * math.log10(loudest):.1f} dBFS, their mono mix at {level} "
                        f"dBFS, below the {20 * math.log10(SILENCE_PEAK):.0f} dBFS silence "
                        "threshold — fix the channel's polarity or export a mono clip")
        raise _fail(label, f"all silent: peak {level} dBFS is below the "
                    f"{20 * math.log10(SILENCE_PEAK):.0f} dBFS silence threshold")
    mono.setflags(write=False)
    per_channel: FloatArray | None = None
    if channels > 1:
        per_channel = np.ascontiguousarray(block, dtype=np.float32)
        per_channel.setflags(write=False)
    return Audio(
        samples=mono,
        sample_rate=sr,
        sha256=hashlib.sha256(raw).hexdigest(),
        channels=channels,
        mixed_down=channels == 2,
        format=fmt,
        name=label,
        channel_data=per_channel,
    )


_JUDGE_WAV = "WAV/PCM_16"


@dataclass(frozen=True)
class Clip:
    """One clip as a system returned it: the encoded bytes, decoded at most once.

    ``data``: the encoded bytes, exactly as the system returned them (any format
    :func:`load_audio` decodes). ``name``: the label used in error messages.
    ``sha256``: hex digest of ``data`` (computed on construction; the cache and the judge key
    clips by it).

    :meth:`audio` decodes on the first call and returns the same :class:`Audio` (or raises
    the same :class:`~vocencebench.errors.AudioError`) afterwards; :meth:`judge_wav` gives
    16-bit PCM WAV bytes for an audio-LLM judge. A clip pickles as its bytes and name: the
    decoded cache stays behind and is rebuilt on first use.
    """

    data: bytes = field(repr=False, compare=False)
    name: str | None = None
    sha256: str = field(init=False)
    _memo: dict[str, object] = field(
        default_factory=dict, init=False, compare=False, repr=False, hash=False
    )
    _lock: threading.RLock = field(  # re-entrant: judge_wav() calls audio()
        default_factory=threading.RLock, init=False, compare=False, repr=False, hash=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.data, bytes):
            if not isinstance(self.data, bytearray | memoryview):
                raise ConfigError(f"a Clip holds encoded bytes, got {type(self.data).__name__}")
            object.__setattr__(self, "data", bytes(self.data))
        object.__setattr__(self, "sha256", hashlib.sha256(self.data).hexdigest())

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, name: str | None = None) -> Clip:
        """A clip of ``data`` (encoded audio bytes), labelled ``name`` in errors."""
        return cls(bytes(data), name)

    def __reduce__(self) -> tuple[type[Clip], tuple[bytes, str | None]]:
        return (type(self), (self.data, self.name))

    def __len__(self) -> int:
        return len(self.data)

    def _once(self, key: str, compute: Callable[[], _T]) -> _T:
        with self._lock:
            if key not in self._memo:
                try:
                    self._memo[key] = compute()
                except AudioError as exc:
                    self._memo[key] = exc
            got = self._memo[key]
        if isinstance(got, AudioError):
            raise got
        return cast(_T, got)

    def audio(self) -> Audio:
        """The decoded, validated :class:`Audio` (the limits of :func:`load_audio` but the
        encoded size, which its maker capped),
        decoded on the first call and kept; a decoding failure is kept and re-raised too."""
        # The encoded size was capped where the bytes were made (an adapter's max_bytes); they
        # are in memory already, and the duration cap, read from the header, bounds decoding.
        return self._once("audio", lambda: load_audio(
            self.data, name=self.name, max_bytes=max(DEFAULT_MAX_BYTES, len(self.data))))

    def judge_wav(self) -> bytes:
        """16-bit PCM WAV bytes of this clip, for an audio-LLM judge.

        The original bytes when they already are a sound 16-bit PCM WAV; otherwise one
        conversion of the decoded samples (channels kept), computed once and kept.
        """

        def convert() -> bytes:
            a = self.audio()
            if a.format == _JUDGE_WAV and _wav_header_is_sound(self.data):
                return self.data
            return to_wav_bytes(a.channel_samples, a.sample_rate)

        return self._once("judge_wav", convert)


def to_wav_bytes(samples: npt.ArrayLike, sample_rate: int) -> bytes:
    """Encode ``samples`` as a 16-bit PCM WAV file (bytes), deterministically.

    ``samples``: int16 values (written as they are) or floats in [-1, 1] (clipped, scaled by
    32767 and rounded half to even); 1-D for mono or 2-D ``(frames, channels)``.
    ``sample_rate``: Hz. The header carries no timestamps, so equal input gives equal bytes.
    """
    arr: np.ndarray[Any, Any] = np.asarray(samples)
    if not (is_whole_number(sample_rate) or isinstance(sample_rate, np.integer)) \
            or sample_rate <= 0:
        raise ConfigError(f"sample_rate must be a positive integer (Hz), got {sample_rate!r}")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ConfigError(f"samples must be 1-D or (frames, channels), got shape {arr.shape}")
    if arr.dtype == np.int16:
        pcm = arr
    elif np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all():
            raise AudioError("cannot encode NaN/Inf samples as WAV")
        pcm = np.rint(np.clip(arr.astype(np.float64), -1.0, 1.0) * 32767.0).astype(np.int16)
    else:
        raise ConfigError(f"samples must be int16 or floating point, got dtype {arr.dtype}")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(int(pcm.shape[1]))
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(np.ascontiguousarray(pcm, dtype="<i2").tobytes())
    return buf.getvalue()
