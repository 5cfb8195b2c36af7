"""``textnorm.align``: the word alignment behind the gate's WER, from the same normalisation
and the same jiwer call, so a report that marks the differing words marks exactly the errors
the WER counted."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vocencebench.errors import ConfigError
from vocencebench.textnorm import WordOp, align, word_errors

pytest.importorskip("jiwer", reason="the WER needs the 'probes' extra")


def test_an_inserted_word_is_one_insert_step() -> None:
    res, ops = align("Will we ever forget it?", "will be ever forget it")
    assert res == word_errors("Will we ever forget it?", "will be ever forget it")
    assert ops == (WordOp("equal", ("will",), ("will",)), WordOp("substitute", ("we",), ("be",)),
                   WordOp("equal", ("ever", "forget", "it"), ("ever", "forget", "it")))
    _, ops = align("Will ever forget it?", "will be ever forget it")
    assert [o.op for o in ops] == ["equal", "insert", "equal"] and ops[1].hyp == ("be",)


def test_the_steps_are_on_the_normalised_words() -> None:
    res, ops = align("Meet me at 10:30, at No. 5.", "meet me at ten thirty at number five")
    assert res.wer == 0 and ops == (WordOp("equal", tuple(res.reference_norm.split()),
                                           tuple(res.hypothesis_norm.split())),)


def test_nothing_heard_is_one_delete_step_and_no_script_is_refused() -> None:
    res, ops = align("Turn left at the mill.", "")
    assert res.wer == 1.0 and ops == (WordOp("delete", ("turn", "left", "at", "the", "mill"),
                                             ()),)
    with pytest.raises(ConfigError, match="no words after normalisation"):
        align("!?", "anything")


WORDS = st.sampled_from(["red", "green", "blue", "seven", "the", "a", "river", "stone"])


@settings(max_examples=150, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=12), st.lists(WORDS, max_size=12))
def test_the_steps_rebuild_both_texts_and_count_the_errors(ref: list[str],
                                                           hyp: list[str]) -> None:
    res, ops = align(" ".join(ref), " ".join(hyp))
    assert tuple(w for o in ops for w in o.ref) == tuple(res.reference_norm.split())
    assert tuple(w for o in ops for w in o.hyp) == tuple(res.hypothesis_norm.split())
    for o in ops:
        assert o.op in ("equal", "substitute", "delete", "insert")
        if o.op in ("equal", "substitute"):
            assert len(o.ref) == len(o.hyp) > 0
        if o.op == "equal":
            assert o.ref == o.hyp
        if o.op == "delete":
            assert o.ref and not o.hyp
        if o.op == "insert":
            assert o.hyp and not o.ref
    subs = sum(len(o.ref) for o in ops if o.op == "substitute")
    dels = sum(len(o.ref) for o in ops if o.op == "delete")
    # an inserted number counts one word per digit (textnorm.align: padding with digits)
    ins = sum(len(w) if w.isdigit() else 1 for o in ops if o.op == "insert" for w in o.hyp)
    if res.hypothesis_norm:
        assert (subs, dels, ins) == (res.substitutions, res.deletions, res.insertions)
    assert res.wer == pytest.approx((subs + dels + ins) / res.reference_words)
