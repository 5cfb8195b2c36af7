"""Corpus tools: hashing and pinning, the shipped file, the validator, sampler, split, CLI."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import replace
from importlib import resources
from pathlib import Path

import pytest

from vocencebench.cli import main
from vocencebench.corpus import (
    CATEGORIES,
    MAX_OPENING_SHARE,
    balanced_assignment,
    check_corpus,
    corpus_hash,
    corpus_stats,
    cramers_v,
    freeze,
    generate_template_corpus,
    load_benchmark,
    read_corpus,
    split_holdout,
    write_corpus,
)
from vocencebench.errors import ConfigError, CorpusError
from vocencebench.schema import Item
from vocencebench.traits import TRAITS

DATASETS = Path(str(resources.files("vocencebench") / "datasets"))
SHIPPED = DATASETS / "benchmark_v1.jsonl"



@pytest.fixture(scope="module")
def assignment() -> list:  # type: ignore[type-arg]
    return balanced_assignment(496, 3151662)


# --------------------------------------------------------------------------- the shipped file


def test_pin_matches_hash_and_sha256sum(shipped: list[Item]) -> None:
    pin = (DATASETS / "benchmark_v1.sha256").read_text(encoding="utf-8")
    digest, name = pin.split()
    assert name == "benchmark_v1.jsonl" and pin.endswith("\n")
    assert corpus_hash(shipped) == digest
    assert hashlib.sha256(SHIPPED.read_bytes()).hexdigest() == digest
    if shutil.which("sha256sum"):
        out = subprocess.run(["sha256sum", "-c", "benchmark_v1.sha256"], cwd=DATASETS,
                             capture_output=True, text=True, check=False)
        assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_shipped_corpus_is_valid_and_matches_the_assignment(
    shipped: list[Item], assignment: list  # type: ignore[type-arg]
) -> None:
    assert [it.id for it in shipped] == [f"vb-{k:05d}" for k in range(1, 497)]
    assert check_corpus(shipped, max_opening_share=MAX_OPENING_SHARE) == []
    for it, a in zip(shipped, assignment, strict=True):
        assert (it.id, it.traits, it.difficulty, it.category) == (
            a.id, a.traits, a.difficulty, a.category)
    stats = corpus_stats(shipped)
    assert stats.difficulty == {0: 174, 1: 198, 2: 124}
    assert [stats.category[c] for c in CATEGORIES] == [372, 31, 31, 31, 31]
    assert stats.max_cramers_v < 0.1
    assert stats.top_opening_share <= MAX_OPENING_SHARE


@pytest.mark.slow
def test_cli_check_passes_on_shipped_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpus", "check", str(SHIPPED)]) == 0
    assert capsys.readouterr().out.strip() == "OK: 496 items, 0 violations"


def test_tampered_file_is_refused(tmp_path: Path) -> None:
    lines = SHIPPED.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[10])
    obj["text"] = obj["text"] + " Extra."
    lines[10] = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    bad = tmp_path / "benchmark_v1.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(DATASETS / "benchmark_v1.sha256", tmp_path / "benchmark_v1.sha256")
    pinned = (DATASETS / "benchmark_v1.sha256").read_text().split()[0]
    with pytest.raises(CorpusError) as err:
        load_benchmark(bad)
    msg = str(err.value)
    assert pinned in msg and corpus_hash(read_corpus(bad, verify=False)) in msg
    assert len(load_benchmark(bad, verify=False)) == 496


def test_unknown_name_and_missing_pin(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="benchmark_v1"):
        load_benchmark("benchmark_v9")
    f = tmp_path / "c.jsonl"
    shutil.copy(SHIPPED, f)
    with pytest.raises(CorpusError, match=r"no \.sha256 pin"):
        load_benchmark(f)


# --------------------------------------------------------------------------- reading, writing


def test_read_corpus_names_file_and_line(tmp_path: Path) -> None:
    good = SHIPPED.read_text(encoding="utf-8").splitlines()[0]
    f = tmp_path / "x.jsonl"
    f.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"x\.jsonl:2"):
        read_corpus(f)
    f.write_text(good + "\n" + json.dumps({"id": "a"}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"x\.jsonl:2: item lacks"):
        read_corpus(f)
    with pytest.raises(CorpusError, match="does not exist"):
        read_corpus(tmp_path / "nope.jsonl")


def test_write_round_trip_and_pin_format(tmp_path: Path, shipped: list[Item]) -> None:
    out = tmp_path / "sub" / "c.jsonl"
    digest = write_corpus(shipped[:20], out)
    assert (tmp_path / "sub" / "c.sha256").read_text() == f"{digest}  c.jsonl\n"
    assert read_corpus(out) == shipped[:20]
    assert load_benchmark(out) == shipped[:20]
    assert corpus_hash(shipped[:20]) == digest == hashlib.sha256(out.read_bytes()).hexdigest()
    # Order matters: the hash is over file order.
    assert corpus_hash(list(reversed(shipped[:20]))) != digest


def test_freeze_refuses_invalid_items(tmp_path: Path, shipped: list[Item]) -> None:
    bad = [replace(shipped[0], text="I am so happy.")]
    with pytest.raises(CorpusError, match="refusing to freeze"):
        freeze(bad, tmp_path / "c.jsonl")
    assert not (tmp_path / "c.jsonl").exists()


# --------------------------------------------------------------------------- the validator


def _problems(item: Item) -> list[tuple[str, str]]:
    return [(v.field, v.problem) for v in check_corpus([item])]


def test_validator_catches_each_rule(shipped: list[Item]) -> None:
    easy = next(it for it in shipped if it.difficulty == 0)
    normal = next(it for it in shipped if it.difficulty == 1)
    hard = next(it for it in shipped if it.category == "numbers")
    assert _problems(easy) == []
    missing = dict(easy.traits)
    del missing["tone"]
    assert ("traits.tone", "missing") in _problems(replace(easy, traits=missing))
    wrong = {**easy.traits, "accent": "Martian"}
    assert any(f == "traits.accent" for f, _ in _problems(replace(easy, traits=wrong)))
    other = "quiet" if easy.traits["loudness"] != "quiet" else "loud"
    flipped = {**easy.traits, "loudness": other}
    assert any("loudness" in p for f, p in _problems(replace(easy, traits=flipped))
               if f == "instruction")
    extra = replace(easy, instruction=easy.instruction + " Sound furious, then elated.")
    assert any("states emotion" in p or "reads as emotion" in p for _, p in _problems(extra))
    assert any("names emotion" in p for _, p in _problems(replace(easy, text="So sad.")))
    long_easy = replace(easy, text="one two three four five six seven eight nine")
    assert any("easy script" in p for _, p in _problems(long_easy))
    assert any("normal script" in p for _, p in _problems(replace(normal, text="Too short.")))
    assert any("numbers script" in p for _, p in _problems(replace(hard, text="No digits "
                                                                   "here at all, sorry.")))
    assert any(f == "category" for f, _ in _problems(replace(easy, category="numbers")))
    assert any(f == "category" for f, _ in _problems(replace(hard, category="everyday")))
    dup = check_corpus([easy, easy])
    assert {v.problem for v in dup} >= {"duplicate id", f"same script as {easy.id}"}
    same_text = replace(normal, text=easy.text.upper())
    assert any("same script" in v.problem for v in check_corpus([easy, same_text]))


def test_opening_variety_rule(shipped: list[Item]) -> None:
    items = [replace(it, instruction="Please voice this now. " + it.instruction)
             for it in shipped[:40]]
    bad = check_corpus(items, max_opening_share=0.03)
    assert sum("opening" in v.problem for v in bad) == 40


# --------------------------------------------------------------------------- the sampler


@pytest.mark.slow
def test_sampler_balance_and_association(assignment: list) -> None:  # type: ignore[type-arg]
    n = len(assignment)
    for t in TRAITS:
        column = [a.traits[t.name] for a in assignment]
        for v in t.values:
            assert abs(column.count(v) - n / len(t.values)) <= 2, (t.name, v)
    names = TRAITS.names()
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            v = cramers_v([x.traits[a] for x in assignment], [x.traits[b] for x in assignment])
            assert v < 0.1, (a, b, v)
    slots = [x.category if x.difficulty == 2 else str(x.difficulty) for x in assignment]
    for t in names:
        assert cramers_v(slots, [x.traits[t] for x in assignment]) < 0.1


# --------------------------------------------------------------------------- the split


def test_split_is_deterministic_and_order_free(shipped: list[Item]) -> None:
    s1 = split_holdout(shipped, 0.2, salt="private-salt")
    s2 = split_holdout(list(reversed(shipped)), 0.2, salt="private-salt")
    assert len(s1.heldout) == 99 and len(s1.public) == 397
    assert {it.id for it in s1.heldout} == {it.id for it in s2.heldout}
    assert [it.id for it in s1.public] == sorted(it.id for it in s1.public)
    s3 = split_holdout(shipped, 0.2, salt="another-salt")
    assert {it.id for it in s3.heldout} != {it.id for it in s1.heldout}
    assert s1.salt_digest == hashlib.sha256(b"private-salt").hexdigest()
    # Dropping public items never moves a held-out item.
    sub = [it for it in shipped if it not in s1.public[:50]]
    s4 = split_holdout(sub, len(s1.heldout) / len(sub), salt="private-salt")
    assert {it.id for it in s4.heldout} == {it.id for it in s1.heldout}
    with pytest.raises(Exception, match="salt"):
        split_holdout(shipped, 0.2, salt="")
    with pytest.raises(Exception, match="fraction"):
        split_holdout(shipped, 1.5, salt="x")
    with pytest.raises(ConfigError, match="must be UTF-8 text"):
        split_holdout(shipped, 0.2, salt="\udcff")  # what argv makes of a lone byte 0xff


@pytest.mark.parametrize("command", ["run", "leaderboard"])
def test_an_empty_holdout_salt_is_refused_not_ignored(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--holdout-salt ""`` ran the whole corpus as if no split had been asked for."""
    systems = (["--system-a", "espeak-flat", "--system-b", "espeak-follow"] if command == "run"
               else ["--system", "a=espeak-flat", "--system", "b=espeak-follow", "--dry-run"])
    assert main([command, *systems, "--holdout-salt", "", "--limit", "2", "--skip-canaries",
                 "--out", str(tmp_path / "out")]) == 2
    assert "non-empty salt" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- template corpus


@pytest.mark.slow
def test_template_corpus_passes_the_checker_and_is_deterministic() -> None:
    items = generate_template_corpus(150, 11)
    assert check_corpus(items) == []
    assert corpus_hash(generate_template_corpus(150, 11)) == corpus_hash(items)
    assert corpus_hash(generate_template_corpus(150, 12)) != corpus_hash(items)


# --------------------------------------------------------------------------- CLI


def test_cli_check_hash_stats_split(tmp_path: Path, shipped: list[Item],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    write_corpus([shipped[0], replace(shipped[1], text="I'm 8 years old.")], bad)
    assert main(["corpus", "check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{shipped[1].id}\ttext\tnames age" in out and "FAILED" in out

    assert main(["corpus", "hash", str(SHIPPED)]) == 0
    assert capsys.readouterr().out == (DATASETS / "benchmark_v1.sha256").read_text()

    assert main(["corpus", "stats", str(SHIPPED)]) == 0
    out = capsys.readouterr().out
    assert "| accent | Indian | 99 | 99.2 |" in out and "max Cramér's V" in out

    assert main(["corpus", "split", str(SHIPPED), "--salt", "s", "--out",
                 str(tmp_path / "sp")]) == 0
    pub, held = read_corpus(tmp_path / "sp" / "public.jsonl"), read_corpus(
        tmp_path / "sp" / "heldout.jsonl")
    assert len(pub) + len(held) == 496 and len(held) == 99
    assert main(["corpus", "check", str(tmp_path / "missing.jsonl")]) == 2


def test_cli_reads_a_shipped_corpus_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # The name --corpus takes names the same corpus for the corpus tools, wherever they run.
    monkeypatch.chdir(tmp_path)
    assert main(["corpus", "hash", "benchmark_v1"]) == 0
    assert capsys.readouterr().out == (DATASETS / "benchmark_v1.sha256").read_text()
    assert main(["corpus", "stats", "benchmark_v1"]) == 0
    assert "items: 496" in capsys.readouterr().out
    assert main(["corpus", "split", "benchmark_v1", "--salt", "s", "--out", "sp"]) == 0
    assert len(read_corpus(tmp_path / "sp" / "heldout.jsonl")) == 99
    capsys.readouterr()
    assert main(["corpus", "check", "benchmark_v2"]) == 2
    err = capsys.readouterr().err
    assert "no shipped corpus named 'benchmark_v2'; shipped: benchmark_v1" in err
    # A file of that name here is read as the file, as before.
    (tmp_path / "benchmark_v1").write_text("not json\n", encoding="utf-8")
    assert main(["corpus", "hash", "benchmark_v1"]) != 0
    assert "benchmark_v1:1" in capsys.readouterr().err
