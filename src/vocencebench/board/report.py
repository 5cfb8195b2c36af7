"""The files of a leaderboard: scores, ``leaderboard.json``, ``leaderboard.md`` and a
self-contained ``leaderboard.html`` (inline CSS and SVG; nothing fetched).

Every file is written atomically (a temporary name in the same directory, flushed and synced,
then renamed over the old one), so a killed save leaves each file either old or new, never torn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._report.judge import behaviour_html, behaviour_lines, behaviour_markdown
from .._util.text import html_attr_safe, html_safe, markdown_code, markdown_fenced
from .._util.text import markdown_safe as md
from .._util.text import terminal_safe as ts
from ..charts import page_css, page_head, svg_open, unit_grid
from ..clips import export_clips, find_cache, prune_clips, select_clips
from ..constants import BOARD_DECISIVE_CLIPS, BOOTSTRAP_N, BOOTSTRAP_SEED
from ..outputs import atomic_write
from ..schema import dumps_canonical

if TYPE_CHECKING:
    from .ranking import Standings
    from .run import Leaderboard

__all__ = ["render_html", "render_markdown", "render_summary", "save_leaderboard"]

#: Cell colours by outcome from the row system's point of view.
OUTCOME_COLOURS = {"win": "#10b981", "loss": "#ef4444", "tie": "#d1d5db",
                   "incomplete": "#fbbf24", "not compared": "#ffffff", "self": "#f3f4f6"}
#: System colours (bars, interval dots, tier chips), in leaderboard order, cycling.
PALETTE = ("#2563eb", "#f59e0b", "#7c3aed", "#db2777", "#0891b2", "#65a30d", "#ea580c",
           "#4b5563")
_WORD = {"win": "wins", "loss": "loses", "tie": "tie", "incomplete": "INCOMPLETE",
         "not compared": "not compared"}


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "—" if x is None else format(x, spec)


def _colour(k: int) -> str:
    return PALETTE[k % len(PALETTE)]


def _cell_text(st: Standings, row: str, col: str) -> tuple[str, str, str]:
    """(outcome, short label, full reason) of the cell row × col from row's point of view."""
    if row == col:
        return "self", "—", ""
    c = st.cell(row, col)
    if c is None:
        return "not compared", "not compared", "this pair was not run (anchor mode)"
    out = c.outcome_for(row)
    if c.decision is None:
        return out, "INCOMPLETE", c.incomplete or ""
    lcb, m = c.lead_lcb(row), c.margin_for(row)
    assert lcb is not None and m is not None
    # + 0.0 shows a negated zero as +0.000.
    return out, f"{_WORD[out]} · LCB {lcb + 0.0:+.3f} vs {m:.3f}", c.decision.reason


def _dimensions(lb: Leaderboard) -> list[str]:
    """The scored dimensions in the order of the leaderboard's own registry (a trait the
    caller added is laid out where its registry puts it, as :mod:`vocencebench.report` does for
    a run)."""
    have = {d for t in lb.standings.traits.values() for d in t}
    order = list(lb.registry.dimensions())
    return [d for d in order if d in have] + sorted(have - set(order))


# --------------------------------------------------------------------------- text


def render_summary(lb: Leaderboard) -> str:
    """Plain text: status first, then tiers, the verdict matrix and the BT summary (every
    name and line from outside through :func:`~vocencebench._util.text.terminal_safe`)."""
    st = lb.standings
    m = lb.metadata
    name = {s: ts(s) for s in st.systems}
    lines = [f"vocencebench {ts(m.get('vocencebench', '?'))} leaderboard — {len(st.systems)} "
             f"systems, {len(lb.items)} items, corpus sha256 "
             f"{ts(str(m.get('corpus_hash', '?'))[:16])}…"]
    jb = lb.judge_behaviour()
    lines += [f"  {ts(s)}" for s in [*lb.status(), *(jb.warnings if jb else ())]]
    lines += ["", "TIERS (no system is ranked above one that beats it; a tie moves nobody)"]
    for t in st.tiers:
        for k, s in enumerate(t.systems):
            r, sc = st.records[s], st.scores[s]
            interval = (f"mean S {sc.mean:.3f} [{sc.low:.3f}, {sc.high:.3f}]"
                        if sc is not None else "no decided pair")
            head = f"  tier {t.rank}{' (cycle)' if t.cycle else ''}:" if k == 0 else ""
            lines.append(f"{head:<20}{name[s]:<24} {r.wins} W  {r.ties} T  {r.losses} L"
                         + (f"  {r.incomplete} incomplete" if r.incomplete else "")
                         + (f"  {r.not_compared} not compared" if r.not_compared else "")
                         + f"   {interval}")
    lines += ["", "VERDICTS, row against column (W wins, L loses, = tie, ! incomplete, "
              "· not compared; LCB of the row system's lead):"]
    w = max(8, *(len(name[s]) for s in st.systems))
    cw = max(10, *(len(name[s]) + 2 for s in st.systems))
    lines.append(" " * (w + 2) + "".join(f"{name[s]:>{cw}}" for s in st.systems))
    sym = {"win": "W", "loss": "L", "tie": "=", "incomplete": "!", "not compared": "·",
           "self": "—"}
    for x in st.systems:
        row = []
        for y in st.systems:
            out, _, _ = _cell_text(st, x, y)
            c = st.cell(x, y) if x != y else None
            lcb = c.lead_lcb(x) if c is not None else None
            row.append(f"{sym[out]} {lcb + 0.0:+.3f}" if lcb is not None else sym[out])
        lines.append(f"  {name[x]:<{w}}" + "".join(f"{r:>{cw}}" for r in row))
    bt = st.bradley_terry
    lines += ["", "Bradley–Terry fit over per-item outcomes — a SUMMARY, NOT THE VERDICT:"]
    if bt.note:
        lines.append(f"  {ts(bt.note)}")
    else:
        lines.append("  " + ", ".join(f"{name[s]} {bt.log_strength[s]:+.3f}"
                                      for s in bt.order())
                     + f"  (log-strength, mean 0; {bt.iterations} iterations)")
    if jb is not None:
        lines += ["", *(ts(x) for x in behaviour_lines(jb))]
    files = sorted(set(lb.scores_files().values()))
    lines += ["", f"recompute any cell: {ts(lb.recompute_command(next(iter(lb.runs))))}"
              + (f"  (files: {ts(', '.join(files[:3]))}{' …' if len(files) > 3 else ''})"
                 if len(files) > 1 else "")]
    return "\n".join(lines)


def render_markdown(lb: Leaderboard) -> str:
    """The leaderboard as Markdown."""
    st = lb.standings
    out = [f"# vocencebench leaderboard: {len(st.systems)} systems, {len(lb.items)} items", ""]
    out += [f"> {md(s)}" for s in lb.status()]
    out += ["", "## Tiers", "",
            "A system is never ranked above a system that beats it; systems that beat each "
            "other in a cycle share a tier; a tie never moves a system down. Within a tier the "
            "listing (by wins) is not a ranking.", "",
            "| tier | system | wins | ties | losses | incomplete | not compared | mean S | "
            "90 % interval | n |", "|---|---|---|---|---|---|---|---|---|---|"]
    for t in st.tiers:
        for s in t.systems:
            r, sc = st.records[s], st.scores[s]
            out.append(f"| {t.rank}{' (cycle)' if t.cycle else ''} | {md(s)} | {r.wins} | "
                       f"{r.ties} | {r.losses} | {r.incomplete} | {r.not_compared} | "
                       f"{_fmt(sc.mean if sc else None)} | "
                       + (f"[{sc.low:.3f}, {sc.high:.3f}] | {sc.n} |" if sc else "— | 0 |"))
    out += ["", "## Verdicts (row against column)", "",
            "Each cell: the row system's result and the LCB of its lead against the margin it "
            "had to clear.", "",
            "| | " + " | ".join(md(s) for s in st.systems) + " |",
            "|---" * (len(st.systems) + 1) + "|"]
    for x in st.systems:
        out.append(f"| **{md(x)}** | " + " | ".join(md(_cell_text(st, x, y)[1])
                                                   for y in st.systems) + " |")
    out += ["", "## Pairs", ""]
    for c, pair in zip(st.cells, lb.runs, strict=True):
        head = f"**{md(c.incumbent)} vs {md(c.challenger)}**: "
        out.append(head + md(c.incomplete or "") if c.decision is None
                   else head + md(f"{c.winner}. {c.decision.reason}"))
        out.append(f"  recompute: {markdown_code(lb.recompute_command(pair))}")
        out.append("")
    dims = _dimensions(lb)
    if dims:
        out += ["## Mean desirability per dimension", "",
                "| system | " + " | ".join(md(d) for d in dims) + " |",
                "|---" * (len(dims) + 1) + "|"]
        for s in st.systems:
            out.append(f"| {md(s)} | " + " | ".join(_fmt(st.traits[s].get(d)) for d in dims)
                       + " |")
    bt = st.bradley_terry
    out += ["", "## Bradley–Terry summary (not the verdict)", "",
            "Fitted to the per-item outcomes of every decided pair (higher S wins the item; "
            "equal S counts half to each; one virtual tie per pair). Shown for readers who "
            "expect a single scale; the verdicts and tiers above are the result.", ""]
    if bt.note:
        out.append(md(bt.note))
    else:
        out += ["| system | log-strength | strength |", "|---|---|---|"]
        out += [f"| {md(s)} | {bt.log_strength[s]:+.3f} | {bt.strength[s]:.3f} |"
                for s in bt.order()]
    jb = lb.judge_behaviour()
    if jb is not None:  # a bare spec's default label can carry any text
        out += behaviour_markdown(jb, md)
    doc = lb.to_dict()
    out += ["", "## Failures", "",
            markdown_fenced(json.dumps(doc["failures"], indent=2, ensure_ascii=False), "json"),
            "", "## Canaries", "", md(doc["canaries"].get("line", doc["canaries"]["status"])),
            "", markdown_fenced(json.dumps(doc["canaries"], indent=2, ensure_ascii=False),
                                "json"),
            "", "## Run metadata", "",
            markdown_fenced(json.dumps(doc["metadata"], indent=2, sort_keys=True,
                                       ensure_ascii=False), "json"), ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- HTML

_CSS = page_css(1150) + """\
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #e5e7eb;
padding:.3rem .5rem;font-size:.85rem}th{background:#f9fafb}
table.matrix td{min-width:9rem;height:3.2rem;text-align:center}
table.matrix td .v{font-weight:700;display:block}table.matrix td .n{font-size:.75rem}
.tier{display:flex;align-items:center;gap:.6rem;margin:.4rem 0}
.tier .rank{font-weight:700;width:5rem}
.chip{padding:.25rem .6rem;border-radius:999px;color:#fff;font-size:.85rem}
.summary{background:#f3f4f6;border-left:4px solid #9ca3af;padding:.4rem 1rem}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;
border:1px solid #9ca3af}
pre{font-size:.8rem;white-space:pre-wrap}
"""


def _matrix_html(st: Standings) -> str:
    rows = ["<table class=\"matrix\"><tr><th>row vs column</th>"
            + "".join(f"<th>{html_safe(s)}</th>" for s in st.systems) + "</tr>"]
    for x in st.systems:
        rows.append(f"<tr><th>{html_safe(x)}</th>")
        for y in st.systems:
            out, label, reason = _cell_text(st, x, y)
            word, _, rest = label.partition(" · ")
            ink = "#ffffff" if out in ("win", "loss") else "#1f2937"
            rows.append(f'<td class="cell {out.replace(" ", "-")}" '
                        f'style="background:{OUTCOME_COLOURS[out]};color:{ink}" '
                        f'title="{html_attr_safe(reason)}"><span class="v">{html_safe(word)}'
                        f'</span><span class="n">{html_safe(rest)}</span></td>')
        rows.append("</tr>")
    rows.append("</table>")
    legend = "".join(f'<span style="background:{OUTCOME_COLOURS[k]}"></span>{html_safe(w)}'
                     for k, w in (("win", "row wins"), ("loss", "row loses"), ("tie", "tie"),
                                  ("incomplete", "incomplete (decides nothing)"),
                                  ("not compared", "not compared")))
    return "".join(rows) + f'<div class="legend">{legend}</div>'


def _tiers_html(st: Standings) -> str:
    colour = {s: _colour(k) for k, s in enumerate(st.systems)}
    out = []
    for t in st.tiers:
        chips = "".join(f'<span class="chip" style="background:{colour[s]}">'
                        f"{html_safe(s)}</span>" for s in t.systems)
        cyc = ' <em>(cycle of wins)</em>' if t.cycle else ""
        out.append(f'<div class="tier"><span class="rank">tier {t.rank}</span>{chips}{cyc}'
                   "</div>")
    return "".join(out)


def _interval_svg(st: Standings) -> str:
    left, width, row_h = 150, 560, 26
    names = [s for s in st.systems if st.scores[s] is not None]
    height = len(names) * row_h + 34
    parts = [svg_open(left + width + 140, height,
                      "mean composite per system with its 90 % interval"),
             unit_grid(left, width, height - 22, height - 6)]
    for i, s in enumerate(names):
        sc = st.scores[s]
        assert sc is not None
        col = _colour(st.systems.index(s))
        y = i * row_h + 14
        parts.append(f'<text x="{left - 8}" y="{y + 4}" font-size="12" text-anchor="end">'
                     f"{html_attr_safe(s)}</text>"
                     f'<line x1="{left + width * sc.low:.1f}" y1="{y}" '
                     f'x2="{left + width * sc.high:.1f}" y2="{y}" stroke="{col}" '
                     f'stroke-width="6"/><circle cx="{left + width * sc.mean:.1f}" cy="{y}" '
                     f'r="7" fill="{col}"><title>{html_attr_safe(s)}: {sc.mean:.4f} '
                     f"[{sc.low:.4f}, {sc.high:.4f}], n={sc.n}</title></circle>"
                     f'<text x="{left + width + 10}" y="{y + 4}" font-size="11">'
                     f"{sc.mean:.3f} [{sc.low:.3f}, {sc.high:.3f}]</text>")
    parts.append("</svg>")
    return "".join(parts)


def _bars_svg(st: Standings, dims: Sequence[str]) -> str:
    n = len(st.systems)
    bar_h, gap, left, width = 9, 12, 110, 540
    group = n * bar_h + gap
    height = len(dims) * group + 30
    parts = [svg_open(left + width + 60, height, "mean desirability per dimension and system"),
             unit_grid(left, width, height - 20, height - 5)]
    for i, dim in enumerate(dims):
        y0 = i * group
        parts.append(f'<text x="{left - 6}" y="{y0 + n * bar_h / 2 + 4}" font-size="12" '
                     f'text-anchor="end">{html_attr_safe(dim)}</text>')
        for j, s in enumerate(st.systems):
            v = st.traits[s].get(dim)
            if v is None:
                continue
            parts.append(f'<rect x="{left}" y="{y0 + j * bar_h}" width="{width * v:.1f}" '
                         f'height="{bar_h - 1}" fill="{_colour(j)}"><title>{html_attr_safe(s)} '
                         f"{html_attr_safe(dim)}: {v:.3f}</title></rect>")
    parts.append("</svg>")
    return "".join(parts)


def _bt_html(st: Standings) -> str:
    bt = st.bradley_terry
    head = ('<div class="summary"><strong>Summary, not the verdict.</strong> A Bradley–Terry '
            "fit over the per-item outcomes of every decided pair (the higher S wins the item; "
            "equal S counts half to each side; one virtual tie per pair). It is shown for "
            "readers who expect one scale; the verdicts and tiers above are the result.</div>")
    if bt.note:
        return head + f"<p>{html_safe(bt.note)}</p>"
    rows = ["<table><tr><th>system</th><th>log-strength</th><th>strength</th></tr>"]
    rows += [f"<tr><th>{html_safe(s)}</th><td>{bt.log_strength[s]:+.3f}</td>"
             f"<td>{bt.strength[s]:.3f}</td></tr>" for s in bt.order()]
    rows.append(f"</table><p>{bt.iterations} MM iterations, converged: {bt.converged}; "
                f"{bt.items} item outcomes.</p>")
    return head + "".join(rows)


def render_html(lb: Leaderboard, *, listening: str = "") -> str:
    """One self-contained HTML page (``listening``: the decisive items of each pair, whose
    clips are relative files in ``clips/``)."""
    st = lb.standings
    doc = lb.to_dict()
    dims = _dimensions(lb)
    legend = "".join(f'<span style="background:{_colour(k)}"></span>{html_safe(s)}'
                     for k, s in enumerate(st.systems))
    trait_rows = ["<table><tr><th>system</th>" + "".join(f"<th>{html_safe(d)}</th>"
                                                         for d in dims) + "</tr>"]
    for s in st.systems:
        trait_rows.append(f"<tr><th>{html_safe(s)}</th>" + "".join(
            f"<td>{_fmt(st.traits[s].get(d))}</td>" for d in dims) + "</tr>")
    trait_rows.append("</table>")
    recompute = "\n".join(lb.recompute_command(p) for p in lb.runs)
    title = f"vocencebench leaderboard: {len(st.systems)} systems, {len(lb.items)} items"
    failures = json.dumps(doc["failures"], indent=2, ensure_ascii=False)
    meta = json.dumps(doc["metadata"], indent=2, sort_keys=True, ensure_ascii=False)
    return page_head(title, _CSS) + f"""\
<div class="status">{html_safe(chr(10).join(lb.status()))}</div>
<h2>Tiers</h2>
<p>No system is ranked above a system that beats it; systems that beat each other in a cycle
share a tier; a tie never moves a system down.</p>
{_tiers_html(st)}
<h2>Verdicts</h2>
<p>Each pair is decided once by the rule of <code>vocencebench decide</code> (paired bootstrap,
{BOOTSTRAP_N} resamples, seed {getattr(st.cells[0].decision, "seed", BOOTSTRAP_SEED)}, LCB
against the audible margin). A cell is the row system's result, the LCB of its lead and the
margin that lead had to clear; hover for the full audit trail.</p>
{_matrix_html(st)}
<h2>Mean composite S (90 % paired-bootstrap interval)</h2>
{_interval_svg(st)}
<h2>Per-dimension adherence</h2>
<div class="legend">{legend}</div>
{_bars_svg(st, dims) if dims else "<p>No dimension was scored.</p>"}
{''.join(trait_rows) if dims else ""}
<h2>Bradley–Terry summary</h2>
{_bt_html(st)}
{behaviour_html(jb) if (jb := lb.judge_behaviour()) is not None else ""}
{listening}<h2>Failures</h2><pre>{html_safe(failures)}</pre>
<h2>Canaries</h2><p>{html_safe(doc["canaries"].get("line", doc["canaries"]["status"]))}</p>
<pre>{html_safe(json.dumps(doc["canaries"], indent=2, ensure_ascii=False))}</pre>
<h2>Recompute every cell</h2><pre>{html_safe(recompute)}</pre>
<h2>Run metadata</h2><pre>{html_safe(meta)}</pre>
</body></html>
"""


# --------------------------------------------------------------------------- save


def save_leaderboard(lb: Leaderboard, directory: str | os.PathLike[str]) -> Path:
    """Write the scores file(s), ``leaderboard.json``, ``leaderboard.md`` and
    ``leaderboard.html`` into ``directory`` (each atomically; the JSON last). Scores files of
    the other layout left by an earlier run in the same directory are removed."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    combined = lb.combined_scores()
    files = lb.scores_files()
    pairs_dir = out / "pairs"
    if combined is not None:
        atomic_write(out / "scores.jsonl",
                     "".join(dumps_canonical(r.to_dict()) + "\n" for r in combined))
        keep: set[Path] = set()
    else:
        pairs_dir.mkdir(exist_ok=True)
        keep = set()
        for pair, rel in files.items():
            target = out / rel
            keep.add(target)
            atomic_write(target, "".join(dumps_canonical(s.to_dict()) + "\n"
                                         for s in lb.runs[pair].samples))
        stale = out / "scores.jsonl"
        if stale.exists():
            stale.unlink()
    if pairs_dir.is_dir():
        for f in pairs_dir.glob("*.scores.jsonl"):
            if f not in keep:
                f.unlink()
    records = lb.records()
    for pair, h in lb.runs.items():
        rec = out / records[pair]
        rec.mkdir(parents=True, exist_ok=True)
        atomic_write(rec / "run.json", h.to_json() + "\n")
    listening, clip_files = _listening(lb, out)
    for name, data in clip_files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out / name, data)
    doc: dict[str, Any] = lb.to_dict()
    atomic_write(out / "leaderboard.md", render_markdown(lb))
    atomic_write(out / "leaderboard.html", render_html(lb, listening=listening))
    atomic_write(out / "leaderboard.json",
                 json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    prune_clips(out, list(clip_files))
    return out


def _listening(lb: Leaderboard, out: Path) -> tuple[str, dict[str, bytes]]:
    """The leaderboard's listening section (the :data:`BOARD_DECISIVE_CLIPS` items with the
    largest δ each way, per pair) and its clip files, from the leaderboard's cache; one line
    instead when the cache is gone."""
    from .._report.listening import listening_html
    from ..errors import MissingDependencyError

    head = '<h2 id="listening">Listen: the decisive items of each pair</h2>'
    path, note = find_cache(lb.metadata, out)
    if path is None:
        return f'{head}<p class="miss">{html_safe(note)}</p>', {}
    parts = [head]
    files: dict[str, bytes] = {}
    for (x, y), h in lb.runs.items():
        sel = select_clips(h.pairs, h.labels, lb.registry, k=BOARD_DECISIVE_CLIPS, worst=0,
                           cap=0)
        systems = h.metadata.get("systems") or {}
        try:
            got, writes = export_clips(h.pairs, sel, out, systems=dict(systems),
                                       labels=h.labels, cache=path)
        except MissingDependencyError as exc:
            return f'{head}<p class="miss">{html_safe(f"clips: not exported ({exc})")}</p>', {}
        files.update(writes)
        parts.append(listening_html(h.pairs, h.labels, lb.registry.dimensions(), sel, got,
                                    heading=f"{x} vs {y}", level=3))
    return "".join(parts), files
