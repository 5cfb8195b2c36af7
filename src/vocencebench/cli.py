"""The ``vocencebench`` command line: a thin layer over the public API.

Each command group lives in its own module under ``vocencebench.commands`` and exposes
``register(subparsers)``; this module only assembles them and turns expected failures
(:class:`~vocencebench.errors.VocenceError`) into one clear line and a non-zero exit.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from . import __version__
from .errors import VocenceError

__all__ = ["build_parser", "main"]

# Command modules, in the order `vocencebench --help` lists them.
_COMMAND_MODULES: tuple[str, ...] = (
    "vocencebench.commands.run",
    "vocencebench.commands.decide",
    "vocencebench.commands.corpus",
    "vocencebench.commands.judge",
    "vocencebench.commands.calibrate",
    "vocencebench.commands.leaderboard",
)

#: Exit status for an error the user can fix (bad file, bad option, failed component).
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    try:
        return int(args.func(args) or 0)
    except VocenceError as exc:
        print(f"vocencebench {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("vocencebench: interrupted; finished work is kept in the cache.", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
