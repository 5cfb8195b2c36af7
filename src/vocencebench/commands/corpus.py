"""``vocencebench corpus check|hash|stats|split``: validate, pin, describe and split a corpus."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..constants import EXIT_CHECK_FAILED, EXIT_OK
from ..corpus import (
    MAX_OPENING_SHARE,
    RUN_BLOCKING_KINDS,
    Violation,
    check_corpus,
    check_pin,
    corpus_file,
    corpus_hash,
    corpus_stats,
    opening_limit,
    pin_path,
    read_corpus,
    split_holdout,
    summarize_violations,
    write_corpus,
)
from ..errors import ConfigError
from ..executor import default_workers
from ._common import nonempty, nonnegative_int, positive_int

__all__ = ["register"]

_FILE_HELP = ("a corpus .jsonl file, or the name of a shipped corpus (benchmark_v1), read from "
              "the installed package with its pin")


def register(subparsers: Any) -> None:
    """Add the ``corpus`` command group to the CLI's subparsers."""
    p = subparsers.add_parser(
        "corpus", help="validate, hash, describe or split a corpus JSONL file",
        description="Tools for corpus files (one JSON item per line).",
    )
    sub = p.add_subparsers(dest="corpus_command", metavar="SUBCOMMAND", required=True)

    c = sub.add_parser("check", help="check the three invariants and the tier rules",
                       description="Print one line per violation (item id, field, problem), "
                                   "at most --show of them, then one summary line per kind "
                                   "of violation; exit 1 if there is any.")
    c.add_argument("file", type=nonempty, metavar="FILE", help=_FILE_HELP)
    c.add_argument("--show", type=nonnegative_int, default=50, metavar="N",
                   help="list at most N violations (default 50; 0 lists all)")
    c.add_argument("--max-opening-share", type=float, default=MAX_OPENING_SHARE,
                   metavar="F", help="largest share of items, in (0, 1], one four-word instruction "
                                     f"opening may cover (default {MAX_OPENING_SHARE}); "
                                     "1 disables the check")
    c.add_argument("--workers", type=positive_int, default=None, metavar="N",
                   help="processes that check the items of a large corpus (default: the "
                        "CPUs this process may use; 1 checks in this process; the result is "
                        "the same)")
    c.set_defaults(func=_check)

    h = sub.add_parser("hash", help="print the corpus hash (sha256 of the canonical lines)")
    h.add_argument("file", type=nonempty, metavar="FILE", help=_FILE_HELP)
    h.set_defaults(func=_hash)

    s = sub.add_parser("stats", help="coverage table, tier counts, association, variety")
    s.add_argument("file", type=nonempty, metavar="FILE", help=_FILE_HELP)
    s.set_defaults(func=_stats)

    sp = sub.add_parser("split", help="deterministic public / held-out split by a salt",
                        description="Hold out round(F x n) items chosen by sha256(salt + id); "
                                    "writes DIR/public.jsonl and DIR/heldout.jsonl with pins.")
    sp.add_argument("file", type=nonempty, metavar="FILE", help=_FILE_HELP)
    sp.add_argument("--salt", required=True, help="secret salt; keep it private")
    sp.add_argument("--fraction", type=float, default=0.2, metavar="F",
                    help="held-out share, 0 < F < 1 (default 0.2)")
    sp.add_argument("--out", type=nonempty, required=True, metavar="DIR",
                    help="output directory")
    sp.set_defaults(func=_split)


def _safe(text: object) -> str:
    from .._util.text import terminal_safe

    return terminal_safe(text)


def _line(v: Violation) -> str:
    from .._util.text import terminal_safe

    # It quotes the corpus: shown, never obeyed (each field; the tabs between are ours).
    text = "\t".join(terminal_safe(x) for x in (v.item_id, v.field, v.problem))
    return text if len(text) <= 300 else text[:297] + "..."


def _check(args: argparse.Namespace) -> int:
    opening_limit(0, args.max_opening_share)  # refuses a share outside (0, 1], nan included
    file = corpus_file(args.file)
    items = read_corpus(file, verify=False)
    share = None if args.max_opening_share >= 1 else args.max_opening_share
    workers = args.workers if args.workers is not None else default_workers()
    problems = check_corpus(items, max_opening_share=share, workers=workers)
    pin = check_pin(file, items)
    if pin is not None:
        problems.insert(0, Violation("-", "pin", pin, "pin"))
    if not problems:
        print(f"OK: {len(items)} items, 0 violations")
        return EXIT_OK
    show = len(problems) if args.show == 0 else args.show
    for v in problems[:show]:
        print(_line(v))
    if len(problems) > show:
        print(f"... {len(problems) - show} more violation(s) not listed (--show 0 lists all)")
    for line in summarize_violations(problems):
        print(f"summary: {_safe(line)}")
    blocking = sum(v.kind in RUN_BLOCKING_KINDS for v in problems)
    print(f"FAILED: {len(items)} items, {len(problems)} violations "
          f"({blocking} of them block a run)")
    return EXIT_CHECK_FAILED


def _hash(args: argparse.Namespace) -> int:
    # Never verified: this is the command that makes the pin.
    file = corpus_file(args.file)
    print(f"{corpus_hash(read_corpus(file, verify=False))}  {file.name}")
    return EXIT_OK


def _stats(args: argparse.Namespace) -> int:
    print(corpus_stats(read_corpus(corpus_file(args.file))).summary())
    return EXIT_OK


def _same(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file (resolved paths, or one inode by a hard link)."""
    try:
        return a.resolve() == b.resolve() or os.path.samefile(a, b)
    except (OSError, RuntimeError):  # one does not exist, or a symlink loop
        return False


def _refuse_bad_out(file: Path, out: Path) -> None:
    """Refuse, before writing anything, an --out that is not a directory or whose files
    would replace the input or its pin."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; name a directory (new or existing)")
    for name in ("public.jsonl", "public.sha256", "heldout.jsonl", "heldout.sha256"):
        target = out / name
        for source in (file, pin_path(file)):
            if _same(target, source):
                raise ConfigError(f"--out {out} holds {source}, which the split would "
                                  "overwrite; write the split to another directory")


def _split(args: argparse.Namespace) -> int:
    out = Path(args.out)
    file = corpus_file(args.file)
    _refuse_bad_out(file, out)
    split = split_holdout(read_corpus(file), args.fraction, salt=args.salt)
    hp = write_corpus(split.public, out / "public.jsonl")
    hh = write_corpus(split.heldout, out / "heldout.jsonl")
    print(f"public:  {len(split.public)} items  {out / 'public.jsonl'}  sha256 {hp}")
    print(f"heldout: {len(split.heldout)} items  {out / 'heldout.jsonl'}  sha256 {hh}")
    print(f"salt sha256: {split.salt_digest}")
    return EXIT_OK
