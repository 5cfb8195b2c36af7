"""``vocencebench leaderboard``: N systems, every pair decided by the same exact rule.

    vocencebench leaderboard --system flat=espeak-flat --system follow=espeak-follow \\
        --system mine=cmd:"my-tts --text {text} --instruction {instruction} --out {out}" \\
        [--anchor NAME] [--judge SPEC] [--asr SPEC] [--classifiers] [--limit N] [--out DIR]
    vocencebench leaderboard ... --dry-run      # mode, judge calls and cost; runs nothing
    vocencebench leaderboard --demo             # the offline built-ins
    vocencebench leaderboard --verify DIR       # recompute every published cell, bit for bit

Judge flags are the shared ones of ``vocencebench run`` (:mod:`.commands._judge_args`).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

from .._util.text import terminal_safe
from ..constants import BOARD_NAME_MAX_CHARS, EXIT_CHECK_FAILED, EXIT_INCOMPLETE, EXIT_OK
from ..errors import CanaryError, ConfigError
from ._common import (
    add_corpus_arguments,
    add_economy_arguments,
    add_instrument_arguments,
    add_judge_flags,
    add_run_arguments,
    announce_skipped_canaries,
    cache_file,
    checked_items,
    default_label,
    err,
    make_probes,
    make_transcriber,
    nonempty,
    positive_int,
    print_plan,
    run_demo_leaderboard,
)

__all__ = ["parse_named_system", "register", "run"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def parse_named_system(text: str) -> tuple[str, str]:
    """``NAME=SPEC`` → (name, spec); a bare spec is named as ``vocencebench run`` names it.

    The text before the first ``=`` is a name only if it is a plain name (letters, digits,
    ``._+-``, no ``:``), so ``cmd:tts --rate=1`` stays a spec.
    """
    head, sep, tail = text.partition("=")
    if sep and _NAME.match(head) and tail and len(head) <= BOARD_NAME_MAX_CHARS:
        return head, tail
    if not text:
        raise ConfigError("--system needs NAME=SPEC (e.g. flat=espeak-flat)")
    if sep and ":" not in head:  # every spec with "=" in it has a "KIND:" before it
        raise ConfigError(
            f"--system {text!r}: the name before '=' must be 1-{BOARD_NAME_MAX_CHARS} "
            "letters, digits or ._+- (it names files of the output), and a spec must follow")
    return default_label(text), text


def _add_judge_flags(p: argparse.ArgumentParser) -> None:
    add_judge_flags(p)
    p.add_argument("--all-at-once", action="store_true",
                   help="one judge upload per pair of clips scores every judged dimension")
    p.add_argument("--no-swap", action="store_true",
                   help="judge one order only (half the calls; position bias not neutralised)")


def register(sub: Any) -> None:
    """Add the ``leaderboard`` command to the CLI's subparsers."""
    p = sub.add_parser(
        "leaderboard",
        help="rank N TTS systems: every pair decided by the paired-bootstrap rule",
        description="Synthesise and analyse every system once, decide every pair (or every "
                    "system against --anchor) with the exact rule of `vocencebench decide`, "
                    "and write tiers, the verdict matrix and a Bradley–Terry summary.",
    )
    p.add_argument("--system", action="append", default=[], metavar="NAME=SPEC",
                   help="a system to rank (repeat; at least two). SPEC as in `run`: "
                        "espeak-follow | espeak-flat | cmd:TEMPLATE | dir:PATH | "
                        "openai-speech:URL#MODEL#VOICE | qwen3:CHECKPOINT | parler:CHECKPOINT")
    p.add_argument("--anchor", metavar="NAME", default=None,
                   help="judge only each system against NAME (O(N) judge cost); the other "
                        "cells are NOT COMPARED")
    _add_judge_flags(p)
    add_instrument_arguments(p)
    p.add_argument("--quality", action="store_true", help="also report DNSMOS per clip")
    add_corpus_arguments(p)
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="only the first N items")
    p.add_argument("--out", type=nonempty, default=None,
                   help="output directory (default runs/leaderboard)")
    add_run_arguments(
        p, no_cache_help="keep no cache after the run (clips are still shared across pairs)")
    p.add_argument("--executor", default=None, help="local | serial | dask | dask:ADDRESS")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="decide a pair on its complete items when an instrument failed on some")
    add_economy_arguments(p, dry_run=False)
    p.add_argument("--dry-run", action="store_true",
                   help="print the mode, the judge calls, tokens per call and their estimated "
                        "cost (and whether they fit --judge-spend-cap); run nothing and send "
                        "no request to the judge")
    p.add_argument("--quiet", action="store_true",
                   help="no start line, plan lines or progress bars")
    p.add_argument("--demo", action="store_true",
                   help="the offline built-ins (espeak-flat, espeak-follow, and hibari, "
                        "hibari-follow when installed); no judge, no ASR")
    p.add_argument("--verify", type=nonempty, metavar="DIR", default=None,
                   help="recompute every cell and the tiers of a published leaderboard from "
                        "its scores file(s) and compare them bit for bit")
    p.set_defaults(func=run)


def _systems(specs: list[str]) -> dict[str, Any]:
    from ..specs import build_system

    if len(specs) < 2:
        raise ConfigError("a leaderboard needs at least two --system NAME=SPEC")
    out: dict[str, Any] = {}
    for text in specs:
        name, spec = parse_named_system(text)
        if name in out:
            raise ConfigError(f"two systems are named {name!r}; name them: --system NAME=SPEC")
        out[name] = build_system(spec)
    return out


def run(args: argparse.Namespace) -> int:
    """Run ``leaderboard`` (or ``--verify`` a published one, or the ``--demo``)."""
    _refuse_ignored_options(args)
    if args.verify:
        return _verify(args.verify)
    if args.demo:
        return run_demo_leaderboard(args)
    try:
        return _run(args)
    except CanaryError as exc:  # raised before any clip: nothing to rank, the reason says why
        err(f"vocencebench leaderboard: INCOMPLETE: {exc}")
        return EXIT_INCOMPLETE


def _run(args: argparse.Namespace) -> int:
    from ..board import leaderboard, plan_judge_calls
    from ..board.plan import system_order
    from ..outputs import claim_directory
    from ._judge_args import judge_from_args

    items, selection = checked_items(args)  # the same gate, hold-out split and limit as `run`
    systems = _systems(args.system)
    system_order(list(systems), args.anchor)  # a bad --anchor: one line, nothing claimed
    judge = judge_from_args(args)
    out = Path(args.out or "runs/leaderboard")
    if not args.dry_run:
        claim_directory(out, kind="leaderboard", force=args.force)
    cache = cache_file(args, out)
    consistent, votes, all_at_once = not args.no_swap, args.votes, args.all_at_once
    if args.dry_run:
        plan = plan_judge_calls(items, systems, judge, anchor=args.anchor, cache=cache,
                                consistent=consistent, votes=votes, all_at_once=all_at_once,
                                canaries=not args.skip_canaries)
        return print_plan(f"vocencebench leaderboard (dry run): {len(systems)} systems, "
                          f"{len(items)} items", plan.describe(),
                          stop_when_decided=args.stop_when_decided, judged=judge is not None)
    if not args.quiet:
        err(f"vocencebench leaderboard: {len(systems)} systems on {len(items)} items "
            f"(cache: {cache or 'for this run only'})")
    announce_skipped_canaries(args)
    t0 = time.perf_counter()
    lb = leaderboard(
        items, systems, judge, anchor=args.anchor,
        probes=make_probes(classifiers=args.classifiers, quality=args.quality),
        transcriber=make_transcriber(args.asr), cache=cache, workers=args.workers,
        executor=args.executor, progress=not args.quiet and sys.stderr.isatty(),
        consistent=consistent, votes=votes,
        judge_concurrency=args.judge_concurrency,
        all_at_once=all_at_once, allow_incomplete=args.allow_incomplete,
        announce=None if args.quiet else err, canaries=not args.skip_canaries,
        stop_when_decided=args.stop_when_decided,
    )
    lb.metadata["selection"] = selection
    lb.metadata.setdefault("timings", {})["wall_s"] = time.perf_counter() - t0
    path = lb.save(out)
    print(lb.summary())
    print(f"\nwritten: {path}/leaderboard.html, leaderboard.md, leaderboard.json and the "
          "scores to recompute every cell")
    return EXIT_OK if lb.complete else EXIT_INCOMPLETE


def _refuse_ignored_options(args: argparse.Namespace) -> None:
    """``--verify`` and ``--demo`` are modes of their own: an option that one of them would
    ignore (the systems, the anchor, the other mode) is refused, never dropped."""
    for mode, given in (("--verify", args.verify is not None), ("--demo", args.demo)):
        if not given:
            continue
        ignored = [flag for flag, there in (("--demo", mode == "--verify" and args.demo),
                                            ("--system", bool(args.system)),
                                            ("--anchor", args.anchor is not None)) if there]
        if ignored:
            what = ("recomputes a published leaderboard" if mode == "--verify"
                    else "ranks the offline built-ins")
            raise ConfigError(f"{mode} {what}; it takes no {' or '.join(ignored)}: drop "
                              f"{'them' if len(ignored) > 1 else 'it'}")


def _verify(directory: str) -> int:
    from ..board import verify

    problems = verify(directory)
    if problems:
        for p in problems:
            print(f"MISMATCH: {terminal_safe(p)}")
        return EXIT_CHECK_FAILED
    print(f"OK: every cell and the standings of {terminal_safe(directory)} were recomputed "
          "bit for bit from its published scores (the status lines, canaries, failures and "
          "system ids are the run's own record, not derived from the scores)")
    return EXIT_OK
