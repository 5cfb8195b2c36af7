"""``vocencebench calibrate LABELS.csv… (VERDICTS.jsonl | RUN | --run RUN)``: judge-vs-human
agreement, inter-rater agreement and the human head-to-head (diagnostic)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._util.text import terminal_safe
from ..calibration import calibrate_files
from ..constants import EXIT_OK
from ..errors import ConfigError
from ._common import nonempty

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` command to the CLI's subparsers."""
    p = subparsers.add_parser(
        "calibrate",
        help="measure how well judge verdicts agree with human labels (diagnostic only)",
        description=(
            "Match human labels (CSV: id,dimension,winner[,score_a,score_b][,rater]; one file "
            "per rater, as `vocencebench listen --serve` writes them, or the listening page's "
            "export, read with its test's key.json) to the judge's verdicts (a run "
            "directory, or JSON Lines: id plus the verdict fields) on id and dimension, and "
            "report per dimension and overall: agreement with a bootstrap interval, Cohen's "
            "kappa, Spearman's rho of per-clip scores, the judge's order-swap consistency, "
            "Krippendorff's alpha between raters (two or more), and the human head-to-head "
            "under the run's paired-bootstrap rule. Nothing here changes a verdict. See "
            "docs/validation.md."),
    )
    p.add_argument("files", nargs="+", type=nonempty, metavar="FILE",
                   help="human-label CSV file(s), then the verdicts (VERDICTS.jsonl or a run "
                        "directory) unless --run names them")
    p.add_argument("--run", type=nonempty, default=None, metavar="RUN",
                   help="read the judge's verdicts from this run directory (run.json); then "
                        "every FILE is a human-label file")
    p.add_argument("--key", action="append", type=nonempty, default=[], metavar="LISTEN_DIR",
                   help="a listening test's folder (or its key.json, or its page folder), to "
                        "read the CSV its page exported (clips by left/right); repeatable. "
                        "Without it, the key of a CSV saved in the test's folder, its labels "
                        "folder or its page folder is found")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``calibrate``."""
    files = list(args.files)
    if args.run is not None:
        human, verdicts = files, args.run
    elif len(files) >= 2:
        human, verdicts = files[:-1], files[-1]
    else:
        raise ConfigError("give the human-label file(s) and then the verdicts (a JSON Lines "
                          "file or a run directory), or pass --run RUN")
    report = calibrate_files(human, verdicts, keys=args.key)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, allow_nan=False))
        warning = report.left_out_line()
        if warning is not None:  # standard output is JSON only: say it where it is seen
            print(f"vocencebench calibrate: {terminal_safe(warning)}", file=sys.stderr)
    else:
        print(report.summary())
    return EXIT_OK
