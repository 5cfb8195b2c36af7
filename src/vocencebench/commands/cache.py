"""``vocencebench cache check PATH``: is a run cache sound, and can every row be trusted?"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..constants import EXIT_CHECK_FAILED, EXIT_OK
from ..errors import CacheError, ConfigError
from ._common import nonempty

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``cache`` command group to the CLI's subparsers."""
    p = subparsers.add_parser("cache", help="inspect a run cache",
                              description="Tools for the SQLite run cache (cache.sqlite).")
    sub = p.add_subparsers(dest="cache_command", metavar="SUBCOMMAND", required=True)
    c = sub.add_parser(
        "check", help="integrity check plus the digest of every stored row",
        description="Run SQLite's PRAGMA integrity_check and verify every row's sha256 and "
                    "digest, read-only. Prints a summary; exit 1 if anything is wrong (a "
                    "damaged file, rows that fail their digests, a file that is not a "
                    "vocencebench cache).")
    c.add_argument("path", type=nonempty, metavar="PATH",
                   help="the cache file (e.g. runs/NAME/cache.sqlite)")
    c.add_argument("--delete-bad", action="store_true",
                   help="delete the rows that fail their digests (a run would recompute "
                        "and overwrite them anyway)")
    c.set_defaults(func=_check)


def _check(args: argparse.Namespace) -> int:
    from .._util.text import terminal_safe
    from ..cache import check_cache

    path = Path(args.path)
    if not path.is_file():
        raise ConfigError(f"no cache file at {path}")
    try:
        report = check_cache(path, delete_bad=args.delete_bad)
    except CacheError as exc:
        print(f"FAILED: {terminal_safe(exc)}")
        return EXIT_CHECK_FAILED
    for line in report.lines():
        print(terminal_safe(line))
    nbad = sum(report.bad.values())
    if report.ok:
        print(f"OK: {sum(report.rows.values())} rows, every digest matches")
        return EXIT_OK
    if report.integrity != ("ok",):
        print("FAILED: SQLite reports damage; delete the file (its finished work is then "
              "redone) or pass another --cache PATH")
    if nbad:
        done = (f"; {report.deleted} deleted" if args.delete_bad else
                "; a run ignores and recomputes them (--delete-bad removes them now)")
        print(f"FAILED: {nbad} row(s) failed their digests{done}")
    return EXIT_CHECK_FAILED
