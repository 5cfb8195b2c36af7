"""``vocencebench listen RUN --out DIR``: a blind listening test built from a saved run (or
one pair of a leaderboard), optionally served on 127.0.0.1 with answers written as given."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._util.text import terminal_safe
from ..constants import EXIT_OK, LISTEN_ITEMS, LISTEN_SEED
from ._common import nonempty, nonnegative_int, positive_int

__all__ = ["register", "run"]


def _pair(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise argparse.ArgumentTypeError(f"expected two different system names A,B, got "
                                         f"{text!r}")
    return parts[0], parts[1]


def _questions(text: str) -> tuple[str, ...]:
    return tuple(q.strip() for q in text.split(",") if q.strip())


def _port(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {v}")
    return v


def register(subparsers: Any) -> None:
    """Add the ``listen`` command to the CLI's subparsers."""
    p = subparsers.add_parser(
        "listen", help="build a blind listening test from a saved run (and serve it)",
        description=(
            "Write a self-contained blind A/B listening test of a saved run: a seeded, "
            "stratified sample of items, each pair of clips in a seeded random left/right "
            "order. DIR/page is what raters get (send that folder): the page, its clips and "
            "its data, no system name anywhere. DIR/key.json alone says which clip is which "
            "system; it is outside DIR/page (keep it; do not send it to raters). Raters "
            "answer by keyboard; the page exports a CSV that `vocencebench calibrate` reads "
            "with that key. With --serve DIR/page is served on 127.0.0.1 and every answer is "
            "appended to DIR/labels/<rater>.csv, as the run's a/b, as it is given. See "
            "docs/validation.md."))
    p.add_argument("run", type=nonempty,
                   help="run directory (run.json) or leaderboard directory")
    p.add_argument("--out", type=nonempty, required=True,
                   help="folder to write the test into (DIR/page for raters, DIR/key.json "
                        "to keep)")
    p.add_argument("--items", type=positive_int, default=LISTEN_ITEMS,
                   help=f"items in the test (default {LISTEN_ITEMS})")
    p.add_argument("--seed", type=nonnegative_int, default=LISTEN_SEED,
                   help="seed of the sample and the left/right order, an integer ≥ 0 "
                        f"(default {LISTEN_SEED})")
    p.add_argument("--questions", type=_questions, default=None,
                   help="comma-separated questions among naturalness, tone, instruction "
                        "(default naturalness,tone)")
    p.add_argument("--pair", type=_pair, default=None,
                   help="for a leaderboard directory: the pair to test, A,B")
    p.add_argument("--cache", type=nonempty, default=None,
                   help="the run cache, when it is not where run.json says")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty folder vocencebench did not create")
    p.add_argument("--serve", action="store_true",
                   help="serve DIR/page on 127.0.0.1 and write answers to DIR/labels as "
                        "they are given")
    p.add_argument("--port", type=_port, default=0,
                   help="port for --serve (default: any free port; the URL is printed)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the test; with ``--serve``, serve it until interrupted."""
    from ..listen import DEFAULT_QUESTIONS, build_listening_test, serve_listening_test

    test = build_listening_test(args.run, args.out, items=args.items, seed=args.seed,
                                questions=args.questions or DEFAULT_QUESTIONS,
                                pair=args.pair, cache=args.cache, force=args.force)
    for line in test.lines():
        print(line)
    if not args.serve:
        return EXIT_OK

    def ready(url: str) -> None:
        print(f"serving {url} (127.0.0.1 only); answers go to "
              f"{test.directory / 'labels'}/<rater>.csv as they are given; Ctrl-C stops",
              flush=True)

    sys.stdout.flush()
    try:
        serve_listening_test(test.directory, port=args.port, ready=ready)
    except KeyboardInterrupt:  # Ctrl-C is how a served test ends: nothing to resume
        args.interrupt_handled = True  # (for the CLI: this signal ended it, as it should)
        print(f"vocencebench listen: stopped; every answer given is in "
              f"{terminal_safe(test.directory / 'labels')}", file=sys.stderr)
    return EXIT_OK
