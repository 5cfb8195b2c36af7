"""The human-labels section of a report (``vocencebench report RUN --labels FILE…``): per
dimension, the judge's agreement with the raters, Cohen's κ, the judge's order-swap
consistency, Krippendorff's α between raters and the raters' own head-to-head under the
run's rule. A diagnostic: the section is computed from the run and the files, and nothing in
it feeds back into a score or the decision.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._util.text import html_safe, markdown_safe
from ..calibration import (
    CalibrationReport,
    HumanVerdict,
    calibrate,
    judge_source,
    read_human_csv,
)

if TYPE_CHECKING:
    from ..result import Head2Head

__all__ = ["labels_report", "labels_section"]

_NOTE = ("DIAGNOSTIC — human labels never change the verdict above: the decision, every "
         "score and scores.jsonl are the same bytes with or without them.")


def labels_report(h: Head2Head, files: Sequence[str | os.PathLike[str]]) -> CalibrationReport:
    """:func:`vocencebench.calibration.calibrate` of the label ``files`` against the run's
    own verdicts, labels, winner, items and dimensions (a label of another item or
    dimension is left out and named)."""
    judge = judge_source(h.pairs, h.labels, h.decision.winner)
    human = [x for f in files for x in read_human_csv(f)]
    return calibrate(human, judge.verdicts, labels=h.labels, run_winner=h.decision.winner,
                     items=judge.items, dimensions=judge.dimensions)


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _human(hv: HumanVerdict | None) -> tuple[str, str]:
    if hv is None or hv.decision is None:
        return "—", "—"
    d = hv.decision
    same = "—" if hv.same_as_run is None else ("yes" if hv.same_as_run else "NO")
    return f"{d.winner} (n={d.n}, {hv.deciding_numbers()})", same


def labels_section(h: Head2Head, files: Sequence[str | os.PathLike[str]]
                   ) -> tuple[str, list[str]]:
    """(HTML, Markdown lines) of the section for the label ``files``."""
    r = labels_report(h, files)
    head = ["dimension", "rows", "agreement", f"{100 * r.overall.ci_level:.0f}% CI", "κ",
            "ρ (scores)", "judge consistency", "α (raters)", "human verdict",
            "same as the run"]
    body = []
    for name, a, alpha, hv in r.rows():
        ci = "—" if a.ci_low is None or a.ci_high is None else f"[{a.ci_low:.3f}, {a.ci_high:.3f}]"
        verdict, same = _human(hv)
        body.append([name, str(a.n), _f(a.accuracy), ci, _f(a.kappa), _f(a.spearman),
                     _f(a.consistency_rate), _f(alpha), verdict, same])
    raters = ", ".join(r.raters) or "none"
    tail = (f"{len(r.raters)} rater(s): {raters}; unmatched: {r.unmatched_human} human rows, "
            f"{r.unmatched_verdicts} judge verdicts.")
    warning = r.left_out_line()
    rows_html = "".join("<tr>" + "".join(f"<td>{html_safe(c)}</td>" for c in row) + "</tr>"
                        for row in body)
    section = (f'<h2 id="human-labels">Human labels (diagnostic)</h2>'
               f'<div class="banner" style="background:#eef2ff;border-color:#6366f1">'
               f"{html_safe(_NOTE)}</div><table><tr>"
               + "".join(f"<th>{html_safe(c)}</th>" for c in head) + "</tr>"
               + rows_html + f"</table><p>{html_safe(tail)}</p>"
               + ("" if warning is None else f'<div class="banner">{html_safe(warning)}</div>'))
    md = ["## Human labels (diagnostic)", "", f"> **{markdown_safe(_NOTE)}**", "",
          "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(markdown_safe(c) for c in row) + " |" for row in body]
    md += ["", markdown_safe(tail)]
    if warning is not None:
        md += ["", f"**{markdown_safe(warning)}**"]
    return section, md
