"""A CTranslate2 Whisper model directory, checked before any work and described.

:func:`check_whisper_dir` refuses a directory that faster-whisper could not load as it is —
``model.bin`` missing, truncated or not a CTranslate2 Whisper model, ``config.json`` missing
or not a JSON object, ``tokenizer.json`` missing (faster-whisper would then fetch a tokenizer
from the hub) or not shaped like a JSON object, no vocabulary — with one
:class:`~vocencebench.errors.ConfigError` naming the file. It reads ``model.bin``'s record
headers only (seeking over the weights: about 1.3 ms for tiny.en's 148 records), so the check
costs nothing next to loading the weights.

The same walk gives the architecture (:class:`WhisperArchitecture`): model width, encoder and
decoder layers, vocabulary size, mel bins, parameter count, and from width and encoder depth
the Whisper size (tiny, base, small, medium, large), which the gate report prints and warns
about.

``model.bin`` layout (``ctranslate2/specs/model_spec.py``, ``_serialize``; little-endian):
``u32`` binary version; from version 2 the spec name (string) and ``u32`` revision; ``u32``
variable count, then per variable: name (string), ``u8`` rank, ``rank × u32`` dimensions,
``u8`` dtype (an item size before version 4), ``u32`` byte count, the bytes; from version 3
``u32`` alias count and (alias, target) string pairs. A string is a ``u16`` length that
counts its terminating NUL, then the bytes.
"""

from __future__ import annotations

import json
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from ..errors import ConfigError

__all__ = [
    "WHISPER_SIZES",
    "WhisperArchitecture",
    "check_whisper_dir",
    "read_architecture",
    "size_rank",
]

#: Whisper sizes, smallest first, by (model width, encoder layers) as OpenAI published them.
#: Distilled and turbo variants keep their encoder, so they read as the size they came from.
WHISPER_SIZES: Final[tuple[tuple[str, int, int], ...]] = (
    ("tiny", 384, 4),
    ("base", 512, 6),
    ("small", 768, 12),
    ("medium", 1024, 24),
    ("large", 1280, 32),
)
#: The vocabulary of the English-only models (``*.en``); the multilingual ones have 51 865
#: (51 866 for large-v3).
ENGLISH_ONLY_VOCAB: Final = 51864
#: The newest ``model.bin`` binary version whose record layout this module walks.
KNOWN_BINARY_VERSION: Final = 6
#: The tokenizer faster-whisper reads from the model directory (without it, it downloads one).
TOKENIZER_FILE: Final = "tokenizer.json"
#: CTranslate2 reads the vocabulary from one of these.
VOCABULARY_FILES: Final = ("vocabulary.json", "vocabulary.txt")

#: Bytes per item of CTranslate2's data types, by type id (float32, int8, int16, int32,
#: float16, bfloat16: ``_dtype_to_type_id``'s order).
_ITEM_BYTES: Final = (4, 1, 2, 4, 2, 2)
_LAYER = re.compile(r"^(encoder|decoder)/layer_(\d+)/")


@dataclass(frozen=True)
class WhisperArchitecture:
    """What ``model.bin`` says about the model: ``spec`` (CTranslate2's name, "WhisperSpec"),
    ``width`` (model dimension), ``encoder_layers``, ``decoder_layers``, ``vocabulary``
    (tokens), ``mel_bins``, ``parameters`` (weights, counted from the tensor shapes),
    ``model_bytes`` (file size, bytes) and ``size`` (a :data:`WHISPER_SIZES` name, or None
    when the shape matches no published Whisper). Any count is None when the file does not
    hold the tensor it is read from."""

    spec: str
    binary_version: int
    width: int | None
    encoder_layers: int
    decoder_layers: int
    vocabulary: int | None
    mel_bins: int | None
    parameters: int
    model_bytes: int

    @property
    def size(self) -> str | None:
        for name, width, layers in WHISPER_SIZES:
            if self.width == width and self.encoder_layers == layers:
                return name
        return None

    @property
    def english_only(self) -> bool | None:
        return None if self.vocabulary is None else self.vocabulary == ENGLISH_ONLY_VOCAB

    @property
    def size_name(self) -> str | None:
        """The size as Whisper names it: ``tiny.en`` for an English-only tiny, else ``tiny``."""
        if self.size is None:
            return None
        return self.size + (".en" if self.english_only else "")

    def describe(self) -> str:
        """One phrase: 'Whisper tiny.en (37.8 M parameters; width 384, 4+4 layers)'."""
        shape = (f"width {self.width}, {self.encoder_layers}+{self.decoder_layers} layers"
                 if self.width is not None else "no encoder found")
        what = f"Whisper {self.size_name}" if self.size_name else "a Whisper of unknown size"
        return f"{what} ({self.parameters / 1e6:.1f} M parameters; {shape})"


def size_rank(size: str | None) -> int | None:
    """Index of ``size`` in :data:`WHISPER_SIZES` (0 = tiny), ignoring a ``.en`` suffix and
    a version tail (``large-v3`` → large); None for an unknown size."""
    if size is None:
        return None
    base = size.removesuffix(".en").split("-")[0]
    for i, (name, _, _) in enumerate(WHISPER_SIZES):
        if base == name:
            return i
    return None


class _Truncated(Exception):
    """The file ended inside a record (message: which record)."""


def _read(fh: BinaryIO, n: int, what: str) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise _Truncated(what)
    return data


def _u(fh: BinaryIO, fmt: str, what: str) -> int:
    value: int = struct.unpack("<" + fmt, _read(fh, struct.calcsize(fmt), what))[0]
    return value


def _string(fh: BinaryIO, what: str) -> str:
    n = _u(fh, "H", what)
    raw = _read(fh, n, what)
    if not raw or raw[-1] != 0:
        raise ValueError(f"{what} is not a NUL-terminated string")
    return raw[:-1].decode("utf-8")


def read_architecture(path: str | os.PathLike[str]) -> WhisperArchitecture:
    """Walk the record headers of the CTranslate2 ``model.bin`` at ``path`` (seeking over the
    weights) and return its architecture. Raises :class:`ConfigError` naming the file when it
    is truncated, has bytes after its last record, is not a CTranslate2 model file, or holds
    a model that is not Whisper."""
    p = Path(path)
    size = p.stat().st_size
    hint = ("re-download the model (faster-whisper models: huggingface.co/Systran) or "
            "re-convert it with ct2-transformers-converter")
    try:
        with p.open("rb") as fh:
            version = _u(fh, "I", "the binary version")
            if not 1 <= version <= KNOWN_BINARY_VERSION:
                raise ConfigError(
                    f"{p} is not a CTranslate2 model file this version of vocencebench can "
                    f"check (binary version {version}; it reads 1 to "
                    f"{KNOWN_BINARY_VERSION}); {hint}")
            spec = "WhisperSpec"
            if version >= 2:
                spec = _string(fh, "the model name")
                _u(fh, "I", "the model revision")
            if spec != "WhisperSpec":
                raise ConfigError(f"{p} holds a CTranslate2 {spec!r} model, not Whisper "
                                  "(WhisperSpec); pass a faster-whisper model directory")
            count = _u(fh, "I", "the variable count")
            params = 0
            width = vocab = mels = None
            layers: dict[str, set[int]] = {"encoder": set(), "decoder": set()}
            for i in range(count):
                name = _string(fh, f"the name of variable {i + 1} of {count}")
                rank = _u(fh, "B", f"the rank of {name!r}")
                dims = [_u(fh, "I", f"the shape of {name!r}") for _ in range(rank)]
                kind = _u(fh, "B", f"the type of {name!r}")
                nbytes = _u(fh, "I", f"the size of {name!r}")
                # Before binary version 4 the byte is the item size itself, not a type id.
                item = kind if version < 4 else (
                    _ITEM_BYTES[kind] if kind < len(_ITEM_BYTES) else 0)
                n = 1
                for d in dims:
                    n *= d
                if item == 0 or n * item != nbytes:
                    raise ValueError(f"variable {name!r} of shape {dims} and type {kind} "
                                     f"declares {nbytes} bytes")
                start = fh.tell()
                if start + nbytes > size:
                    raise _Truncated(f"the {nbytes} bytes of {name!r} (from byte {start})")
                fh.seek(nbytes, os.SEEK_CUR)
                if rank:  # rank-0 variables are settings (activation, alignment layer)
                    params += n
                m = _LAYER.match(name)
                if m:
                    layers[m.group(1)].add(int(m.group(2)))
                if name == "encoder/conv1/weight" and rank == 3:
                    width, mels = dims[0], dims[1]
                if name == "decoder/embeddings/weight" and rank == 2:
                    vocab = dims[0]
            if version >= 3:
                for i in range(_u(fh, "I", "the alias count")):
                    _string(fh, f"alias {i + 1}")
                    _string(fh, f"the target of alias {i + 1}")
            extra = size - fh.tell()
    except _Truncated as exc:
        raise ConfigError(f"{p} is truncated: the file ({size} bytes) ends inside {exc}; "
                          f"{hint}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p} is not a CTranslate2 model file ({exc}); {hint}") from None
    if extra:
        raise ConfigError(f"{p} has {extra} bytes after its last record, so it is not the "
                          f"file CTranslate2 wrote; {hint}")
    return WhisperArchitecture(
        spec=spec, binary_version=version, width=width,
        encoder_layers=len(layers["encoder"]), decoder_layers=len(layers["decoder"]),
        vocabulary=vocab, mel_bins=mels, parameters=params, model_bytes=size)


def _json_object(path: Path, fix: str) -> None:
    """Refuse ``path`` unless it holds one JSON object (``fix``: what to do instead)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); {fix}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object (got {type(data).__name__}); {fix}")


def _looks_like_json_object(path: Path, fix: str) -> None:
    """Refuse ``path`` unless it starts with ``{`` and ends with ``}`` (past whitespace): an
    error page saved in its place or a copy cut short. Only its ends are read — parsing
    tiny.en's 2 MB tokenizer costs 0.1–0.2 s, more than hashing model.bin — and the
    tokenizer library parses it in full when the weights load."""
    with path.open("rb") as fh:
        head = fh.read(64).lstrip()
        fh.seek(max(0, path.stat().st_size - 64))
        tail = fh.read().rstrip()
    if not (head.startswith(b"{") and tail.endswith(b"}")):
        raise ConfigError(f"{path} is not a JSON object (it does not start with '{{' and end "
                          f"with '}}'); {fix}")


def check_whisper_dir(directory: str | os.PathLike[str]) -> WhisperArchitecture:
    """Refuse a Whisper directory faster-whisper could not load as it is (one
    :class:`ConfigError` naming the file and what is wrong with it), else return the
    architecture of its ``model.bin``."""
    d = Path(directory)
    model = d / "model.bin"
    if not model.is_file():
        raise ConfigError(
            f"{str(d)!r} is not a CTranslate2 Whisper model directory: {model} is missing "
            "(no model.bin); convert a Hugging Face Whisper checkpoint with "
            "ct2-transformers-converter, or pass a faster-whisper model directory")
    config = d / "config.json"
    if not config.is_file():
        raise ConfigError(f"{config} is missing: CTranslate2 reads the model's settings "
                          "(alignment heads, suppressed tokens) from it; re-convert the "
                          "model or copy the config.json of its faster-whisper release")
    _json_object(config, "re-download or re-convert the model")
    tokenizer = d / TOKENIZER_FILE
    if not tokenizer.is_file():
        raise ConfigError(
            f"{tokenizer} is missing: without it faster-whisper fetches a tokenizer from the "
            "hub (and fails offline); copy tokenizer.json from the model's Hugging Face "
            "release (openai/whisper-<size>) into the directory")
    _looks_like_json_object(tokenizer, "copy tokenizer.json again from the model's release")
    if not any((d / v).is_file() for v in VOCABULARY_FILES):
        raise ConfigError(f"{d / VOCABULARY_FILES[1]} is missing (nor is there a "
                          f"{VOCABULARY_FILES[0]}): CTranslate2 needs the vocabulary; "
                          "re-download or re-convert the model")
    return read_architecture(model)
