"""``vocencebench run``, ``demo`` and ``report``: the main job from the command line."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..cli import EXIT_INCOMPLETE
from ..errors import ConfigError
from ..schema import INCOMPLETE

__all__ = ["announce_skipped_canaries", "load_items", "make_judge", "make_transcriber",
           "register"]


def make_judge(spec: str | None, *, requests_per_minute: float | None = None) -> Any:
    """``none`` | ``gemini[:MODEL]`` | ``local:URL#MODEL`` → a judge (or None)."""
    from .. import specs

    return specs.build("judge", spec, requests_per_minute=requests_per_minute)


def make_transcriber(spec: str | None) -> Any:
    """``none`` | ``whisper[:MODEL]`` | ``openai:URL#MODEL`` | ``pocketsphinx``."""
    from .. import specs

    return specs.build("transcriber", spec)


def load_items(args: argparse.Namespace) -> tuple[list[Any], dict[str, Any]]:
    """The items to run, and what the report should say about their selection."""
    from ..corpus import load_corpus, split_holdout

    src = args.corpus
    # The one corpus gate: pin verified, structure validated, before anything runs.
    items = load_corpus(src)
    selection: dict[str, Any] = {"corpus": src, "corpus_items": len(items)}
    if args.holdout_salt:
        split = split_holdout(items, salt=args.holdout_salt)
        items = list(split.heldout)
        # The salt stays private; its digest proves which partition was used.
        selection["holdout"] = {"salt_sha256": split.salt_digest, "items": len(items)}
    if args.limit is not None:
        items = items[: args.limit]
        selection["limit"] = args.limit
    return list(items), selection


def _positive_int(text: str) -> int:
    """argparse type: an integer ≥ 1 (``--workers 0`` must not silently mean "all CPUs")."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be ≥ 1, got {value}")
    return value


def _prepare(args: argparse.Namespace) -> dict[str, Any]:
    """Every argument checked and every component built before any work starts: a bad option
    fails in a second with one line, never after hours of synthesis."""
    from ..executor import check_workers, validate_executor_spec
    from ..outputs import claim_directory
    from ..specs import build_system
    from ._judge_args import judge_from_args

    validate_executor_spec(args.executor)
    check_workers(args.workers)
    items, selection = load_items(args)
    model_a = build_system(args.system_a)
    model_b = build_system(args.system_b)
    label_a = args.label_a or _default_label(args.system_a)
    label_b = args.label_b or _default_label(args.system_b)
    if label_a == label_b:
        label_a, label_b = f"{label_a}-a", f"{label_b}-b"
    judge = judge_from_args(args)
    transcriber = make_transcriber(args.asr)
    if args.classifiers:
        from ..probes import with_classifiers

        probes: Any = with_classifiers(quality=args.quality)
    else:
        from ..probes import default_probes

        probes = default_probes(quality=args.quality)
    out = claim_directory(args.out or f"runs/{label_a}-vs-{label_b}", kind="run",
                          force=args.force)
    cache = None if args.no_cache else (args.cache or str(out / "cache.sqlite"))
    concurrency = (args.concurrency_a, args.concurrency_b)
    return {"items": items, "selection": selection, "model_a": model_a, "model_b": model_b,
            "concurrency": concurrency if any(c is not None for c in concurrency) else None,
            "labels": (label_a, label_b), "judge": judge, "transcriber": transcriber,
            "probes": probes, "out": out, "cache": cache}


def _execute(args: argparse.Namespace) -> int:
    from ..compare import benchmark

    run = _prepare(args)
    items, (label_a, label_b), cache = run["items"], run["labels"], run["cache"]
    progress = not args.quiet and sys.stderr.isatty()
    if not args.quiet:
        print(f"vocencebench: {label_a} vs {label_b} on {len(items)} items "
              f"(cache: {cache or 'off'})", file=sys.stderr)
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
    )
    h2h.metadata.setdefault("timings", {})["total_s"] = time.perf_counter() - t0
    h2h.metadata["selection"] = run["selection"]
    path = h2h.save(run["out"])
    print(h2h.summary())
    print(f"\nreports: {path}/report.html, report.md, run.json, scores.jsonl")
    if h2h.decision.winner == INCOMPLETE:
        print(f"\nINCOMPLETE: no winner is named; rerun the same command to retry the "
              f"{len(h2h.incomplete_items)} incomplete item(s), or add --allow-incomplete",
              file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0


def announce_skipped_canaries(args: argparse.Namespace) -> None:
    """The stderr line of a command told to skip the canaries (``--skip-canaries``): every
    command with the flag (run, demo, redteam, leaderboard) announces it with this line."""
    if getattr(args, "skip_canaries", False):
        print("vocencebench: CANARIES SKIPPED (--skip-canaries): the probes and the judge are "
              "not checked against known answers", file=sys.stderr)


def _default_label(spec: str) -> str:
    kind, _, rest = spec.partition(":")
    if not rest:
        return kind
    tail = rest.replace("\\", "/").rstrip("/").split("/")[-1].split("#")[-1]
    return f"{kind}-{tail}"[:40] if tail else kind


def _cmd_run(args: argparse.Namespace) -> int:
    return _execute(args)


#: The systems of ``vocencebench demo`` unless ``--systems`` names others.
DEMO_SYSTEMS = ("espeak-flat", "espeak-follow")


def _cmd_demo(args: argparse.Namespace) -> int:
    from ._judge_args import JUDGE_FLAGS

    if args.leaderboard:
        if args.systems:
            raise ConfigError("--leaderboard ranks every offline built-in; drop --systems")
        from . import leaderboard

        # The same code path as `vocencebench leaderboard --demo` (announcements, canaries,
        # exit status).
        args.demo, args.verify = True, None
        return leaderboard.run(args)

    names = tuple(x.strip() for x in (args.systems or ",".join(DEMO_SYSTEMS)).split(","))
    if len(names) != 2 or not all(names) or names[0] == names[1]:
        raise ConfigError(f"--systems needs two different built-in systems A,B, got "
                          f"{args.systems!r} (e.g. hibari,hibari-follow)")
    args.system_a, args.system_b = names
    args.label_a, args.label_b = names
    args.asr, args.classifiers = "none", False
    args.judge = "none"
    for flag in JUDGE_FLAGS:
        setattr(args, flag, None)
    args.judge_concurrency = 4
    args.corpus, args.holdout_salt = "benchmark_v1", None
    default_out = "runs/demo" if names == DEMO_SYSTEMS else f"runs/demo-{names[0]}-vs-{names[1]}"
    args.out = args.out or default_out
    args.votes, args.no_swap, args.executor, args.all_at_once = 1, False, None, False
    args.concurrency_a = args.concurrency_b = None
    return _execute(args)


def _cmd_report(args: argparse.Namespace) -> int:
    from ..report import load_run, save_run, verify_run

    h2h = load_run(args.run)
    torn = verify_run(args.run)
    save_run(h2h, args.run)
    print(h2h.summary())
    if torn:
        # run.json is the record; the other files are re-rendered from it, restoring the set.
        print(f"\nnote: the saved files did not match run.json ({'; '.join(torn)}); "
              "rewrote them from run.json", file=sys.stderr)
    print(f"\nreports re-rendered in {args.run}")
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=_positive_int, default=None, metavar="N",
                   help="only the first N items")
    p.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                   help="worker processes for CPU work (default: the CPUs available)")
    p.add_argument("--cache", default=None, help="cache file (default: OUT/cache.sqlite)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write a cache")
    p.add_argument("--out", default=None, help="output directory of the run")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty --out that vocencebench did not create")
    p.add_argument("--skip-canaries", action="store_true",
                   help="do not check the probes and the judge against the known-answer "
                        "canaries first (the report then says they were skipped)")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="when an instrument failed on some items, decide on the complete "
                        "ones (the reason says so) instead of naming no winner (exit 3)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--quality", action="store_true",
                   help="also report DNSMOS quality per clip (diagnostic, ~1 CPU-s per clip)")


def register(sub: Any) -> None:
    from ._judge_args import add_judge_arguments

    run = sub.add_parser("run", help="benchmark two TTS systems head to head")
    run.add_argument("--system-a", required=True, metavar="SPEC",
                     help="incumbent: espeak-follow | espeak-flat | cmd:TEMPLATE | dir:PATH | "
                          "openai-speech:URL#MODEL#VOICE | qwen3:CHECKPOINT | parler:CHECKPOINT")
    run.add_argument("--system-b", required=True, metavar="SPEC", help="challenger (as above)")
    run.add_argument("--label-a", default=None)
    run.add_argument("--label-b", default=None)
    run.add_argument("--asr", default="none",
                     help="none | whisper[:MODEL] | openai:URL#MODEL | pocketsphinx")
    run.add_argument("--classifiers", action="store_true",
                     help="add the age/gender/emotion/accent classifier probes")
    run.add_argument("--corpus", default="benchmark_v1", help="benchmark_v1 or a .jsonl file")
    run.add_argument("--holdout-salt", default=None,
                     help="run on the held-out partition defined by this private salt")
    run.add_argument("--executor", default=None, help="local | serial | dask | dask:ADDRESS")
    run.add_argument("--votes", type=_positive_int, default=1, help="judge samples per order")
    run.add_argument("--concurrency-a", type=_positive_int, default=None, metavar="N",
                     help="requests in flight for system a (HTTP APIs, command lines; "
                          "default: the system's own setting, else 1)")
    run.add_argument("--concurrency-b", type=_positive_int, default=None, metavar="N",
                     help="requests in flight for system b")
    run.add_argument("--all-at-once", action="store_true",
                     help="one judge upload per pair scores every judged dimension")
    run.add_argument("--no-swap", action="store_true",
                     help="judge one order only (faster, position bias not neutralised)")
    add_judge_arguments(run)
    _common(run)
    run.set_defaults(func=_cmd_run)

    demo = sub.add_parser("demo", help="offline duel: espeak-follow vs espeak-flat")
    demo.add_argument("--systems", default=None, metavar="A,B",
                      help="two built-in systems to duel instead (e.g. hibari,hibari-follow)")
    demo.add_argument("--leaderboard", action="store_true",
                      help="rank every offline built-in instead (espeak-flat, espeak-follow "
                           "and, when installed, hibari, hibari-follow)")
    _common(demo)
    demo.set_defaults(func=_cmd_demo)

    rep = sub.add_parser("report", help="re-render the reports of a saved run")
    rep.add_argument("run", help="run directory (with run.json)")
    rep.set_defaults(func=_cmd_report)
