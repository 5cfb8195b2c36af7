"""Verdict robustness (vocencebench.robustness): the exact fast arithmetic equals the rule's
bit for bit, and the section says what the variants do on hand-made duels."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from repo_paths import DATA, ROOT
from seeding import make_rng
from vocencebench import robustness as R
from vocencebench.constants import (
    EPSILON,
    ROBUSTNESS_EPSILONS,
    ROBUSTNESS_SEED,
    ROBUSTNESS_TAUS,
    ROBUSTNESS_WEIGHT_DRAWS,
    WER_THRESHOLD,
)
from vocencebench.decide import bootstrap_means, composite, decide, lower_confidence_bound
from vocencebench.errors import ScoresError
from vocencebench.robustness import _exact
from vocencebench.schema import SampleScore, dumps_canonical

#: The demo's scores.jsonl (espeak-flat vs espeak-follow, 496 items), pinned by its sha256.
DEMO_SCORES = DATA / "demo_scores.jsonl"
DEMO_SHA256 = "fde8617ec7dff1efddd8e9b573b5b851ed376b31c3a3c18c29a5a1a5455b6c1a"


def _bits(x: np.ndarray) -> list[int]:
    return np.ascontiguousarray(x, dtype=np.float64).view(np.uint64).ravel().tolist()


def _sample(item: str, system: str, d: dict[str, float], *, wer: float | None = None,
            tau: float = WER_THRESHOLD, failure: str | None = None) -> SampleScore:
    if failure is not None:
        return SampleScore(item, system, 0.0, {}, failure=failure)
    g = None if wer is None else (1 if wer <= tau else 0)
    return SampleScore(item, system, composite(d, g), d, gate=g, wer=wer)


def _write(path: Path, pairs: list[tuple[SampleScore, SampleScore]]) -> Path:
    path.write_text("".join(dumps_canonical(s.to_dict()) + "\n" for p in pairs for s in p),
                    encoding="utf-8")
    return path


def _variant(r: R.Robustness, key: str) -> R.Variant:
    return next(v for v in r.variants if v.key == key)


# ------------------------------------------------------------------ exact arithmetic


def _s_like(rng: np.random.Generator, n: int, eps: float) -> np.ndarray:
    """Composites as a run makes them: 0 for a vetoed clip, else a geometric mean ≥ ε."""
    d = rng.choice([0.0, 0.5, 1.0, float(rng.uniform())], size=(n, 4))
    s = np.array([composite(list(r), 1, epsilon=eps) for r in d.tolist()])
    return np.where(rng.random(n) < 0.1, 0.0, s)


@pytest.mark.parametrize("n", [1, 2, 7, 37, 496, 1001])
def test_fast_means_equal_the_rules_fsum_means_bit_for_bit(
    n: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = make_rng(n)
    cols = [_s_like(rng, n, eps) - _s_like(rng, n, eps) for eps in ROBUSTNESS_EPSILONS]
    cols += [rng.uniform(-1, 1, n), np.zeros(n), rng.uniform(0, 1, n) * 1e-3]
    for tiny in (2.0**-70, 3 * 2.0**-110):  # two nearly equal clips: 3 and 4 limbs
        col = rng.uniform(-1, 1, n)
        col[n // 2] = tiny
        cols.append(col)
    deltas = np.stack(cols, axis=1)
    slow_calls: list[int] = []
    real = _exact.bootstrap_means

    def counted(*args: Any, **kw: Any) -> np.ndarray:
        slow_calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(_exact, "bootstrap_means", counted)
    got = R.exact_bootstrap_means(deltas, n_boot=64)
    assert slow_calls == []  # every one of these columns took the fast path
    for v in range(deltas.shape[1]):
        assert _bits(got[v]) == _bits(bootstrap_means(deltas[:, v], n_boot=64)), v


@pytest.mark.slow
def test_fast_means_at_the_rules_n_boot_and_the_slow_path_for_what_does_not_fit() -> None:
    rng = make_rng(496)
    n = 496
    wide = rng.uniform(-1, 1, n)
    wide[3] = 2.0**-200  # the integers would need ~250 bits: the exact slow path
    negzero = rng.uniform(-1, 1, n)
    negzero[5] = -0.0
    deltas = np.stack([_s_like(rng, n, EPSILON) - _s_like(rng, n, EPSILON), wide, negzero], 1)
    got = R.exact_bootstrap_means(deltas)
    for v in range(3):
        assert _bits(got[v]) == _bits(bootstrap_means(deltas[:, v])), v
    assert _bits(R.exact_bootstrap_means(deltas, fast=False)) == _bits(got)


def test_exact_row_sums_equal_fsum_on_random_and_adversarial_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = make_rng(7)
    rows = [rng.uniform(-1, 1, (2000, k)) * 10.0 ** rng.integers(-30, 30, (2000, k))
            for k in (1, 2, 3, 6, 9)]
    # Weighted logs, as the flip rate makes them.
    w = rng.dirichlet(np.ones(6), 3000)
    logs = np.log(np.maximum(rng.choice([0.0, 0.5, 1.0, 1 / 3, 2 / 3], (3000, 6)), EPSILON))
    rows.append(w * logs)
    u = 2.0**-53
    ties = np.array([[1.0, u, 0.0], [1.0, u, u**2], [1.0, u, -(u**2)], [1.0, -u / 2, 0.0],
                     [1e16, 1.0, -1e16], [0.5, -(u**2), 0.0], [3.0, u, u],
                     [0.0, 0.0, 0.0], [2.0**-1074, 2.0**-1074, -(2.0**-1074)],
                     [1.0, 3 * u, 0.0], [-1.0, -u, 0.0], [1.0 + 2 * u, u, 0.0]])
    rows.append(ties)
    calls: list[int] = []
    real = math.fsum

    def counted(x: Any) -> float:
        calls.append(1)
        return real(x)

    monkeypatch.setattr(math, "fsum", counted)
    total = 0
    for p in rows:
        got = R.exact_row_sums(p)
        total += p.shape[0]
        assert _bits(got) == _bits(np.array([real(r) for r in p.tolist()]))
    monkeypatch.undo()
    assert 0 < len(calls) < total / 20  # a certified fast path, and fsum near the ties only


@pytest.mark.parametrize("n_boot", [1, 2, 3, 20, 21, 2000])
def test_the_lcbs_of_a_matrix_are_the_rules_row_by_row(n_boot: int) -> None:
    scale = 10.0 ** make_rng(1).integers(-8, 2, 40)[:, None]
    m = make_rng(n_boot).normal(size=(40, n_boot)) * scale
    m[0] = 0.25  # ties
    want = ([lower_confidence_bound(r) for r in m], [lower_confidence_bound(-r) for r in m])
    assert R._lcbs(m.copy()) == want


def test_exact_means_are_fsum_over_n() -> None:
    rng = make_rng(4)
    x = np.stack([_s_like(rng, 333, EPSILON), rng.uniform(0, 1, 333), np.zeros(333),
                  np.r_[rng.uniform(0, 1, 332), 2.0**-300]], axis=1)
    got = R.exact_means(x)
    assert _bits(got) == _bits(np.array([math.fsum(c) / 333 for c in x.T.tolist()]))


def test_equal_composites_are_the_rules_composite() -> None:
    rng = make_rng(9)
    dims = ["age", "gender", "pace", "pitch", "tone"]
    rows = [tuple((k, float(rng.choice([0.0, 0.5, 1.0, float(rng.uniform())])))
                  for k in dims if rng.random() < 0.85) for _ in range(400)]
    rows.append(())
    for eps in ROBUSTNESS_EPSILONS:
        tables = R.equal_composites(rows, dims, epsilon=eps, drops=(None, *dims))
        for drop, got in zip((None, *dims), tables, strict=True):
            want = [composite({k: v for k, v in r if k != drop}, 1, epsilon=eps) for r in rows]
            assert _bits(got) == _bits(np.array(want)), (eps, drop)


def test_a_vectorised_composite_that_disagrees_is_dropped_for_the_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pairs = _leave_pace_out_flips(25)
    want = R.robustness(pairs, labels=("steady", "paced"), draws=4).to_json()
    real = R.equal_composites
    monkeypatch.setattr(R, "equal_composites",
                        lambda *a, **k: [np.nextafter(t, 0.0) for t in real(*a, **k)])
    assert R.robustness(pairs, labels=("steady", "paced"), draws=4).to_json() == want


def test_weight_draws_are_the_documented_function_of_the_raw_stream() -> None:
    e = R.weight_draws(4, draws=3, seed=ROBUSTNESS_SEED)
    raw = np.random.PCG64(ROBUSTNESS_SEED).random_raw(12).tolist()
    want = [0.0 - math.log(((r >> 11) + 1) * 2.0**-53) for r in raw]
    assert e.ravel().tolist() == want
    assert e.shape == (3, 4) and (e >= 0).all()


def test_weighted_composite_is_fsum_of_weighted_logs_then_exp() -> None:
    dims = ["gender", "pace", "pitch"]
    rows = [(("gender", 1.0), ("pace", 0.5), ("pitch", 0.0)), (("pace", 0.5),)]
    e = R.weight_draws(3, draws=5, seed=11)
    got = R.weighted_composites(rows, dims, e)
    for t, er in enumerate(e.tolist()):
        w = [x / math.fsum(er) for x in er]
        want0 = min(1.0, math.exp(math.fsum(
            wj * math.log(max(v, EPSILON)) for wj, v in zip(w, (1.0, 0.5, 0.0), strict=True))))
        assert got[t, 0] == want0
        # A clip scored on pace only: its own dimension's weight, renormalised (= 1).
        assert got[t, 1] == min(1.0, math.exp(math.fsum([er[1] / math.fsum([er[1]])
                                                          * math.log(0.5)])))


# ------------------------------------------------------------------ the section


def _leave_pace_out_flips(n: int = 60, seed: int = 5) -> list[tuple[SampleScore, SampleScore]]:
    """b follows the pace requests, a never does; elsewhere they are the same clip."""
    rng = make_rng(seed)
    pairs = []
    for i in range(n):
        same = {"gender": float(rng.choice([0.5, 1.0])), "pitch": float(rng.choice([0.5, 1.0]))}
        a = _sample(f"it-{i:03d}", "steady", {**same, "pace": float(rng.choice([0.0, 0.5]))})
        b = _sample(f"it-{i:03d}", "paced", {**same, "pace": 1.0})
        pairs.append((a, b))
    return pairs


def test_leaving_a_dimension_out_flips_the_winner_and_the_line_names_it(tmp_path: Path) -> None:
    pairs = _leave_pace_out_flips()
    r = R.robustness_of_file(_write(tmp_path / "scores.jsonl", pairs))
    assert r.winner == "paced" and r.robust is False
    pace = _variant(r, "leave-out:pace")
    assert pace.computed and pace.winner == "tie" and pace.holds is False
    assert pace.lcb == 0.0 and pace.mean_a == pace.mean_b  # identical clips without pace
    others = [v for v in r.variants if v.computed and v.key != "leave-out:pace"]
    assert others and all(v.holds for v in others)
    assert r.summary.startswith("fragile: the winner flips when pace is left out (→ tie); "
                                f"it holds in {len(others)} of {len(others) + 1} variants")
    assert r.counts["flipped"] == 1 and r.counts["held"] == len(others)
    # The headline is the rule's verdict on the stored S, untouched.
    d = decide([a.S for a, _ in pairs], [b.S for _, b in pairs],  # type: ignore[misc]
               labels=("steady", "paced"))
    assert r.winner == d.winner
    eps = _variant(r, f"epsilon:{EPSILON!r}")  # recomputed from d: the rule's numbers exactly
    assert (eps.winner, eps.lcb, eps.lcb_reverse, eps.margin, eps.margin_reverse,
            eps.mean_a, eps.mean_b) == (d.winner, d.lcb, d.lcb_reverse, d.margin,
                                        d.margin_reverse, d.mean_a, d.mean_b)
    assert eps.rule and r.recomputed == {"clips": 2 * len(pairs), "exact": 2 * len(pairs)}


def test_a_run_without_wer_says_the_gate_variants_cannot_be_computed() -> None:
    r = R.robustness(_leave_pace_out_flips(), labels=("steady", "paced"))
    gates = [v for v in r.variants if v.group in ("tau", "gate-off")]
    assert [v.key for v in gates] == [f"tau:{t!r}" for t in ROBUSTNESS_TAUS] + ["gate-off"]
    assert all(not v.computed and v.winner is None and "no clip has a WER" in (v.note or "")
               for v in gates)
    assert "5 variants cannot be computed (τ, gate off): no clip has a WER" in r.summary
    assert r.counts["not_computed"] == 5


def _gate_duel() -> list[tuple[SampleScore, SampleScore]]:
    """b's clips are perfect but its recogniser WER is 0.12 (passes τ = 0.15, fails 0.10);
    a's are worse and perfectly intelligible. One item both fail at 0.15 and the judge never
    heard (no tone)."""
    pairs = []
    for i in range(50):
        a = _sample(f"g-{i:02d}", "clear", {"pace": 0.5, "pitch": 0.5, "tone": 1.0}, wer=0.0)
        b = _sample(f"g-{i:02d}", "mumbly", {"pace": 1.0, "pitch": 1.0, "tone": 1.0},
                    wer=0.12)
        pairs.append((a, b))
    pairs.append((_sample("g-50", "clear", {"pace": 1.0, "pitch": 1.0}, wer=0.25),
                  _sample("g-50", "mumbly", {"pace": 1.0, "pitch": 0.5}, wer=0.25)))
    return pairs


def test_a_gate_threshold_flips_the_winner(tmp_path: Path) -> None:
    r = R.robustness_of_file(_write(tmp_path / "s.jsonl", _gate_duel()))
    assert r.winner == "mumbly"
    low = _variant(r, "tau:0.1")
    assert low.computed and low.winner == "clear" and low.holds is False
    assert low.mean_b == 0.0  # every clip of b is vetoed at τ = 0.10
    for key in ("tau:0.15", "tau:0.2", "tau:0.3", "gate-off"):
        assert _variant(r, key).holds, key
    assert _variant(r, "tau:0.15").rule and _variant(r, "tau:0.15").note is None
    for key in ("tau:0.3", "gate-off"):  # g-50 passes there, and was never judged
        assert "2 clip(s) vetoed in the run but passing here were never scored on tone" in (
            _variant(r, key).note or "")
    done = [v for v in r.variants if v.computed]
    assert len(done) == len(r.variants) == 3 + 3 + 5
    assert r.summary.startswith("fragile: the winner flips at τ = 0.10 (→ clear wins); it "
                                f"holds in {len(done) - 1} of {len(done)} variants")
    assert "cannot be computed" not in r.summary


def test_scores_whose_s_does_not_follow_from_d_refuse_the_d_variants(tmp_path: Path) -> None:
    pairs = _leave_pace_out_flips(20)
    a, b = pairs[4]
    pairs[4] = (SampleScore(a.item, a.system, 0.9, a.d), b)  # hand-edited S
    r = R.robustness(pairs, labels=("steady", "paced"))
    assert r.robust is None and r.summary.startswith("not computed: item 'it-004' (steady) "
                                                     "has S = 0.9 but composite(d, gate)")
    assert not any(v.computed for v in r.variants) and r.weights is not None
    assert not r.weights.computed


def test_system_failures_stay_zero_and_an_incomplete_run_is_not_tested() -> None:
    pairs = _leave_pace_out_flips(30)
    a, b = pairs[2]
    pairs[2] = (_sample(a.item, a.system, {}, failure="synthesis: boom"), b)
    r = R.robustness(pairs, labels=("steady", "paced"))
    assert all(v.mean_a is None or v.mean_a < 1 for v in r.variants)
    assert r.recomputed["clips"] == 59
    from synthetic_run import make_head2head

    h = make_head2head(12, incomplete_items=(3,))
    assert h.decision.winner == "incomplete"
    assert h.robustness.summary.startswith("not computed: the run is incomplete (1 of 12")
    assert h.robustness.robust is None


def test_fast_and_slow_paths_give_the_same_section() -> None:
    pairs = _gate_duel()[:20] + _gate_duel()[-1:]
    fast = R.robustness(pairs, labels=("clear", "mumbly"), draws=12)
    slow = R.robustness(pairs, labels=("clear", "mumbly"), draws=12, fast=False)
    assert fast.to_json() == slow.to_json()
    assert fast.weights is not None and fast.weights.draws == 12


@pytest.mark.slow
def test_the_section_is_the_same_bytes_in_another_process(tmp_path: Path) -> None:
    path = _write(tmp_path / "scores.jsonl", _gate_duel())
    here = R.robustness_of_file(path).to_json()
    code = ("import sys; from vocencebench.robustness import robustness_of_file; "
            "sys.stdout.write(robustness_of_file(sys.argv[1]).to_json())")
    outs = [subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                           capture_output=True, text=True, cwd=ROOT).stdout for _ in range(2)]
    assert outs[0] == outs[1] == here


def test_a_fast_path_that_disagrees_with_decide_is_dropped_for_the_slow_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A BLAS that is not a sum of products would move the headline's bits: the section
    notices (the headline is also decide()'s) and computes everything the slow way."""
    pairs = _gate_duel()[:15]
    want = R.robustness(pairs, labels=("clear", "mumbly"), draws=6, fast=False)
    real = R.exact_bootstrap_means

    def broken(deltas: np.ndarray, **kw: Any) -> np.ndarray:
        out = real(deltas, **kw)
        return out if kw.get("fast") is False else np.nextafter(out, 2.0)

    monkeypatch.setattr(R, "exact_bootstrap_means", broken)
    assert R.robustness(pairs, labels=("clear", "mumbly"), draws=6).to_json() == want.to_json()


def test_the_section_has_every_frozen_number() -> None:
    r = R.robustness(_leave_pace_out_flips(10), labels=("steady", "paced"))
    data = json.loads(r.to_json())
    assert data["kind"] == "robustness" and data["epsilons"] == list(ROBUSTNESS_EPSILONS)
    assert data["taus"] == list(ROBUSTNESS_TAUS)
    assert data["weights"]["draws"] == ROBUSTNESS_WEIGHT_DRAWS == 1000
    assert data["weights"]["seed"] == ROBUSTNESS_SEED
    assert data["counts"]["variants"] == 3 + len(ROBUSTNESS_EPSILONS) + len(ROBUSTNESS_TAUS) + 1


@pytest.mark.slow
def test_the_demos_section_says_robust() -> None:
    assert hashlib.sha256(DEMO_SCORES.read_bytes()).hexdigest() == DEMO_SHA256
    r = R.robustness_of_file(DEMO_SCORES)
    assert r.winner == "espeak-follow" and r.robust is True
    assert r.summary.startswith("robust: the winner holds in all 7 variants and under 1000 of "
                                "1000 random dimension weightings; 5 variants cannot be "
                                "computed (τ, gate off)")
    assert r.dimensions == ("gender", "loudness", "pace", "pitch")
    assert r.recomputed == {"clips": 992, "exact": 992}


def test_a_row_whose_gate_contradicts_its_wer_is_refused(tmp_path: Path) -> None:
    # wer 0.9 with gate 1: the rule's own τ variant re-gated it to 0 and named the other
    # winner, beside a headline that took the gate as given.
    pairs = [(_sample(f"x{i:02d}", "a", {"pace": 0.5}, wer=0.0),
              _sample(f"x{i:02d}", "b", {"pace": 1.0}, wer=0.05)) for i in range(12)]
    a, b = pairs[3]
    pairs[3] = (a, SampleScore(b.item, b.system, b.S, b.d, gate=1, wer=0.9))
    with pytest.raises(ScoresError, match=r"scores\.jsonl:8: gate 1 contradicts wer 0\.9 "
                       r"\(the gate is 1 when WER ≤ τ = 0\.15, else 0\)"):
        R.robustness_of_file(_write(tmp_path / "scores.jsonl", pairs))
