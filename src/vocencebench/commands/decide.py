"""``vocencebench decide SCORES.jsonl``: recompute a verdict from published per-sample scores."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._util.text import terminal_safe
from ..constants import ALPHA, BOOTSTRAP_N, BOOTSTRAP_SEED, EXIT_OK, MARGIN_FLOOR, MARGIN_SCALE
from ..errors import ScoresError
from ..schema import Decision
from ..scores import read_scores
from ._common import nonempty

__all__ = ["check_against_run", "format_decision", "register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``decide`` command to the CLI's subparsers."""
    p = subparsers.add_parser(
        "decide",
        help="recompute the head-to-head verdict from a per-sample scores file",
        description=(
            "Read a JSON Lines scores file (one object per line with item, system and S on "
            "[0, 1]; other keys are ignored), pair the two systems item by item and apply the "
            f"paired-bootstrap decision rule ({BOOTSTRAP_N} resamples, seed {BOOTSTRAP_SEED}, "
            f"{ALPHA * 100:g}th percentile, margin max({MARGIN_FLOOR}, {MARGIN_SCALE} x "
            "(1 - incumbent mean)))."
        ),
    )
    p.add_argument("scores", type=nonempty, metavar="SCORES.jsonl", help="per-sample scores file")
    p.add_argument(
        "--incumbent", metavar="NAME", default=None,
        help="system a (default: the first system named in the file)",
    )
    p.add_argument(
        "--challenger", metavar="NAME", default=None,
        help="system b (default: the second system named in the file)",
    )
    p.add_argument(
        "--allow-incomplete", action="store_true",
        help="decide on the complete items of a run in which an instrument failed (rows with "
             '"incomplete"); without it such a file is refused',
    )
    p.add_argument(
        "--json", action="store_true",
        help="print every field of the Decision as JSON (floats at full precision); with "
             '--robustness, {"decision": ..., "robustness": ...}',
    )
    p.add_argument(
        "--robustness", action="store_true",
        help="also recompute the robustness section (each dimension left out, epsilon, gate "
             "thresholds, random weights) from the d, gate and wer of every row: the same "
             'bits as run.json["robustness"] of the run that wrote the file',
    )
    p.set_defaults(func=run)


def format_decision(d: Decision) -> str:
    """A short human-readable table plus the decision's audit trail (the names and the
    reason, which come from the file, through :func:`~vocencebench._util.text.terminal_safe`)."""
    la, lb = terminal_safe(d.labels[0]), terminal_safe(d.labels[1])
    head = "tie" if d.winner == "tie" else f"{terminal_safe(d.winner)} wins"
    width = max(len("system"), len(la), len(lb))
    rows = [
        f"verdict: {head}",
        "",
        f"  {'system':<{width}}  {'role':<10}  {'mean S':>7}  {'LCB of lead':>11}  "
        f"{'margin':>7}",
        f"  {la:<{width}}  {'incumbent':<10}  {d.mean_a:>7.4f}  {d.lcb_reverse:>+11.4f}  "
        f"{d.margin_reverse:>7.4f}",
        f"  {lb:<{width}}  {'challenger':<10}  {d.mean_b:>7.4f}  {d.lcb:>+11.4f}  "
        f"{d.margin:>7.4f}",
        "",
        f"  n = {d.n} paired items; {d.n_boot} resamples, seed {d.seed}. A system wins when "
        "the LCB of its lead exceeds the margin set by the other system's mean.",
        "",
        f"reason: {terminal_safe(d.reason)}",
    ]
    es = d.early_stop
    if es is not None:  # a stopped-early decision: its numbers are intervals
        rows[-1:-1] = [
            f"  STOPPED EARLY: {es['unjudged']} of {es['items']} items were never judged; each "
            "number above is the end of its interval (over every outcome of those items) that "
            "is worst for the verdict:",
            f"  mean S {la} ∈ [{es['mean_a'][0]:.4f}, {es['mean_a'][1]:.4f}], {lb} ∈ "
            f"[{es['mean_b'][0]:.4f}, {es['mean_b'][1]:.4f}]; LCB({lb}−{la}) ∈ "
            f"[{es['lcb'][0]:+.4f}, {es['lcb'][1]:+.4f}], margin({la}) ∈ "
            f"[{es['margin'][0]:.4f}, {es['margin'][1]:.4f}]; LCB({la}−{lb}) ∈ "
            f"[{es['lcb_reverse'][0]:+.4f}, {es['lcb_reverse'][1]:+.4f}], margin({lb}) ∈ "
            f"[{es['margin_reverse'][0]:.4f}, {es['margin_reverse'][1]:.4f}]",
            ""]
    return "\n".join(rows)


def check_against_run(path: str) -> None:
    """A ``scores.jsonl`` saved with a run must match the sha256 its ``run.json`` records
    (else the set was torn by an interrupted save, or the scores were edited)."""
    from ..outputs import verify_set

    p = Path(path)
    if p.name != "scores.jsonl" or not (p.parent / "run.json").is_file():
        return
    problems = [x for x in verify_set(p.parent, manifest_name="run.json")
                if x.startswith("scores.jsonl")]
    if problems:
        raise ScoresError(
            f"{p}: does not match the run.json beside it ({problems[0]}); the files were "
            f"edited or a save was interrupted. `vocencebench report {p.parent}` rewrites "
            "them from run.json"
        )


def run(args: argparse.Namespace) -> int:
    """Decide the file named on the command line and print the verdict."""
    check_against_run(args.scores)
    # What decide_scores does, keeping the table to say how many S were taken as given.
    table = read_scores(args.scores)
    decision = table.pair(args.incumbent, args.challenger,
                          allow_incomplete=args.allow_incomplete).decide()
    given = (f"S taken as given for {table.given} of {table.scored} rows: they carry no d "
             "and gate to recompute it from by the published rule" if table.given else None)
    rob = None
    if getattr(args, "robustness", False):
        from .._report.robustness import summary_lines
        from ..robustness import robustness_of_file

        rob = robustness_of_file(args.scores, incumbent=args.incumbent,
                                 challenger=args.challenger,
                                 allow_incomplete=args.allow_incomplete)
    if args.json:
        out: dict[str, Any] = decision.to_dict()
        if rob is not None:
            out = {"decision": out, "robustness": rob.to_dict()}
        print(json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False))
        if given:  # the JSON stays exactly the Decision record (or decision + robustness)
            print(f"vocencebench decide: note: {given}", file=sys.stderr)
    else:
        print(format_decision(decision))
        if rob is not None:
            print("\n" + "\n".join(summary_lines(rob)))
        if given:
            print(f"\nnote: {given}")
    return EXIT_OK
