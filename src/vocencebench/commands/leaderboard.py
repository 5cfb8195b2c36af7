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
import importlib
import importlib.util
import re
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import CanaryError, ConfigError

__all__ = [
    "DEMO_ITEMS_WITH_NEURAL",
    "demo_leaderboard",
    "demo_systems",
    "parse_named_system",
    "register",
    "run",
]

#: Exit status when some pair is INCOMPLETE (an instrument failed; no verdict for it), or
#: when an instrument failed its known-answer canaries (before anything was synthesised).
EXIT_INCOMPLETE = 3
#: Exit status when ``--verify`` finds a cell that does not reproduce.
EXIT_MISMATCH = 1

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def parse_named_system(text: str) -> tuple[str, str]:
    """``NAME=SPEC`` → (name, spec); a bare spec is named as ``vocencebench run`` names it.

    The text before the first ``=`` is a name only if it is a plain name (letters, digits,
    ``._+-``, no ``:``), so ``cmd:tts --rate=1`` stays a spec.
    """
    head, sep, tail = text.partition("=")
    if sep and _NAME.match(head) and tail:
        return head, tail
    if not text:
        raise ConfigError("--system needs NAME=SPEC (e.g. flat=espeak-flat)")
    from .run import _default_label

    return _default_label(text), text


def _add_judge_flags(p: argparse.ArgumentParser) -> None:
    from ._judge_args import add_judge_arguments
    from .run import _positive_int

    add_judge_arguments(p)
    p.add_argument("--votes", type=_positive_int, default=1, help="judge samples per order")
    p.add_argument("--all-at-once", action="store_true",
                   help="one judge upload per pair of clips scores every judged dimension")
    p.add_argument("--no-swap", action="store_true",
                   help="judge one order only (half the calls; position bias not neutralised)")


def register(sub: Any) -> None:
    from .run import _positive_int

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
    p.add_argument("--asr", default="none",
                   help="none | whisper[:MODEL] | openai:URL#MODEL | pocketsphinx")
    p.add_argument("--classifiers", action="store_true",
                   help="add the age/gender/emotion/accent classifier probes")
    p.add_argument("--quality", action="store_true", help="also report DNSMOS per clip")
    p.add_argument("--corpus", default="benchmark_v1", help="benchmark_v1 or a .jsonl file")
    p.add_argument("--holdout-salt", default=None,
                   help="run on the held-out partition defined by this private salt")
    p.add_argument("--limit", type=_positive_int, default=None, metavar="N",
                   help="only the first N items")
    p.add_argument("--out", default=None, help="output directory (default runs/leaderboard)")
    p.add_argument("--cache", default=None, help="cache file (default: OUT/cache.sqlite)")
    p.add_argument("--no-cache", action="store_true",
                   help="keep no cache after the run (clips are still shared across pairs)")
    p.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                   help="worker processes for probes")
    p.add_argument("--executor", default=None, help="local | serial | dask | dask:ADDRESS")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="decide a pair on its complete items when an instrument failed on some")
    p.add_argument("--skip-canaries", action="store_true",
                   help="do not check the probes and the judge against the known-answer "
                        "canaries first (the reports then say they were skipped)")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty --out that vocencebench did not create")
    p.add_argument("--dry-run", action="store_true",
                   help="print the mode, the judge calls and their estimated cost; run nothing")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--demo", action="store_true",
                   help="the offline built-ins (espeak-flat, espeak-follow, and hibari, "
                        "hibari-follow when installed); no judge, no ASR")
    p.add_argument("--verify", metavar="DIR", default=None,
                   help="recompute every cell and the tiers of a published leaderboard from "
                        "its scores file(s) and compare them bit for bit")
    p.set_defaults(func=run)


def _load_items(args: argparse.Namespace) -> tuple[list[Any], dict[str, Any]]:
    from .run import load_items

    return load_items(args)  # the same gate, hold-out split and limit as `run`


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


def _probes(args: argparse.Namespace) -> Any:
    if args.classifiers:
        from ..probes import with_classifiers

        return with_classifiers(quality=args.quality)
    from ..probes import default_probes

    return default_probes(quality=args.quality)


def _err(line: str) -> None:
    print(line, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except CanaryError as exc:  # raised before any clip: nothing to rank, the reason says why
        _err(f"vocencebench leaderboard: INCOMPLETE: {exc}")
        return EXIT_INCOMPLETE


def _run(args: argparse.Namespace) -> int:
    from ..outputs import claim_directory
    from .run import announce_skipped_canaries

    if args.verify:
        return _verify(args.verify)
    if args.demo:
        claim_directory(args.out or "runs/demo-leaderboard", kind="leaderboard",
                        force=args.force)
        announce_skipped_canaries(args)
        lb = demo_leaderboard(out=args.out or "runs/demo-leaderboard", limit=args.limit,
                              workers=args.workers, cache=args.cache, no_cache=args.no_cache,
                              progress=not args.quiet and sys.stderr.isatty(),
                              announce=None if args.quiet else _err,
                              canaries=not args.skip_canaries)
        print(lb.summary())
        return 0 if lb.complete else EXIT_INCOMPLETE
    from ..board import leaderboard, plan_judge_calls
    from ..executor import check_workers, validate_executor_spec
    from ._judge_args import judge_from_args
    from .run import make_transcriber

    validate_executor_spec(args.executor)
    check_workers(args.workers)
    items, selection = _load_items(args)
    systems = _systems(args.system)
    judge = judge_from_args(args)
    out = Path(args.out or "runs/leaderboard")
    if not args.dry_run:
        claim_directory(out, kind="leaderboard", force=args.force)
    cache = None if args.no_cache else (args.cache or str(out / "cache.sqlite"))
    consistent, votes, all_at_once = not args.no_swap, args.votes, args.all_at_once
    if args.dry_run:
        plan = plan_judge_calls(items, systems, judge, anchor=args.anchor, cache=cache,
                                consistent=consistent, votes=votes, all_at_once=all_at_once)
        print(f"vocencebench leaderboard (dry run): {len(systems)} systems, {len(items)} items")
        for line in plan.describe():
            print(line)
        print("nothing was synthesised, analysed or judged")
        return 0
    if not args.quiet:
        _err(f"vocencebench leaderboard: {len(systems)} systems on {len(items)} items "
             f"(cache: {cache or 'for this run only'})")
    announce_skipped_canaries(args)
    t0 = time.perf_counter()
    lb = leaderboard(
        items, systems, judge, anchor=args.anchor, probes=_probes(args),
        transcriber=make_transcriber(args.asr), cache=cache, workers=args.workers,
        executor=args.executor, progress=not args.quiet and sys.stderr.isatty(),
        consistent=consistent, votes=votes,
        judge_concurrency=args.judge_concurrency,
        all_at_once=all_at_once, allow_incomplete=args.allow_incomplete,
        announce=None if args.quiet else _err, canaries=not args.skip_canaries,
    )
    lb.metadata["selection"] = selection
    lb.metadata.setdefault("timings", {})["wall_s"] = time.perf_counter() - t0
    path = lb.save(out)
    print(lb.summary())
    print(f"\nwritten: {path}/leaderboard.html, leaderboard.md, leaderboard.json and the "
          "scores to recompute every cell")
    return 0 if lb.complete else EXIT_INCOMPLETE


def _verify(directory: str) -> int:
    from ..board import verify

    problems = verify(directory)
    if problems:
        for p in problems:
            print(f"MISMATCH: {p}")
        return EXIT_MISMATCH
    print(f"OK: every cell and the tiers of {directory} were recomputed bit for bit from its "
          "published scores")
    return 0


# --------------------------------------------------------------------------- demo


#: Items of the demo when the neural built-ins run too (the first half of the corpus; its
#: difficulty mix is 32 / 41 / 27 % against the corpus's 35 / 40 / 25 %). eSpeak alone runs
#: all 496. See docs/leaderboard.md, "The demo", for the timings behind this choice.
DEMO_ITEMS_WITH_NEURAL = 248


def demo_systems(*, neural: bool = True) -> tuple[dict[str, Any], list[str]]:
    """The offline built-ins: espeak-flat, espeak-follow and, when the neural module and
    hibari-tts are installed, hibari and hibari-follow. Returns (systems, notes on what was
    left out and why)."""
    from ..adapters import EspeakSystem

    systems: dict[str, Any] = {"espeak-flat": EspeakSystem("espeak-flat"),
                               "espeak-follow": EspeakSystem("espeak-follow")}
    notes: list[str] = []
    if not neural:
        notes.append("hibari, hibari-follow: left out (neural=False)")
        return systems, notes
    if importlib.util.find_spec("hibari") is None:
        notes.append("hibari, hibari-follow: skipped (hibari-tts is not installed; "
                     "pip install hibari-tts)")
        return systems, notes
    try:
        nmod = importlib.import_module("vocencebench.systems.hibari")
    except ImportError as exc:
        notes.append(f"hibari, hibari-follow: skipped (this vocencebench has no neural "
                     f"built-ins: {exc})")
        return systems, notes
    try:
        found = {name: nmod.HibariSystem(name) for name in ("hibari", "hibari-follow")}
    except Exception as exc:  # a failed model load is announced, not fatal to the demo
        notes.append(f"hibari, hibari-follow: skipped ({type(exc).__name__}: {exc})")
        return systems, notes
    systems.update(found)
    return systems, notes


def demo_leaderboard(
    out: str | Path = "runs/demo-leaderboard",
    *,
    limit: int | None = None,
    workers: int | None = None,
    cache: str | None = None,
    no_cache: bool = False,
    neural: bool = True,
    progress: bool = False,
    announce: Any = None,
    canaries: bool = True,
) -> Any:
    """The offline leaderboard demo over the shipped corpus: the built-in systems of
    :func:`demo_systems`, acoustic probes, no judge, no ASR. Items: the first ``limit``; by
    default all 496 for eSpeak alone, :data:`DEMO_ITEMS_WITH_NEURAL` with the neural systems.
    ``canaries`` as for :func:`vocencebench.board.leaderboard`. Writes the outputs into
    ``out`` and returns the :class:`~vocencebench.board.Leaderboard`.
    """
    from ..board import leaderboard
    from ..corpus import load_benchmark
    from ..probes import default_probes

    items = load_benchmark("benchmark_v1")
    systems, notes = demo_systems(neural=neural)
    if limit is None and len(systems) > 2:
        limit = DEMO_ITEMS_WITH_NEURAL
        notes.append(f"demo subset: the first {limit} of {len(items)} items (neural systems "
                     "included; pass --limit to change it)")
    if limit is not None:
        if limit < 1:
            raise ConfigError("--limit must be ≥ 1")
        items = items[:limit]
    for n in notes:
        if announce is not None:
            announce(n)
    outdir = Path(out)
    store = None if no_cache else (cache or str(outdir / "cache.sqlite"))
    t0 = time.perf_counter()
    lb = leaderboard(items, systems, None, probes=default_probes(), cache=store,
                     workers=workers, progress=progress, announce=announce,
                     canaries=canaries)
    lb.metadata["status"] = [*lb.status(), *notes]
    lb.metadata["selection"] = {"corpus": "benchmark_v1", "limit": limit, "demo": True}
    lb.metadata.setdefault("timings", {})["wall_s"] = time.perf_counter() - t0
    lb.save(outdir)
    return lb
