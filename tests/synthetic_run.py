"""A realistic :class:`Head2Head` built without audio, for report tests.

Items, probe results, judge verdicts and one synthesis failure are drawn from a seeded RNG;
each pair is folded with :func:`vocencebench.pair.combine` and the duel decided with
:func:`vocencebench.scores.decide_pairs`, exactly as :func:`vocencebench.compare.benchmark`
does after measuring real clips. ``incomplete_items`` makes the judge fail on those items
(an instrument failure: the run is INCOMPLETE unless ``allow_incomplete``). Run as a script
to write a run directory:

    .venv/bin/python tests/synthetic_run.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from seeding import make_rng
from vocencebench.constants import BOOTSTRAP_N, BOOTSTRAP_SEED
from vocencebench.decide import desirability
from vocencebench.pair import ClipAnalysis, PairResult, combine, covered_dimensions
from vocencebench.result import Head2Head
from vocencebench.schema import Item, ProbeResult, Verdict
from vocencebench.scores import decide_pairs
from vocencebench.traits import NATURALNESS, TRAITS

LABELS = ("flat-v1", "steer-v2")
JUDGE_MODEL = "gemini-2.5-flash"
PROMPT_VERSION = "vb-judge-2026.11-v1"
STATUS = [
    "intelligibility gate OFF: no transcriber given, so WER is not measured and no clip is "
    "vetoed for saying the wrong words; pass a transcriber to turn it on: --asr "
    "whisper:tiny.en (whisper_transcriber(\"tiny.en\"), extra whisper-offline) is a real but "
    "weak offline gate, whisper:large-v3 the recommended one",
    f"judge: {JUDGE_MODEL} (prompt {PROMPT_VERSION})",
    "probes: gender@1, pitch@1, pace@1, loudness@1, age@1",
    "NOT MEASURED (no probe): emotion, accent",
]
_PROBED = ("gender", "age", "pace", "pitch", "loudness")
_UNITS = {"gender": "", "age": "years", "pace": "phones/s", "pitch": "Hz", "loudness": "LUFS"}
_SCRIPTS = (
    "The quarterly figures arrive on Thursday, so please keep the afternoon free.",
    "Turn left at the old mill and follow the river until you see the bridge.",
    "She sells sea shells by the sea shore, and the shells she sells are surely seashells.",
    "Call 0800 555 0199 before nine thirty to confirm your appointment.",
    "Visit example dot org slash help for the full list of instructions.",
    "Although the storm, which had raged all night, was over, the roads stayed closed.",
)


def _measure(rng: np.random.Generator, trait: str, requested: str, skill: float) -> ProbeResult:
    """A plausible measurement: right with probability ``skill``, else a near miss."""
    t = TRAITS.get(trait)
    if t.scoring == "numeric":
        r = float(requested)
        err = rng.normal(0.0, 5.0 if rng.random() < skill else 14.0)
        value = float(np.clip(r + err, 5.0, 90.0))
        label = f"{value:.0f}"
        d = desirability(trait, value, requested)
        return ProbeResult(trait, value, "years", label, d, f"{trait}@1")
    if rng.random() < skill:
        label = requested
    else:
        others = [v for v in t.values if v != requested]
        if t.scoring == "ordinal":  # misses are mostly one bucket away
            i = t.values.index(requested)
            near = [v for v in others if abs(t.values.index(v) - i) == 1]
            others = near if rng.random() < 0.75 else others
        label = others[int(rng.integers(len(others)))]
    value: float | str = label
    if trait == "pitch":
        value = float(rng.normal({"low": 110, "medium": 160, "high": 230}[label], 12))
    elif trait == "pace":
        value = float(rng.normal({"slow": 3.2, "moderate": 4.4, "fast": 5.8}[label], 0.3))
    elif trait == "loudness":
        value = float(rng.normal({"quiet": -30, "normal": -23, "loud": -16}[label], 1.5))
    d = desirability(trait, label, requested)
    return ProbeResult(trait, value, _UNITS[trait], label, d, f"{trait}@1",
                       detail={"heuristic": trait == "gender"})


def _analysis(rng: np.random.Generator, item: Item, system: str, skill: float) -> ClipAnalysis:
    probes = {t: _measure(rng, t, item.traits[t], skill) for t in _PROBED}
    return ClipAnalysis(
        item.id, system, sha256=f"{int(rng.integers(1 << 62)):064x}",
        duration=float(rng.uniform(2.5, 7.5)), probes=probes,
        quality={"dnsmos_ovrl": float(rng.uniform(2.6, 3.6))},
    )


def _verdict(rng: np.random.Generator, dim: str, a: float, b: float) -> Verdict:
    sa = float(np.clip(round(a + rng.normal(0, 0.5)) / 1.0, 0, 3))
    sb = float(np.clip(round(b + rng.normal(0, 0.5)) / 1.0, 0, 3))
    winner = "b" if sb > sa else "a" if sa > sb else "tie"
    return Verdict(winner, sa, sb, "flat, read-aloud delivery", "audible shift toward the brief",
                   0.8, bool(rng.random() < 0.85), dim, JUDGE_MODEL, PROMPT_VERSION)


def make_items(n: int, rng: np.random.Generator) -> list[Item]:
    """``n`` corpus items with every trait requested (seeded)."""
    items = []
    for i in range(n):
        traits = {t.name: t.values[int(rng.integers(len(t.values)))] for t in TRAITS}
        instruction = (f"A {traits['age']}-year-old {traits['gender']} voice, {traits['pace']} "
                       f"and {traits['loudness']}, {traits['pitch']} pitch, sounding "
                       f"{traits['emotion']} with a {traits['accent']} accent and a "
                       f"{traits['tone']} tone.")
        diff = int(rng.integers(3))
        cat = "everyday" if diff < 2 else ("tongue_twister", "numbers", "urls",
                                           "nested_clauses")[i % 4]
        items.append(Item(f"vb-{i + 1:05d}", instruction, _SCRIPTS[i % len(_SCRIPTS)], traits,
                          diff, cat))
    return items


def make_head2head(
    n: int = 40,
    seed: int = 20261130,
    *,
    labels: tuple[str, str] = LABELS,
    skill_a: float = 0.45,
    skill_b: float = 0.75,
    incomplete_items: tuple[int, ...] = (),
    allow_incomplete: bool = False,
) -> Head2Head:
    """A synthetic but internally consistent duel; by default B follows instructions better.

    ``skill_a`` / ``skill_b`` are each system's chance (0–1) of realising a trait exactly;
    on the items at ``incomplete_items`` (positions) the judge fails on tone (HTTP 503).
    """
    rng = make_rng(seed)
    items = make_items(n, rng)
    la, lb = labels
    judged_a, judged_b = 0.6 + 2 * skill_a, 0.6 + 2 * skill_b  # rubric means, 0–3
    pairs: list[PairResult] = []
    for k, item in enumerate(items):
        an_a = _analysis(rng, item, la, skill=skill_a)
        an_b = _analysis(rng, item, lb, skill=skill_b)
        if k == 7:  # one synthesis failure on the incumbent: S = 0 with the reason kept
            an_a = ClipAnalysis(item.id, la, failure=f"synthesis: {la} failed on "
                                f"{item.id}: TimeoutError: no audio after 300 s")
        verdicts: dict[str, Verdict] = {}
        judge_failures: dict[str, str] = {}
        if an_a.failure is None:
            for dim in TRAITS.judged_dimensions():
                if k in incomplete_items and dim == "tone":
                    judge_failures[dim] = "judge: HTTP 503 after 4 attempts"
                    continue
                base_a, base_b = (judged_a, judged_b) if dim != NATURALNESS else (1.8, 2.0)
                verdicts[dim] = _verdict(rng, dim, base_a, base_b)
        pairs.append(combine(item, an_a, an_b, verdicts, labels=labels,
                             judge_failures=judge_failures,
                             dimensions=covered_dimensions(_PROBED, True)))
    decision = decide_pairs(pairs, labels, allow_incomplete=allow_incomplete)
    metadata = {
        "vocencebench": "0.1.0",
        "corpus_hash": "5d1f0c3b9a7e" + "0" * 52,
        "n_items": n,
        "probes": [f"{t}@1" for t in _PROBED],
        "asr_engine": None,
        "gate_threshold": None,
        "judge_model": JUDGE_MODEL,
        "prompt_version": PROMPT_VERSION,
        "judge_consistent": True,
        "judge_votes": 1,
        "judge_cost_usd": 0.0417,
        "bootstrap": {"n_boot": BOOTSTRAP_N, "seed": BOOTSTRAP_SEED},
        "systems": {la: "cmd:flat-tts --text {text} --out {out}", lb: "qwen3:steer-v2"},
        "timings": {"synthesis_s": 412.5, "analyse_s": 96.25, "judge_s": 188.0},
        "status": list(STATUS),
    }
    return Head2Head(labels=labels, pairs=tuple(pairs), decision=decision, metadata=metadata,
                     registry=TRAITS)


if __name__ == "__main__":  # pragma: no cover
    from vocencebench.result import save_run

    out = save_run(make_head2head(), sys.argv[1] if len(sys.argv) > 1 else "runs/synthetic")
    print(Path(out).resolve())


def make_leaderboard(names: tuple[str, str], specs: tuple[str, str],
                     metadata: dict[str, Any]) -> Any:
    """A two-system leaderboard over one synthetic duel of ``names`` (in the board's order),
    the systems built from ``specs`` (as the run record shows them) and run ``metadata``."""
    from vocencebench.board.plan import JudgePlan, pair_order, system_order
    from vocencebench.board.ranking import rank
    from vocencebench.board.run import Leaderboard
    from vocencebench.scores import PairedScores

    order = system_order(list(names), None)
    (x, y), = pair_order(order, None)
    h = make_head2head(labels=(x, y))
    scores = PairedScores(x, y, tuple(p.item.id for p in h.pairs),
                          tuple(p.a.S for p in h.pairs), tuple(p.b.S for p in h.pairs),
                          d_a=tuple(dict(p.a.d) for p in h.pairs),
                          d_b=tuple(dict(p.b.d) for p in h.pairs))
    plan = JudgePlan("all-pairs", None, ((x, y),), len(h.pairs), (), 2, 1, False, None)
    spec_of = dict(zip(names, specs, strict=True))
    return Leaderboard(rank(order, [scores]), {(x, y): h}, tuple(p.item.id for p in h.pairs),
                       {x: spec_of[x], y: spec_of[y]}, plan, metadata)
