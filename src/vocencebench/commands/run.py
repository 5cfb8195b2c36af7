"""``vocencebench run`` and ``demo``: the main job from the command line.

``demo`` is ``run`` with a preset (:data:`DEMO_RUN`: two offline built-ins, no judge, the
shipped corpus; the gate off unless ``--asr`` turns it on), so both are this module;
``demo --leaderboard`` is the leaderboard demo (:func:`vocencebench.board.demo_leaderboard`,
as ``leaderboard --demo`` runs it).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from typing import Any, Final

from ..constants import EXIT_INCOMPLETE, EXIT_OK
from ..errors import ConfigError
from ..schema import INCOMPLETE
from ._common import (
    add_corpus_arguments,
    add_economy_arguments,
    add_instrument_arguments,
    add_run_arguments,
    announce_skipped_canaries,
    cache_file,
    checked_items,
    default_label,
    load_items,
    make_probes,
    make_transcriber,
    nonempty,
    positive_int,
    print_plan,
    run_demo_leaderboard,
)
from ._judge_args import JUDGE_FLAGS, add_judge_arguments

__all__ = ["DEMO_RUN", "DEMO_SYSTEMS", "register"]


def _labels(args: argparse.Namespace) -> tuple[str, str]:
    """``--label-a`` / ``--label-b``, else named after the specs; equal names get -a / -b."""
    label_a = args.label_a or default_label(args.system_a)
    label_b = args.label_b or default_label(args.system_b)
    if label_a == label_b:
        label_a, label_b = f"{label_a}-a", f"{label_b}-b"
    return label_a, label_b


def _prepare(args: argparse.Namespace) -> dict[str, Any]:
    """Every argument checked and every component built before any work starts: a bad option
    fails in a second with one line, never after hours of synthesis."""
    from ..outputs import claim_directory
    from ..specs import build_system
    from ._judge_args import judge_from_args

    items, selection = checked_items(args)
    model_a = build_system(args.system_a)
    model_b = build_system(args.system_b)
    label_a, label_b = _labels(args)
    judge = judge_from_args(args)
    transcriber = make_transcriber(args.asr)
    probes = make_probes(classifiers=args.classifiers, quality=args.quality)
    out = claim_directory(args.out or f"runs/{label_a}-vs-{label_b}", kind="run",
                          force=args.force)
    cache = cache_file(args, out)
    concurrency = (args.concurrency_a, args.concurrency_b)
    return {"items": items, "selection": selection, "model_a": model_a, "model_b": model_b,
            "concurrency": concurrency if any(c is not None for c in concurrency) else None,
            "labels": (label_a, label_b), "judge": judge, "transcriber": transcriber,
            "probes": probes, "out": out, "cache": cache}


def _dry_run(args: argparse.Namespace) -> int:
    """``run --dry-run``: the judge plan of the run (board's planner, as ``leaderboard
    --dry-run`` prints it), then exit; nothing is synthesised, judged or written."""
    from pathlib import Path

    from ..board import plan_judge_calls
    from ..specs import build_system
    from ._judge_args import judge_from_args

    items, _ = load_items(args)
    label_a, label_b = _labels(args)
    systems = {label_a: build_system(args.system_a), label_b: build_system(args.system_b)}
    judge = judge_from_args(args)
    out = Path(args.out or f"runs/{label_a}-vs-{label_b}")
    cache = cache_file(args, out)
    plan = plan_judge_calls(items, systems, judge, cache=cache, consistent=not args.no_swap,
                            votes=args.votes, all_at_once=args.all_at_once,
                            canaries=not args.skip_canaries)
    return print_plan(f"vocencebench run (dry run): {label_a} vs {label_b} on {len(items)} "
                      f"items (cache: {cache or 'off'})",
                      plan.describe()[1:],  # the first line is the leaderboard's mode
                      stop_when_decided=args.stop_when_decided, judged=judge is not None)


def _execute(args: argparse.Namespace) -> int:
    from ..compare import benchmark

    if getattr(args, "dry_run", False):
        return _dry_run(args)
    run = _prepare(args)
    items, (label_a, label_b), cache = run["items"], run["labels"], run["cache"]
    progress = not args.quiet and sys.stderr.isatty()
    if not args.quiet:
        from .._util.text import terminal_safe as ts

        print(f"vocencebench: {ts(label_a)} vs {ts(label_b)} on {len(items)} items "
              f"(cache: {ts(cache or 'off')})", file=sys.stderr)
    from ..executor import capped_workers

    if args.executor in (None, "", "local") and args.workers is not None:
        _, note = capped_workers(args.workers, 2 * len(items))
        if note:
            print(f"vocencebench: {note}", file=sys.stderr)
    announce_skipped_canaries(args)
    t0 = time.perf_counter()
    h2h = benchmark(
        items, run["model_a"], run["model_b"], run["judge"], probes=run["probes"],
        transcriber=run["transcriber"], labels=(label_a, label_b), cache=cache,
        workers=args.workers, executor=args.executor, progress=progress, votes=args.votes,
        consistent=not args.no_swap, all_at_once=args.all_at_once,
        judge_concurrency=args.judge_concurrency, concurrency=run["concurrency"],
        allow_incomplete=args.allow_incomplete, canaries=not args.skip_canaries,
        stop_when_decided=getattr(args, "stop_when_decided", False),
    )
    h2h.metadata.setdefault("timings", {})["total_s"] = time.perf_counter() - t0
    h2h.metadata["selection"] = run["selection"]
    try:
        path = h2h.save(run["out"])
    except ConfigError:  # the disk is full, say: the result is still shown, then one line
        print(h2h.summary())
        raise
    print(h2h.summary())
    print(f"\nreports: {path}/report.html, report.md, run.json, scores.jsonl")
    if h2h.decision.winner == INCOMPLETE:
        print(f"\nINCOMPLETE: no winner is named; rerun the same command to retry the "
              f"{len(h2h.incomplete_items)} incomplete item(s), or add --allow-incomplete",
              file=sys.stderr)
        return EXIT_INCOMPLETE
    return EXIT_OK


#: The systems of ``vocencebench demo`` unless ``--systems`` names others.
DEMO_SYSTEMS = ("espeak-flat", "espeak-follow")


#: What ``vocencebench demo`` fixes of a run (the rest are its own flags, as ``run`` reads
#: them): no judge, the acoustic probes, the shipped corpus, one vote, both orders. Its
#: ``--asr`` defaults to none (gate off); ``--asr whisper:tiny.en`` gates offline.
DEMO_RUN: Final[Mapping[str, Any]] = {
    "classifiers": False, "judge": "none", **dict.fromkeys(JUDGE_FLAGS),
    "judge_concurrency": 4, "corpus": "benchmark_v1", "holdout_salt": None, "votes": 1,
    "no_swap": False, "executor": None, "all_at_once": False, "concurrency_a": None,
    "concurrency_b": None,
}


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.leaderboard:
        if args.systems:
            raise ConfigError("--leaderboard ranks every offline built-in; drop --systems")
        if args.asr not in ("none", ""):
            raise ConfigError("--leaderboard runs without a gate; drop --asr")
        # The same code path as `vocencebench leaderboard --demo` (announcements, canaries,
        # exit status).
        return run_demo_leaderboard(args)

    names = tuple(x.strip() for x in (args.systems or ",".join(DEMO_SYSTEMS)).split(","))
    if len(names) != 2 or not all(names) or names[0] == names[1]:
        raise ConfigError(f"--systems needs two different built-in systems A,B, got "
                          f"{args.systems!r} (e.g. hibari,hibari-follow)")
    default_out = "runs/demo" if names == DEMO_SYSTEMS else f"runs/demo-{names[0]}-vs-{names[1]}"
    return _execute(argparse.Namespace(**{
        **vars(args), **DEMO_RUN, "system_a": names[0], "system_b": names[1],
        "label_a": names[0], "label_b": names[1], "out": args.out or default_out}))


def _duel_arguments(p: argparse.ArgumentParser) -> None:
    """The flags ``run`` and ``demo`` share."""
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="only the first N items")
    p.add_argument("--out", type=nonempty, default=None, help="output directory of the run")
    add_run_arguments(p, no_cache_help="do not read or write a cache")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="when an instrument failed on some items, decide on the complete "
                        "ones (the reason says so) instead of naming no winner (exit 3)")
    p.add_argument("--quiet", action="store_true",
                   help="no start line and no progress bars")
    p.add_argument("--quality", action="store_true",
                   help="also report DNSMOS quality per clip (diagnostic, ~1 CPU-s per clip)")


def register(sub: Any) -> None:
    """Add the ``run`` and ``demo`` commands to the CLI's subparsers."""
    run = sub.add_parser("run", help="benchmark two TTS systems head to head")
    run.add_argument("--system-a", required=True, metavar="SPEC",
                     help="incumbent: espeak-follow | espeak-flat | cmd:TEMPLATE | dir:PATH | "
                          "openai-speech:URL#MODEL#VOICE | qwen3:CHECKPOINT | parler:CHECKPOINT")
    run.add_argument("--system-b", required=True, metavar="SPEC", help="challenger (as above)")
    run.add_argument("--label-a", type=nonempty, default=None, metavar="NAME",
                     help="the name of system a in the reports (default: from its spec)")
    run.add_argument("--label-b", type=nonempty, default=None, metavar="NAME",
                     help="the name of system b (default: from its spec)")
    add_instrument_arguments(run)
    add_corpus_arguments(run)
    run.add_argument("--executor", default=None, help="local | serial | dask | dask:ADDRESS")
    run.add_argument("--votes", type=positive_int, default=1, help="judge samples per order")
    run.add_argument("--concurrency-a", type=positive_int, default=None, metavar="N",
                     help="requests in flight for system a (HTTP APIs, command lines; "
                          "default: the system's own setting, else 1)")
    run.add_argument("--concurrency-b", type=positive_int, default=None, metavar="N",
                     help="requests in flight for system b")
    run.add_argument("--all-at-once", action="store_true",
                     help="one judge upload per pair scores every judged dimension")
    run.add_argument("--no-swap", action="store_true",
                     help="judge one order only (faster, position bias not neutralised)")
    add_judge_arguments(run)
    add_economy_arguments(run)
    _duel_arguments(run)
    run.set_defaults(func=_execute)

    demo = sub.add_parser("demo", help="offline duel: espeak-follow vs espeak-flat")
    demo.add_argument("--systems", default=None, metavar="A,B",
                      help="two built-in systems to duel instead (e.g. hibari,hibari-follow)")
    demo.add_argument("--leaderboard", action="store_true",
                      help="rank every offline built-in instead (espeak-flat, espeak-follow "
                           "and, when installed, hibari, hibari-follow)")
    demo.add_argument("--asr", default="none",
                      help="the gate's transcriber: none (default: gate off) | whisper:tiny.en "
                           "(a real but weak offline gate; extra whisper-offline) | "
                           "whisper[:MODEL] | openai:URL#MODEL")
    _duel_arguments(demo)
    demo.set_defaults(func=_cmd_demo)
