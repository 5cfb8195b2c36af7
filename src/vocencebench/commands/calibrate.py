"""``vocencebench calibrate HUMAN.csv VERDICTS.jsonl``: judge-vs-human agreement (diagnostic)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..calibration import calibrate_files

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` command to the CLI's subparsers."""
    p = subparsers.add_parser(
        "calibrate",
        help="measure how well judge verdicts agree with human labels (diagnostic only)",
        description=(
            "Match human labels (CSV: id,dimension,winner[,score_a,score_b]) to judge "
            "verdicts (JSON Lines: id plus the verdict fields) on id and dimension, and report "
            "accuracy, Cohen's kappa, Spearman's rho of per-clip scores and the order-swap "
            "consistency rate, per dimension and overall. See docs/validation.md."
        ),
    )
    p.add_argument("human", metavar="HUMAN.csv", help="human labels")
    p.add_argument("verdicts", metavar="VERDICTS.jsonl", help="judge verdicts")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``calibrate``."""
    report = calibrate_files(args.human, args.verdicts)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.summary())
    return 0
