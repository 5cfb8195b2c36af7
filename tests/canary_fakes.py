"""Known-answer canaries as test doubles, for the commands that run many head-to-heads
(redteam, leaderboard): a canary set that fails one named check, or passes, and counts how
often it was asked. The canaries themselves are tested in test_canaries.py; here only what a
command does with their outcome is."""

from __future__ import annotations

from typing import Any

import pytest

from vocencebench.canaries import CanaryCheck, CanaryReport
from vocencebench.canaries import _run as canary_run
from vocencebench.errors import CanaryError

#: The failed check of :func:`failing_canaries`, named in the error the command stops with.
FAILED_CHECK = "gender of arctic-aew"
FAILED_MESSAGE = ("gender-f0gmm@1: gender labels look swapped: the male canary 'arctic-aew' "
                  "read female (every canary read the opposite gender)")


def _report(passed: bool) -> CanaryReport:
    check = CanaryCheck(name=FAILED_CHECK, trait="gender", instrument="gender-f0gmm@1",
                        clip="arctic-aew", expected="male",
                        measured="male" if passed else "female", passed=passed,
                        message="read male" if passed else FAILED_MESSAGE)
    return CanaryReport(checks=(check,), accuracy=1.0 if passed else 0.0,
                        instruments=("gender-f0gmm@1",))


def fake_canaries(monkeypatch: pytest.MonkeyPatch, *, passed: bool) -> list[dict[str, Any]]:
    """Replace :func:`vocencebench.canaries.run_canaries`, where every preflight calls it
    (``vocencebench.canaries._run``), with one that passes or fails :data:`FAILED_CHECK` as
    ``run_canaries`` does (strict: a :class:`CanaryError` carrying the report). Returns the
    list of the calls' arguments."""
    calls: list[dict[str, Any]] = []

    def run_canaries(**kw: Any) -> CanaryReport:
        calls.append(kw)
        report = _report(passed)
        if not report.passed:
            raise CanaryError(report.error_message(), report=report)
        return report

    monkeypatch.setattr(canary_run, "run_canaries", run_canaries)
    return calls


def passing_record() -> dict[str, Any]:
    """The record a command keeps for the passing fake (as run.json has it)."""
    report = _report(True).to_dict()
    return {"ran": True, "passed": True,
            "report": {k: v for k, v in report.items() if k not in ("seconds", "cached")}}
