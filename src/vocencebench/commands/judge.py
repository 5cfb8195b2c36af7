"""``vocencebench judge compare A.wav B.wav`` (one pairwise judgement from the command line)
and ``vocencebench judge agree RUN --judge SPEC`` (judge migration: :mod:`vocencebench.rejudge`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..constants import AGREE_ITEMS, AGREE_SEED, EXIT_INCOMPLETE, EXIT_OK
from ..errors import ConfigError
from ..judge import DEFAULT_GEMINI_MODEL
from ..prompts import CATEGORIES
from ..schema import Verdict
from ._common import nonempty
from ._judge_args import add_judge_arguments, judge_from_args

__all__ = ["format_verdict", "register", "run_agree", "run_compare"]


def register(subparsers: Any) -> None:
    """Add the ``judge`` command group to the CLI's subparsers."""
    p = subparsers.add_parser(
        "judge",
        help="ask the audio-LLM judge about a pair of clips",
        description="Audio-LLM judge commands.",
    )
    sub = p.add_subparsers(dest="judge_command", metavar="SUBCOMMAND", required=True)
    c = sub.add_parser(
        "compare",
        help="judge two WAV clips on one dimension",
        description=(
            "Play both clips to the judge (labelled only A and B) with the script, the voice "
            "request and the dimension's rubric; by default in both orders, keeping a winner "
            "only when the orders agree. The API key comes from the environment "
            "(GEMINI_API_KEY or GOOGLE_API_KEY for Gemini, or the variable named by "
            "--judge-key-env), never from the command line."
        ),
    )
    c.add_argument("audio_a", metavar="A.wav", help="first clip (called a in the verdict)")
    c.add_argument("audio_b", metavar="B.wav", help="second clip (called b in the verdict)")
    c.add_argument("--text", required=True, help="the script both clips read")
    c.add_argument("--instruction", required=True, help="the voice request")
    c.add_argument("--dimension", default="tone",
                   help="a registered trait (e.g. tone) or naturalness (default: tone)")
    c.add_argument("--category", default=None, choices=CATEGORIES,
                   help="text category for the naturalness rubric (default: everyday)")
    c.add_argument("--votes", type=int, default=1, help="samples per order (majority)")
    c.add_argument("--no-swap", action="store_true",
                   help="judge one order only (cheaper; position bias is not neutralised)")
    c.add_argument("--json", action="store_true", help="print the verdict and usage as JSON")
    add_judge_arguments(c, default=f"gemini:{DEFAULT_GEMINI_MODEL}", legacy_aliases=True)
    c.set_defaults(func=run_compare)
    g = sub.add_parser(
        "agree",
        help="re-judge a seeded subset of a finished run with another judge and compare",
        description=(
            "Judge migration: play a seeded subset of a finished run's judged items (clips "
            "from the run's cache) to another judge, or another version of the same, with the "
            "run's own settings, and report per-dimension agreement with the run's judge "
            "(raw agreement and Cohen's kappa with a seeded bootstrap interval), the verdict "
            "each judge implies on the subset, and whether the run's headline verdict would "
            "change with the new answers on the subset."),
    )
    g.add_argument("run", type=nonempty, metavar="RUN",
                   help="a run directory (its run.json and cache)")
    g.add_argument("--items", type=int, default=AGREE_ITEMS, metavar="N",
                   help="items to re-judge (default: %(default)s)")
    g.add_argument("--seed", type=int, default=AGREE_SEED, metavar="S",
                   help="seed of the subset and of the kappa interval (default: %(default)s)")
    g.add_argument("--cache", type=nonempty, default=None, metavar="PATH",
                   help="the cache holding the run's clips (default: the one run.json names)")
    g.add_argument("--json", action="store_true", help="print everything as JSON")
    add_judge_arguments(g, default="none")
    g.set_defaults(func=run_agree)


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc


def format_verdict(v: Verdict) -> str:
    """A short, readable account of a verdict (the judge's own words, which may hold
    anything, through :func:`~vocencebench._util.text.escape_controls`: line breaks kept,
    every other control character shown as an escape)."""
    from .._util.text import escape_controls, terminal_safe

    head = "tie" if v.winner == "tie" else f"clip {terminal_safe(v.winner).upper()} wins"
    note = "" if v.consistent else " (the two orders disagreed)"

    def said(text: str) -> str:
        return escape_controls(text, keep="\n").replace("\n", "\n   ")

    return "\n".join([
        f"{terminal_safe(v.dimension)}: {head}{note}",
        f"  score A {v.score_a:.2f} / 3   score B {v.score_b:.2f} / 3   "
        f"confidence {v.confidence:.2f}",
        f"  judge {terminal_safe(v.model)}, prompt {terminal_safe(v.prompt_version)}, "
        f"{len(v.raw)} call(s)",
        "",
        "A: " + said(v.reasoning_a),
        "",
        "B: " + said(v.reasoning_b),
    ])


def run_agree(args: argparse.Namespace) -> int:
    """Run ``judge agree``."""
    from ..rejudge import agree

    judge = judge_from_args(args)
    if judge is None:
        raise ConfigError("judge agree needs the judge to compare with: --judge "
                          "gemini[:MODEL] or local:URL#MODEL")
    with judge:
        res = agree(args.run, judge, items=args.items, seed=args.seed, cache=args.cache,
                    judge_concurrency=args.judge_concurrency)
    if args.json:
        print(json.dumps(res.to_dict(), indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print("\n".join(res.lines()))
    # Nothing re-judged: the comparison is missing, as an instrument's failure leaves a run.
    return EXIT_OK if res.items else EXIT_INCOMPLETE


def run_compare(args: argparse.Namespace) -> int:
    """Run ``judge compare``."""
    a, b = _read(args.audio_a), _read(args.audio_b)
    judge = judge_from_args(args)
    if judge is None:
        raise ConfigError("judge compare needs a judge: --judge gemini[:MODEL] or "
                          "local:URL#MODEL")
    with judge:
        v = judge.compare(text=args.text, instruction=args.instruction, audio_a=a, audio_b=b,
                          dimension=args.dimension, consistent=not args.no_swap,
                          votes=args.votes, category=args.category)
        usage = getattr(judge.backend, "usage", None)
        cost_of = getattr(judge.backend, "cost_usd", None)
        cost = cost_of() if callable(cost_of) else None  # None: no price for the model
    if args.json:
        out: dict[str, Any] = {"verdict": v.to_dict()}
        if usage is not None:
            out["usage"] = vars(usage)
        out["cost_usd"] = cost
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(format_verdict(v))
    if usage is not None:
        spend = "unknown (no price for this model)" if cost is None else f"${cost:.4f}"
        print(f"\nusage: {usage.calls} call(s), {usage.prompt_tokens} prompt tokens "
              f"({usage.audio_tokens} audio), {usage.output_tokens} output, "
              f"{usage.thinking_tokens} thinking; cost {spend}")
    return EXIT_OK
