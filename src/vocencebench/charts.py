"""Inline SVG charts of the reports (a run's and a leaderboard's): no script, no network.

Positions are in SVG user units (pixels); the values charted are composites and
desirabilities on [0, 1] and their differences (δ = S(b) − S(a), on [−1, 1]).
:func:`svg_open` and :func:`unit_grid` are shared by every chart; :func:`dimension_bars_svg`
and :func:`bootstrap_svg` are the run report's own. :func:`page_css` and :func:`page_head`
are the page frame both reports' HTML starts with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._util.text import html_attr_safe, html_safe
from .decide import bootstrap_means, lower_confidence_bound
from .schema import Decision

__all__ = ["COLOUR_A", "COLOUR_B", "bootstrap_svg", "dimension_bars_svg", "nice_ticks",
           "page_css", "page_head", "svg_open", "unit_grid"]

#: Colours of system a and system b in a run's charts and legends.
COLOUR_A, COLOUR_B = "#2563eb", "#f59e0b"


def page_css(max_width_px: int) -> str:
    """The style rules every report page starts with (body ``max_width_px`` pixels wide at
    most, headings, the status block); a page appends its own."""
    return f"""
body{{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:{max_width_px}px;color:#1f2937;padding:0 1rem}}
h1{{font-size:1.6rem}}h2{{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #e5e7eb}}
.status{{background:#fef3c7;border-left:4px solid #f59e0b;padding:.5rem 1rem;
font-family:monospace;white-space:pre-wrap}}
"""


def page_head(title: str, css: str) -> str:
    """A self-contained page up to its ``<h1>``: ``title`` (escaped here, untrusted text
    allowed: :mod:`vocencebench._util.text`) as the page title and heading, ``css`` inline."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{html_attr_safe(title)}</title>
<style>{css}</style></head><body>
<h1>{html_safe(title)}</h1>
"""


def svg_open(width: float, height: float, label: str) -> str:
    """The opening ``<svg>`` tag of a ``width`` × ``height`` chart described by ``label``."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" role="img" aria-label="{label}">')


def unit_grid(left: float, width: float, line_end: float, label_y: float) -> str:
    """Vertical grid lines at 0, 0.2, …, 1.0 of a [0, 1] axis ``width`` wide from ``left``,
    drawn from the top down to ``line_end``, each labelled at ``label_y``."""
    parts = []
    for k in range(0, 11, 2):
        x = left + width * k / 10
        parts.append(f'<line x1="{x}" y1="0" x2="{x}" y2="{line_end}" stroke="#e5e7eb"/>'
                     f'<text x="{x}" y="{label_y}" font-size="10" text-anchor="middle">'
                     f'{k / 10:.1f}</text>')
    return "".join(parts)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def dimension_bars_svg(rows: Sequence[tuple[str, float | None, float | None]], la: str,
                       lb: str) -> str:
    """Two bars per dimension: ``rows`` are (dimension, mean d of a, mean d of b), d on
    [0, 1] (None: not scored, drawn empty)."""
    bar_h, gap, left, width = 12, 10, 110, 520
    height = len(rows) * (2 * bar_h + gap) + 30
    parts = [svg_open(left + width + 60, height, "mean desirability per dimension"),
             unit_grid(left, width, height - 20, height - 5)]
    for i, (dimension, mean_a, mean_b) in enumerate(rows):
        y = i * (2 * bar_h + gap)
        parts.append(f'<text x="{left - 6}" y="{y + bar_h + 4}" font-size="12" '
                     f'text-anchor="end">{html_attr_safe(dimension)}</text>')
        for j, (val, col, lab) in enumerate(((mean_a, COLOUR_A, la), (mean_b, COLOUR_B, lb))):
            v = val or 0.0
            parts.append(f'<rect x="{left}" y="{y + j * bar_h}" width="{width * v:.1f}" '
                         f'height="{bar_h - 1}" fill="{col}"><title>{html_attr_safe(lab)}: '
                         f'{_fmt(val)}</title></rect><text x="{left + width * v + 4:.1f}" '
                         f'y="{y + j * bar_h + bar_h - 2}" font-size="10">{_fmt(val)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round tick positions (1, 2 or 5 × 10ᵏ apart) inside [lo, hi]."""
    raw = (hi - lo) / max(target, 1)
    if raw <= 0 or not math.isfinite(raw):
        return [lo]
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next((m * mag for m in (1.0, 2.0, 5.0, 10.0) if m * mag >= raw), 10.0 * mag)
    first = math.ceil(lo / step)
    return [k * step for k in range(first, math.floor(hi / step) + 1)]


def bootstrap_svg(delta: Sequence[float], d: Decision, labels: tuple[str, str]) -> str:
    """Histogram of the bootstrap means of the paired differences ``delta`` (at least one),
    resampled as the decision ``d`` did, with 0, both margins, the LCB and the UCB marked."""
    la, lb = labels
    means = bootstrap_means(delta, n_boot=d.n_boot, seed=d.seed)
    lcb = lower_confidence_bound(means)
    # The upper bound of δ is −LCB(a − b): a wins when it lies below −margin(b).
    ucb = -d.lcb_reverse if math.isfinite(d.lcb_reverse) else float(np.percentile(means, 95))
    neg_margin = -d.margin_reverse if math.isfinite(d.margin_reverse) else -d.margin
    lo = min(float(means.min()), lcb, neg_margin, 0.0)
    hi = max(float(means.max()), ucb, d.margin, 0.0)
    span = (hi - lo) or 1.0
    lo, hi = lo - 0.05 * span, hi + 0.05 * span
    counts, edges = np.histogram(means, bins=40, range=(lo, hi))
    marks = (
        (0.0, "#6b7280", "0 (no difference)"),
        (d.margin, "#059669", f"{d.margin:+.4f} = margin: {lb} wins if the LCB is above it"),
        (neg_margin, "#b45309",
         f"{neg_margin:+.4f} = −margin: {la} wins if the UCB is below it"),
        (lcb, "#dc2626", f"LCB (5th pct) {lcb:+.4f}"),
        (ucb, "#7c3aed", f"UCB (95th pct) {ucb:+.4f}"),
    )
    w, left, right = 720, 20, 20
    top = 16 * len(marks) + 6
    hgt = 170
    base = top + hgt
    peak = max(int(counts.max()), 1)

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * w

    parts = [svg_open(left + w + right, base + 48, "bootstrap distribution of the mean "
                      "difference, with the LCB and the margins")]
    for c, e0, e1 in zip(counts, edges[:-1], edges[1:], strict=True):
        bh = hgt * int(c) / peak
        if bh <= 0:
            continue
        parts.append(f'<rect x="{x(float(e0)):.1f}" y="{base - bh:.1f}" '
                     f'width="{max(x(float(e1)) - x(float(e0)) - 1, 0.5):.1f}" '
                     f'height="{bh:.1f}" fill="#a78bfa"/>')
    parts.append(f'<line x1="{left}" y1="{base}" x2="{left + w}" y2="{base}" stroke="#374151"/>')
    for t in nice_ticks(lo, hi):
        parts.append(f'<line x1="{x(t):.1f}" y1="{base}" x2="{x(t):.1f}" y2="{base + 4}" '
                     f'stroke="#374151"/><text x="{x(t):.1f}" y="{base + 16}" font-size="10" '
                     f'text-anchor="middle" fill="#374151">{t:+.2f}</text>')
    # Lines first, then every label on top with a white halo, one label row per mark.
    for k, (v, col, _) in enumerate(marks):
        parts.append(f'<line x1="{x(v):.1f}" y1="{12 + 16 * k + 3}" x2="{x(v):.1f}" '
                     f'y2="{base}" stroke="{col}" stroke-width="2" stroke-dasharray="4 2"/>')
    for k, (v, col, lab) in enumerate(marks):
        xv = x(v)
        anchor, dx = ("end", -4) if xv > left + w / 2 else ("start", 4)
        parts.append(f'<text x="{xv + dx:.1f}" y="{12 + 16 * k}" font-size="11" fill="{col}" '
                     f'text-anchor="{anchor}" stroke="#ffffff" stroke-width="4" '
                     f'paint-order="stroke">{html_attr_safe(lab)}</text>')
    parts.append(f'<text x="{left + w / 2}" y="{base + 36}" font-size="11" '
                 f'text-anchor="middle">{d.n_boot} bootstrap means of δ = S({html_attr_safe(lb)}) '
                 f'− S({html_attr_safe(la)}), seed {d.seed}</text></svg>')
    return "".join(parts)
