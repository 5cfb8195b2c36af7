"""CTranslate2 Whisper model directories written by hand, for the checks that run before any
model loads (no weights worth the name: the record layout is CTranslate2's own, the tensors
are zeros of the declared shapes, int8 to keep them small).

``model.bin`` is written exactly as ``ctranslate2/specs/model_spec.py`` ``_serialize`` writes
it (binary version 6): version, spec name and revision, the variables (name, rank, shape,
type id, byte count, bytes), then the aliases.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

#: CTranslate2's type id of int8 (``_dtype_to_type_id``).
INT8 = 1


def _string(text: str) -> bytes:
    raw = text.encode("utf-8") + b"\0"
    return struct.pack("<H", len(raw)) + raw


def model_bin(*, width: int = 32, encoder_layers: int = 2, decoder_layers: int = 2,
              vocabulary: int = 64, mel_bins: int = 80, spec: str = "WhisperSpec",
              version: int = 6) -> bytes:
    """A ``model.bin`` with the tensors the architecture is read from (int8 zeros)."""
    variables: list[tuple[str, tuple[int, ...]]] = [
        ("decoder/activation", ()),
        ("encoder/conv1/weight", (width, mel_bins, 3)),
        ("decoder/embeddings/weight", (vocabulary, 1)),  # one column: the rows are what count
    ]
    variables += [(f"encoder/layer_{i}/ffn/linear_0/bias", (width,))
                  for i in range(encoder_layers)]
    variables += [(f"decoder/layer_{i}/ffn/linear_0/bias", (width,))
                  for i in range(decoder_layers)]
    out = [struct.pack("<I", version), _string(spec), struct.pack("<I", 3),
           struct.pack("<I", len(variables))]
    for name, shape in variables:
        n = 1
        for d in shape:
            n *= d
        out += [_string(name), struct.pack("<B", len(shape)),
                *(struct.pack("<I", d) for d in shape), struct.pack("<B", INT8),
                struct.pack("<I", n), bytes(n)]
    out += [struct.pack("<I", 1), _string("decoder/projection/weight"),
            _string("decoder/embeddings/weight")]
    return b"".join(out)


def make_whisper_dir(directory: Path, **shape: int | str) -> Path:
    """``directory`` with model.bin (:func:`model_bin` of ``shape``), config.json,
    tokenizer.json and vocabulary.txt, as faster-whisper expects them."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.bin").write_bytes(model_bin(**shape))  # type: ignore[arg-type]
    (directory / "config.json").write_text(json.dumps({"suppress_ids": [],
                                                       "suppress_ids_begin": [220]}))
    (directory / "tokenizer.json").write_text(json.dumps({"version": "1.0", "model": {}}))
    (directory / "vocabulary.txt").write_text("a\nb\n")
    return directory
