"""The gate section of the reports: what the intelligibility gate did, and with what.

Everything here is recomputed from a :class:`~vocencebench.result.Head2Head` — the per-clip
WER, gate and transcript its analyses carry, the item scripts, and ``metadata["asr"]`` (the
recogniser's record, :func:`vocencebench.transcribe.recogniser_record`) — so ``vocencebench
report RUN`` rebuilds the same section from run.json alone. :func:`gate_report` builds it;
:func:`gate_record` is its JSON (``run.json["gate"]``); :func:`gate_summary_lines`,
:func:`gate_markdown` and :func:`gate_html` render it.

It says, first, which recogniser gated (name, Whisper size, parameters, the package and the
model digest) with a WARNING when it is smaller than Whisper small, or that its size cannot
be told; then per system the clips heard and vetoed and the WER distribution (quantiles,
histogram); the items where the gate's verdict differs between the two systems; and for
every vetoed clip the normalised script and transcript with the differing words marked,
from the alignment the WER is counted on (:func:`vocencebench.textnorm.align`). Each vetoed
clip's WER is counted again from its script and transcript; a clip whose recount differs
from the run's (another normaliser version) is flagged, never silently replaced. Text from
the run (labels, item ids, scripts, transcripts) is escaped by
:mod:`vocencebench._util.text`, one function per format.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._numbers import is_real_number
from .._util.text import html_safe, markdown_safe, terminal_safe
from ..constants import (
    GATE_REPORT_CLIPS,
    GATE_SUMMARY_CLIPS,
    GATE_WER_BIN_EDGES,
    GATE_WER_QUANTILES,
    WER_THRESHOLD,
)
from ..errors import ConfigError
from ..textnorm import WordOp, align
from ..transcribe import GATE_MIN_WHISPER_SIZE, recogniser_warning

if TYPE_CHECKING:
    from ..result import Head2Head

__all__ = ["GateDiffers", "GateReport", "SideGate", "VetoedClip", "gate_html",
           "gate_markdown", "gate_on", "gate_record", "gate_report", "gate_summary_lines"]

#: Recounted WERs closer than this (a fraction) to the run's agree (float rounding only).
_AGREE = 1e-9


@dataclass(frozen=True)
class VetoedClip:
    """One clip the gate vetoed: ``wer`` as the run recorded it, the normalised script and
    transcript, the alignment ``ops`` (empty when the recount could not run: ``note`` says
    why) and ``recounted`` (the WER counted again here; None when it could not be)."""

    item: str
    wer: float
    reference_norm: str
    hypothesis_norm: str
    ops: tuple[WordOp, ...]
    recounted: float | None
    note: str | None = None

    @property
    def agrees(self) -> bool:
        return self.recounted is not None and abs(self.recounted - self.wer) <= _AGREE


@dataclass(frozen=True)
class SideGate:
    """One system under the gate: ``heard`` clips with a WER, ``vetoed`` of them (g = 0),
    ``mean`` WER, ``quantiles`` ((q, WER) for :data:`GATE_WER_QUANTILES`, plus q = 0 and 1:
    the minimum and maximum), ``histogram`` ((bin, clips)) and every vetoed clip."""

    label: str
    heard: int
    vetoed: int
    mean: float | None
    quantiles: tuple[tuple[float, float], ...]
    histogram: tuple[tuple[str, int], ...]
    vetoed_clips: tuple[VetoedClip, ...]


@dataclass(frozen=True)
class GateDiffers:
    """An item the gate passed for one system and vetoed for the other (WER fractions)."""

    item: str
    wer_a: float
    wer_b: float
    gate_a: int
    gate_b: int


@dataclass(frozen=True)
class GateReport:
    """The whole section: ``on`` (a transcriber ran), ``threshold`` τ, the ``recogniser``
    record, its ``size_line`` (name and size, or why the size cannot be told), the
    ``warning`` (a Whisper smaller than small; None otherwise), both sides, the items where
    the gate differs, and the items vetoed on both sides (the judge skips those)."""

    on: bool
    threshold: float
    recogniser: dict[str, Any]
    size_line: str
    warning: str | None
    sides: tuple[SideGate, SideGate]
    differs: tuple[GateDiffers, ...]
    both_vetoed: tuple[str, ...]


# ----------------------------------------------------------------------------- building


def _quantile(xs: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (Hyndman & Fan type 7, NumPy's default);
    ``xs`` sorted, non-empty."""
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _bins(threshold: float) -> tuple[float, ...]:
    return tuple(sorted({*GATE_WER_BIN_EDGES, threshold}))


def _histogram(wers: Sequence[float], threshold: float) -> tuple[tuple[str, int], ...]:
    edges = _bins(threshold)
    names = ["0", *(f"({lo:g}, {hi:g}]" for lo, hi in zip((0.0, *edges[:-1]), edges,
                                                          strict=True)), f"> {edges[-1]:g}"]
    counts = [0] * len(names)
    for w in wers:
        if w == 0:
            counts[0] += 1
            continue
        for i, hi in enumerate(edges):
            if w <= hi:
                counts[i + 1] += 1
                break
        else:
            counts[-1] += 1
    return tuple(zip(names, counts, strict=True))


def _vetoed(item: str, script: str, transcript: str | None, wer: float) -> VetoedClip:
    try:
        res, ops = align(script, transcript or "")
    except ConfigError as exc:  # the text extra is missing, or an empty script
        return VetoedClip(item, wer, "", "", (), None, note=f"not recounted: {exc}")
    return VetoedClip(item, wer, res.reference_norm, res.hypothesis_norm, ops, res.wer)


def _side(h: Head2Head, side: str, label: str, threshold: float) -> SideGate:
    wers: list[float] = []
    vetoed: list[VetoedClip] = []
    for p in h.pairs:
        an = getattr(p, f"analysis_{side}")
        if an.wer is None or an.gate is None:
            continue
        wers.append(float(an.wer))
        if an.gate == 0:
            vetoed.append(_vetoed(p.item.id, p.item.text, an.transcript, float(an.wer)))
    xs = sorted(wers)
    quant = (tuple((q, _quantile(xs, q)) for q in (0.0, *GATE_WER_QUANTILES, 1.0))
             if xs else ())
    return SideGate(label, len(xs), len(vetoed), math.fsum(xs) / len(xs) if xs else None,
                    quant, _histogram(xs, threshold) if xs else (), tuple(vetoed))


def _size_line(rec: Mapping[str, Any]) -> str:
    engine = rec.get("engine") or "?"
    size = rec.get("size")
    arch = rec.get("architecture")
    if size:
        src = (f", from {rec['package']} {rec.get('package_version') or '?'}"
               if rec.get("package") else "")
        digest = rec.get("model_sha256")
        return (f"recogniser: {arch or 'Whisper ' + str(size)}, model {rec.get('name')}{src}"
                + (f", model.bin sha256 {digest}" if digest else f"; engine {engine}"))
    why = (f"its weights match no published Whisper size ({arch})" if arch else
           "vocencebench does not see its weights")
    return (f"recogniser: {engine}; size: unknown — {why}, so vocencebench cannot tell "
            f"whether it is smaller than Whisper {GATE_MIN_WHISPER_SIZE}")


def gate_on(h: Head2Head) -> bool:
    """Whether a transcriber gated the run (its engine is recorded, or some clip has a gate)."""
    return bool(h.metadata.get("asr_engine")) or any(
        getattr(p, f"analysis_{s}").gate is not None for p in h.pairs for s in "ab")


def gate_report(h: Head2Head) -> GateReport:
    """The gate section of ``h`` (see the module docstring); ``on`` is False, and the rest
    empty, when no transcriber ran."""
    meta = h.metadata
    rec: dict[str, Any] = dict(meta.get("asr") or {})
    engine = meta.get("asr_engine")
    if engine and "engine" not in rec:
        rec["engine"] = engine  # a run recorded before metadata["asr"] existed
    thr = meta.get("gate_threshold")
    threshold = float(thr) if is_real_number(thr) else WER_THRESHOLD
    on = gate_on(h)
    sides = (_side(h, "a", h.labels[0], threshold), _side(h, "b", h.labels[1], threshold))
    differs, both = [], []
    for p in h.pairs:
        a, b = p.analysis_a, p.analysis_b
        if a.gate is None or b.gate is None or a.wer is None or b.wer is None:
            continue
        if a.gate != b.gate:
            differs.append(GateDiffers(p.item.id, float(a.wer), float(b.wer), a.gate, b.gate))
        elif a.gate == 0:
            both.append(p.item.id)
    return GateReport(on, threshold, rec, _size_line(rec) if on else "",
                      recogniser_warning(rec) if on else None, sides, tuple(differs),
                      tuple(both))


def gate_record(h: Head2Head) -> dict[str, Any]:
    """``run.json["gate"]``: the section as JSON (every vetoed clip, with its alignment as
    ``[op, reference words, heard words]`` steps)."""
    g = gate_report(h)
    if not g.on:
        return {"on": False}
    systems = {}
    for s in g.sides:
        systems[s.label] = {
            "clips_heard": s.heard, "vetoed": s.vetoed,
            "pass_rate": (s.heard - s.vetoed) / s.heard if s.heard else None,
            "wer_mean": s.mean,
            "wer_quantiles": {f"q{round(100 * q):02d}": v for q, v in s.quantiles},
            "wer_histogram": [{"bin": b, "clips": n} for b, n in s.histogram],
            "vetoed_clips": [
                {"item": c.item, "wer": c.wer, "wer_recounted": c.recounted,
                 "reference_norm": c.reference_norm, "hypothesis_norm": c.hypothesis_norm,
                 "alignment": [[o.op, " ".join(o.ref), " ".join(o.hyp)] for o in c.ops],
                 **({"note": c.note} if c.note else {})}
                for c in s.vetoed_clips],
        }
    return {"on": True, "threshold": g.threshold, "recogniser": g.recogniser,
            "recogniser_line": g.size_line, "warning": g.warning, "systems": systems,
            "differs": [{"item": d.item, "wer": [d.wer_a, d.wer_b],
                         "gate": [d.gate_a, d.gate_b]} for d in g.differs],
            "both_vetoed": list(g.both_vetoed)}


# ----------------------------------------------------------------------------- rendering


#: What a side shows when the recogniser heard nothing.
NOTHING_HEARD = "(nothing heard)"


def _marked(ops: Sequence[WordOp], side: str, mark: Callable[[str, str], str],
            esc: Callable[[str], str]) -> str:
    """One side ("ref" or "hyp") of an alignment, its differing words passed to
    ``mark(kind, escaped words)``; every run of words goes through ``esc`` first."""
    out = []
    for o in ops:
        words = o.ref if side == "ref" else o.hyp
        if not words:
            continue
        text = esc(" ".join(words))
        out.append(text if o.op == "equal" else mark(o.op, text))
    return " ".join(out) or NOTHING_HEARD


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _side_line(s: SideGate) -> str:
    if not s.heard:
        return f"{s.label}: no clip heard"
    q = dict(s.quantiles)
    return (f"{s.label}: {s.heard} clips heard, {s.vetoed} vetoed "
            f"({100 * s.vetoed / s.heard:.1f}%); WER mean {_fmt(s.mean)}, median "
            f"{_fmt(q.get(0.5))}, p90 {_fmt(q.get(0.9))}, max {_fmt(q.get(1.0))}")


def _differs_phrase(g: GateReport, d: GateDiffers) -> str:
    la, lb = g.sides[0].label, g.sides[1].label
    verdict = {0: "vetoed", 1: "passed"}
    return (f"{d.item} ({la} {verdict[d.gate_a]} at WER {d.wer_a:.3f}, {lb} "
            f"{verdict[d.gate_b]} at {d.wer_b:.3f})")


def _text_mark(op: str, text: str) -> str:
    return {"delete": f"[-{text}]", "insert": f"[+{text}]"}.get(op, f"[{text}]")





def _pass_rates(g: GateReport) -> str:
    return ", ".join(f"{s.label} {100 * (s.heard - s.vetoed) / s.heard:.1f}%" if s.heard
                     else f"{s.label} —" for s in g.sides)


def gate_summary_lines(h: Head2Head) -> list[str]:
    """The summary text's gate lines, recogniser first; empty when the gate is off (the
    summary then says so itself). Every text from a run passes through ``terminal_safe``."""
    g = gate_report(h)
    if not g.on:
        return []
    out = [f"gate:         {terminal_safe(g.size_line)}"]
    if g.warning:
        out.append(f"  {g.warning}")
    out.append(f"gate pass:    {terminal_safe(_pass_rates(g))}")
    out += [f"  {terminal_safe(_side_line(s))}" for s in g.sides]
    if g.differs:
        shown = ", ".join(_differs_phrase(g, d) for d in g.differs[:GATE_SUMMARY_CLIPS])
        more = f" and {len(g.differs) - GATE_SUMMARY_CLIPS} more" if len(
            g.differs) > GATE_SUMMARY_CLIPS else ""
        out.append(f"  gate verdict differs on {len(g.differs)} item(s): "
                   f"{terminal_safe(shown)}{more}")
    else:
        out.append("  gate verdict differs on no item")
    if g.both_vetoed:
        out.append(f"  vetoed on both sides: {len(g.both_vetoed)} item(s) (not judged)")
    for s in g.sides:
        for c in s.vetoed_clips[:GATE_SUMMARY_CLIPS]:
            out.append(f"  vetoed {terminal_safe(s.label)} {terminal_safe(c.item)}: WER {c.wer:.3f}"
                       + ("" if c.agrees or c.recounted is None else
                          f" (recounted here: {c.recounted:.3f})"))
            if c.ops:
                out.append(f"      script: {_marked(c.ops, 'ref', _text_mark, terminal_safe)}")
                out.append(f"      heard:  {_marked(c.ops, 'hyp', _text_mark, terminal_safe)}")
            elif c.note:
                out.append(f"      {terminal_safe(c.note)}")
        if s.vetoed > GATE_SUMMARY_CLIPS:
            out.append(f"  ({s.vetoed - GATE_SUMMARY_CLIPS} more vetoed {terminal_safe(s.label)} "
                       "clip(s) in report.md)")
    return out


def _clip_cells(c: VetoedClip, mark: Callable[[str, str], str], esc: Callable[[str], str]
                ) -> tuple[str, str, str]:
    """A vetoed clip's WER (with the recount when it disagrees), script and heard cells."""
    wer = f"{c.wer:.3f}" + ("" if c.agrees or c.recounted is None else
                            f" (recounted {c.recounted:.3f})")
    if not c.ops:
        return wer, esc(c.note or ""), ""
    return wer, _marked(c.ops, "ref", mark, esc), _marked(c.ops, "hyp", mark, esc)


def _md_mark(op: str, text: str) -> str:
    return {"delete": f"~~{text}~~", "insert": f"*{text}*"}.get(op, f"**{text}**")


def gate_markdown(h: Head2Head) -> list[str]:
    """report.md's gate section body (under its heading) for a run whose gate was on,
    recogniser first; every text from the run goes through ``markdown_safe``."""
    g = gate_report(h)
    md = markdown_safe
    la, lb = (md(s.label) for s in g.sides)
    out = [md(g.size_line), ""]
    if g.warning:
        out += [f"> **{md(g.warning)}**", ""]
    out += [f"Pass rate: {md(_pass_rates(g))}.", ""]
    out += [f"| τ = {g.threshold:g} | {la} | {lb} |", "|---|---|---|"]
    a, b = g.sides
    out.append(f"| clips heard | {a.heard} | {b.heard} |")
    out.append(f"| vetoed (WER > τ) | {a.vetoed} | {b.vetoed} |")
    out.append(f"| WER mean | {_fmt(a.mean)} | {_fmt(b.mean)} |")
    qa, qb = dict(a.quantiles), dict(b.quantiles)
    for q in (0.0, *GATE_WER_QUANTILES, 1.0):
        name = "min" if q == 0 else "max" if q == 1 else f"p{round(100 * q)}"
        out.append(f"| WER {name} | {_fmt(qa.get(q))} | {_fmt(qb.get(q))} |")
    out += ["", "WER histogram (clips per bin; a bin includes its upper edge):", "",
            f"| WER | {la} | {lb} |", "|---|---|---|"]
    ha, hb = dict(a.histogram), dict(b.histogram)
    for name in (ha or hb):
        out.append(f"| {name} | {ha.get(name, 0)} | {hb.get(name, 0)} |")
    out += ["", "### Items where the gate's verdict differs between the systems", ""]
    if g.differs:
        out += [f"| item | WER {la} | gate {la} | WER {lb} | gate {lb} |",
                "|---|---|---|---|---|"]
        out += [f"| {md(d.item)} | {d.wer_a:.3f} | {'pass' if d.gate_a else 'VETO'} | "
                f"{d.wer_b:.3f} | {'pass' if d.gate_b else 'VETO'} |" for d in g.differs]
    else:
        out.append("None: on every item heard on both sides the gate passed both or vetoed "
                   "both.")
    if g.both_vetoed:
        out += ["", f"Vetoed on both sides (not judged): {len(g.both_vetoed)} item(s)."]
    out += ["", "### Vetoed clips", "",
            "The script and what the recogniser heard, both normalised as the WER counts them, "
            "aligned as the WER counts its errors: **bold** words were heard as something "
            "else, ~~struck~~ words were not heard, *italic* words were heard but are not in "
            "the script.", ""]
    if not (a.vetoed or b.vetoed):
        out.append("None.")
        return out
    out += ["| system | item | WER | script (normalised) | heard (normalised) |",
            "|---|---|---|---|---|"]
    for s in g.sides:
        for c in s.vetoed_clips[:GATE_REPORT_CLIPS]:
            wer, ref, hyp = _clip_cells(c, _md_mark, md)
            out.append(f"| {md(s.label)} | {md(c.item)} | {wer} | {ref} | {hyp} |")
        if s.vetoed > GATE_REPORT_CLIPS:
            out.append(f"| {md(s.label)} | … | | {s.vetoed - GATE_REPORT_CLIPS} more in "
                       "run.json[\"gate\"] | |")
    return out


def _html_mark(op: str, text: str) -> str:
    tag = {"delete": "del", "insert": "ins"}.get(op, "mark")
    return f"<{tag}>{text}</{tag}>"


def gate_html(h: Head2Head) -> str:
    """report.html's gate section body for a run whose gate was on (every text from the run
    through ``html_safe``)."""
    g = gate_report(h)
    esc = html_safe
    a, b = g.sides
    la, lb = esc(a.label), esc(b.label)
    parts = [f"<p>{esc(g.size_line)}</p>"]
    if g.warning:
        parts.append(f'<div class="banner">{esc(g.warning)}</div>')
    parts.append(f"<p>pass rate: {esc(_pass_rates(g))} (WER ≤ {g.threshold:g})</p>")
    rows = [f"<table><tr><th>τ = {g.threshold:g}</th><th>{la}</th><th>{lb}</th></tr>",
            f"<tr><th>clips heard</th><td>{a.heard}</td><td>{b.heard}</td></tr>",
            f"<tr><th>vetoed (WER &gt; τ)</th><td>{a.vetoed}</td><td>{b.vetoed}</td></tr>",
            f"<tr><th>WER mean</th><td>{_fmt(a.mean)}</td><td>{_fmt(b.mean)}</td></tr>"]
    qa, qb = dict(a.quantiles), dict(b.quantiles)
    for q in (0.0, *GATE_WER_QUANTILES, 1.0):
        name = "min" if q == 0 else "max" if q == 1 else f"p{round(100 * q)}"
        rows.append(f"<tr><th>WER {name}</th><td>{_fmt(qa.get(q))}</td>"
                    f"<td>{_fmt(qb.get(q))}</td></tr>")
    rows.append("</table>")
    ha, hb = dict(a.histogram), dict(b.histogram)
    peak = max([*ha.values(), *hb.values(), 1])
    hist = [f"<table><caption>WER histogram (clips per bin; a bin includes its upper edge)"
            f"</caption><tr><th>WER</th><th>{la}</th><th>{lb}</th></tr>"]
    for name in (ha or hb):
        cells = "".join(
            f'<td style="text-align:left"><span style="display:inline-block;height:10px;'
            f'width:{round(120 * n / peak)}px;background:{colour}"></span> {n}</td>'
            for n, colour in ((ha.get(name, 0), "#2563eb"), (hb.get(name, 0), "#f59e0b")))
        hist.append(f"<tr><th>{esc(name)}</th>{cells}</tr>")
    hist.append("</table>")
    parts += ['<div class="cmrow">', "".join(rows), "".join(hist), "</div>",
              "<h3>Items where the gate's verdict differs between the systems</h3>"]
    if g.differs:
        body = "".join(
            f"<tr><th>{esc(d.item)}</th><td>{d.wer_a:.3f}</td>"
            f"<td>{'pass' if d.gate_a else '<b>VETO</b>'}</td><td>{d.wer_b:.3f}</td>"
            f"<td>{'pass' if d.gate_b else '<b>VETO</b>'}</td></tr>" for d in g.differs)
        parts.append(f"<table><tr><th>item</th><th>WER {la}</th><th>gate {la}</th>"
                     f"<th>WER {lb}</th><th>gate {lb}</th></tr>{body}</table>")
    else:
        parts.append("<p>None: on every item heard on both sides the gate passed both or "
                     "vetoed both.</p>")
    if g.both_vetoed:
        parts.append(f"<p>Vetoed on both sides (not judged): {len(g.both_vetoed)} "
                     "item(s).</p>")
    parts.append("<h3>Vetoed clips</h3><p>The script and what the recogniser heard, both "
                 "normalised and aligned as the WER counts them: <mark>heard as something "
                 "else</mark>, <del>not heard</del>, <ins>heard but not in the script</ins>."
                 "</p>")
    if not (a.vetoed or b.vetoed):
        parts.append("<p>None.</p>")
        return "".join(parts)
    rows = ["<table><tr><th>system</th><th>item</th><th>WER</th><th>script (normalised)</th>"
            "<th>heard (normalised)</th></tr>"]
    for s in g.sides:
        for c in s.vetoed_clips[:GATE_REPORT_CLIPS]:
            wer, ref, hyp = _clip_cells(c, _html_mark, esc)
            rows.append(f"<tr><th>{esc(s.label)}</th><td>{esc(c.item)}</td><td>{wer}</td>"
                        f'<td class="why">{ref}</td><td class="why">{hyp}</td></tr>')
        if s.vetoed > GATE_REPORT_CLIPS:
            rows.append(f'<tr><td colspan="5" class="note">{s.vetoed - GATE_REPORT_CLIPS} '
                        f"more vetoed {esc(s.label)} clip(s) in run.json</td></tr>")
    rows.append("</table>")
    parts.append("".join(rows))
    return "".join(parts)
