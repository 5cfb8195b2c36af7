"""Renderers of a run: the summary text, ``report.md`` and a self-contained ``report.html``
(inline SVG, no network).

Everything here is rendered from a :class:`~vocencebench.result.Head2Head`, so
``vocencebench report RUN`` re-renders a saved run without re-measuring anything; this module
writes no file (the run's file set is :func:`vocencebench.result.save_run`'s).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._numbers import is_real_number, is_whole_number
from ._report import robustness as robustness_section
from ._report.gate import gate_html, gate_markdown, gate_on, gate_summary_lines
from ._report.judge import judge_html, judge_markdown, judge_summary_lines, judge_warnings
from ._util.text import html_safe, markdown_safe, terminal_safe
from .charts import (
    COLOUR_A,
    COLOUR_B,
    bootstrap_svg,
    dimension_bars_svg,
    page_css,
    page_head,
)
from .metrics import ConfusionMatrix, confusion_matrices, control_success, win_rates
from .schema import INCOMPLETE
from .scores import reason_cause

if TYPE_CHECKING:
    from .result import Head2Head
    from .traits import TraitRegistry

__all__ = ["FIRST_REASONS", "FailureGroup", "FailureSummary", "failure_summary",
           "render_html", "render_markdown", "render_summary"]


@dataclass(frozen=True)
class _DimRow:
    dimension: str
    mean_a: float | None
    mean_b: float | None
    success_a: float | None
    success_b: float | None
    win_rate_b: float | None
    n: int


def _mean(xs: Sequence[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def _dimension_rows(h: Head2Head) -> list[_DimRow]:
    # Per-dimension means over the items both systems produced and every instrument scored.
    ok = [p for p in h.pairs if p.a.failure is None and p.b.failure is None
          and p.incomplete is None]
    da = [p.a.d for p in ok]
    db = [p.b.d for p in ok]
    reg = h.registry
    wins = win_rates(da, db, registry=reg) if ok else {}
    ca = control_success(da, registry=reg) if ok else {}
    cb = control_success(db, registry=reg) if ok else {}
    rows = []
    for dim in h.registry.dimensions():
        xa = [d[dim] for d in da if dim in d]
        xb = [d[dim] for d in db if dim in d]
        if not xa and not xb:
            continue
        w = wins.get(dim)
        rows.append(_DimRow(
            dim, _mean(xa), _mean(xb),
            ca[dim].rate if dim in ca else None, cb[dim].rate if dim in cb else None,
            w.rate if w is not None else None, len(xa),
        ))
    return rows


def _fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "—"
    return f"{100 * x:.1f}%" if pct else f"{x:.3f}"


def _not_scored(h: Head2Head) -> list[str]:
    """The registry's dimensions no clip of either system was scored on (the table's rows
    cover only the items both systems produced, so they cannot say)."""
    scored = {dim for p in h.pairs for s in (p.a, p.b) if s.failure is None for dim in s.d}
    return [d for d in h.registry.dimensions() if d not in scored]


def _table_note(h: Head2Head) -> str | None:
    """What the per-dimension rows leave out: the items one system failed on (or an
    instrument), which the rows cannot pair; None when they cover every item."""
    both = sum(1 for p in h.pairs if p.a.failure is None and p.b.failure is None
               and p.incomplete is None)
    if both == len(h.pairs):
        return None
    if both == 0:
        return ("no item has clips of both systems that every instrument scored, so there are "
                "no per-dimension rows (see the failures)")
    return (f"the per-dimension rows cover the {both} of {len(h.pairs)} items both systems "
            "produced and every instrument scored (see the failures)")


def _composite_label(h: Head2Head) -> str:
    """The composite row's name: a run stopped early knows its means only as intervals, and
    its decision holds the end of each that is worst for the verdict."""
    return ("composite S (stopped early: interval ends, worst for the verdict)"
            if h.decision.reason.startswith("stopped early:") else "composite S")


# ----------------------------------------------------------------------------- failures

#: Reasons shown per system and per instrument (the rest are counted).
FIRST_REASONS = 3


@dataclass(frozen=True)
class FailureGroup:
    """Failures of one system or one instrument: ``items`` affected, counts ``by_cause``
    (the reason's prefix: synthesis, audio, judge, …) and the first few ``(item, reason)``."""

    name: str
    items: int
    by_cause: dict[str, int]
    first: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class FailureSummary:
    """Who failed where. ``systems``: the systems' own failures (scored S = 0).
    ``instruments``: probes, transcriber, judge and speech services that failed (those items
    are incomplete and decide nothing). ``incomplete``: items that cannot be decided."""

    systems: tuple[FailureGroup, ...]
    instruments: tuple[FailureGroup, ...]
    incomplete: int
    total: int


def _group(name: str, found: Sequence[tuple[str, str]]) -> FailureGroup:
    causes: dict[str, int] = {}
    items: dict[str, None] = {}
    for item, why in found:
        causes[reason_cause(why)] = causes.get(reason_cause(why), 0) + 1
        items.setdefault(item, None)
    return FailureGroup(name, len(items), dict(sorted(causes.items(), key=lambda c: -c[1])),
                        tuple(found[:FIRST_REASONS]))


def failure_summary(h: Head2Head) -> FailureSummary:
    """Every failure of the run, by system and by instrument (see :class:`FailureSummary`)."""
    systems = []
    for side, label in zip(("a", "b"), h.labels, strict=True):
        found = [(p.item.id, str(getattr(p, side).failure)) for p in h.pairs
                 if getattr(p, side).failure]
        systems.append(_group(label, found))
    by_instrument: dict[str, list[tuple[str, str]]] = {}
    for p in h.pairs:
        reasons = [r for r in (p.analysis_a.instrument_failure, p.analysis_b.instrument_failure,
                               *p.dropped.values(), p.incomplete) if r]
        seen: set[str] = set()
        for why in reasons:
            cause = reason_cause(why)
            if cause in seen or cause in ("synthesis", "audio"):
                continue
            seen.add(cause)
            by_instrument.setdefault(cause, []).append((p.item.id, why))
    instruments = tuple(_group(c, found) for c, found in sorted(by_instrument.items()))
    return FailureSummary(tuple(systems), instruments,
                          sum(p.incomplete is not None for p in h.pairs), len(h.pairs))


def _verdict_text(h: Head2Head) -> str:
    w = h.decision.winner
    if w == INCOMPLETE:
        return "INCOMPLETE — no winner"
    return "TIE" if w == "tie" else f"{w} wins"


def _banner(h: Head2Head) -> list[str]:
    """The INCOMPLETE banner (empty for a complete run)."""
    f = failure_summary(h)
    if not f.incomplete:
        return []
    what = ", ".join(f"{g.name} on {g.items}" for g in f.instruments) or "an instrument"
    decided = ("; decided on the complete items only (--allow-incomplete)"
               if h.decision.winner != INCOMPLETE else "; no winner is named")
    return [f"INCOMPLETE: {f.incomplete} of {f.total} items could not be scored because an "
            f"instrument failed ({what}){decided}. Rerun the same command: it resumes and "
            "retries only what is missing."]


def _cache_warning(h: Head2Head) -> list[str]:
    """One WARNING line when cached rows failed their digest check (empty otherwise).

    Such a row was never used, only recomputed, so it is no failure of any system or
    instrument; but a cache that keeps failing its digests is damaged or being tampered with,
    and whoever reads the report should hear about it.
    """
    cache = h.metadata.get("cache")
    if not isinstance(cache, dict) or not isinstance(cache.get("corrupt"), dict):
        return []  # no cache, or a run.json written before the counts were recorded
    corrupt = cache["corrupt"]
    bad = {t: n for t, n in corrupt.items() if is_whole_number(n) and n > 0}
    if not bad:
        return []
    n = sum(bad.values())
    what = ", ".join(f"{t} {k}" for t, k in bad.items())
    where = cache.get("path") or "PATH"
    return [f"WARNING: cache: {n} stored {'entry' if n == 1 else 'entries'} failed the digest "
            f"check ({what}) and {'was' if n == 1 else 'were'} recomputed, never used; "
            f"`vocencebench cache check {where}` lists the damage"]


def _failure_lines(h: Head2Head) -> list[str]:
    """Plain-text lines of the failures (the summary's), untrusted text escaped."""
    f = failure_summary(h)
    t = terminal_safe
    out = []
    for g in f.systems:
        causes = t(", ".join(f"{c} {n}" for c, n in g.by_cause.items()))
        out.append(f"system {t(g.name)}: {g.items} item(s) failed (scored 0) — {causes}"
                   if g.items else f"system {t(g.name)}: no failure")
        out += [f"    {t(item)}: {t(why)}" for item, why in g.first]
    for g in f.instruments:
        out.append(f"instrument {t(g.name)}: failed on {g.items} item(s) (incomplete, never "
                   "scored 0)")
        out += [f"    {t(item)}: {t(why)}" for item, why in g.first]
    return out


# ----------------------------------------------------------------------------- level response

#: Traits whose raw measured value the reports show per requested level, first; every other
#: objective ordinal trait of the run's registry follows in registry order
#: (:func:`_response_traits`).
RESPONSE_TRAITS = ("loudness", "pitch", "pace")
#: A system whose mean value moves less than this between its lowest and highest requested
#: level is marked FLAT for that trait (LU; semitones for pitch; phones/s): it renders the
#: levels alike, whatever its buckets say. A trait without a span here is never marked FLAT.
FLAT_SPAN = {"loudness": 3.0, "pitch": 2.0, "pace": 1.5}


def _response_traits(registry: TraitRegistry) -> tuple[str, ...]:
    """The traits of ``registry`` whose level response the reports show:
    :data:`RESPONSE_TRAITS` it defines, then its other objective ordinal traits (a trait
    the caller registered) in registry order."""
    extra = tuple(t.name for t in registry.objective()
                  if t.scoring == "ordinal" and t.name not in RESPONSE_TRAITS)
    return (*(t for t in RESPONSE_TRAITS if t in registry), *extra)


@dataclass(frozen=True)
class _Response:
    trait: str
    unit: str
    levels: tuple[str, ...]
    cells: dict[tuple[str, str], str]  # (system label, level) -> "mean ± sd (n)"
    span: dict[str, float | None]  # system label -> highest minus lowest level's mean
    flat: dict[str, bool]


def _responses(h: Head2Head) -> list[_Response]:
    """Per trait of :func:`_response_traits`, the mean measured value per requested level for
    each system (clips the system produced; unmeasurable ones counted apart). A registered
    trait whose probe gave no number on any clip (a label only) is left out."""
    from .metrics import level_response

    traits = _response_traits(h.registry)
    per_side = {}
    for side, label in zip(("a", "b"), h.labels, strict=True):
        rows = [(p.item.traits, getattr(p, f"analysis_{side}").probes) for p in h.pairs
                if getattr(p, side).failure is None]
        per_side[label] = level_response(rows, traits, registry=h.registry)
    out = []
    for t in traits:
        got = {lab: r[t] for lab, r in per_side.items() if t in r}
        if not got or (t not in RESPONSE_TRAITS and all(
                st.mean is None for r in got.values() for st in r.levels)):
            continue
        vocab = list(h.registry.get(t).values)
        levels = tuple(v for v in vocab if any(s.level == v for r in got.values()
                                               for s in r.levels))
        cells: dict[tuple[str, str], str] = {}
        span: dict[str, float | None] = {}
        flat: dict[str, bool] = {}
        unit = next(iter(got.values())).unit
        for lab, r in got.items():
            means: list[float] = []
            for lvl in levels:
                try:
                    st = r.get(lvl)
                except KeyError:
                    continue
                if st.mean is None:
                    cells[(lab, lvl)] = f"— ({st.unmeasurable} unmeasurable)"
                    continue
                extra = f", {st.unmeasurable} unmeasurable" if st.unmeasurable else ""
                shown = (f"{st.mean:.1f} {r.unit} ({st.mean_st:+.1f} st)" if t == "pitch"
                         and st.mean_st is not None else f"{st.mean:.2f} {r.unit}")
                cells[(lab, lvl)] = f"{shown} ± {st.sd or 0.0:.2f} (n={st.n}{extra})"
                # Pitch spans on an absolute semitone scale (the mean F0 itself): the offset
                # from the requested speaker's reference would mix in the requested gender.
                means.append(12.0 * math.log2(st.mean) if t == "pitch" and st.mean > 0
                             else st.mean)
            # Highest requested level's mean minus the lowest's (levels run low to high): a
            # system that renders the extremes alike, or the wrong way round, is FLAT however
            # far a middle level strays (max − min made quiet −23, normal −17, loud −23 LUFS
            # a 6 LU span, not flat).
            span[lab] = (means[-1] - means[0]) if len(means) >= 2 else None
            sp = span[lab]
            flat[lab] = sp is not None and t in FLAT_SPAN and sp < FLAT_SPAN[t]
        out.append(_Response(t, "semitones" if t == "pitch" else unit, levels, cells, span,
                             flat))
    return out


def _response_lines(h: Head2Head) -> list[str]:
    """Markdown table lines of the level response."""
    rs = _responses(h)
    if not rs:
        return ["No level-controlled trait was measured."]
    la, lb = h.labels
    out = ["The mean raw measurement per requested level: a system that follows the request "
           "moves with it; one that renders every level alike is FLAT, whatever its buckets "
           "say (spans under "
           + ", ".join(f"{v:g} {'LU' if t == 'loudness' else 'st' if t == 'pitch' else 'phones/s'}"
                       f" for {t}" for t, v in FLAT_SPAN.items()) + ").", ""]
    for r in rs:
        out += [f"**{markdown_safe(r.trait)}**", "",
                f"| requested | {markdown_safe(la)} | {markdown_safe(lb)} |", "|---|---|---|"]
        for lvl in r.levels:
            out.append(f"| {markdown_safe(lvl)} | {r.cells.get((la, lvl), '—')} | "
                       f"{r.cells.get((lb, lvl), '—')} |")
        spans = []
        for lab in (la, lb):
            sp = r.span.get(lab)
            if sp is not None:
                spans.append(f"{markdown_safe(lab)} {sp:.2f} {r.unit}" + (" — FLAT" if r.flat[lab]
                                                                 else ""))
        out += [f"| span (highest − lowest level) | {' | '.join(spans)} |" if len(spans) == 2
                else "", ""]
    return [x for x in out if x is not None]


def render_summary(h: Head2Head) -> str:
    """Plain text: status first, then per-dimension scores, gate, failures, the decision.
    Every string from outside (labels, status lines, reasons, dimension names) is shown
    through :func:`~vocencebench._util.text.terminal_safe`."""
    t = terminal_safe
    la, lb = t(h.labels[0]), t(h.labels[1])
    m = h.metadata
    lines = [f"vocencebench {t(m.get('vocencebench', '?'))} — {la} (a) vs {lb} (b), "
             f"{len(h.pairs)} items, corpus sha256 {t(str(m.get('corpus_hash', '?'))[:16])}…"]
    lines += [f"  {t(s)}" for s in _banner(h) + _cache_warning(h) + judge_warnings(h)
              + h.status()]
    missing = _not_scored(h)
    if missing:
        lines.append(f"  not scored in this run: {t(', '.join(missing))}")
    note = _table_note(h)
    if note:
        lines.append(f"  {note}")
    lines.append("")
    w = max(len(la), len(lb), 8)
    lines.append(f"{'dimension':<13} {'mean d ' + la:>{w + 7}} {'mean d ' + lb:>{w + 7}} "
                 f"{'success a':>9} {'success b':>9} {'win b':>7}")
    for r in _dimension_rows(h):
        lines.append(
            f"{t(r.dimension):<13} {_fmt(r.mean_a):>{w + 7}} {_fmt(r.mean_b):>{w + 7}} "
            f"{_fmt(r.success_a, True):>9} {_fmt(r.success_b, True):>9} "
            f"{_fmt(r.win_rate_b, True):>7}"
        )
    d = h.decision
    lines.append(f"{_composite_label(h):<13} {_fmt(d.mean_a):>{w + 7}} "
                 f"{_fmt(d.mean_b):>{w + 7}}")
    lines += [t(x) for x in gate_summary_lines(h)] or ["gate pass:    OFF (no transcriber)"]
    flats = [f"{t(lab)} {t(r.trait)} (span {r.span[lab]:.2f} {r.unit})" for r in _responses(h)
             for lab in h.labels if r.flat.get(lab)]
    if flats:
        lines.append("FLAT (measured value does not move with the requested level): "
                     + ", ".join(flats))
    lines.append("failures:")
    lines += [f"  {x}" for x in _failure_lines(h)]
    lines += [t(x) for x in judge_summary_lines(h)]
    if "judge_cost_usd" in m:
        cost = m["judge_cost_usd"]
        usage = m.get("judge_usage")
        unreported = usage.get("unreported", 0) if isinstance(usage, dict) else 0
        lines.append("judge cost:   " + (f"${cost:.4f}" if is_real_number(cost)
                                         else "unknown (no price for this model; pass "
                                              "--judge-price IN,OUT)")
                     + (f" ({t(unreported)} call(s) reported no usable token counts: each is "
                        "counted at its pre-call estimate)" if unreported else ""))
    lines += ["", *robustness_section.summary_lines(h.robustness)]  # the decision ends it
    lines += ["", f"DECISION: {t(_verdict_text(h))}", t(d.reason)]
    return "\n".join(lines)


def render_markdown(h: Head2Head, *, extra: Sequence[str] = ()) -> str:
    """The run as Markdown: status, dimension table, gate, decision and metadata.
    ``extra``: rendered lines of sections made from more than the run (the listening
    pointer, a human-labels table), placed before the metadata."""
    la, lb = markdown_safe(h.labels[0]), markdown_safe(h.labels[1])
    d = h.decision
    out = [f"# vocencebench: {la} vs {lb}", ""]
    out += [f"> **{markdown_safe(s)}**" for s in _banner(h) + _cache_warning(h) + judge_warnings(h)]
    out += [f"> {markdown_safe(s)}" for s in h.status()]
    missing = _not_scored(h)
    if missing:
        out.append(f"> not scored in this run: {markdown_safe(', '.join(missing))}")
    note = _table_note(h)
    if note:
        out.append(f"> {note}")
    winner = markdown_safe(_verdict_text(h).replace("TIE", "tie"))
    out += ["", f"**Decision: {winner}**", "",
            markdown_safe(d.reason), "", *robustness_section.markdown_lines(h.robustness), "",
            "## Dimensions", "",
            f"| dimension | mean d {la} | mean d {lb} | success {la} | success {lb} | "
            f"win rate {lb} | n |", "|---|---|---|---|---|---|---|"]
    for r in _dimension_rows(h):
        out.append(f"| {markdown_safe(r.dimension)} | {_fmt(r.mean_a)} | {_fmt(r.mean_b)} | "
                   f"{_fmt(r.success_a, True)} | {_fmt(r.success_b, True)} | "
                   f"{_fmt(r.win_rate_b, True)} | {r.n} |")
    out.append(f"| **{_composite_label(h)}** | {_fmt(d.mean_a)} | {_fmt(d.mean_b)} | | | | "
               f"{d.n} |")
    out += ["", "## Intelligibility gate", ""]
    out += gate_markdown(h) if gate_on(h) else ["OFF: no transcriber ran."]
    out += ["", "## Measured value per requested level", ""]
    out += _response_lines(h)
    out += ["", "## Failures", ""]
    out += _failures_markdown(h)
    out += judge_markdown(h, markdown_safe)
    if extra:
        out += ["", *extra]
    meta = json.dumps({k: v for k, v in h.metadata.items() if k != "status"}, indent=2,
                      sort_keys=True)
    # A fence longer than any backtick run inside, so no label can close it early.
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", meta)), default=0))
    out += ["", "## Run metadata", "", fence + "json", meta, fence, ""]
    return "\n".join(out)


#: The failures table's answer when nothing failed.
_NO_FAILURE = "None: every clip was produced and every instrument answered."


def _failure_rows(h: Head2Head) -> list[tuple[FailureGroup, str, str]]:
    """The failures table, one row per system or instrument that failed on some item:
    (group, kind, its causes counted); the same rows in the Markdown and the HTML."""
    f = failure_summary(h)
    return [(g, kind, ", ".join(f"{c} {n}" for c, n in g.by_cause.items()))
            for kind, groups in (("system (scored 0)", f.systems),
                                 ("instrument (incomplete)", f.instruments))
            for g in groups if g.items]


def _failures_markdown(h: Head2Head) -> list[str]:
    rows = _failure_rows(h)
    if not rows:
        return [_NO_FAILURE]
    out = ["| who | kind | items | by cause | first reasons |", "|---|---|---|---|---|"]
    for g, kind, causes in rows:
        first = "<br>".join(f"{markdown_safe(i)}: {markdown_safe(w)}" for i, w in g.first)
        out.append(f"| {markdown_safe(g.name)} | {kind} | {g.items} | {markdown_safe(causes)} | "
                   f"{first} |")
    return out


# ----------------------------------------------------------------------------- HTML

_CSS = page_css(1100) + """\
.decision{font-size:1.3rem;font-weight:700;padding:.8rem 1rem;border-radius:8px;
background:#ecfdf5;border:1px solid #10b981}
.decision.tie{background:#f3f4f6;border-color:#9ca3af}
.decision.incomplete,.banner{background:#fee2e2;border:1px solid #dc2626}
.banner{padding:.6rem 1rem;margin:.5rem 0;font-weight:600;border-radius:6px}
td.why{text-align:left;font-family:monospace;font-size:.8rem}
b.flat{color:#dc2626}
.reason{font-family:monospace;font-size:.85rem;white-space:pre-wrap}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #e5e7eb;
padding:.25rem .5rem;text-align:right;font-size:.85rem}th{background:#f9fafb}
.cmrow{display:flex;flex-wrap:wrap;gap:0 2rem;margin-bottom:.8rem}
.cm table{margin:0}caption{font-weight:600;font-size:.85rem;text-align:left;padding-bottom:.2rem}
.note{text-align:left;color:#6b7280}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px}
"""
def _bootstrap_html(h: Head2Head) -> str:
    # Complete items only: an incomplete item has no composite (S is None).
    delta = [p.b.S - p.a.S for p in h.pairs if p.a.S is not None and p.b.S is not None]
    if not delta:
        return "<p>No complete item: nothing to resample.</p>"
    return bootstrap_svg(delta, h.decision, h.labels)


def _confusion_table(cm: ConfusionMatrix, label: str) -> str:
    peak = max(max(r) for r in cm.counts) or 1
    acc = cm.accuracy
    caption = f"{cm.trait} — {label}" + (f" (exact {100 * acc:.0f}%)" if cm.total else "")
    rows = [f'<div class="cm"><table><caption>{html_safe(caption)}</caption>'
            f"<tr><th>requested \\ measured</th>"]
    rows += [f"<th>{html_safe(c)}</th>" for c in cm.columns] + ["</tr>"]
    for i, (rname, counts) in enumerate(zip(cm.rows, cm.counts, strict=True)):
        rows.append(f"<tr><th>{html_safe(rname)}</th>")
        for j, c in enumerate(counts):
            alpha = 0.85 * c / peak
            ink = "#ffffff" if alpha > 0.5 else "#1f2937"
            edge = ";outline:2px solid #111827;outline-offset:-2px" if i == j else ""
            rows.append(f'<td style="background:rgba(37,99,235,{alpha:.2f});color:{ink}'
                        f'{edge}">{c}</td>')
        rows.append("</tr>")
    if cm.missing:
        rows.append(f'<tr><td colspan="{len(cm.columns) + 1}" class="note">'
                    f"{cm.missing} clip(s) not measured</td></tr>")
    rows.append("</table></div>")
    return "".join(rows)


def _confusion_html(h: Head2Head) -> str:
    """Requested × measured per categorical/ordinal trait, the two systems side by side."""
    per_side = []
    for side, label in zip(("a", "b"), h.labels, strict=True):
        ok = [p for p in h.pairs if getattr(p, side).failure is None]
        req = [p.item.traits for p in ok]
        meas = [{t: r.label for t, r in getattr(p, f"analysis_{side}").probes.items()}
                for p in ok]
        per_side.append((label, len(ok), confusion_matrices(req, meas, registry=h.registry)))
    out = []
    for trait in h.registry.names():
        tables = []
        for label, n_ok, cms in per_side:
            cm = cms.get(trait)
            if cm is None or cm.missing == n_ok or cm.total == 0:
                continue
            tables.append(_confusion_table(cm, label))
        if tables:
            out.append('<div class="cmrow">' + "".join(tables) + "</div>")
    return "".join(out) or "<p>No categorical or ordinal trait was measured.</p>"


def _responses_html(h: Head2Head) -> str:
    rs = _responses(h)
    if not rs:
        return "<p>No level-controlled trait was measured.</p>"
    la, lb = h.labels
    parts = ['<div class="cmrow">']
    for r in rs:
        rows = [f"<div class=\"cm\"><table><caption>{html_safe(r.trait)} ({html_safe(r.unit)})"
                f"</caption><tr><th>requested</th><th>{html_safe(la)}</th>"
                f"<th>{html_safe(lb)}</th></tr>"]
        for lvl in r.levels:
            rows.append(f"<tr><th>{html_safe(lvl)}</th>"
                        f"<td>{html_safe(r.cells.get((la, lvl), '—'))}</td>"
                        f"<td>{html_safe(r.cells.get((lb, lvl), '—'))}</td></tr>")
        spans = []
        for lab in (la, lb):
            sp = r.span.get(lab)
            flat = r.flat.get(lab)
            spans.append("—" if sp is None else
                         f"{sp:.2f}" + (' <b class="flat">FLAT</b>' if flat else ""))
        rows.append(f"<tr><th>span</th><td>{spans[0]}</td><td>{spans[1]}</td></tr>"
                    "</table></div>")
        parts.append("".join(rows))
    parts.append("</div>")
    return "".join(parts)


def _failures_html(h: Head2Head) -> str:
    found = _failure_rows(h)
    if not found:
        return f"<p>{_NO_FAILURE}</p>"
    rows = ["<table><tr><th>who</th><th>kind</th><th>items</th><th>by cause</th>"
            "<th>first reasons</th></tr>"]
    for g, kind, causes in found:
        first = "<br>".join(html_safe(f"{i}: {w}") for i, w in g.first)
        rows.append(f"<tr><th>{html_safe(g.name)}</th><td>{kind}</td><td>{g.items}</td>"
                    f"<td>{html_safe(causes)}</td><td class=\"why\">{first}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def render_html(h: Head2Head, *, extra: Sequence[str] = ()) -> str:
    """One self-contained HTML page (inline CSS and SVG; nothing fetched but the clips of
    the listening section, relative files beside it). ``extra``: HTML of sections made from
    more than the run (listening, human labels), placed before the metadata."""
    la, lb = h.labels
    d = h.decision
    rows = _dimension_rows(h)
    note = _table_note(h)
    status = "\n".join(_cache_warning(h) + h.status()
                       + ([f"not scored: {', '.join(_not_scored(h))}"]
                          if _not_scored(h) else []) + ([note] if note else []))
    table = ["<table><tr><th>dimension</th><th>mean d " + html_safe(la) + "</th><th>mean d "
             + html_safe(lb) + "</th><th>success " + html_safe(la) + "</th><th>success "
             + html_safe(lb) + "</th><th>win rate " + html_safe(lb) + "</th><th>n</th></tr>"]
    for r in rows:
        table.append(f"<tr><th>{html_safe(r.dimension)}</th><td>{_fmt(r.mean_a)}</td>"
                     f"<td>{_fmt(r.mean_b)}</td><td>{_fmt(r.success_a, True)}</td>"
                     f"<td>{_fmt(r.success_b, True)}</td><td>{_fmt(r.win_rate_b, True)}</td>"
                     f"<td>{r.n}</td></tr>")
    table.append(f"<tr><th>{_composite_label(h)}</th><td>{_fmt(d.mean_a)}</td>"
                 f"<td>{_fmt(d.mean_b)}</td>"
                 f"<td></td><td></td><td></td><td>{d.n}</td></tr></table>")
    gate = (gate_html(h) if gate_on(h)
            else "<p>OFF — no transcriber ran; no sample was gated.</p>")
    verdict = _verdict_text(h).replace("TIE", "tie")
    banner = "".join(f'<div class="banner">{html_safe(b)}</div>'
                     for b in _banner(h) + judge_warnings(h))
    kind = " tie" if d.winner == "tie" else " incomplete" if d.winner == INCOMPLETE else ""
    meta = json.dumps({k: v for k, v in h.metadata.items() if k != "status"}, indent=2,
                      sort_keys=True)
    return page_head(f"vocencebench: {la} vs {lb}", _CSS) + f"""\
{banner}<div class="status">{html_safe(status)}</div>
<h2>Decision</h2>
<div class="decision{kind}">{html_safe(verdict)}</div>
<p class="reason">{html_safe(d.reason)}</p>
{robustness_section.html_section(h.robustness)}
<h2>Bootstrap distribution of the mean difference</h2>
{_bootstrap_html(h)}
<h2>Per-dimension adherence</h2>
<div class="legend"><span style="background:{COLOUR_A}"></span>{html_safe(la)}
<span style="background:{COLOUR_B}"></span>{html_safe(lb)}</div>
{dimension_bars_svg([(r.dimension, r.mean_a, r.mean_b) for r in rows], la, lb)}
{''.join(table)}
<h2>Intelligibility gate</h2>{gate}
<h2>Measured value per requested level</h2>
{_responses_html(h)}
<h2>Failures</h2>
{_failures_html(h)}
<h2>Confusion matrices (requested × measured)</h2>
{_confusion_html(h)}
{judge_html(h)}
{"".join(extra)}<h2>Run metadata</h2><pre>{html_safe(meta)}</pre>
</body></html>
"""
