"""The one corpus gate (issue 12, finding 3): what `run` refuses, pins on custom corpora,
bounded checking of absurd input, one summary line per kind of problem."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from vocencebench import instruction
from vocencebench.cli import main
from vocencebench.corpus import (
    MAX_OPENING_SHARE,
    MAX_TEXT_CHARS,
    RUN_BLOCKING_KINDS,
    check_corpus,
    load_benchmark,
    load_corpus,
    read_corpus,
    validate_corpus,
    write_corpus,
)
from vocencebench.errors import CorpusError
from vocencebench.schema import Item


def _tamper(path: Path) -> None:
    """A one-character edit of a pinned file that keeps it valid JSON."""
    raw = path.read_text(encoding="utf-8")
    i = raw.index('"text":"') + len('"text":"')
    path.write_text(raw[:i] + ("X" if raw[i] != "X" else "Y") + raw[i + 1:], encoding="utf-8")


def test_tampered_custom_corpus_is_refused_by_every_reader_and_by_run(
    tmp_path: Path, shipped: list[Item], capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "mine.jsonl"
    write_corpus(shipped[:4], f)
    assert load_corpus(f) == shipped[:4]
    _tamper(f)
    for reader in (read_corpus, load_corpus, load_benchmark):
        with pytest.raises(CorpusError, match=r"does not match its pin .*mine\.sha256") as err:
            reader(f)
        assert "re-pin it with `vocencebench corpus hash" in str(err.value)
    assert len(read_corpus(f, verify=False)) == 4  # an explicit opt-out still reads it

    out = tmp_path / "run"
    code = main(["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
                 "--corpus", str(f), "--no-cache", "--quiet", "--out", str(out)])
    err_text = capsys.readouterr().err
    assert code == 2 and "does not match its pin" in err_text
    assert not (out / "scores.jsonl").exists()

    # `corpus check` lists the mismatch; `corpus hash` (the re-pin tool) still works.
    assert main(["corpus", "check", str(f)]) == 1
    assert "-\tpin\t" in capsys.readouterr().out
    assert main(["corpus", "hash", str(f)]) == 0
    (tmp_path / "mine.sha256").write_text(capsys.readouterr().out, encoding="utf-8")
    assert len(load_corpus(f)) == 4


def test_a_sha256sum_pin_of_a_hand_formatted_file_is_accepted(tmp_path: Path,
                                                               shipped: list[Item]) -> None:
    f = tmp_path / "hand.jsonl"
    f.write_text("".join(json.dumps(it.to_corpus_dict(), indent=None) + "\n"
                         for it in shipped[:3]), encoding="utf-8")
    digest = hashlib.sha256(f.read_bytes()).hexdigest()
    (tmp_path / "hand.sha256").write_text(f"{digest}  hand.jsonl\n", encoding="utf-8")
    assert load_corpus(f) == shipped[:3]


def test_run_gate_refuses_what_corpus_check_rejects_one_line_per_kind(
    shipped: list[Item],
) -> None:
    good = shipped[:6]
    no_pace = {k: v for k, v in good[1].traits.items() if k != "pace"}
    bad = [
        good[0],
        replace(good[1], traits=no_pace),                                  # trait missing
        replace(good[2], traits={**good[2].traits, "pace": "glacial"}),    # unknown value
        replace(good[3], text="I am so sad and angry today."),             # trait words
        replace(good[4], id="../etc/passwd"),                              # bad id
        good[5], replace(good[5], instruction=good[4].instruction),        # duplicate id
    ]
    with pytest.raises(CorpusError) as err:
        validate_corpus(bad, source="mine.jsonl")
    lines = str(err.value).splitlines()
    assert lines[0].startswith("mine.jsonl cannot be run: ")
    kinds = [line.strip().split(" ")[0].split(":")[0] for line in lines[1:]]
    assert kinds == ["trait-missing", "trait-value", "trait-in-script", "id", "duplicate-id"]
    assert set(kinds) <= RUN_BLOCKING_KINDS
    assert all(good[k].id in str(err.value) for k in (1, 2, 3, 5))


@pytest.mark.parametrize(("field", "value", "char"), [
    ("text", "Turn left \x1b]0;pwned\x07 at the lights.", "U+001B at position 10"),
    ("text", "Hold the line\x00 please.", "U+0000"),
    ("instruction", "A calm voice \u202eesrever\u202c please.", "U+202E"),
    ("text", "Two lines\nof script.", "U+000A"),
])
def test_control_and_bidirectional_characters_block_a_run(
        shipped: list[Item], field: str, value: str, char: str) -> None:
    """An LLM-written corpus froze ESC, NUL and U+202E into its items."""
    item = replace(shipped[0], **{field: value})
    with pytest.raises(CorpusError, match=rf"control \[blocks a run\]: .*{field} holds "
                                          rf"control .*{re.escape(char)}"):
        validate_corpus([item, *shipped[1:3]], source="mine.jsonl")
    assert "control" in RUN_BLOCKING_KINDS


def test_thousands_of_problems_give_one_line_per_kind(shipped: list[Item]) -> None:
    items = [replace(shipped[k % len(shipped)], id=f"x-{k}", traits={})
             for k in range(2000)]
    with pytest.raises(CorpusError) as err:
        validate_corpus(items)
    lines = str(err.value).splitlines()
    assert len(lines) == 2  # the header and "trait-missing: 16000 in 2000 item(s) (x-0, ...)"
    assert "trait-missing [blocks a run]: 16000 in 2000 item(s) (x-0, x-1, x-2, ...)" in lines[1]


def test_authoring_rules_do_not_block_a_run(shipped: list[Item]) -> None:
    easy = next(it for it in shipped if it.difficulty == 0)
    wordy = replace(easy, text="one two three four five six seven eight nine")
    assert any(v.kind == "tier" for v in check_corpus([wordy]))
    validate_corpus([wordy])  # tier rules are corpus check's business
    validate_corpus(shipped)  # the frozen benchmark passes the gate
    assert len(load_corpus("benchmark_v1")) == 496


def test_two_megabyte_script_is_checked_in_bounded_work(
    tmp_path: Path, shipped: list[Item], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen: list[int] = []
    real = instruction.trait_mentions

    def spy(text: str, **kw: object) -> list[tuple[str, str]]:
        seen.append(len(text))
        return real(text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(instruction, "trait_mentions", spy)
    f = tmp_path / "big.jsonl"
    big = replace(shipped[0], text="So sad, so loud, so slow. " * 80_000)
    f.write_text(json.dumps(big.to_corpus_dict()) + "\n", encoding="utf-8")
    assert f.stat().st_size > 2_000_000
    assert main(["corpus", "check", str(f)]) == 1
    out = capsys.readouterr().out.splitlines()
    # one violation, one summary line for its kind, the verdict: not 31 749 lines
    assert out == [
        f"{big.id}\ttext\t{len(big.text)} characters; at most {MAX_TEXT_CHARS}",
        f"summary: too-long [blocks a run]: 1 in 1 item(s) ({big.id}); e.g. text "
        f"{len(big.text)} characters; at most {MAX_TEXT_CHARS}",
        "FAILED: 1 items, 1 violations (1 of them block a run)",
    ]
    assert seen == []  # the over-long script was never analysed
    with pytest.raises(CorpusError, match="too-long"):
        load_corpus(f)


def test_empty_corpus_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "empty.jsonl"
    f.write_text("\n\n", encoding="utf-8")
    assert main(["corpus", "check", str(f)]) == 1
    assert "no items" in capsys.readouterr().out
    for call in (lambda: validate_corpus([]), lambda: load_corpus(f)):
        with pytest.raises(CorpusError, match="no items"):
            call()


def test_listing_is_capped_with_a_count_of_the_rest(
    tmp_path: Path, shipped: list[Item], capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "many.jsonl"
    items = [replace(it, text="Sad.") for it in shipped[:30]]
    write_corpus(items, f)
    assert main(["corpus", "check", str(f), "--show", "5"]) == 1
    out = capsys.readouterr().out.splitlines()
    problems = check_corpus(items, max_opening_share=MAX_OPENING_SHARE)
    assert len(problems) > 30
    assert out[5] == f"... {len(problems) - 5} more violation(s) not listed (--show 0 lists all)"
    kinds = {v.kind for v in problems}
    assert len(out) == 5 + 1 + len(kinds) + 1


def test_entries_that_are_not_items_are_refused() -> None:
    with pytest.raises(CorpusError, match="entry 0 is a dict"):
        validate_corpus([{"id": "x"}])  # type: ignore[list-item]


def test_every_python_entry_point_refuses_a_bad_corpus_before_any_synthesis(
    shipped: list[Item], tmp_path: Path,
) -> None:
    import vocencebench as vb

    calls: list[str] = []

    def system(text: str, instruction: str) -> bytes:  # must never be asked for a clip
        calls.append(text)
        raise RuntimeError("synthesis started before the corpus gate")

    good = shipped[:3]
    no_pace = {k: v for k, v in good[1].traits.items() if k != "pace"}
    bad = {
        "duplicate-id": [good[0], good[1], replace(good[2], id=good[0].id)],
        "trait-missing": [good[0], replace(good[1], traits=no_pace), good[2]],
    }
    entry_points = {
        "benchmark": lambda c: vb.benchmark(c, system, system, workers=1, progress=False,
                                            cache=tmp_path / "b.sqlite"),
        "leaderboard": lambda c: vb.leaderboard(c, {"x": system, "y": system}, workers=1,
                                                cache=tmp_path / "l.sqlite"),
        "redteam": lambda c: vb.redteam(c, reference=system, flat=system, workers=1,
                                        cache=tmp_path / "r.sqlite"),
    }
    for kind, corpus in bad.items():
        for name, call in entry_points.items():
            with pytest.raises(CorpusError) as err:
                call(corpus)
            lines = str(err.value).splitlines()
            # the gate's own message: its header, then one line for the one kind of problem
            assert lines[0].startswith("corpus cannot be run: 1 problem(s) in 1 of 3"), lines
            assert [ln.strip().split(" ")[0] for ln in lines[1:]] == [kind], (name, lines)
            assert calls == [], (name, kind, len(calls))
