"""What the canaries found: one :class:`CanaryCheck` per known-answer check, and the
:class:`CanaryReport` that run.json keeps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..schema import SCHEMA_VERSION
from ._constants import CANARY_VERSION

__all__ = ["CanaryCheck", "CanaryReport"]


@dataclass(frozen=True)
class CanaryCheck:
    """One known-answer check.

    ``name``: what was checked (e.g. ``pitch +4 st on arctic-aew``). ``trait``: the trait or
    ``naturalness``. ``instrument``: the probe (``name@version``) or ``judge:MODEL``.
    ``expected``: the known answer, in words. ``measured``: the number or label found (None
    when the instrument could not measure). ``passed``; ``required`` (False: advisory, never
    fails the run); ``message``: what the result means.
    """

    name: str
    trait: str
    instrument: str
    clip: str
    expected: str
    measured: float | str | None
    passed: bool
    required: bool = True
    message: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "trait": self.trait, "instrument": self.instrument,
                "clip": self.clip, "expected": self.expected, "measured": self.measured,
                "passed": self.passed, "required": self.required, "message": self.message,
                "detail": dict(self.detail)}


@dataclass(frozen=True)
class CanaryReport:
    """What the canaries found.

    ``checks``: every check. ``accuracy``: share of required checks passed (None when there
    were none). ``judge_order_flip_rate``: share of judged pairs whose winner changed with the
    presentation order; ``judge_unparsable_rate``: share of the judge's answers that could not
    be parsed (each retry counts); ``judge_clean_rate``: share of its answers that chose the
    clean clip (all three None without a judge). ``instruments``: probe ids and the judge
    model. ``untested``: traits a probe measures that no canary covers. ``cached``: every
    number came from the cache. ``seconds``: wall time.
    """

    checks: tuple[CanaryCheck, ...]
    accuracy: float | None
    judge_order_flip_rate: float | None = None
    judge_unparsable_rate: float | None = None
    judge_clean_rate: float | None = None
    instruments: tuple[str, ...] = ()
    untested: tuple[str, ...] = ()
    cached: bool = False
    seconds: float = 0.0
    version: str = CANARY_VERSION

    @property
    def failures(self) -> tuple[CanaryCheck, ...]:
        """The required checks that failed."""
        return tuple(c for c in self.checks if c.required and not c.passed)

    @property
    def passed(self) -> bool:
        """True when every required check passed."""
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for run.json)."""
        return {
            "schema_version": SCHEMA_VERSION, "kind": "canary_report",
            "canary_version": self.version, "passed": self.passed,
            "accuracy": self.accuracy,
            "judge_order_flip_rate": self.judge_order_flip_rate,
            "judge_unparsable_rate": self.judge_unparsable_rate,
            "judge_clean_rate": self.judge_clean_rate,
            "instruments": list(self.instruments), "untested": list(self.untested),
            "cached": self.cached, "seconds": self.seconds,
            "checks": [c.to_dict() for c in self.checks],
        }

    def summary(self) -> str:
        """A few lines for the console and the report."""
        req = [c for c in self.checks if c.required]
        adv = [c for c in self.checks if not c.required]
        acc = "n/a" if self.accuracy is None else f"{100 * self.accuracy:.0f} %"
        lines = [f"canaries: {'PASSED' if self.passed else 'FAILED'} — "
                 f"{sum(c.passed for c in req)}/{len(req)} required checks ({acc})"
                 + (f", {sum(c.passed for c in adv)}/{len(adv)} advisory" if adv else "")
                 + (" (cached)" if self.cached else f" in {self.seconds:.1f} s")]
        if self.judge_order_flip_rate is not None:
            lines.append(f"  judge: clean preferred {_pct(self.judge_clean_rate)}, "
                         f"order-flip rate {_pct(self.judge_order_flip_rate)}, "
                         f"unparsable answers {_pct(self.judge_unparsable_rate)}")
        if self.untested:
            lines.append(f"  no canary for: {', '.join(self.untested)}")
        lines.extend(f"  FAILED {c.name}: {c.message}" for c in self.failures)
        return "\n".join(lines)

    def error_message(self) -> str:
        """The message of the :class:`CanaryError` this report raises."""
        fails = self.failures
        head = (f"{len(fails)} of {sum(c.required for c in self.checks)} canary checks failed "
                "before the corpus run (no synthesis or judge money was spent on it)")
        seen: list[str] = []
        for c in fails:
            if c.message not in seen:
                seen.append(c.message)
        body = "; ".join(seen[:4]) + (f"; … and {len(seen) - 4} more" if len(seen) > 4 else "")
        return (f"{head}: {body}. Fix the instrument (or pass --skip-canaries to run anyway, "
                "and the report will say so)")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f} %"
