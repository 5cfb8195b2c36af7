"""What the command modules share: argument types and flags, the corpus gate, the components a
spec names, and the offline leaderboard demo (two commands run it).

Every command module imports from here and from the library, never from another command
module; the exit statuses are :mod:`vocencebench.constants`' (``EXIT_*``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from ..constants import EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE
from ..errors import CanaryError

__all__ = [
    "OneLineParser",
    "add_corpus_arguments",
    "add_economy_arguments",
    "add_instrument_arguments",
    "add_judge_flags",
    "add_run_arguments",
    "announce_skipped_canaries",
    "default_label",
    "err",
    "load_items",
    "make_probes",
    "make_transcriber",
    "nonempty",
    "nonnegative_int",
    "positive_int",
    "print_plan",
    "run_demo_leaderboard",
]


# ----------------------------------------------------------------------------- arguments


class OneLineParser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block): ``vocencebench CMD: error: ...``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _int_at_least(text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ {low}, got {text!r}"
                                         ) from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be ≥ {low}, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer ≥ 1 (``--workers 0`` must not silently mean "all CPUs")."""
    return _int_at_least(text, 1)


def nonnegative_int(text: str) -> int:
    """argparse type: an integer ≥ 0 (``--clips 0``: no decisive items)."""
    return _int_at_least(text, 0)


def nonempty(text: str) -> str:
    """argparse type: a path or a name that is not empty (``--out ""`` must not silently
    mean the default folder, nor ``decide ""`` the current one)."""
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def add_judge_flags(p: argparse.ArgumentParser) -> None:
    """The shared judge flags (:func:`~vocencebench.commands._judge_args.add_judge_arguments`)
    and ``--votes``."""
    from ._judge_args import add_judge_arguments

    add_judge_arguments(p)
    p.add_argument("--votes", type=positive_int, default=1, help="judge samples per order")


def add_instrument_arguments(p: argparse.ArgumentParser) -> None:
    """``--asr`` (the gate's transcriber) and ``--classifiers``."""
    p.add_argument("--asr", default="none",
                   help="none | whisper[:MODEL] | openai:URL#MODEL | pocketsphinx")
    p.add_argument("--classifiers", action="store_true",
                   help="add the age/gender/emotion/accent classifier probes")


def add_economy_arguments(p: argparse.ArgumentParser, *, dry_run: bool = True) -> None:
    """``--stop-when-decided`` and ``--dry-run``, the judge's economics (docs/judge.md)."""
    p.add_argument("--stop-when-decided", action="store_true",
                   help="measure every item, then judge in a seeded order and stop once no "
                        "outcome of the unjudged items could change the verdict (the verdict "
                        "is the full run's; the decision records the proof)")
    if dry_run:
        p.add_argument("--dry-run", action="store_true",
                       help="print the planned judge calls, tokens per call and cost (and "
                            "whether they fit --judge-spend-cap), then exit; nothing is "
                            "synthesised and no request is sent to the judge")


def print_plan(head: str, lines: list[str], *, stop_when_decided: bool, judged: bool) -> int:
    """A dry run's output (``run --dry-run``, ``leaderboard --dry-run``): ``head``, the judge
    plan's ``lines``, then what was not done. Returns the exit status (0)."""
    from .._util.text import terminal_safe

    # Plan lines quote system labels and the judge's model name: shown, never obeyed.
    print(terminal_safe(head))
    for line in lines:
        print(terminal_safe(line))
    if stop_when_decided and judged:
        print("--stop-when-decided: judging stops once a verdict cannot change, so the run "
              "may make fewer calls than this")
    print("nothing was synthesised, analysed or judged; no request was sent to the judge")
    return EXIT_OK


def add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    """``--corpus`` and ``--holdout-salt`` (read by :func:`load_items`)."""
    p.add_argument("--corpus", type=nonempty, default="benchmark_v1",
                   help="benchmark_v1 or a .jsonl file")
    p.add_argument("--holdout-salt", default=None,
                   help="run on the held-out partition defined by this private salt")


def add_run_arguments(p: argparse.ArgumentParser, *, no_cache_help: str) -> None:
    """The flags of every command that runs systems (``run``, ``demo``, ``leaderboard``,
    ``redteam``): ``--workers``, ``--cache``, ``--no-cache`` (``no_cache_help`` says what
    each keeps without one), ``--force`` (write into a directory that is not ours:
    :func:`~vocencebench.outputs.claim_directory`) and ``--skip-canaries``."""
    p.add_argument("--workers", type=positive_int, default=None, metavar="N",
                   help="worker processes for CPU work: analysis and probes (default: every "
                        "CPU this process may use)")
    p.add_argument("--cache", type=nonempty, default=None,
                   help="cache file (default: OUT/cache.sqlite)")
    p.add_argument("--no-cache", action="store_true", help=no_cache_help)
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty --out that vocencebench did not create")
    p.add_argument("--skip-canaries", action="store_true",
                   help="do not check the probes and the judge against the known-answer "
                        "canaries first (the reports then say they were skipped)")


def default_label(spec: str) -> str:
    """The name ``run`` gives a system spec: a built-in is its own label, ``kind:…/last``
    becomes ``kind-last`` (40 characters at most)."""
    kind, _, rest = spec.partition(":")
    if not rest:
        return kind
    tail = rest.replace("\\", "/").rstrip("/").split("/")[-1].split("#")[-1]
    return f"{kind}-{tail}"[:40] if tail else kind


# ----------------------------------------------------------------------------- components


def load_items(args: argparse.Namespace) -> tuple[list[Any], dict[str, Any]]:
    """The items to run (``--corpus``, ``--holdout-salt``, ``--limit``), and what the report
    should say about their selection."""
    from ..corpus import load_corpus, split_holdout

    src = args.corpus
    # The one corpus gate: pin verified, structure validated, before anything runs.
    items = load_corpus(src)
    selection: dict[str, Any] = {"corpus": src, "corpus_items": len(items)}
    if args.holdout_salt is not None:  # "" is refused by split_holdout, not ignored
        split = split_holdout(items, salt=args.holdout_salt)
        items = list(split.heldout)
        # The salt stays private; its digest proves which partition was used.
        selection["holdout"] = {"salt_sha256": split.salt_digest, "items": len(items)}
    if args.limit is not None:
        items = items[: args.limit]
        selection["limit"] = args.limit
    return list(items), selection


def checked_items(args: argparse.Namespace) -> tuple[list[Any], dict[str, Any]]:
    """``--executor`` and ``--workers`` checked, then :func:`load_items`: what a run of
    many clips does first, so a bad option fails before the corpus is read."""
    from ..executor import check_workers
    from ..specs import validate_executor_spec

    validate_executor_spec(args.executor)
    check_workers(args.workers)
    return load_items(args)


def cache_file(args: argparse.Namespace, out: Any) -> str | None:
    """The run cache: None with ``--no-cache``, else ``--cache`` or ``OUT/cache.sqlite``."""
    return None if args.no_cache else (args.cache or str(out / "cache.sqlite"))


def make_transcriber(spec: str | None) -> Any:
    """``none`` | ``whisper[:MODEL]`` | ``openai:URL#MODEL`` | ``pocketsphinx``."""
    from .. import specs

    return specs.build("transcriber", spec)


def make_probes(*, classifiers: bool, quality: bool = False) -> Any:
    """The acoustic probes, plus the classifier probes with ``--classifiers``; ``quality``
    adds the DNSMOS diagnostic."""
    if classifiers:
        from ..probes import with_classifiers

        return with_classifiers(quality=quality)
    from ..probes import default_probes

    return default_probes(quality=quality)


# ----------------------------------------------------------------------------- messages


def err(line: str) -> None:
    """One line on standard error; it may name systems and files, so its control
    characters are shown as escapes (:func:`~vocencebench._util.text.terminal_safe`)."""
    from .._util.text import terminal_safe

    print(terminal_safe(line), file=sys.stderr)


def announce_skipped_canaries(args: argparse.Namespace) -> None:
    """The stderr line of a command told to skip the canaries (``--skip-canaries``): every
    command with the flag (run, demo, redteam, leaderboard) announces it with this line."""
    if getattr(args, "skip_canaries", False):
        err("vocencebench: CANARIES SKIPPED (--skip-canaries): the probes and the judge are "
            "not checked against known answers")


# ----------------------------------------------------------------------------- the board demo


def run_demo_leaderboard(args: argparse.Namespace) -> int:
    """``leaderboard --demo`` and ``demo --leaderboard``: :func:`vocencebench.board.
    demo_leaderboard` into ``--out`` (default ``runs/demo-leaderboard``), its summary printed.
    Exit 0, or :data:`EXIT_INCOMPLETE` for an INCOMPLETE pair or failed canaries."""
    from ..board import demo_leaderboard
    from ..outputs import claim_directory

    out = args.out or "runs/demo-leaderboard"
    try:
        claim_directory(out, kind="leaderboard", force=args.force)
        announce_skipped_canaries(args)
        lb = demo_leaderboard(out=out, limit=args.limit, workers=args.workers,
                              cache=args.cache, no_cache=args.no_cache,
                              progress=not args.quiet and sys.stderr.isatty(),
                              announce=None if args.quiet else err,
                              canaries=not args.skip_canaries)
    except CanaryError as exc:  # raised before any clip: nothing to rank, the reason says why
        err(f"vocencebench leaderboard: INCOMPLETE: {exc}")
        return EXIT_INCOMPLETE
    print(lb.summary())
    return EXIT_OK if lb.complete else EXIT_INCOMPLETE
