"""The "How robust is the verdict" section of the run reports (summary, report.md, report.html).

It renders a :class:`~vocencebench.robustness.Robustness` and computes nothing: the one line,
then every variant's verdict and bounds, the random-weight tally and the notes. Untrusted text
(system labels, item ids inside notes, dimension names a caller registered) goes through the
one function per format of :mod:`._util.text <vocencebench._util.text>`: ``terminal_safe``
for the plain-text summary, ``markdown_safe`` for Markdown, ``html_safe`` for HTML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._util.text import html_safe, markdown_safe, terminal_safe

if TYPE_CHECKING:
    from ..robustness import Robustness, Variant

__all__ = ["TITLE", "html_section", "markdown_lines", "summary_lines"]

#: The section's heading in report.md and report.html.
TITLE = "How robust is the verdict"

#: What the section is, under its heading (the method is in docs/methodology.md).
_INTRO = ("The same per-sample scores re-decided by the same rule (same items, same 2000 "
          "resamples, same LCB and margin) with one frozen choice changed at a time. This "
          "never changes the verdict above; it says how much the verdict depends on those "
          "choices.")


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:+.4f}"


def _bar(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def _rule(v: Variant) -> str:
    return f"{v.label} (the rule's)" if v.rule else v.label


def _weights_line(r: Robustness) -> str:
    w = r.weights
    if w is None or not w.computed:
        return ("random dimension weights: not computed"
                + (f": {w.note}" if w is not None and w.note else ""))
    tally = ", ".join(f"{k} {n}" for k, n in w.by_winner.items())
    rate = 100.0 * (w.rate or 0.0)
    return (f"random dimension weights ({w.draws} Dirichlet(1) draws, seed {w.seed}): "
            f"{tally}; the verdict flips in {w.flips} ({rate:.1f} %)")


def _noted(r: Robustness, computed: bool) -> list[tuple[str, str]]:
    """(labels, note) of the variants computed (or not) that carry a note, grouped by it."""
    groups: dict[str, list[str]] = {}
    for v in r.variants:
        if v.computed == computed and (v.note or not computed):
            groups.setdefault(v.note or "not computed", []).append(v.label)
    return [(", ".join(labels), note) for note, labels in groups.items()]


def summary_lines(r: Robustness) -> list[str]:
    """Plain-text lines for the run summary: the line, a compact table, the weights."""
    out = [f"ROBUSTNESS: {terminal_safe(r.summary)}"]
    done = [v for v in r.variants if v.computed]
    if done:
        la, lb = terminal_safe(r.labels[0]), terminal_safe(r.labels[1])
        fwd, rev = f"LCB({lb}−{la})", f"LCB({la}−{lb})"
        w = max(len("variant"), *(len(_rule(v)) for v in done))
        ww = max(len("verdict"), *(len(terminal_safe(v.winner or "")) for v in done))
        wf, wr = max(8, len(fwd)), max(8, len(rev))
        out.append(f"  {'variant':<{w}}  {'verdict':<{ww}}  {fwd:>{wf}}  {rev:>{wr}}  holds")
        for v in done:
            out.append(f"  {_rule(v):<{w}}  {terminal_safe(v.winner or ''):<{ww}}  "
                       f"{_num(v.lcb):>{wf}}  "
                       f"{_num(v.lcb_reverse):>{wr}}  {'yes' if v.holds else 'NO'}")
    out += [terminal_safe(f"  note ({labels}): {note}") for labels, note in _noted(r, True)]
    out += [terminal_safe(f"  not computed ({labels}): {note}")
            for labels, note in _noted(r, False)]
    if r.variants or r.weights is not None:
        out.append(f"  {terminal_safe(_weights_line(r))}")
    out += [f"  note: {terminal_safe(n)}" for n in r.notes if not r.summary.endswith(n)]
    return out


def markdown_lines(r: Robustness) -> list[str]:
    """The Markdown section, every untrusted text through ``markdown_safe``."""
    md = markdown_safe
    la, lb = md(r.labels[0]), md(r.labels[1])
    out = [f"## {TITLE}", "", f"**{md(r.summary)}**", ""]
    if not r.variants:
        return out
    out += [_INTRO, "",
            f"| variant | verdict | LCB({lb}−{la}) | margin({la}) | LCB({la}−{lb}) | "
            f"margin({lb}) | holds | note |", "|---|---|---|---|---|---|---|---|"]
    for v in r.variants:
        holds = "—" if v.holds is None else "yes" if v.holds else "**NO**"
        out.append(f"| {md(_rule(v))} | {md(v.winner or 'not computed')} | {_num(v.lcb)} | "
                   f"{_bar(v.margin)} | {_num(v.lcb_reverse)} | {_bar(v.margin_reverse)} | "
                   f"{holds} | {md(v.note or '')} |")
    out += ["", md(_weights_line(r)) + "."]
    out += [f"\nNote: {md(n)}" for n in r.notes]
    return out


def html_section(r: Robustness) -> str:
    """The HTML section (heading, the line, the table), every untrusted text through
    ``html_safe``."""
    e = html_safe
    kind = "robust" if r.robust else "fragile" if r.robust is False else "unknown"
    parts = [f"<h2>{TITLE}</h2>", f'<p class="robustness {kind}"><b>{e(r.summary)}</b></p>']
    if not r.variants:
        return "\n".join(parts)
    la, lb = e(r.labels[0]), e(r.labels[1])
    parts += [f'<p class="note">{_INTRO}</p>',
              f"<table><tr><th>variant</th><th>verdict</th><th>LCB({lb}−{la})</th>"
              f"<th>margin({la})</th><th>LCB({la}−{lb})</th><th>margin({lb})</th>"
              "<th>holds</th><th>note</th></tr>"]
    for v in r.variants:
        holds = ("—" if v.holds is None else "yes" if v.holds
                 else '<b class="flat">NO</b>')
        parts.append(f"<tr><th>{e(_rule(v))}</th><td>{e(v.winner or 'not computed')}</td>"
                     f"<td>{_num(v.lcb)}</td><td>{_bar(v.margin)}</td>"
                     f"<td>{_num(v.lcb_reverse)}</td><td>{_bar(v.margin_reverse)}</td>"
                     f'<td>{holds}</td><td class="why">{e(v.note or "")}</td></tr>')
    parts.append("</table>")
    parts.append(f"<p>{e(_weights_line(r))}.</p>")
    parts += [f'<p class="note">Note: {e(n)}</p>' for n in r.notes]
    return "\n".join(parts)
