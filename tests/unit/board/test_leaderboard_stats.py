"""The pure statistics of a leaderboard: cells, tiers, intervals, Bradley–Terry."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vocencebench.board.bradley_terry import BradleyTerry, bradley_terry
from vocencebench.board.cells import decide_pair, pair_order
from vocencebench.board.ranking import anchor_tiers, pooled_item_scores, rank, tiers
from vocencebench.decide import decide
from vocencebench.errors import ConfigError, ScoresError
from vocencebench.metrics import bootstrap_ci
from vocencebench.scores import PairedScores

# ------------------------------------------------------------------ cells


def _pair(x: str, y: str, a: list[float | None], b: list[float | None],
          incomplete: tuple[tuple[str, str], ...] = ()) -> PairedScores:
    return PairedScores(x, y, tuple(f"i{k}" for k in range(len(a))), tuple(a), tuple(b),
                      incomplete)


@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=12))
@settings(max_examples=30, deadline=None)
def test_a_cell_is_decide_bit_for_bit_and_its_winner_ignores_orientation(
        rows: list[tuple[float, float]]) -> None:
    a = [r[0] for r in rows]
    b = [r[1] for r in rows]
    cell = decide_pair(_pair("X", "Y", list(a), list(b)))
    assert cell.decision is not None
    assert cell.decision.to_dict() == decide(a, b, labels=("X", "Y")).to_dict()
    swapped = decide_pair(_pair("Y", "X", list(b), list(a)))
    assert swapped.winner == cell.winner
    assert swapped.lead_lcb("X") == cell.lead_lcb("X")
    assert swapped.lead_lcb("Y") == cell.lead_lcb("Y")
    assert cell.outcomes == (sum(x > y for x, y in rows), sum(x == y for x, y in rows),
                             sum(y > x for x, y in rows))


def test_an_incomplete_pair_decides_nothing_unless_allowed() -> None:
    a: list[float | None] = [0.9, 0.8, None, 0.7]
    b: list[float | None] = [0.1, 0.2, 0.3, 0.2]
    p = _pair("X", "Y", a, b, (("i2", "judge: HTTP 503 after 5 attempts"),))
    cell = decide_pair(p)
    assert cell.decision is None and cell.winner == "incomplete"
    assert cell.outcome_for("X") == cell.outcome_for("Y") == "incomplete"
    assert cell.incomplete is not None and "judge: HTTP 503" in cell.incomplete
    allowed = decide_pair(p, allow_incomplete=True)
    assert allowed.decision is not None and allowed.skipped == 1
    assert allowed.decision.to_dict() == decide([0.9, 0.8, 0.7], [0.1, 0.2, 0.2],
                                                labels=("X", "Y")).to_dict()
    nothing = decide_pair(_pair("X", "Y", [None], [0.5]), allow_incomplete=True)
    assert nothing.decision is None


def test_pair_order_and_orientation() -> None:
    assert pair_order(["A", "B", "C"]) == (("A", "B"), ("A", "C"), ("B", "C"))
    assert pair_order(["C", "A", "B"], anchor="C") == (("C", "A"), ("C", "B"))
    with pytest.raises(ConfigError, match="must come first"):
        pair_order(["A", "C"], anchor="C")
    with pytest.raises(ConfigError, match="duplicate"):
        pair_order(["A", "A"])
    with pytest.raises(ConfigError, match="at least two"):
        pair_order(["A"])
    with pytest.raises(ScoresError, match="twice"):
        _pair("A", "A", [0.1], [0.2])


# ------------------------------------------------------------------ tiers


def _reachable(names: list[str], beats: set[tuple[str, str]]) -> dict[str, set[str]]:
    out = {}
    for s in names:
        seen, todo = set(), [s]
        while todo:
            u = todo.pop()
            for w, lo in beats:
                if w == u and lo not in seen:
                    seen.add(lo)
                    todo.append(lo)
        out[s] = seen
    return out


def _check_tiers(names: list[str], beats: set[tuple[str, str]]) -> None:
    ts = tiers(names, beats)
    tier = {s: t.rank for t in ts for s in t.systems}
    # Every system exactly once; tiers numbered 1..T, none empty.
    assert sorted(tier) == sorted(names)
    assert sum(len(t.systems) for t in ts) == len(names)
    assert [t.rank for t in ts] == list(range(1, len(ts) + 1))
    assert all(t.systems for t in ts)
    reach = _reachable(names, beats)
    same = {(x, y) for x in names for y in names if x == y or (y in reach[x] and x in reach[y])}
    for w, lo in beats:
        # THE guarantee: nobody is ranked above a system that beats it ...
        assert tier[w] <= tier[lo]
        # ... and a win places the winner strictly higher unless both sit in one cycle.
        assert (tier[w] == tier[lo]) == ((w, lo) in same)
    for s in names:
        comp = {t for t in names if (s, t) in same}
        beaters = {w for w, lo in beats if lo in comp and w not in comp}
        # Only losses move a system down: its tier is exactly one below its lowest beater.
        assert tier[s] == 1 + max((tier[w] for w in beaters), default=0)
        assert all(tier[t] == tier[s] for t in comp)
    for t in ts:
        assert t.cycle == any(len({u for u in names if (s, u) in same}) > 1 for s in t.systems)


_OUTCOMES = ("first", "second", "tie", "incomplete", "not compared")


@pytest.mark.slow
@given(st.integers(2, 7).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.sampled_from(_OUTCOMES),
                                             min_size=n * (n - 1) // 2,
                                             max_size=n * (n - 1) // 2))))
@settings(max_examples=400, deadline=None)
def test_tiers_respect_every_verdict_on_random_matrices(case: tuple[int, list[str]]) -> None:
    n, outs = case
    names = [f"S{k}" for k in range(n)]
    beats: set[tuple[str, str]] = set()
    for (i, j), o in zip(itertools.combinations(range(n), 2), outs, strict=True):
        if o == "first":
            beats.add((names[i], names[j]))
        elif o == "second":
            beats.add((names[j], names[i]))
    _check_tiers(names, beats)
    # The tiers do not depend on the order the systems are listed in.
    shuffled = names[::-1]
    by_set = {frozenset(t.systems) for t in tiers(names, beats)}
    assert by_set == {frozenset(t.systems) for t in tiers(shuffled, beats)}


@pytest.mark.parametrize(("beats", "expected"), [
    # a strict chain
    ({("A", "B"), ("B", "C"), ("A", "C")}, [("A",), ("B",), ("C",)]),
    # a cycle of wins: no order exists, one tier
    ({("A", "B"), ("B", "C"), ("C", "A")}, [("A", "B", "C")]),
    # neighbours tie, distant systems are separated
    ({("A", "C"), ("A", "D"), ("B", "D")}, [("A", "B"), ("C", "D")]),
    # B ties everyone: only a loss moves a system down, so B stays on top
    ({("A", "C")}, [("A", "B"), ("C",)]),
    # nothing separates anyone
    (set(), [("A", "B", "C")]),
    # a cycle below a winner: D beats A, A > B > C > A
    ({("D", "A"), ("A", "B"), ("B", "C"), ("C", "A")}, [("D",), ("A", "B", "C")]),
])
def test_tier_examples(beats: set[tuple[str, str]], expected: list[tuple[str, ...]]) -> None:
    names = sorted({s for e in beats for s in e} | {"A", "B", "C"})
    got = tiers(names, beats)
    assert [set(t.systems) for t in got] == [set(e) for e in expected]
    _check_tiers(names, beats)


def test_within_a_tier_systems_are_listed_by_wins() -> None:
    got = tiers(["A", "B", "C", "D"], {("B", "D"), ("A", "D"), ("B", "C")})
    assert got[0].systems == ("B", "A")
    assert got[1].systems == ("C", "D")
    with pytest.raises(ConfigError, match="bad verdict edge"):
        tiers(["A", "B"], {("A", "Z")})


@pytest.mark.parametrize(("beats", "expected"), [
    # the audit's board: F and H beat the anchor X, E only ties it
    ({("F", "X"), ("H", "X")}, [("F", "H"), ("E", "X")]),  # listed by wins, then losses
    # one above, one level, one below
    ({("F", "X"), ("X", "H")}, [("F",), ("X", "E"), ("H",)]),
    # the anchor beats everyone
    ({("X", "E"), ("X", "F"), ("X", "H")}, [("X",), ("E", "F", "H")]),
    # nothing decided: everyone is indistinguishable from the anchor
    (set(), [("X", "E", "F", "H")]),
])
def test_anchor_tiers_read_beats_level_with_or_loses_to_the_anchor(
        beats: set[tuple[str, str]], expected: list[tuple[str, ...]]) -> None:
    """The all-pairs layering put a system that only tied the anchor (E) in tier 1, above
    the anchor and beside the systems that beat it."""
    names = ["X", "E", "F", "H"]
    got = anchor_tiers(names, "X", beats)
    assert [t.systems for t in got] == expected
    assert [t.rank for t in got] == list(range(1, len(expected) + 1))
    if beats == {("F", "X"), ("H", "X")}:
        assert set(tiers(names, beats)[0].systems) == {"E", "F", "H"}  # the old layering
    with pytest.raises(ConfigError, match="in anchor mode"):
        anchor_tiers(names, "X", {("E", "F")})  # a non-anchor pair is never decided


# ------------------------------------------------------------------ Bradley–Terry

_BT_SYSTEMS = ["A", "B", "C", "D"]
_BT_OUTCOMES = {("A", "B"): (6, 2, 2), ("A", "C"): (7, 1, 2), ("B", "C"): (4, 2, 4),
                ("C", "D"): (5, 0, 5), ("A", "D"): (9, 1, 0)}
# Pinned from this implementation; an independent likelihood maximisation (scipy BFGS on the
# same likelihood, below) agrees to 1e-7.
_BT_GOLDEN_LOG = {"A": 0.9281074272938593, "B": -0.0649053564918059,
                  "C": -0.25695107653739085, "D": -0.6062509942646626}
_BT_GOLDEN_P = {"A": 2.11440947518247, "B": 0.7833017987597876, "C": 0.6464347989142293,
                "D": 0.4558539271435132}


def test_bradley_terry_golden_values() -> None:
    bt = bradley_terry(_BT_SYSTEMS, _BT_OUTCOMES)
    assert bt.converged and bt.iterations == 51 and bt.note is None
    for s in _BT_SYSTEMS:
        assert bt.strength[s] == pytest.approx(_BT_GOLDEN_P[s], rel=1e-12)
        assert bt.log_strength[s] == pytest.approx(_BT_GOLDEN_LOG[s], rel=1e-12, abs=1e-14)
    assert math.fsum(bt.strength.values()) == pytest.approx(4.0, rel=1e-15)
    assert bt.order() == ("A", "B", "C", "D")
    assert bt.items == 50
    assert bt.p_beats("A", "D") == pytest.approx(2.11440947518247 / (2.11440947518247
                                                                     + 0.4558539271435132))
    # Deterministic: the same input gives the same bits.
    again = bradley_terry(_BT_SYSTEMS, dict(reversed(list(_BT_OUTCOMES.items()))))
    assert again.strength == bt.strength


def test_bradley_terry_matches_an_independent_maximum_likelihood_fit() -> None:
    np = pytest.importorskip("numpy")
    optimize = pytest.importorskip("scipy.optimize")
    pos = {s: k for k, s in enumerate(_BT_SYSTEMS)}

    def nll(theta: object) -> float:
        th = np.concatenate([[0.0], theta])
        total = 0.0
        for (x, y), (wx, t, wy) in _BT_OUTCOMES.items():
            i, j = pos[x], pos[y]
            lse = np.logaddexp(th[i], th[j])
            total += (wx + t / 2 + 0.5) * (th[i] - lse) + (wy + t / 2 + 0.5) * (th[j] - lse)
        return float(-total)

    res = optimize.minimize(nll, np.zeros(3), method="BFGS", options={"gtol": 1e-12})
    th = np.concatenate([[0.0], res.x])
    th -= th.mean()
    for s, k in pos.items():
        assert _BT_GOLDEN_LOG[s] == pytest.approx(float(th[k]), abs=1e-7)


def test_bradley_terry_edge_cases() -> None:
    # A sweep stays finite thanks to the virtual tie ...
    bt = bradley_terry(["A", "B"], {("A", "B"): (10, 0, 0)})
    assert bt.converged and bt.p_beats("A", "B") == pytest.approx(10.5 / 11)
    # ... and without it no finite fit exists: said, not crashed.
    none = bradley_terry(["A", "B"], {("A", "B"): (10, 0, 0)}, prior_ties=0)
    assert isinstance(none, BradleyTerry) and none.strength == {} and none.note
    assert "infinite" in none.note
    apart = bradley_terry(["A", "B", "C", "D"], {("A", "B"): (1, 0, 1), ("C", "D"): (1, 0, 1)})
    assert apart.note is not None and "connect" in apart.note
    with pytest.raises(ConfigError):
        bradley_terry(["A", "B"], {("A", "Z"): (1, 0, 1)})


# ------------------------------------------------------------------ standings


def test_rank_system_scores_use_the_decision_stream_and_pool_only_differing_values() -> None:
    rng = random.Random(7)
    a = [rng.random() for _ in range(9)]
    b = [min(1.0, x + 0.3 * rng.random()) for x in a]
    c = [rng.random() for _ in range(9)]
    names = ["A", "B", "C"]
    pairs = [_pair("A", "B", list(a), list(b)), _pair("A", "C", list(a), list(c)),
             _pair("B", "C", list(b), list(c))]
    st_ = rank(names, pairs)
    # Pair-independent scores: a system's mean is exactly the decision's mean, its interval
    # the 5th..95th percentile of the same resamples.
    cell = st_.cell("A", "B")
    assert cell is not None and cell.decision is not None
    sa = st_.scores["A"]
    assert sa is not None and sa.mean == cell.decision.mean_a and sa.pairs == 2
    ci = bootstrap_ci(a, level=0.90)
    assert (sa.low, sa.high, sa.n) == (ci.low, ci.high, 9)
    # A judge makes A's score depend on its opponent: the per-item mean over pairs is used.
    a2 = [min(1.0, x + 0.01) for x in a]
    pairs2 = [_pair("A", "B", list(a), list(b)), _pair("A", "C", list(a2), list(c)),
              _pair("B", "C", list(b), list(c))]
    st2 = rank(names, pairs2)
    items, vals = pooled_item_scores("A", pairs2, st2.cells)
    assert items == tuple(f"i{k}" for k in range(9))
    assert list(vals) == [math.fsum([x, y]) / 2 for x, y in zip(a, a2, strict=True)]
    with pytest.raises(ConfigError, match="do not follow"):
        rank(names, pairs[::-1])


def test_rank_with_an_incomplete_pair_and_anchor_mode() -> None:
    names = ["A", "B", "C"]
    hi, lo = [0.9] * 8, [0.1] * 8
    pairs = [_pair("A", "B", list(hi), list(lo)),
             _pair("A", "C", list(hi), [0.1] * 7 + [None], (("i7", "probes: crashed"),)),
             _pair("B", "C", list(lo), list(lo))]
    st_ = rank(names, pairs)
    assert st_.outcome("A", "B") == "win" and st_.outcome("C", "A") == "incomplete"
    assert not st_.complete
    # The incomplete pair adds no edge: only A > B separates anyone.
    assert [set(t.systems) for t in st_.tiers] == [{"A", "C"}, {"B"}]
    assert st_.records["C"].incomplete == 1 and st_.records["A"].wins == 1
    doc = st_.to_dict()
    assert doc["pairs"][1]["status"] == "incomplete" and doc["pairs"][1]["decision"] is None
    assert doc["matrix"]["cells"][0] == ["self", "win", "incomplete"]
    anchored = rank(["C", "A", "B"], [_pair("C", "A", list(lo), list(hi)),
                                      _pair("C", "B", list(lo), list(lo))], anchor="C")
    assert anchored.outcome("A", "B") == "not compared"
    assert anchored.records["A"].not_compared == 1
    assert anchored.mode == "anchor"


def test_one_pairing_type_serves_the_scores_file_and_the_leaderboard(tmp_path: Path) -> None:
    """``ScoresTable.pair`` and a leaderboard cell read the same :class:`PairedScores`: an
    incomplete item stays in place with S None and its reason, the file's decision and the
    cell's are the same numbers, and only the file's reason counts what was left out."""
    import json

    from vocencebench.scores import read_scores

    rows = []
    for k, (x, y) in enumerate([(0.2, 0.9), (0.3, 0.8), (None, 0.7), (0.25, 0.95)]):
        rows.append({"item": f"i{k}", "system": "X", "S": x,
                     **({"incomplete": "judge: HTTP 503"} if x is None else {})})
        rows.append({"item": f"i{k}", "system": "Y", "S": y})
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    table = read_scores(path)
    with pytest.raises(ScoresError, match="incomplete"):
        table.pair("X", "Y")
    paired = table.pair("X", "Y", allow_incomplete=True)
    assert paired.items == ("i0", "i1", "i2", "i3") and paired.a[2] is None
    assert paired.incomplete == (("i2", "judge: HTTP 503"),) and not paired.complete
    assert decide_pair(paired).incomplete == "INCOMPLETE: i2: judge: HTTP 503"
    cell = decide_pair(paired, allow_incomplete=True)
    from_file = paired.decide()
    assert cell.skipped == 1 and cell.decision is not None
    assert cell.decision.winner == from_file.winner == "Y"
    assert (cell.decision.lcb, cell.decision.margin) == (from_file.lcb, from_file.margin)
    assert from_file.reason.startswith("decided on 3 of 4 items; 1 incomplete: judge: 1;")
    assert from_file.reason.endswith(cell.decision.reason)
