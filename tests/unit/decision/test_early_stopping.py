"""Verdict-invariant early stopping (vocencebench.early_stopping and the judging schedule).

The property test plays ≥ 1 000 random duels through the real pieces of a
``stop_when_decided`` run — :func:`vocencebench.pair.combine` (with and without the judge),
the schedule of :mod:`vocencebench._pipeline.stopping` (seeded order, batches, the stopping
rule) and :func:`vocencebench.early_stopping.decide_ranges` (what the run and ``decide``
decide with) — and checks that the early verdict is the full run's verdict, every time.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from seeding import make_rng
from vocencebench._pipeline.stopping import JudgeSchedule
from vocencebench.constants import EARLY_STOP_SLACK, JUDGE_ORDER_SEED
from vocencebench.decide import composite, decide
from vocencebench.early_stopping import (
    Interval,
    VerdictBounds,
    certain_winner,
    decide_ranges,
    judge_order,
    range_of,
    sample_range,
    verdict_bounds,
)
from vocencebench.errors import ConfigError, ScoresError
from vocencebench.pair import ClipAnalysis, PairResult, combine, covered_dimensions, needs_judge
from vocencebench.schema import Item, ProbeResult, SampleScore, Verdict
from vocencebench.traits import TRAITS

LABELS = ("inc", "chal")
JUDGED = TRAITS.judged_dimensions()


# --------------------------------------------------------------------------- the order


def test_judge_order_is_the_documented_sort_of_the_raw_stream() -> None:
    n = 50
    raw = np.random.PCG64(JUDGE_ORDER_SEED).random_raw(n)
    expected = tuple(sorted(range(n), key=lambda i: (int(raw[i]), i)))
    order = judge_order(n)
    assert order == expected
    assert sorted(order) == list(range(n)) and order != tuple(range(n))
    # Golden (pinned so a change of the stream, the seed or the sort shows up): the first
    # items judged of the shipped corpus's 496.
    assert judge_order(496)[:8] == (340, 358, 347, 25, 22, 286, 482, 464)
    # An item's key does not depend on n: a --limit slice keeps the full order.
    assert [i for i in judge_order(496) if i < 50] == list(order)
    assert judge_order(0) == ()


# --------------------------------------------------------------------------- ranges


def test_range_of_puts_the_unjudged_dimensions_at_zero_and_one() -> None:
    d = {"pitch": 1.0, "pace": 0.5}
    lo, hi = range_of(d, ("tone", "naturalness"), 1)
    assert lo == composite({**d, "tone": 0.0, "naturalness": 0.0}, 1)
    assert hi == composite({**d, "tone": 1.0, "naturalness": 1.0}, 1)
    assert lo < hi
    assert range_of(d, ("tone",), 0) == (0.0, 0.0)  # the gate zeroes S whatever the judge says
    with pytest.raises(ScoresError):
        range_of({"tone": 1.0}, ("tone",), 1)


def test_sample_range_of_scored_unjudged_and_incomplete_samples() -> None:
    assert sample_range(SampleScore("i", "a", 0.4, {"pitch": 0.4})) == (0.4, 0.4)
    u = SampleScore("i", "a", None, {"pitch": 1.0}, gate=1, unjudged=("tone",))
    assert sample_range(u) == range_of({"pitch": 1.0}, ("tone",), 1)
    assert sample_range(SampleScore("i", "a", None, incomplete="judge: 503")) is None
    with pytest.raises(ConfigError):
        SampleScore("i", "a", 0.3, {"pitch": 1.0}, unjudged=("tone",))
    with pytest.raises(ConfigError):
        SampleScore("i", "a", None, {"tone": 1.0}, unjudged=("tone",))
    # Written only when set: a scored row keeps its bytes.
    assert "unjudged" not in SampleScore("i", "a", 0.4).to_dict()
    assert SampleScore.from_dict(u.to_dict()) == u


def test_point_ranges_decide_exactly_as_decide(rng: np.random.Generator) -> None:
    a = rng.uniform(0, 1, 30).tolist()
    b = rng.uniform(0, 1, 30).tolist()
    got = decide_ranges([(x, x) for x in a], [(y, y) for y in b], labels=LABELS)
    assert got == decide(a, b, labels=LABELS)
    assert got.early_stop is None and "early_stop" not in got.to_dict()


def test_bounds_hold_every_outcome(rng: np.random.Generator) -> None:
    """The LCB and margins of random fillings of the ranges lie inside the bounds."""
    n = 25
    lo_a = rng.uniform(0, 0.5, n)
    lo_b = rng.uniform(0.2, 0.7, n)
    ra = [(float(x), float(min(1.0, x + rng.uniform(0, 0.4)))) for x in lo_a]
    rb = [(float(x), float(min(1.0, x + rng.uniform(0, 0.4)))) for x in lo_b]
    b = verdict_bounds(ra, rb, labels=LABELS, n_boot=300)
    for _ in range(30):
        a = [float(rng.uniform(x, y)) for x, y in ra]
        bb = [float(rng.uniform(x, y)) for x, y in rb]
        d = decide(a, bb, labels=LABELS, n_boot=300)
        assert b.lcb.lo <= d.lcb <= b.lcb.hi
        assert b.lcb_reverse.lo <= d.lcb_reverse <= b.lcb_reverse.hi
        assert b.margin.lo <= d.margin <= b.margin.hi
        assert b.margin_reverse.lo <= d.margin_reverse <= b.margin_reverse.hi


def _bounds(lcb: tuple[float, float], m: tuple[float, float], lcb_r: tuple[float, float],
            m_r: tuple[float, float]) -> VerdictBounds:
    i = Interval(0.0, 1.0)
    return VerdictBounds(10, 3, Interval(*lcb), Interval(*lcb_r), Interval(*m), Interval(*m_r),
                         i, i, i)


@pytest.mark.parametrize(("bounds", "winner"), [
    (((0.20, 0.40), (0.05, 0.06), (-0.5, -0.3), (0.02, 0.03)), "chal"),
    (((-0.4, -0.2), (0.05, 0.06), (0.15, 0.30), (0.02, 0.03)), "inc"),
    (((-0.1, 0.01), (0.05, 0.06), (-0.1, 0.01), (0.02, 0.03)), "tie"),
    (((0.00, 0.40), (0.05, 0.06), (-0.5, -0.3), (0.02, 0.03)), None),  # b may or may not win
    (((-0.4, -0.2), (0.05, 0.06), (0.00, 0.30), (0.02, 0.03)), None),  # a may or may not win
])
def test_certain_winner_settles_one_branch_for_every_outcome(bounds: Any, winner: str | None
                                                             ) -> None:
    got, why = certain_winner(_bounds(*bounds), LABELS)
    assert got == winner
    assert ("not certain" in why) == (winner is None)


def test_certainty_needs_the_safety_gap() -> None:
    """A bound that clears its threshold by less than the gap is not called certain."""
    m = 0.05
    just = _bounds((m + EARLY_STOP_SLACK / 2, 0.4), (0.04, m), (-0.5, -0.3), (0.02, 0.03))
    assert certain_winner(just, LABELS)[0] is None
    clear = _bounds((m + 2 * EARLY_STOP_SLACK, 0.4), (0.04, m), (-0.5, -0.3), (0.02, 0.03))
    assert certain_winner(clear, LABELS)[0] == "chal"


def test_decide_ranges_refuses_an_open_verdict_and_records_a_proof() -> None:
    a = [(0.2, 0.2)] * 20 + [(0.0, 1.0)] * 20
    b = [(0.8, 0.8)] * 20 + [(0.0, 1.0)] * 20
    with pytest.raises(ScoresError, match="do not support a stopped-early verdict"):
        decide_ranges(a, b, labels=LABELS)
    d = decide_ranges([(0.2, 0.2)] * 36 + [(0.1, 0.4)] * 4, [(0.8, 0.8)] * 36 + [(0.5, 0.9)] * 4,
                      labels=LABELS)
    assert d.winner == "chal" and d.early_stop is not None
    es = d.early_stop
    assert es["unjudged"] == 4 and es["known"] == 36 and es["items"] == 40
    assert d.lcb == es["lcb"][0] and d.margin == es["margin"][1]  # the verdict's worst case
    assert d.lcb > d.margin and "stopped early" in d.reason and "chal wins" in d.reason
    assert type(d).from_dict(d.to_dict()) == d


# --------------------------------------------------------------------------- the property


def _item(k: int) -> Item:
    return Item(f"vb-{k:05d}", "a calm voice", "Hello there.", {}, 0)


def _analysis(rng: np.random.Generator, item: Item, label: str, traits: tuple[str, ...],
              quality: float, gate_on: bool) -> ClipAnalysis:
    if rng.random() < 0.03:  # the system failed: S = 0
        return ClipAnalysis(item.id, label, failure="synthesis: no audio")
    probes = {}
    for t in traits:
        r = rng.random()
        d = 1.0 if r < quality else 0.5 if r < (1 + quality) / 2 else float(rng.choice(
            [0.0, 0.25]))
        probes[t] = ProbeResult(t, d, "", "x", d, f"{t}@1")
    gate = (1 if rng.random() < 0.92 else 0) if gate_on else None
    if rng.random() < 0.01:  # an instrument failed: the item decides nothing
        return ClipAnalysis(item.id, label, sha256="0" * 64, probes=probes, gate=gate,
                            instrument_failure="probes: crashed")
    return ClipAnalysis(item.id, label, sha256="0" * 64, probes=probes, gate=gate)


def _verdicts(rng: np.random.Generator, kind: str, strength: float) -> dict[str, Verdict]:
    out = {}
    for dim in JUDGED:
        if kind == "ties":
            sa = sb = int(rng.integers(0, 4))
        else:
            mu = {"prefers_b": strength, "prefers_a": -strength, "coin": 0.0}.get(kind, 0.0)
            sa = int(np.clip(round(1.5 - mu / 2 + rng.normal(0, 1.0)), 0, 3))
            sb = int(np.clip(round(1.5 + mu / 2 + rng.normal(0, 1.0)), 0, 3))
        w = "b" if sb > sa else "a" if sa > sb else "tie"
        out[dim] = Verdict(w, float(sa), float(sb), "", "", 0.8, True, dim, "scripted", "v")
    return out


def _duel(rng: np.random.Generator) -> tuple[list[Item], list[tuple[ClipAnalysis, ...]],
                                             list[dict[str, Verdict]], tuple[str, ...]]:
    n = int(rng.integers(3, 60))
    traits = tuple(t for t in ("gender", "pitch", "pace", "loudness") if rng.random() < 0.6)
    dims = covered_dimensions(traits, True)
    kind = str(rng.choice(["prefers_b", "prefers_a", "coin", "ties", "noisy"]))
    strength = float(rng.choice([0.5, 1.0, 2.0, 3.0, 4.0]))
    qa, qb = float(rng.uniform(0.1, 0.95)), float(rng.uniform(0.1, 0.95))
    if rng.random() < 0.3:  # a close duel: same systems
        qb = qa
    gate_on = bool(rng.random() < 0.5)
    items = [_item(k) for k in range(n)]
    ans = [(_analysis(rng, it, LABELS[0], traits, qa, gate_on),
            _analysis(rng, it, LABELS[1], traits, qb, gate_on)) for it in items]
    verdicts = [_verdicts(rng, kind, strength) for _ in items]
    return items, ans, verdicts, dims


def _ranges(pairs: list[PairResult]) -> tuple[list[tuple[float, float]],
                                                list[tuple[float, float]]]:
    ra, rb = [], []
    for p in pairs:
        if p.incomplete is None:
            ra.append(sample_range(p.a))
            rb.append(sample_range(p.b))
    return ra, rb  # type: ignore[return-value]


def _play(items: list[Item], ans: list[tuple[ClipAnalysis, ...]],
          verdicts: list[dict[str, Verdict]], dims: tuple[str, ...], *, batch: int,
          n_boot: int) -> tuple[list[PairResult], list[PairResult], JudgeSchedule]:
    """(the full run's pairs, the early run's pairs, its schedule), as the engine makes them."""
    def full(k: int) -> PairResult:
        return combine(items[k], *ans[k], verdicts[k] if needs_judge(*ans[k]) else {},
                       labels=LABELS, dimensions=dims)

    sch = JudgeSchedule(len(items), LABELS, batch=batch, n_boot=n_boot)
    early: dict[int, PairResult] = {}
    for k in range(len(items)):
        if needs_judge(*ans[k]):
            u = combine(items[k], *ans[k], {}, labels=LABELS, dimensions=dims, unjudged=True)
            if u.incomplete is None:
                sch.park(k, None, u)  # type: ignore[arg-type]
                continue
            early[k] = u
        else:
            early[k] = full(k)
        sch.closed(k, early[k])
    while True:
        batch_items = sch.next_batch()
        if not batch_items:
            break
        for k in batch_items:
            sch.release(k)
            early[k] = full(k)
            sch.closed(k, early[k])
    early.update(dict(sch.unjudged()))
    return [full(k) for k in range(len(items))], [early[k] for k in range(len(items))], sch


@pytest.mark.slow
def test_early_verdict_is_always_the_full_verdict() -> None:
    """≥ 1 000 random duels: random probe scores, gates and failures, judges that prefer
    either side with varying strength, toss coins or always tie; the early verdict never
    differs from the full one, and a stopped run proves its verdict."""
    rng = make_rng(24)
    stopped = ties = wins = 0
    saved = judged_total = compared = 0
    while compared < 1000:
        items, ans, verdicts, dims = _duel(rng)
        batch = int(rng.choice([2, 6, 16]))
        full_pairs, early_pairs, sch = _play(items, ans, verdicts, dims, batch=batch,
                                             n_boot=200)
        fa, fb = _ranges(full_pairs)
        if not fa:
            continue
        full = decide_ranges(fa, fb, labels=LABELS, n_boot=200)
        ea, eb = _ranges(early_pairs)
        early = decide_ranges(ea, eb, labels=LABELS, n_boot=200)
        assert early.winner == full.winner, (early.reason, full.reason)
        compared += 1
        rec = sch.record()
        if rec["stopped_early"]:
            stopped += 1
            assert early.early_stop is not None and early.early_stop["unjudged"] > 0
            assert rec["verdict"] == early.winner
            saved += rec["unjudged"]
        else:
            assert early == full  # everything judged: the very same decision
        judged_total += rec["needing_judge"]
        ties += full.winner == "tie"
        wins += full.winner != "tie"
    # Not vacuous: many duels stop early, and both outcomes occur often.
    assert stopped >= 300 and ties >= 150 and wins >= 300
    assert 0.05 < saved / judged_total < 0.9


def test_early_verdict_matches_at_the_full_bootstrap() -> None:
    """A few duels with the run's own bootstrap (2 000 resamples, the run's seed)."""
    rng = make_rng(2401)
    for _ in range(6):
        items, ans, verdicts, dims = _duel(rng)
        full_pairs, early_pairs, _ = _play(items, ans, verdicts, dims, batch=16, n_boot=2000)
        fa, fb = _ranges(full_pairs)
        if not fa:
            continue
        ea, eb = _ranges(early_pairs)
        assert decide_ranges(ea, eb, labels=LABELS).winner == decide_ranges(
            fa, fb, labels=LABELS).winner


def test_schedule_releases_batches_in_the_seeded_order() -> None:
    n = 40
    sch = JudgeSchedule(n, LABELS, batch=16, n_boot=50)
    u = SampleScore("x", "inc", None, {}, gate=1, unjudged=("tone",))
    pair = PairResult(_item(0), u, SampleScore("x", "chal", None, {}, gate=1,
                                               unjudged=("tone",)),
                      ClipAnalysis("x", "inc"), ClipAnalysis("x", "chal"))
    for k in range(n):
        sch.park(k, None, pair)  # type: ignore[arg-type]
    first = sch.next_batch()
    assert first == [i for i in judge_order(n) if i < n][:16]
    assert math.isclose(len(first), 16) and sch.record()["judged"] == 16
