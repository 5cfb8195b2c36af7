"""``vocencebench redteam``: the attack catalogue against your instruments.

Exit status: 0 when no attack is VULNERABLE, 1 when any is, 3 when none is but a duel could
not be decided (an instrument failed on some items) or when an instrument failed its
known-answer canaries (checked once, before anything is synthesised; nothing is tested then),
2 for a usage error (the statuses are :mod:`vocencebench.constants`' ``EXIT_*``).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Any

from ..constants import EXIT_INCOMPLETE
from ..errors import CanaryError, ConfigError
from ._common import (
    add_instrument_arguments,
    add_judge_flags,
    add_run_arguments,
    announce_skipped_canaries,
    cache_file,
    make_probes,
    make_transcriber,
    nonempty,
    positive_int,
)

__all__ = ["register"]


def _items(args: argparse.Namespace) -> list[Any]:
    from ..corpus import load_corpus

    return list(load_corpus(args.corpus))  # the one corpus gate: pin and structure


def _cmd_redteam(args: argparse.Namespace) -> int:
    from ..gaming import attack_names, redteam, resolve_system
    from ..outputs import claim_directory
    from ._judge_args import judge_from_args

    attacks = None
    if args.attacks:
        attacks = [a.strip() for a in args.attacks.split(",") if a.strip()]
        unknown = [a for a in attacks if a not in attack_names()]
        if unknown:
            raise ConfigError(f"unknown attack(s) {', '.join(unknown)}; valid: "
                              f"{', '.join(attack_names())}")
    items = _items(args)
    judge = judge_from_args(args)
    if args.reference is not None:  # a bad spec is one line before the folder is claimed
        resolve_system(args.reference)
    out = claim_directory(args.out, kind="redteam", force=args.force)
    transcriber = make_transcriber(args.asr)
    probes = make_probes(classifiers=args.classifiers)
    cache = cache_file(args, out)
    announce_skipped_canaries(args)
    t0 = time.perf_counter()
    # Attacks make clips the probes cannot measure on purpose (noise, silence); the table
    # counts them ("unscored"), so the per-clip warnings would only bury it.
    probe_log = logging.getLogger("vocencebench.probes")
    level = probe_log.level
    probe_log.setLevel(logging.ERROR)
    try:
        result = redteam(
            items, reference=args.reference, judge=judge, transcriber=transcriber,
            probes=probes, holdout_salt=args.holdout_salt, cache=cache, attacks=attacks,
            limit=args.limit, workers=args.workers, votes=getattr(args, "votes", 1),
            judge_concurrency=getattr(args, "judge_concurrency", 4),
            progress=not args.quiet, canaries=not args.skip_canaries,
        )
    except CanaryError as exc:  # raised before any clip: nothing to report but the reason
        from .._util.text import terminal_safe

        print(f"vocencebench redteam: INCOMPLETE: {terminal_safe(exc)}", file=sys.stderr)
        return EXIT_INCOMPLETE
    finally:
        probe_log.setLevel(level)
    result.timings["command_s"] = time.perf_counter() - t0
    path = result.save(out)
    print(result.table())
    print(f"\nreports: {path}/redteam.html, redteam.md, redteam.json")
    return result.exit_code


def register(sub: Any) -> None:
    """Add the ``redteam`` command to the CLI's subparsers."""
    p = sub.add_parser(
        "redteam", help="run the attack catalogue against your instruments",
        description="Run every attack of the catalogue head to head against its base and the "
                    "honest reference with the instruments given (probes, --asr, --judge, "
                    "--classifiers, --holdout-salt) and print one table: DEFENDED, "
                    "VULNERABLE or NOT TESTED per attack. Exit 0: nothing VULNERABLE; 1: "
                    "something is; 3: a duel was incomplete, or an instrument failed its "
                    "known-answer canaries (nothing was synthesised).")
    p.add_argument("--reference", type=nonempty, default=None, metavar="SPEC",
                   help="the honest reference (default: hibari-follow when hibari-tts is "
                        "installed, else espeak-follow)")
    p.add_argument("--corpus", type=nonempty, default="benchmark_v1",
                   help="benchmark_v1 or a .jsonl file")
    p.add_argument("--holdout-salt", default=None, metavar="SALT",
                   help="private salt: the memoriser learns the public part, every duel "
                        "runs on the held-out part")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="only the first N items (of each partition used)")
    p.add_argument("--attacks", default=None, metavar="A,B",
                   help="only these attacks (comma-separated names)")
    add_judge_flags(p)
    add_instrument_arguments(p)
    p.add_argument("--out", type=nonempty, default="runs/redteam",
                   help="output directory (default runs/redteam)")
    add_run_arguments(
        p, no_cache_help="no persistent cache (a temporary one still shares work across duels)")
    p.add_argument("--quiet", action="store_true", help="no per-duel progress lines")
    p.set_defaults(func=_cmd_redteam)

