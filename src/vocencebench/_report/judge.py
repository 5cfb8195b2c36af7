"""The judge's section of a run report: what it cost (early stopping, calls) and how it
behaved (:func:`vocencebench.judge_audit.judge_behaviour`), as summary lines, Markdown and
HTML, and the record run.json keeps (:func:`behaviour_record`).

Labels and reasons are untrusted text: the Markdown goes through the escaping function the
caller passes (``md``, :mod:`vocencebench.report`'s), the HTML through
:func:`~vocencebench._util.text.html_safe`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._util.text import html_safe
from ..judge_audit import BehaviourRow, JudgeBehaviour, judge_behaviour

if TYPE_CHECKING:
    from ..result import Head2Head

__all__ = ["behaviour", "behaviour_html", "behaviour_lines", "behaviour_markdown",
           "behaviour_record", "early_stop_lines", "judge_html", "judge_markdown",
           "judge_summary_lines", "judge_warnings"]

_COLUMNS = ("dimension", "pairs", "swap disagreement", "vote disagreement", "ties",
            "unparsable", "mean confidence", "first clip preferred")
_SYSTEM_COLUMNS = ("dimension", "system", "won when heard first", "won when heard second",
                   "swap disagreement", "ties", "mean confidence")


def behaviour(h: Head2Head) -> JudgeBehaviour | None:
    """The judge's behaviour in run ``h`` (None when no judge ran)."""
    if h.metadata.get("judge_model") is None:
        return None
    return judge_behaviour([(h.labels, h.pairs)], registry=h.registry,
                           both_orders=bool(h.metadata.get("judge_consistent", True)))


def behaviour_record(h: Head2Head) -> dict[str, Any] | None:
    """What run.json keeps under ``judge_behaviour`` (None when no judge ran)."""
    b = behaviour(h)
    return b.to_dict() if b is not None else None


def judge_warnings(h: Head2Head) -> list[str]:
    """The WARNING lines (one per dimension whose swap disagreement is over the limit)."""
    b = behaviour(h)
    return list(b.warnings) if b is not None else []


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _cells(r: BehaviourRow) -> list[str]:
    vote = _pct(r.vote_disagreement) if r.vote_groups else "— (1 vote)"
    return [r.dimension, str(r.pairs), _pct(r.swap_disagreement), vote, _pct(r.ties),
            _pct(r.unparsable), _num(r.confidence), _pct(r.first_preferred)]


def _system_cells(r: BehaviourRow) -> list[str]:
    return [r.dimension, str(r.system), _pct(r.won_first), _pct(r.won_second),
            _pct(r.swap_disagreement), _pct(r.ties), _num(r.confidence)]


def early_stop_lines(h: Head2Head) -> list[str]:
    """Plain lines on early stopping (empty for a run that did not ask for it)."""
    rec = h.metadata.get("early_stopping")
    if not isinstance(rec, dict) or "judged" not in rec:
        return []
    out = [f"early stopping: judged {rec['judged']} of {rec['needing_judge']} items that "
           f"needed the judge ({rec['items']} items; batches of {rec['batch']} in the seeded "
           f"order of seed {rec['order_seed']})"]
    es = h.decision.early_stop
    if rec.get("stopped_early") and isinstance(es, dict):
        la, lb = h.labels
        out.append(f"  over every outcome of the {es['unjudged']} unjudged items: "
                   f"LCB({lb}−{la}) ∈ [{es['lcb'][0]:+.4f}, {es['lcb'][1]:+.4f}], margin({la}) "
                   f"∈ [{es['margin'][0]:.4f}, {es['margin'][1]:.4f}]; LCB({la}−{lb}) ∈ "
                   f"[{es['lcb_reverse'][0]:+.4f}, {es['lcb_reverse'][1]:+.4f}], margin({lb}) "
                   f"∈ [{es['margin_reverse'][0]:.4f}, {es['margin_reverse'][1]:.4f}]")
        out.append(f"  certain: {es['certain']}")
        out.append("  per-dimension means of the judged dimensions are over the judged "
                   "items only; `vocencebench decide scores.jsonl` recomputes the proof")
    else:
        out.append(f"  {rec.get('why', '')}")
    return out


def behaviour_lines(b: JudgeBehaviour, extra: list[str] | None = None) -> list[str]:
    """The judge section of a text summary: ``extra`` lines first (early stopping), the
    WARNING lines, the per-dimension table, the notes."""
    out = ["judge behaviour (how far its verdicts can be trusted):"]
    out += [f"  {x}" for x in extra or []]
    out += [f"  {w}" for w in b.warnings]
    out.append("  " + " | ".join(_COLUMNS))
    out += ["  " + " | ".join(_cells(r)) for r in b.overall()]
    out += [f"  note: {n}" for n in b.notes]
    return out


def judge_summary_lines(h: Head2Head) -> list[str]:
    """The judge section of the run's text summary (empty when no judge ran)."""
    b = behaviour(h)
    return behaviour_lines(b, early_stop_lines(h)) if b is not None else []


def behaviour_markdown(b: JudgeBehaviour, md: Callable[[str], str],
                       extra: list[str] | None = None) -> list[str]:
    """A ``## The judge`` Markdown section (``md`` escapes untrusted text)."""
    out = ["", "## The judge", ""]
    if extra:
        out += [md(x.strip()) + "  " for x in extra] + [""]
    out += [f"> **{md(w)}**" for w in b.warnings]
    if b.warnings:
        out.append("")
    out += ["How the judge behaved: the order-swap disagreement is the share of pairs whose "
            "winner changed when the clips were played the other way round (its position "
            f"bias; a WARNING above {100 * b.threshold:.0f} %).", "",
            "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    out += ["| " + " | ".join(md(c) for c in _cells(r)) + " |" for r in b.overall()]
    out += ["", "| " + " | ".join(_SYSTEM_COLUMNS) + " |", "|" + "---|" * len(_SYSTEM_COLUMNS)]
    out += ["| " + " | ".join(md(c) for c in _system_cells(r)) + " |" for r in b.per_system()]
    out += ["", *(f"Note: {md(n)}." for n in b.notes)]
    return out


def judge_markdown(h: Head2Head, md: Callable[[str], str]) -> list[str]:
    """The ``## The judge`` section of report.md (empty when no judge ran)."""
    b = behaviour(h)
    return behaviour_markdown(b, md, early_stop_lines(h)) if b is not None else []


def _table(head: tuple[str, ...], rows: list[list[str]]) -> str:
    parts = ["<table><tr>" + "".join(f"<th>{html_safe(c)}</th>" for c in head) + "</tr>"]
    for r in rows:
        parts.append("<tr><th>" + html_safe(r[0]) + "</th>"
                     + "".join(f"<td>{html_safe(c)}</td>" for c in r[1:]) + "</tr>")
    parts.append("</table>")
    return "".join(parts)


def judge_html(h: Head2Head) -> str:
    """The judge section of report.html ("" when no judge ran)."""
    b = behaviour(h)
    return behaviour_html(b, early_stop_lines(h)) if b is not None else ""


def behaviour_html(b: JudgeBehaviour, es: list[str] | None = None) -> str:
    """A "The judge" HTML section (every text escaped)."""
    es = es or []
    warn = "".join(f'<div class="banner">{html_safe(w)}</div>' for w in b.warnings)
    stop = (f'<p class="reason">{html_safe(chr(10).join(x.strip() for x in es))}</p>'
            if es else "")
    notes = "".join(f"<p class=\"note\">{html_safe(n)}.</p>" for n in b.notes)
    return (f"<h2>The judge</h2>{stop}{warn}<p>Order-swap disagreement: the share of pairs "
            "whose winner changed when the clips were played the other way round (the "
            f"position bias; a WARNING above {100 * b.threshold:.0f} %).</p>"
            + _table(_COLUMNS, [_cells(r) for r in b.overall()])
            + _table(_SYSTEM_COLUMNS, [_system_cells(r) for r in b.per_system()]) + notes)
