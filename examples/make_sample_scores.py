"""Generate ``examples/sample_scores.jsonl``: a per-sample scores file for two simulated systems.

The measurements are *simulated* (no audio is synthesised): for 60 voice requests drawn by the
corpus's balanced sampler, each system "realises" every requested trait with its own hit
rates, an age error in years, judge rubric scores (0–3) for tone and naturalness, and a word
error rate. Everything after the simulated measurement is the library's real arithmetic:
``desirability`` per dimension, the WER ``gate``, the geometric ``composite`` S, and
``write_scores``. The file therefore has the exact shape the benchmark writes, and
``vocencebench decide examples/sample_scores.jsonl`` recomputes a real verdict from it.

Systems: ``flat-v1`` (incumbent) follows instructions poorly; ``steer-v2`` (challenger)
follows them much better but is slightly less intelligible on hard items. Each item also has a
shared difficulty that lowers both systems' hit rates, which is why the paired bootstrap
(differences per item) is the right test.

Run:  python examples/make_sample_scores.py [--out PATH] [--n 60] [--seed 20260501]
The output is deterministic for a given NumPy release (the simulation uses
``numpy.random.default_rng``; the *decision* arithmetic never does).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vocencebench.corpus import balanced_assignment
from vocencebench.decide import composite, desirability, gate
from vocencebench.errors import VocenceError
from vocencebench.schema import SampleScore
from vocencebench.scores import write_scores
from vocencebench.traits import NATURALNESS, TRAITS


#: Per-system simulation parameters. ``hit``: probability that a categorical/ordinal trait
#: comes out exactly as requested (before the item's difficulty); ``age_sd``: spread of the
#: perceived age error in years; ``rubric``: probabilities of judge scores 0, 1, 2, 3;
#: ``wer``: mean word error rate (fraction) on easy/normal and on hard items.
@dataclass(frozen=True)
class SimulatedSystem:
    hit: float
    age_sd: float
    tone: tuple[float, float, float, float]
    naturalness: tuple[float, float, float, float]
    wer: tuple[float, float]


SYSTEMS: dict[str, SimulatedSystem] = {
    "flat-v1": SimulatedSystem(
        hit=0.62, age_sd=13.0, tone=(0.10, 0.35, 0.40, 0.15),
        naturalness=(0.05, 0.20, 0.50, 0.25), wer=(0.04, 0.10),
    ),
    "steer-v2": SimulatedSystem(
        hit=0.90, age_sd=6.0, tone=(0.05, 0.20, 0.45, 0.30),
        naturalness=(0.05, 0.20, 0.45, 0.30), wer=(0.05, 0.12),
    ),
}


def _measure_label(values: tuple[str, ...], requested: str, p_hit: float, ordinal: bool,
                   rng: np.random.Generator) -> str:
    if rng.random() < p_hit:
        return requested
    others = [v for v in values if v != requested]
    if ordinal:
        i = values.index(requested)
        near = [v for v in others if abs(values.index(v) - i) == 1]
        if near and rng.random() < 0.8:
            return near[int(rng.integers(len(near)))]
    return others[int(rng.integers(len(others)))]


def simulate(n: int, seed: int) -> list[SampleScore]:
    """Rows for every item, both systems, item by item (that order is the pairing order)."""
    rng = np.random.default_rng(seed)
    slots = balanced_assignment(n, seed=3151662)
    rows: list[SampleScore] = []
    for slot in slots:
        item_difficulty = float(rng.uniform(0.0, 0.25))  # shared by both systems
        for system, par in SYSTEMS.items():
            p_hit = par.hit - item_difficulty
            d: dict[str, float] = {}
            for trait in TRAITS:
                req = slot.traits[trait.name]
                if trait.scoring == "numeric":
                    age = float(req) + float(rng.normal(0.0, par.age_sd))
                    d[trait.name] = desirability(trait, max(age, 3.0), req)
                elif trait.scoring == "rubric":
                    score = int(rng.choice(4, p=par.tone))
                    d[trait.name] = desirability(trait, score)
                else:
                    got = _measure_label(trait.values, req, p_hit,
                                         trait.scoring == "ordinal", rng)
                    d[trait.name] = desirability(trait, got, req)
            nat = int(rng.choice(4, p=par.naturalness))
            d[NATURALNESS] = nat / 3
            wer_mean = par.wer[1 if slot.difficulty == 2 else 0]
            wer = round(float(rng.exponential(wer_mean)), 4)
            g = gate(wer)
            rows.append(SampleScore(item=slot.id, system=system, S=composite(d, g), d=d,
                                    gate=g, wer=wer))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("sample_scores.jsonl"))
    ap.add_argument("--n", type=int, default=60, help="items (default 60; at least 15)")
    ap.add_argument("--seed", type=int, default=20260501, help="simulation seed")
    args = ap.parse_args()
    try:  # one error line, never a traceback
        rows = simulate(args.n, args.seed)
    except VocenceError as exc:  # --n below what the balanced sampler needs
        ap.error(f"--n {args.n}: {exc}")
    try:
        count = write_scores(rows, args.out)
    except (VocenceError, OSError) as exc:
        ap.error(f"cannot write {args.out}: {getattr(exc, 'strerror', None) or exc}")
    print(f"wrote {count} rows to {args.out}")


if __name__ == "__main__":
    main()
