"""The entry points: :func:`run_canaries`, the preflight of one run (:func:`run_preflight`,
what :func:`vocencebench.benchmark` calls before any item), the preflight of a multi-run
command (:func:`preflight`), and the status line and record that run.json keeps."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._numbers import is_real_number
from .._util.failures import CANARIES, reason
from ..cache import Cache, NullCache
from ..errors import CanaryError, ConfigError
from ..schema import Item, ProbeResult
from ..traits import TRAITS, TraitRegistry
from ._clips import canary_clips
from ._constants import EDITS
from ._edits import edit_clip
from ._judge_checks import judge_checks
from ._probe_checks import canary_item, direction_checks, label_checks, measure_all
from ._report import CanaryCheck, CanaryReport

if TYPE_CHECKING:
    from ..judge import Judge, PairJudge
    from ..probes import ProbeSet
    from ..probes.base import ProbeSuite

__all__ = ["canary_status", "preflight", "report_record", "run_canaries", "run_preflight",
           "skipped_record", "status_line"]


def run_canaries(
    *,
    probes: ProbeSet | None,
    judge: Judge | None = None,
    cache: Any | None = None,
    registry: TraitRegistry = TRAITS,
    strict: bool = True,
    clock: Callable[[], float] = time.perf_counter,
) -> CanaryReport:
    """Check ``probes`` (a ProbeSet, or None) and ``judge`` (or None) on the known-answer
    canaries; a few seconds on CPU without a judge, 12 judge calls with one.

    ``cache``: a store with ``get_json``/``put_json`` (e.g. :class:`vocencebench.cache.Cache`):
    results are kept by clip sha256, probe ids and judge model/prompt version, so a rerun
    costs nothing (failed judge answers are not kept). ``registry``: the traits the requests
    are built from. ``strict=True`` raises :class:`~vocencebench.errors.CanaryError` (fatal,
    with the report attached) when a required check fails; ``strict=False`` returns the
    report either way. Instrument failures (a probe that crashes, a judge that cannot be
    reached) propagate as their own errors.
    """
    t0 = clock()
    clips = canary_clips()
    checks: list[CanaryCheck] = []
    instruments: list[str] = []
    untested: list[str] = []
    cached = True
    if probes is not None:
        instruments.extend(probes.ids)
        traits = probes.traits
        jobs: list[tuple[bytes, Item]] = []
        index: list[tuple[str, str]] = []
        for c in clips:
            for edit in ("base", *EDITS):
                jobs.append((edit_clip(c.key, edit), canary_item(c, edit, registry)))
                index.append((c.key, edit))
        results, all_hit = measure_all(probes, jobs, cache)
        cached = cached and all_hit
        by_clip: dict[str, dict[str, dict[str, ProbeResult]]] = {}
        for (key, edit), res in zip(index, results, strict=True):
            by_clip.setdefault(key, {})[edit] = res
        for c in clips:
            checks.extend(direction_checks(c, by_clip[c.key], traits))
        checks.extend(label_checks(clips, {k: v["base"] for k, v in by_clip.items()}, traits))
        covered = {"pitch", "pace", "loudness", "gender", "age", "emotion", "accent"}
        untested.extend(t for t in traits if t not in covered)
    flip = unparsable = clean = None
    if judge is not None:
        instruments.append(f"judge:{judge.model}@{judge.prompt_version}")
        jchecks, flip, unparsable, clean, jc = judge_checks(judge, cache)
        checks.extend(jchecks)
        cached = cached and jc
    if probes is None and judge is None:
        raise ConfigError("run_canaries needs probes, a judge, or both")
    required = [c for c in checks if c.required]
    accuracy = sum(c.passed for c in required) / len(required) if required else None
    report = CanaryReport(
        checks=tuple(checks), accuracy=accuracy, judge_order_flip_rate=flip,
        judge_unparsable_rate=unparsable, judge_clean_rate=clean,
        instruments=tuple(instruments), untested=tuple(untested), cached=cached,
        seconds=clock() - t0,
    )
    if strict and not report.passed:
        raise CanaryError(report.error_message(), report=report)
    return report


def run_preflight(probes: ProbeSuite | None, judge: PairJudge | None, store: Cache,
                  registry: TraitRegistry, out: dict[str, Any]) -> None:
    """The preflight of one run: the known-answer canaries on the run's probes and judge,
    before any item, their record written into ``out`` (run.json's ``"canaries"``); a failure
    raises (the engine turns it into the run's stop reason)."""
    from ..judge import Judge
    from ..probes import ProbeSet

    # The canaries know the shipped instruments; another implementation of the protocols is
    # named as unchecked (in the status line), never reported as passed.
    unchecked = [f"{what} {type(obj).__name__}" for what, obj, kind in
                 (("probes", probes, ProbeSet), ("judge", judge, Judge))
                 if obj is not None and not isinstance(obj, kind)]
    if unchecked:
        out["unchecked"] = unchecked
    known_probes = probes if isinstance(probes, ProbeSet) else None
    known_judge = judge if isinstance(judge, Judge) else None
    if known_probes is None and known_judge is None:
        out.update(ran=False, unavailable="no probe and no judge to check" if not unchecked
                   else f"{' and '.join(unchecked)} cannot be checked (the canaries know "
                        "vocencebench's ProbeSet and Judge)")
        return
    cache = None if isinstance(store, NullCache) else store
    try:
        report = run_canaries(probes=known_probes, judge=known_judge, cache=cache,
                              registry=registry)
    except Exception as exc:
        out.update(ran=True, passed=False, report=report_record(getattr(exc, "report", None)))
        raise
    out.update(ran=True, passed=bool(getattr(report, "passed", True)),
               report=report_record(report))


def canary_status(meta: Mapping[str, Any] | None) -> str:
    """The status line of the canaries: what they checked, or that they did not run."""
    if meta is None:
        return ("CANARIES SKIPPED: the probes and the judge were not checked against known "
                "answers before this run")
    if not meta.get("ran"):
        return f"CANARIES NOT RUN: {meta.get('unavailable', 'no instrument to check')}"
    report = meta.get("report") if isinstance(meta.get("report"), Mapping) else {}
    assert isinstance(report, Mapping)
    checks = report.get("checks")
    required = ([c for c in checks if isinstance(c, Mapping) and c.get("required")]
                if isinstance(checks, list) else [])
    passed = sum(bool(c.get("passed")) for c in required)
    what = ", ".join(str(x) for x in report.get("instruments", ())) or "the instruments"
    head = f"canaries: {'PASSED' if meta.get('passed') else 'FAILED'}"
    line = (f"{head} — {passed}/{len(required)} known-answer checks of {what}" if required
            else f"{head} — known-answer checks of {what}")
    rates = [(name, report.get(key)) for name, key in
             (("judge prefers the clean clip", "judge_clean_rate"),
              ("order flips", "judge_order_flip_rate"),
              ("unparsable answers", "judge_unparsable_rate"))]
    shown = [f"{name} {100 * v:.0f} %" for name, v in rates if is_real_number(v)]
    unchecked = meta.get("unchecked") or []
    return line + (f"; {', '.join(shown)}" if shown else "") + (
        f"; NOT CHECKED: {', '.join(unchecked)}" if unchecked else "")


def report_record(report: Any) -> Any:
    """The canary report for run.json, without its wall time and cache flag (those vary from
    run to run; the time goes to the run's timings)."""
    to_dict = getattr(report, "to_dict", None)
    out = to_dict() if callable(to_dict) else None
    if isinstance(out, dict):
        out = {k: v for k, v in out.items() if k not in ("seconds", "cached")}
    return out


def preflight(*, probes: ProbeSet | None, judge: Judge | None, cache: Any | None,
              registry: TraitRegistry = TRAITS) -> dict[str, Any]:
    """The canaries of a command that runs many head-to-heads on the same instruments
    (``redteam``, ``leaderboard``): once, before anything is synthesised, through the
    preflight every run does (:func:`run_preflight`), so the record is
    the one run.json keeps under ``"canaries"`` (``ran``, ``passed``, ``report``; or
    ``ran: False`` with ``unavailable`` when there is no instrument to check).

    An instrument that fails its checks, or cannot be checked (a probe that crashes on a
    canary, a judge that cannot be reached), raises :class:`~vocencebench.errors.CanaryError`
    (fatal) whose message is the stop reason a run would record: ``canaries: …``, naming the
    failed checks; its ``report`` is the failed :class:`CanaryReport` (None when the
    instrument crashed). A :class:`~vocencebench.errors.ConfigError` propagates as itself.
    """
    record: dict[str, Any] = {"ran": False}
    try:
        run_preflight(probes, judge, cache if cache is not None else NullCache(), registry,
                      record)
    except ConfigError:
        raise
    except Exception as exc:  # what the engine's preflight turns into the stop reason
        raise CanaryError(reason(CANARIES, exc),
                          report=exc.report if isinstance(exc, CanaryError) else None) from exc
    return record


def skipped_record() -> dict[str, Any]:
    """The canary record of a run told to skip them (``--skip-canaries``, ``canaries=False``),
    as run.json has it."""
    return {"ran": False, "skipped": True}


def status_line(record: Mapping[str, Any]) -> str:
    """The status line of a canary record, worded as a run's (``canaries: PASSED — …``,
    ``CANARIES SKIPPED: …``, ``CANARIES NOT RUN: …``)."""
    return canary_status(None if record.get("skipped") else record)
