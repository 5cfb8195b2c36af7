"""The red-team verdict rule and its result records (pure: no audio, no pipeline)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..schema import Decision

__all__ = [
    "DEFENDED",
    "INSTRUMENT_HINTS",
    "NOT_TESTED",
    "VULNERABLE",
    "AttackRow",
    "Duel",
    "Outcome",
    "outcome_of",
    "verdict",
]

DEFENDED: Final = "DEFENDED"
VULNERABLE: Final = "VULNERABLE"
NOT_TESTED: Final = "NOT TESTED"

Outcome = Literal["won", "tied", "lost", "incomplete"]

#: What to turn on for each instrument (quoted in NOT TESTED reasons).
INSTRUMENT_HINTS: Final[Mapping[str, str]] = {
    "probes": "the acoustic probes (probes=None turned them off)",
    "classifiers": "the classifier probes (--classifiers / probes=vb.with_classifiers())",
    "gate": "the ASR gate (--asr whisper / transcriber=vb.whisper_transcriber())",
    "judge": "the judge (--judge gemini:MODEL or local:URL#MODEL / judge=vb.Judge...)",
    "holdout": "a held-out partition (--holdout-salt SALT / holdout_salt=...)",
}
_OFF_WORDS: Final[Mapping[str, str]] = {
    "probes": "probes OFF", "classifiers": "classifiers OFF", "gate": "gate OFF",
    "judge": "judge OFF", "holdout": "no held-out salt",
}


def outcome_of(decision: Decision, attacker: str) -> Outcome:
    """The attacker's outcome in a decided duel: won, tied, lost (or incomplete, when the
    pipeline could not decide: an instrument failed on some item)."""
    if decision.winner == attacker:
        return "won"
    if decision.winner == "tie":
        return "tied"
    if decision.winner in decision.labels:
        return "lost"
    return "incomplete"


@dataclass(frozen=True)
class Duel:
    """One head-to-head of an attacker (challenger, label ``b``) against an opponent
    (incumbent, label ``a``).

    ``opponent``: ``"base"`` or ``"reference"``; ``partition``: which items it ran on
    (``"evaluation"`` — the corpus selection; ``"public"`` / ``"held-out"`` — the two sides
    of a held-out split). ``decision.lcb`` is LCB(S_attacker − S_opponent) and
    ``decision.margin`` = margin(S̄_opponent). ``mean_d``: label → dimension → mean d over
    the pairs where the dimension was scored for both; ``delta_d``: dimension → mean of
    d_attacker − d_opponent over those pairs; ``dropped``: dimension → pairs from which it
    was dropped (scored for one side only, or a judge failure); ``n``: items.
    """

    opponent: str
    partition: str
    attacker: str
    opponent_label: str
    decision: Decision
    mean_d: dict[str, dict[str, float]] = field(default_factory=dict)
    delta_d: dict[str, float] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    n: int = 0

    @property
    def outcome(self) -> Outcome:
        return outcome_of(self.decision, self.attacker)

    @property
    def lcb(self) -> float:
        """LCB of the attacker's advantage (S_attacker − S_opponent), 5th percentile."""
        return self.decision.lcb

    def brief(self) -> str:
        """``won LCB +0.031 > 0.037``-style summary."""
        if self.outcome == "incomplete":
            return "incomplete"
        lcb, m = self.decision.lcb, self.decision.margin
        if not math.isfinite(lcb):
            return self.outcome
        rel = ">" if lcb > m else "≤"
        return f"{self.outcome} (LCB {lcb:+.3f} {rel} {m:.3f})"

    def detail(self) -> str:
        """``vs base (espeak-flat): won, LCB +0.031 > margin 0.037``."""
        d = self.decision
        head = f"vs {self.opponent} ({self.opponent_label}): {self.outcome}"
        if self.outcome == "incomplete" or not math.isfinite(d.lcb):
            return head
        rel = ">" if d.lcb > d.margin else "≤"
        return f"{head}, LCB {d.lcb:+.3f} {rel} margin {d.margin:.3f}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "opponent": self.opponent, "partition": self.partition,
            "attacker": self.attacker, "opponent_label": self.opponent_label,
            "outcome": self.outcome, "decision": _finite(self.decision.to_dict()),
            "mean_d": self.mean_d, "delta_d": self.delta_d, "dropped": self.dropped,
            "n": self.n,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Duel:
        return cls(
            opponent=data["opponent"], partition=data["partition"],
            attacker=data["attacker"], opponent_label=data["opponent_label"],
            decision=Decision.from_dict({k: (math.nan if v is None and k in _FLOATS else v)
                                         for k, v in data["decision"].items()}),
            mean_d={k: dict(v) for k, v in data.get("mean_d", {}).items()},
            delta_d=dict(data.get("delta_d", {})), dropped=dict(data.get("dropped", {})),
            n=int(data.get("n", 0)),
        )


_FLOATS: Final = frozenset({"lcb", "margin", "mean_a", "mean_b", "lcb_reverse",
                            "margin_reverse", "mean_delta"})


def _finite(d: dict[str, Any]) -> dict[str, Any]:
    """JSON has no NaN: a bound an undecided duel lacks is written as null."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in d.items()}


def verdict(
    *,
    needs: Sequence[str],
    instruments: Mapping[str, bool],
    deciding: Sequence[Duel],
) -> tuple[str, str]:
    """The row's verdict and the reason, by this rule (in order):

    1. **NOT TESTED** when an instrument in ``needs`` is off (``instruments[name]`` false):
       the defence was not exercised, whatever the duels say. The reason names the missing
       instrument and, when the attacker won anyway, says this configuration is open to it.
    2. **VULNERABLE** when the attacker wins a deciding duel: its LCB(S_attacker −
       S_opponent) clears margin(S̄_opponent), by the benchmark's own decision rule.
    3. **NOT TESTED** when a deciding duel is incomplete (an instrument failed on items).
    4. **DEFENDED** otherwise: it ties or loses every deciding duel with its instruments on.
    """
    won = [d for d in deciding if d.outcome == "won"]
    missing = [n for n in needs if not instruments.get(n, False)]
    if missing:
        reason = "; ".join(f"needs {INSTRUMENT_HINTS.get(n, n)}; {_OFF_WORDS.get(n, n)} "
                           "in this configuration" for n in missing)
        if won:
            reason += ("; it WINS here (" + "; ".join(d.detail() for d in won)
                       + "): this configuration is open to it")
        return NOT_TESTED, reason
    if not deciding:
        return NOT_TESTED, "no duel was run"
    if won:
        return VULNERABLE, "the attacker wins: " + "; ".join(d.detail() for d in won)
    incomplete = [d for d in deciding if d.outcome == "incomplete"]
    if incomplete:
        return NOT_TESTED, ("duel incomplete (an instrument failed on some items): "
                            + ", ".join(f"vs {d.opponent}" for d in incomplete))
    return DEFENDED, "the attacker ties or loses every deciding duel: " + "; ".join(
        d.detail() for d in deciding)


@dataclass(frozen=True)
class AttackRow:
    """One attack's line of the table: what it is, its duels and the verdict.

    ``vs_base`` / ``vs_reference`` are None when not run (an attack whose base *is* the
    reference has one duel, shown in both columns). ``extra``: duels shown but not deciding
    (the memoriser on the public partition). ``moved``: the dimension whose mean d changed
    most against the base, and the change (attacker − base).
    """

    name: str
    summary: str
    defence: str
    needs: tuple[str, ...]
    decided_by: tuple[str, ...]
    system_id: str
    base_label: str
    vs_base: Duel | None
    vs_reference: Duel | None
    extra: tuple[Duel, ...] = ()
    moved: tuple[str, float] | None = None
    verdict: str = NOT_TESTED
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "summary": self.summary, "defence": self.defence,
            "needs": list(self.needs), "decided_by": list(self.decided_by),
            "system_id": self.system_id, "base_label": self.base_label,
            "vs_base": self.vs_base.to_dict() if self.vs_base else None,
            "vs_reference": self.vs_reference.to_dict() if self.vs_reference else None,
            "extra": [d.to_dict() for d in self.extra],
            "moved": list(self.moved) if self.moved else None,
            "verdict": self.verdict, "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AttackRow:
        def duel(x: Any) -> Duel | None:
            return Duel.from_dict(x) if x else None

        moved = data.get("moved")
        return cls(
            name=data["name"], summary=data["summary"], defence=data["defence"],
            needs=tuple(data["needs"]), decided_by=tuple(data["decided_by"]),
            system_id=data["system_id"], base_label=data["base_label"],
            vs_base=duel(data.get("vs_base")), vs_reference=duel(data.get("vs_reference")),
            extra=tuple(Duel.from_dict(d) for d in data.get("extra", [])),
            moved=(str(moved[0]), float(moved[1])) if moved else None,
            verdict=data["verdict"], reason=data["reason"],
        )
