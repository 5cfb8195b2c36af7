"""``vocencebench report RUN_DIR``: re-render the reports of a saved run from its run.json."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..constants import EXIT_OK, REPORT_DECISIVE_CLIPS
from ._common import nonempty, nonnegative_int

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``report`` command to the CLI's subparsers."""
    rep = subparsers.add_parser("report", help="re-render the reports of a saved run")
    rep.add_argument("run", type=nonempty, help="run directory (with run.json)")
    rep.add_argument("--labels", nargs="+", default=(), metavar="FILE",
                     help="human-label CSV file(s) (one per rater, as `vocencebench listen` "
                          "exports them): add a diagnostic agreement table; the verdict does "
                          "not change")
    rep.add_argument("--cache", type=nonempty, default=None, metavar="PATH",
                     help="the run cache to read the listening section's clips from (default: "
                          "the one run.json records)")
    rep.add_argument("--clips", type=nonnegative_int, default=REPORT_DECISIVE_CLIPS,
                     metavar="K", help="items per direction of δ in the listening section "
                                       f"(default {REPORT_DECISIVE_CLIPS})")
    rep.add_argument("--no-clips", action="store_true",
                     help="leave the listening section (and clips/) out")
    rep.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Re-render the run directory named on the command line and print its summary."""
    import dataclasses
    from pathlib import Path

    from ..result import load_run, recompute_decision, save_run, verify_run

    h2h = load_run(args.run)
    # Never copy the stored verdict: recompute it from the per-sample scores, and refuse
    # (writing nothing, so no checksum is re-issued) a record that says otherwise.
    decision = recompute_decision(h2h, source=str(Path(args.run) / "run.json"))
    h2h = dataclasses.replace(h2h, decision=decision)
    torn = verify_run(args.run)
    save_run(h2h, args.run, clips=not args.no_clips, cache=args.cache, k=args.clips,
             labels=args.labels)
    print(h2h.summary())
    from .._util.text import terminal_safe

    if torn:
        # run.json is the record; the other files are re-rendered from it, restoring the set.
        more = f"; and {len(torn) - 3} more" if len(torn) > 3 else ""
        print(f"\nnote: the saved files did not match run.json "
              f"({terminal_safe('; '.join(torn[:3]))}{more}); "
              "rewrote them from run.json", file=sys.stderr)
    print(f"\nreports re-rendered in {terminal_safe(args.run)}")
    return EXIT_OK
