"""One audio entry point: :func:`load_audio` decodes a clip once, validates it, and every stage
(gate, probes, judge, cache) works on the :class:`Audio` it returns.

Accepted input: whatever libsndfile (through ``soundfile``) decodes — WAV with 8/16/24/32-bit
integer or 32/64-bit float samples, FLAC, OGG/Vorbis, and the other formats of the installed
libsndfile — given as bytes or a file path. The checks, in order, each raising
:class:`~vocencebench.errors.AudioError` with the clip name when one is known:

==========================  =====================================================================
problem                     rule
==========================  =====================================================================
empty file                  0 bytes
not audio                   libsndfile does not recognise the format
truncated / corrupt         libsndfile fails while decoding, or a WAV ``data`` chunk declares more
                            bytes than the file holds (libsndfile itself would read it silently)
more than 2 channels        surround/multitrack is rejected, not guessed down to mono
zero length                 no sample frames
too long                    duration > ``max_seconds`` (default 60 s), checked before decoding
too short                   duration < ``min_seconds`` (default 0.3 s)
NaN / Inf                   any non-finite sample (float files)
all silent                  peak |x| < :data:`SILENCE_PEAK` (−60 dBFS) after mixing to mono
==========================  =====================================================================

Stereo is mixed to mono by averaging the two channels; :attr:`Audio.mixed_down` records that it
happened and :attr:`Audio.channels` keeps the original count.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import struct
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from .errors import AudioError, ConfigError, MissingDependencyError

__all__ = [
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_MIN_SECONDS",
    "RESAMPLE_QUALITY",
    "SILENCE_PEAK",
    "TARGET_RATE",
    "Audio",
    "load_audio",
    "to_wav_bytes",
]

#: Longest clip accepted by default, in seconds.
DEFAULT_MAX_SECONDS = 60.0
#: Shortest clip accepted by default, in seconds.
DEFAULT_MIN_SECONDS = 0.3
#: A clip whose mono peak magnitude (full scale = 1.0) stays below this is "all silent":
#: 0.001 = −60 dBFS, about 33 steps of 16-bit PCM. Speech at any usable level peaks far above.
SILENCE_PEAK = 1e-3
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

    Equality compares everything but the sample array (which the digest already pins).
    """

    samples: FloatArray = field(compare=False, repr=False)
    sample_rate: int
    sha256: str
    channels: int
    mixed_down: bool
    format: str
    name: str | None = None
    _cache: dict[str, object] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

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
    try:
        import soxr
    except ImportError as exc:  # pragma: no cover - soxr is in the probes extra
        raise MissingDependencyError("resampling audio", "probes", package="soxr") from exc
    y = np.ascontiguousarray(soxr.resample(x, sr_in, sr_out, quality=RESAMPLE_QUALITY),
                             dtype=np.float32)
    y.setflags(write=False)
    return y


def _fail(name: str | None, problem: str) -> AudioError:
    return AudioError(f"{name}: {problem}" if name else problem)


def _read_input(data: bytes | bytearray | memoryview | str | os.PathLike[str],
                name: str | None) -> tuple[bytes, str | None]:
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data), name
    if isinstance(data, str | os.PathLike):
        path = os.fspath(data)
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise _fail(name or path, f"cannot read audio file: {exc.strerror or exc}; "
                        "check the path and its permissions") from exc
        return raw, name or path
    raise ConfigError(
        f"load_audio expects bytes or a file path, got {type(data).__name__}"
    )


def _wav_truncation(raw: bytes) -> str | None:
    """For a RIFF/WAVE file, a message when the data chunk declares more bytes than exist."""
    if len(raw) < 12 or raw[:4] != b"RIFF" or raw[8:12] != b"WAVE":
        return None
    pos = 12
    while pos + 8 <= len(raw):
        cid = raw[pos:pos + 4]
        (size,) = struct.unpack("<I", raw[pos + 4:pos + 8])
        body = pos + 8
        if cid == b"data":
            have = len(raw) - body
            # 0 and ~0xFFFFFFFF are placeholders written by streaming encoders: size unknown.
            if 0 < size < 0xFFFFFF00 and size > have:
                return (f"truncated WAV: the header declares {size} bytes of audio "
                        f"but the file holds {have}")
            return None
        pos = body + size + (size & 1)
    return None


def load_audio(
    data: bytes | bytearray | memoryview | str | os.PathLike[str],
    *,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    min_seconds: float = DEFAULT_MIN_SECONDS,
    name: str | None = None,
) -> Audio:
    """Decode ``data`` (encoded bytes or a path) once, validate it, and return an :class:`Audio`.

    ``max_seconds`` / ``min_seconds`` bound the duration (seconds). ``name`` labels the clip in
    error messages (a path is its own label). Raises :class:`AudioError` naming the problem.
    """
    if not (math.isfinite(max_seconds) and math.isfinite(min_seconds)
            and 0 <= min_seconds < max_seconds):
        raise ConfigError(
            f"need 0 <= min_seconds < max_seconds (finite), got {min_seconds}, {max_seconds}"
        )
    raw, label = _read_input(data, name)
    if not raw:
        raise _fail(label, "empty audio (0 bytes); the system returned no data")
    try:
        import soundfile as sf
    except ImportError as exc:  # pragma: no cover - soundfile is in the probes extra
        raise MissingDependencyError("decoding audio", "probes", package="soundfile") from exc

    truncated = _wav_truncation(raw)
    if truncated:
        raise _fail(label, f"{truncated}; re-export the clip")
    try:
        with sf.SoundFile(io.BytesIO(raw)) as fh:
            channels, sr, frames = int(fh.channels), int(fh.samplerate), int(fh.frames)
            fmt = f"{fh.format}/{fh.subtype}"
            if channels > 2:
                raise _fail(label, f"{channels} channels; only mono or stereo is accepted — "
                            "export a mono or stereo mix")
            if frames == 0:
                raise _fail(label, "zero length: the file holds no samples")
            if frames / sr > max_seconds:
                raise _fail(label, f"too long: {frames / sr:.2f} s exceeds the "
                            f"{max_seconds:g} s cap (pass max_seconds= to raise it)")
            block = fh.read(dtype="float32", always_2d=True)
    except sf.LibsndfileError as exc:
        msg = exc.error_string
        if "not recognised" in msg or "unimplemented" in msg:
            raise _fail(label, f"not audio: libsndfile says {msg!r}; expected WAV, FLAC or "
                        "OGG bytes") from exc
        raise _fail(label, f"corrupt or truncated audio: libsndfile says {msg!r}") from exc
    except (RuntimeError, TypeError, ValueError) as exc:
        raise _fail(label, f"cannot decode audio: {exc}") from exc

    n = block.shape[0]
    if n == 0:
        raise _fail(label, "zero length: the file holds no samples")
    if n < frames:
        raise _fail(label, f"truncated audio: the header declares {frames} frames, "
                    f"only {n} could be decoded")
    if not np.isfinite(block).all():
        bad = int((~np.isfinite(block)).sum())
        raise _fail(label, f"{bad} NaN/Inf sample value(s); the system produced invalid audio")
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
        raise _fail(label, f"all silent: peak {level} dBFS is below the "
                    f"{20 * math.log10(SILENCE_PEAK):.0f} dBFS silence threshold")
    mono.setflags(write=False)
    return Audio(
        samples=mono,
        sample_rate=sr,
        sha256=hashlib.sha256(raw).hexdigest(),
        channels=channels,
        mixed_down=channels == 2,
        format=fmt,
        name=label,
    )


def to_wav_bytes(samples: npt.ArrayLike, sample_rate: int) -> bytes:
    """Encode ``samples`` as a 16-bit PCM WAV file (bytes), deterministically.

    ``samples``: int16 values (written as they are) or floats in [-1, 1] (clipped, scaled by
    32767 and rounded half to even); 1-D for mono or 2-D ``(frames, channels)``.
    ``sample_rate``: Hz. The header carries no timestamps, so equal input gives equal bytes.
    """
    arr: np.ndarray[Any, Any] = np.asarray(samples)
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int | np.integer) \
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
