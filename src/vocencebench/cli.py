"""The ``vocencebench`` command line: a thin layer over the public API.

Each command group lives in its own module under ``vocencebench.commands`` and exposes
``register(subparsers)``; this module only assembles them and turns expected failures
(:class:`~vocencebench.errors.VocenceError`) into one clear line and a non-zero exit. The
exit statuses (:data:`EXIT_USAGE`, :data:`EXIT_INCOMPLETE`, :data:`EXIT_INTERRUPTED`) are
defined once, in :mod:`vocencebench.commands._common`, and re-exported here; the command
modules never import this one.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from .commands._common import EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_USAGE
from .constants import PACKAGE_VERSION as __version__
from .errors import VocenceError

__all__ = ["EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_USAGE", "build_parser", "main"]

# Command modules, in the order `vocencebench --help` lists them.
_COMMAND_MODULES: tuple[str, ...] = (
    "vocencebench.commands.run",
    "vocencebench.commands.report",
    "vocencebench.commands.decide",
    "vocencebench.commands.corpus",
    "vocencebench.commands.judge",
    "vocencebench.commands.listen",
    "vocencebench.commands.calibrate",
    "vocencebench.commands.cache",
    "vocencebench.commands.redteam",
    "vocencebench.commands.leaderboard",
)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block): ``vocencebench CMD: error: ...``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="vocencebench",
        description="Benchmark prompt-controllable text-to-speech: probes, judge, verdict.",
    )
    parser.add_argument("--version", action="version", version=f"vocencebench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    from ._util.procs import sigterm_as_interrupt

    try:
        # SIGTERM (kill, a job scheduler) ends a run like Ctrl-C: cleanup runs, one line.
        with sigterm_as_interrupt():
            return int(args.func(args) or 0)
    except VocenceError as exc:
        print(f"vocencebench {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("vocencebench: interrupted; finished work is kept in the cache, run the same "
              "command to resume.", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
