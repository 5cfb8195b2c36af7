"""The listening section of a report: both systems' clips side by side for the items a
:class:`~vocencebench.clips.ClipSelection` picked, with the request, each dimension's d, the
gate's transcript and the judge's reasoning (HTML), and a short pointer in the Markdown.

The audio elements reference ``clips/….flac`` relatively, so the page plays them opened from
disk, copied as a folder, or behind any static server. Every text that came from the corpus,
a system, the transcriber or the judge goes through :func:`~._util.text.html_safe`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._util.text import html_attr_safe, html_safe, markdown_safe

if TYPE_CHECKING:
    from ..clips import ClipSelection, ExportedClips
    from ..pair import ClipAnalysis, PairResult
    from ..schema import SampleScore

__all__ = ["LISTENING_CSS", "listening_html", "listening_markdown"]

LISTENING_CSS = """\
.listen .card{border:1px solid #e5e7eb;border-radius:8px;padding:.6rem .9rem;margin:.8rem 0}
.listen .why{font-size:.8rem;color:#374151}.listen .req{font-size:.85rem;margin:.3rem 0}
.listen .sides{display:flex;gap:1.2rem;flex-wrap:wrap}.listen .side{flex:1 1 420px}
.listen audio{width:100%}.listen .miss{color:#b91c1c;font-size:.85rem}
.listen table{margin:.3rem 0}.listen .tr{font-family:monospace;font-size:.8rem}
.listen .judge{font-size:.8rem;color:#374151}
"""
_GROUP_TITLES = {"decisive": "Decisive items (largest δ in each direction)",
                 "gate": "Gate vetoes", "failure": "System failures that produced audio",
                 "worst": "Worst items per dimension"}


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _side_html(pair: PairResult, side: str, label: str, score: SampleScore,
               an: ClipAnalysis, clips: ExportedClips) -> str:
    f = clips.files.get((pair.item.id, side))
    if f is not None:
        player = (f'<audio controls preload="metadata" src="{html_attr_safe(f.path)}" '
                  f'data-duration="{f.duration:.6f}" data-side="{side}"></audio>')
    else:
        why = clips.missing.get((pair.item.id, side), "no clip")
        player = f'<p class="miss">no clip to play: {html_safe(why)}</p>'
    lines = [f"<strong>{html_safe(label)}</strong> ({side}) — S {_fmt(score.S)}"]
    if an.failure:
        lines.append(f'<span class="miss">failed: {html_safe(an.failure)}</span>')
    if an.wer is not None or an.asr_engine:
        gate = "passes" if an.gate == 1 else "VETOED" if an.gate == 0 else "—"
        lines.append(f"gate {gate}, WER {_fmt(an.wer)} ({html_safe(an.asr_engine or '?')})")
        lines.append(f'<span class="tr">heard: {html_safe(an.transcript or "")}</span>')
    return f'<div class="side">{"<br>".join(lines)}{player}</div>'


def _dims_html(pair: PairResult, labels: tuple[str, str], order: Sequence[str]) -> str:
    dims = [d for d in order if d in pair.a.d or d in pair.b.d]
    dims += sorted((set(pair.a.d) | set(pair.b.d)) - set(dims))
    if not dims:
        return ""
    rows = [f"<table><tr><th>dimension</th><th>requested</th><th>d {html_safe(labels[0])}"
            f"</th><th>d {html_safe(labels[1])}</th></tr>"]
    for dim in dims:
        cells = []
        for s, an in ((pair.a, pair.analysis_a), (pair.b, pair.analysis_b)):
            r = an.probes.get(dim)
            got = f" ({html_safe(r.label)})" if r is not None and r.label else ""
            cells.append(f"<td>{_fmt(s.d.get(dim))}{got}</td>")
        req = pair.item.traits.get(dim, "")
        rows.append(f"<tr><th>{html_safe(dim)}</th><td>{html_safe(req)}</td>"
                    f"{''.join(cells)}</tr>")
    rows.append("</table>")
    return "".join(rows)


def _judge_html(pair: PairResult, labels: tuple[str, str]) -> str:
    out = []
    for dim, v in pair.verdicts.items():
        swap = "" if v.consistent else " — the two orders disagreed"
        out.append(f"<div class=\"judge\"><b>judge on {html_safe(dim)}</b>: "
                   f"{html_safe(labels[0])} {v.score_a:.2f}, {html_safe(labels[1])} "
                   f"{v.score_b:.2f}, winner {html_safe(v.winner)}{swap}<br>"
                   f"{html_safe(labels[0])}: {html_safe(v.reasoning_a)}<br>"
                   f"{html_safe(labels[1])}: {html_safe(v.reasoning_b)}</div>")
    return "".join(out)


def listening_html(pairs: Sequence[PairResult], labels: tuple[str, str],
                   order: Sequence[str], selection: ClipSelection | None,
                   clips: ExportedClips | None, *, unavailable: str | None = None,
                   heading: str = "Listen: the clips behind the verdict",
                   level: int = 2) -> str:
    """The section's HTML (heading included). ``order``: the registry's dimensions.
    ``unavailable``: the one line shown instead when there is nothing to export (no
    soundfile, no selection). ``heading`` and its ``level`` (2: a report's section; 3: one
    pair of a leaderboard, whose groups are then level 4)."""
    ident = ' id="listening"' if level == 2 else ""
    head = f"<h{level}{ident}>{html_safe(heading)}</h{level}>"
    if unavailable is not None or selection is None or clips is None:
        return f'{head}<p class="miss">{html_safe(unavailable or "clips: not exported")}</p>'
    if not selection.picks:
        return f"{head}<p>No item to listen to: no item has a δ, a veto or a failure.</p>"
    intro = (f"<p>Both systems' clips for the {selection.k} items with the largest δ = S_b − "
             f"S_a in each direction, every gate veto and every system failure that produced "
             f"audio (at most {selection.cap} items each), and per scored dimension the "
             f"{selection.worst} items with the lowest d. Lossless FLAC of the samples the "
             f"probes measured, in <code>clips/</code> beside this page.</p>")
    if selection.worst == 0 and selection.cap == 0:
        intro = (f"<p>Both systems' clips for the {selection.k} items with the largest δ in "
                 "each direction (lossless FLAC in <code>clips/</code>).</p>")
    parts = [f"<style>{LISTENING_CSS}</style>", head, '<div class="listen">', intro]
    if clips.note:
        parts.append(f'<p class="miss">{html_safe(clips.note)}</p>')
    for g, n in selection.omitted.items():
        parts.append(f'<p class="miss">{n} more item(s) of group "{html_safe(g)}" are not '
                     "shown (size budget); run.json lists them all.</p>")
    current = None
    for pick in selection.picks:
        if pick.group != current:
            current = pick.group
            parts.append(f"<h{level + 1}>{html_safe(_GROUP_TITLES.get(current, current))}"
                         f"</h{level + 1}>")
        p = pairs[pick.index]
        parts.append(
            f'<div class="card" data-item="{html_attr_safe(p.item.id)}">'
            f"<b>{html_safe(p.item.id)}</b> "
            f'<span class="why">{"; ".join(html_safe(r) for r in pick.reasons)}</span>'
            f'<div class="req">instruction: {html_safe(p.item.instruction)}<br>'
            f"script: {html_safe(p.item.text)}</div>"
            f'<div class="sides">'
            f"{_side_html(p, 'a', labels[0], p.a, p.analysis_a, clips)}"
            f"{_side_html(p, 'b', labels[1], p.b, p.analysis_b, clips)}</div>"
            f"{_dims_html(p, labels, order)}{_judge_html(p, labels)}</div>")
    parts.append("</div>")
    return "".join(parts)


def listening_markdown(selection: ClipSelection | None, clips: ExportedClips | None, *,
                       unavailable: str | None = None) -> list[str]:
    """The Markdown pointer (heading included): how many clips the HTML report plays, or
    why none."""
    out = ["## Listen", ""]
    if unavailable is not None or selection is None or clips is None:
        return [*out, markdown_safe(unavailable or "clips: not exported")]
    n = len({f.path for f in clips.files.values()})
    # Count what is really played: an item whose side has no clip (no audio, or the cache
    # could not give it) is not one of "both systems' clips".
    both = sum((p.item, "a") in clips.files and (p.item, "b") in clips.files
               for p in selection.picks)
    lacking = len(selection.picks) - both
    line = (f"report.html plays both systems' clips for {both} of {len(selection.picks)} "
            f"items (the {selection.k} largest δ each way, gate vetoes, failures, the "
            f"{selection.worst} worst per dimension): {n} FLAC files in clips/.")
    if lacking:
        line += (f" {lacking} item(s) have a side without a clip; the page says why "
                 "for each.")
    out.append(line)
    if clips.note:
        out += ["", markdown_safe(clips.note)]
    return out
