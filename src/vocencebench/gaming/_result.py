"""The red-team result: the table (text, Markdown, self-contained HTML) and redteam.json."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._util.text import html_attr_safe, html_safe, markdown_code, markdown_fenced, markdown_safe
from .._util.text import terminal_safe as ts
from ..charts import svg_open
from ..constants import EXIT_CHECK_FAILED, EXIT_INCOMPLETE, EXIT_OK
from ..errors import ConfigError
from ._verdict import DEFENDED, NOT_TESTED, VULNERABLE, AttackRow, Duel

__all__ = [
    "EXIT_INCOMPLETE",
    "EXIT_OK",
    "EXIT_VULNERABLE",
    "OUTPUT_FILES",
    "RedteamResult",
    "load_redteam",
]

#: Exit status when at least one row is VULNERABLE: the command line's "a check found
#: problems". :data:`EXIT_OK` (no row VULNERABLE, no duel incomplete) and
#: :data:`EXIT_INCOMPLETE` (none VULNERABLE, but a duel could not be decided) are the
#: command line's too (:mod:`vocencebench.constants`).
EXIT_VULNERABLE: Final = EXIT_CHECK_FAILED
#: The files :meth:`RedteamResult.save` writes.
OUTPUT_FILES: Final = ("redteam.json", "redteam.md", "redteam.html")
#: Schema version of redteam.json.
SCHEMA_VERSION: Final = 1


@dataclass(frozen=True)
class RedteamResult:
    """Every attack's row, the configuration it ran in and the instruments that were on.

    ``instruments``: instrument → on (see :data:`~vocencebench.gaming.INSTRUMENTS`);
    ``status``: the pipeline's status lines (gate, judge, probes, canaries); ``canaries``:
    the known-answer canaries' record, as run.json keeps it (``ran``, ``passed``, ``report``;
    ``skipped``; or ``unavailable``); ``timings``: seconds.
    """

    rows: tuple[AttackRow, ...]
    configuration: dict[str, Any] = field(default_factory=dict)
    instruments: dict[str, bool] = field(default_factory=dict)
    status: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    canaries: dict[str, Any] = field(default_factory=dict)

    @property
    def vulnerable(self) -> list[AttackRow]:
        return [r for r in self.rows if r.verdict == VULNERABLE]

    @property
    def exit_code(self) -> int:
        """:data:`EXIT_VULNERABLE` if any row is VULNERABLE, :data:`EXIT_INCOMPLETE` if a
        duel is incomplete, else :data:`EXIT_OK`."""
        if self.vulnerable:
            return EXIT_VULNERABLE
        for r in self.rows:
            for d in (r.vs_base, r.vs_reference, *r.extra):
                if d is not None and d.outcome == "incomplete":
                    return EXIT_INCOMPLETE
        return EXIT_OK

    def row(self, name: str) -> AttackRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def table(self) -> str:
        """The table as plain text, with the reasons below it."""
        return render_text(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "redteam",
            "status": self.status,
            "instruments": self.instruments,
            "canaries": self.canaries,
            "configuration": self.configuration,
            "verdicts": {r.name: r.verdict for r in self.rows},
            "exit_code": self.exit_code,
            "rows": [r.to_dict() for r in self.rows],
            "timings": self.timings,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RedteamResult:
        if data.get("kind") != "redteam" or data.get("schema_version") != SCHEMA_VERSION:
            raise ConfigError(f"not a redteam.json of schema {SCHEMA_VERSION} "
                              f"(kind {data.get('kind')!r}, "
                              f"schema {data.get('schema_version')!r})")
        return cls(
            rows=tuple(AttackRow.from_dict(r) for r in data["rows"]),
            configuration=dict(data.get("configuration", {})),
            instruments=dict(data.get("instruments", {})),
            status=list(data.get("status", [])),
            timings=dict(data.get("timings", {})),
            canaries=dict(data.get("canaries", {})),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write redteam.md, redteam.html and then redteam.json into ``directory`` as one set
        (:func:`vocencebench.outputs.write_set`: each file atomic, the JSON removed first and
        written last with the sha256 of the other two)."""
        from ..outputs import write_set

        files = {"redteam.md": render_markdown(self), "redteam.html": render_html(self)}
        return write_set(directory, files, manifest_name="redteam.json",
                         manifest=self.to_dict())


def load_redteam(path: str | os.PathLike[str]) -> RedteamResult:
    """Read a redteam.json (or the directory holding one) back."""
    p = Path(path)
    if p.is_dir():
        p = p / "redteam.json"
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {p}: {exc}") from exc
    return RedteamResult.from_dict(data)


# ----------------------------------------------------------------------------- rendering


def _cell(d: Duel | None, row: AttackRow, column: str) -> str:
    if d is None:
        return "—"
    if column == "base" and row.vs_base is row.vs_reference:
        return "(= vs reference)"
    part = "" if d.partition in ("evaluation",) else f" [{d.partition}]"
    return d.brief() + part


def _moved(row: AttackRow) -> str:
    if row.moved is None:
        return "—"
    dim, delta = row.moved
    text = f"{dim} {delta:+.3f}"
    d = row.vs_base
    if d is not None and d.dropped:
        text += "; unscored: " + ", ".join(f"{k} {v}/{d.n}" for k, v in d.dropped.items())
    return text


def _canary_line(r: RedteamResult) -> str:
    """The canaries' status line (the run's wording), from the record when the status list
    lacks it."""
    from ..canaries import status_line

    for line in r.status:
        if line.startswith(("canaries: ", "CANARIES ")):
            return line
    return status_line(r.canaries) if r.canaries else "CANARIES NOT RECORDED"


def _instrument_line(r: RedteamResult) -> str:
    return "instruments: " + " · ".join(f"{k} {'ON' if v else 'OFF'}"
                                        for k, v in r.instruments.items())


def _header(r: RedteamResult) -> list[str]:
    c = r.configuration
    sel = c.get("selection", {})
    ref = c.get("reference", {}).get("label", "?")
    flat = c.get("flat", {}).get("label", "?")
    n = sel.get("evaluation_items", "?")
    part = c.get("evaluation_partition", "evaluation")
    lines = [f"vocencebench redteam — reference {ref}, flat base {flat}, {n} items "
             f"({part}), {len(r.rows)} attacks"]
    lines += [f"  {s}" for s in r.status]
    lines.append("  " + _instrument_line(r))
    return lines


_COLUMNS = ("attack", "verdict", "base", "vs base", "vs reference", "moved most (vs base)",
            "defence")


def _cells(row: AttackRow) -> tuple[str, ...]:
    return (row.name, row.verdict, row.base_label, _cell(row.vs_base, row, "base"),
            _cell(row.vs_reference, row, "reference"), _moved(row), row.defence)


def render_text(r: RedteamResult) -> str:
    """The plain-text table (printed by ``vocencebench redteam``); every string from outside
    through :func:`~vocencebench._util.text.terminal_safe`."""
    rows = [_COLUMNS, *(tuple(ts(c) for c in _cells(x)) for x in r.rows)]
    widths = [max(len(row[k]) for row in rows) for k in range(len(_COLUMNS) - 1)]
    lines = [*(ts(h) for h in _header(r)), ""]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True))
                     + "  " + row[-1])
    lines += ["", "why:"]
    lines += [f"  {ts(x.name)}: {x.verdict} — {ts(x.reason)}" for x in r.rows]
    counts = {v: sum(1 for x in r.rows if x.verdict == v)
              for v in (DEFENDED, VULNERABLE, NOT_TESTED)}
    lines += ["", " · ".join(f"{v} {n}" for v, n in counts.items())
              + f" · wall time {r.timings.get('total_s', math.nan):.1f} s"]
    return "\n".join(lines)


def render_markdown(r: RedteamResult) -> str:
    """redteam.md: the header, the table and the reasons."""
    ref = r.configuration.get("reference", {}).get("label", "?")
    out = [f"# vocencebench redteam: {markdown_safe(ref)}", ""]
    out += [f"> {markdown_safe(s)}" for s in _header(r)[1:]]
    out += ["", "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    for x in r.rows:
        cells = list(_cells(x))
        cells[1] = f"**{cells[1]}**"
        out.append("| " + " | ".join(markdown_safe(c) if k != 1 else c for k, c in enumerate(cells))
                   + " |")
    out += ["", "## Why", ""]
    out += [f"- **{markdown_safe(x.name)}** ({x.verdict}): {markdown_safe(x.reason)}"
            for x in r.rows]
    out += ["", "## What each attack does", ""]
    out += [f"- **{markdown_safe(x.name)}** (base: {markdown_safe(x.base_label)}; needs: "
            f"{', '.join(x.needs)}): {markdown_safe(x.summary)}. {markdown_code(x.system_id)}"
            for x in r.rows]
    out += ["", "Verdict rule: NOT TESTED when an instrument the attack needs is off (never "
            "DEFENDED then); otherwise VULNERABLE when the attacker wins a deciding duel "
            "(LCB of its advantage above the margin), DEFENDED when it ties or loses them all.",
            "", "## Canaries", "", markdown_safe(_canary_line(r)), "",
            markdown_fenced(json.dumps(r.canaries, indent=2, sort_keys=True,
                                       ensure_ascii=False), "json"),
            "", "## Configuration", "",
            markdown_fenced(json.dumps({"configuration": r.configuration,
                                        "timings": r.timings}, indent=2, sort_keys=True,
                                       ensure_ascii=False), "json"), ""]
    return "\n".join(out)


_VERDICT_STYLE: Final[Mapping[str, tuple[str, str]]] = {
    # verdict → (row background, verdict cell background)
    DEFENDED: ("#ecfdf5", "#059669"),
    VULNERABLE: ("#fef2f2", "#dc2626"),
    NOT_TESTED: ("#f3f4f6", "#6b7280"),
}
_OUTCOME_COL: Final[Mapping[str, str]] = {
    "won": "#dc2626", "tied": "#9ca3af", "lost": "#059669", "incomplete": "#f59e0b"}

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1400px;color:#1f2937;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #e5e7eb}
.status{background:#fef3c7;border-left:4px solid #f59e0b;padding:.5rem 1rem;
font-family:monospace;white-space:pre-wrap;font-size:.85rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #e5e7eb;
padding:.3rem .5rem;text-align:left;font-size:.85rem;vertical-align:top}th{background:#f9fafb}
td.verdict{color:#ffffff;font-weight:700;white-space:nowrap}
.reason{font-size:.8rem;color:#374151}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px}
pre{font-size:.8rem;background:#f9fafb;padding:.5rem;overflow-x:auto}
"""


def _lcb_svg(r: RedteamResult) -> str:
    """LCB(S_attacker − S_opponent) minus the margin, per duel: right of 0 means a win."""
    duels: list[tuple[str, Duel]] = []
    for x in r.rows:
        for d in (x.vs_base, x.vs_reference):
            if d is not None and all(d is not e for _, e in duels):
                duels.append((x.name, d))
    vals = [d.decision.lcb - d.decision.margin for _, d in duels
            if math.isfinite(d.decision.lcb)]
    span = max([0.1, *(abs(v) for v in vals)])
    left, width, bar = 300, 600, 14
    height = len(duels) * (bar + 4) + 40
    mid = left + width / 2
    parts = [svg_open(left + width + 20, height,
                      "LCB of the attacker's advantage minus the margin, per duel"),
             f'<line x1="{mid}" y1="0" x2="{mid}" y2="{height - 24}" stroke="#111827"/>',
             f'<text x="{mid}" y="{height - 8}" font-size="11" text-anchor="middle">'
             f'0 = LCB at the margin (right: the attacker wins; ±{span:.2f} at the edges)'
             "</text>"]
    for i, (name, d) in enumerate(duels):
        y = i * (bar + 4) + 4
        v = d.decision.lcb - d.decision.margin
        v = v if math.isfinite(v) else 0.0
        w = abs(v) / span * (width / 2)
        x0 = mid if v >= 0 else mid - w
        col = _OUTCOME_COL.get(d.outcome, "#9ca3af")
        parts.append(f'<text x="{left - 6}" y="{y + bar - 3}" font-size="11" '
                     f'text-anchor="end">{html_attr_safe(name)} vs '
                     f'{html_attr_safe(d.opponent_label)}</text>'
                     f'<rect x="{x0:.1f}" y="{y}" width="{max(w, 1.0):.1f}" height="{bar}" '
                     f'fill="{col}"><title>{html_attr_safe(d.brief())}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(r: RedteamResult) -> str:
    """redteam.html: one self-contained page (inline CSS and SVG, nothing fetched); each row
    coloured by its verdict."""
    ref = r.configuration.get("reference", {}).get("label", "?")
    head = "".join(f"<th>{html_safe(c)}</th>" for c in (*_COLUMNS, "why"))
    body = []
    for x in r.rows:
        bg, ink = _VERDICT_STYLE.get(x.verdict, ("#ffffff", "#6b7280"))
        cells = _cells(x)
        body.append(
            f'<tr class="row {x.verdict.lower().replace(" ", "-")}" style="background:{bg}">'
            f"<th>{html_safe(cells[0])}</th>"
            f'<td class="verdict" style="background:{ink}">{html_safe(cells[1])}</td>'
            + "".join(f"<td>{html_safe(c)}</td>" for c in cells[2:])
            + f'<td class="reason">{html_safe(x.reason)}</td></tr>')
    legend = "".join(f'<span style="background:{ink}"></span>{html_safe(v)}'
                     for v, (_, ink) in _VERDICT_STYLE.items())
    meta = json.dumps({"configuration": r.configuration, "timings": r.timings}, indent=2,
                      sort_keys=True, ensure_ascii=False)
    status = "\n".join(line.strip() for line in _header(r)[1:])
    attacks = "".join(f"<li><b>{html_safe(x.name)}</b> (base {html_safe(x.base_label)};"
                      f" needs {html_safe(', '.join(x.needs))}): {html_safe(x.summary)}"
                      f" — <code>{html_safe(x.system_id)}</code></li>" for x in r.rows)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>vocencebench redteam: {html_attr_safe(ref)}</title>
<style>{_CSS}</style></head><body>
<h1>vocencebench redteam: {html_safe(_header(r)[0].split(' — ', 1)[-1])}</h1>
<div class="status">{html_safe(status)}</div>
<h2>Attacks and verdicts</h2>
<div class="legend">{legend}</div>
<table><tr>{head}</tr>{''.join(body)}</table>
<p class="reason">Verdict rule: NOT TESTED when an instrument the attack needs is off (never
DEFENDED then); otherwise VULNERABLE when the attacker wins a deciding duel (the LCB of its
advantage clears the margin), DEFENDED when it ties or loses every deciding duel.</p>
<h2>LCB of the attacker's advantage against the margin</h2>
{_lcb_svg(r)}
<h2>What each attack does</h2><ul>{attacks}</ul>
<h2>Canaries</h2><p>{html_safe(_canary_line(r))}</p>
<pre>{html_safe(json.dumps(r.canaries, indent=2, sort_keys=True, ensure_ascii=False))}</pre>
<h2>Configuration</h2><pre>{html_safe(meta)}</pre>
</body></html>
"""

