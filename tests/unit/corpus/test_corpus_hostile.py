"""Hostile corpus files (the corpus audit): every bad file is one error line naming the file
and line (exit 2 at the CLI), invisible texts block a run, `corpus split` never overwrites its
input, and a bad opening share is refused."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from vocencebench.cli import main
from vocencebench.corpus import (
    check_corpus,
    freeze,
    load_benchmark,
    load_corpus,
    opening_limit,
    read_corpus,
    validate_corpus,
    write_corpus,
)
from vocencebench.errors import ConfigError, CorpusError
from vocencebench.schema import Item


def _line(it: Item) -> str:
    return json.dumps(it.to_corpus_dict(), ensure_ascii=False)


def _one_error_line(capsys: pytest.CaptureFixture[str], code: int, *parts: str) -> None:
    cap = capsys.readouterr()
    assert code == 2, cap
    assert "Traceback" not in cap.err and len(cap.err.strip().splitlines()) == 1, cap.err
    assert all(p in cap.err for p in parts), cap.err


def _bad_lines(shipped: list[Item]) -> dict[str, tuple[str, str]]:
    """name -> (the second line of a file, a phrase its error must hold)."""
    first = _line(shipped[1])
    return {
        "deep": ("[" * 3000 + "]" * 3000, "nested too deeply"),
        "bigint": (first.replace('"difficulty": 1', '"difficulty": ' + "1" * 5000),
                   "too many digits"),
        "dupkey": (first[:-1] + ', "id": "other"}', "key 'id' is given twice"),
        "surrogate": (first.replace('"text": "', '"text": "\\ud800 '),
                      f"item {shipped[1].id} field text holds the lone surrogate U+D800"),
        "surrogate-trait": (first.replace('"tone": "', '"tone": "\\udfff'),
                            "field traits.tone holds the lone surrogate U+DFFF"),
    }


@pytest.mark.parametrize("name", ["deep", "bigint", "dupkey", "surrogate", "surrogate-trait"])
def test_a_malformed_line_is_one_corpus_error_naming_file_and_line(
        tmp_path: Path, shipped: list[Item], capsys: pytest.CaptureFixture[str],
        name: str) -> None:
    line, phrase = _bad_lines(shipped)[name]
    assert shipped[1].difficulty == 1 and line != _line(shipped[1])
    f = tmp_path / "bad.jsonl"
    f.write_text(_line(shipped[0]) + "\n" + line + "\n", encoding="utf-8")
    for reader in (read_corpus, load_corpus, load_benchmark):
        kwargs = {"verify": False} if reader is load_benchmark else {}
        with pytest.raises(CorpusError, match=r"bad\.jsonl:2: ") as err:
            reader(f, **kwargs)  # type: ignore[operator]
        assert phrase in str(err.value) and "\n" not in str(err.value)
    for command in ("check", "hash", "stats"):
        _one_error_line(capsys, main(["corpus", command, str(f)]), "bad.jsonl:2: ", phrase)
    _one_error_line(capsys, main(["corpus", "split", str(f), "--salt", "s", "--out",
                                  str(tmp_path / "sp")]), "bad.jsonl:2: ", phrase)
    assert not (tmp_path / "sp").exists()
    # A pin beside the file (sha256sum of its bytes) changes nothing: still one line.
    import hashlib

    digest = hashlib.sha256(f.read_bytes()).hexdigest()
    (tmp_path / "bad.sha256").write_text(f"{digest}  bad.jsonl\n", encoding="utf-8")
    _one_error_line(capsys, main(["corpus", "check", str(f)]), "bad.jsonl:2: ", phrase)
    code = main(["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
                 "--corpus", str(f), "--no-cache", "--quiet", "--out", str(tmp_path / "r")])
    _one_error_line(capsys, code, "bad.jsonl:2: ", phrase)


@pytest.mark.parametrize("value", [
    "\u200b", "\ufeff\u200b\u2060", "\u00ad", " \u200b\t", "\u2060\u00a0\u3000",
    # Format characters (category Cf) outside the terminal-escape set, which no other rule sees:
    "\u200d\u200c", "\u180e", "\ufff9 \U000e0020",
])
@pytest.mark.parametrize("field", ["text", "instruction"])
def test_an_invisible_text_or_instruction_is_empty_and_blocks_a_run(
        shipped: list[Item], field: str, value: str) -> None:
    item = replace(shipped[0], **{field: value})
    found = [v for v in check_corpus([item, *shipped[1:3]], authoring=False)
             if v.field == field]
    assert [v.kind for v in found] == ["empty"]
    with pytest.raises(CorpusError, match=rf"empty \[blocks a run\]: .*{field} empty"):
        validate_corpus([item, *shipped[1:3]], source="mine.jsonl")


def test_visible_text_with_a_format_character_is_not_empty(shipped: list[Item]) -> None:
    item = replace(shipped[0], text="Hello\u200b there, friend.")
    assert not [v for v in check_corpus([item], authoring=False) if v.kind == "empty"]


def test_split_refuses_to_overwrite_its_input_or_its_pin(
        tmp_path: Path, shipped: list[Item], capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "d"
    write_corpus(shipped[:20], d / "public.jsonl")
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    for out in (d, tmp_path / "." / "d", tmp_path / "d" / ".." / "d"):
        code = main(["corpus", "split", str(d / "public.jsonl"), "--salt", "s", "--out",
                     str(out)])
        _one_error_line(capsys, code, "would overwrite")
        assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    # A link to the input under another name is the same file.
    link = tmp_path / "e"
    link.mkdir()
    (link / "heldout.jsonl").symlink_to(d / "public.jsonl")
    code = main(["corpus", "split", str(d / "public.jsonl"), "--salt", "s", "--out", str(link)])
    _one_error_line(capsys, code, "would overwrite")
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    # Another directory is fine.
    assert main(["corpus", "split", str(d / "public.jsonl"), "--salt", "s", "--out",
                 str(tmp_path / "other")]) == 0
    assert len(read_corpus(tmp_path / "other" / "public.jsonl")) == 16


def test_split_refuses_an_out_that_is_a_file(tmp_path: Path, shipped: list[Item],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "c.jsonl"
    write_corpus(shipped[:10], src)
    afile = tmp_path / "afile"
    afile.write_text("keep me\n", encoding="utf-8")
    code = main(["corpus", "split", str(src), "--salt", "s", "--out", str(afile)])
    _one_error_line(capsys, code, "is a file")
    assert afile.read_text(encoding="utf-8") == "keep me\n"
    with pytest.raises(CorpusError, match="cannot write corpus file"):
        write_corpus(shipped[:2], afile / "public.jsonl")


@pytest.mark.parametrize("share", [float("nan"), float("inf"), -0.1, 0.0, 1.5])
def test_a_bad_opening_share_is_refused(tmp_path: Path, shipped: list[Item],
                                        capsys: pytest.CaptureFixture[str],
                                        share: float) -> None:
    with pytest.raises(ConfigError, match=r"max_opening_share must be a number in \(0, 1\]"):
        opening_limit(10, share)
    with pytest.raises(ConfigError, match="max_opening_share"):
        check_corpus(shipped[:5], max_opening_share=share)
    with pytest.raises(ConfigError, match="max_opening_share"):
        freeze(shipped[:5], tmp_path / "f.jsonl", max_opening_share=share)
    assert not (tmp_path / "f.jsonl").exists()
    f = tmp_path / "c.jsonl"
    write_corpus(shipped[:5], f)
    code = main(["corpus", "check", "--max-opening-share", str(share), str(f)])
    _one_error_line(capsys, code, "max_opening_share must be a number in (0, 1]")


def test_good_opening_shares_still_work(tmp_path: Path, shipped: list[Item],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert opening_limit(496, 0.03) == 14 and opening_limit(10, 1) == 10
    f = tmp_path / "c.jsonl"
    write_corpus(shipped[:5], f)
    for share in ("1", "0.5"):
        assert main(["corpus", "check", "--max-opening-share", share, str(f)]) == 0
        assert capsys.readouterr().out.startswith("OK: 5 items")
