"""The judge's command-line options, shared by every command that runs a judge.

``add_judge_arguments(parser)`` adds the flags below; ``judge_from_args(args)`` checks them all
up front (one-line :class:`~vocencebench.errors.ConfigError` for anything wrong) and builds
the :class:`~vocencebench.judge.Judge`, or returns None for ``--judge none``.

=============================  ===========================================================
flag                           meaning
=============================  ===========================================================
``--judge SPEC``               ``none`` | ``gemini`` | ``gemini:MODEL`` | ``local:URL#MODEL``
``--judge-key-env NAME``       read the API key from environment variable NAME (default:
                               GEMINI_API_KEY / GOOGLE_API_KEY for Gemini, no key for a
                               local server); keys never go on the command line
``--judge-base-url URL``       Gemini endpoint (default ``$GOOGLE_GEMINI_BASE_URL``, else
                               Google's); a local judge's URL is part of its SPEC
``--judge-price IN,OUT[,CACHED]``  USD per million input, output[, cached-input] tokens
``--judge-max-output-tokens N``    cap on each answer (thinking included on Gemini)
``--judge-thinking-budget N``  Gemini thinking budget in tokens (-1 dynamic, 0 off)
``--judge-thinking-level L``   Gemini thinking level: minimal, low, medium, high
``--judge-rpm N``              at most N requests per minute (client-side)
``--judge-concurrency N``      judge calls in flight at once (default 4)
``--judge-timeout S``          total deadline of one HTTP attempt, seconds (default 180)
``--judge-retries N``          extra attempts after a 408/429/5xx/network failure (default 5)
``--judge-spend-cap USD``      stop before the judge's spend could cross this
=============================  ===========================================================
"""

from __future__ import annotations

import argparse
import datetime
import math
from typing import Any

from .._numbers import is_whole_number
from ..errors import ConfigError
from ..redact import safe_url

__all__ = ["JUDGE_FLAGS", "add_judge_arguments", "judge_from_args", "parse_price"]

#: Destination names of the flags :func:`add_judge_arguments` adds (besides ``judge``).
JUDGE_FLAGS = ("judge_key_env", "judge_base_url", "judge_price", "judge_max_output_tokens",
               "judge_thinking_budget", "judge_thinking_level", "judge_rpm",
               "judge_concurrency", "judge_timeout", "judge_retries", "judge_spend_cap")

_DEFAULT_CONCURRENCY = 4
#: Flag destination → BackendOptions field, for the flags that map one to one.
_OPTION_OF = {
    "judge_key_env": "api_key_env",
    "judge_max_output_tokens": "max_output_tokens",
    "judge_thinking_budget": "thinking_budget",
    "judge_thinking_level": "thinking_level",
    "judge_rpm": "requests_per_minute",
    "judge_timeout": "timeout_s",
    "judge_retries": "max_retries",
    "judge_spend_cap": "spend_cap_usd",
}


def add_judge_arguments(parser: argparse.ArgumentParser, *, default: str = "none",
                        legacy_aliases: bool = False) -> None:
    """Add the judge flags (table in the module docstring) to ``parser`` as one group.

    ``default``: the ``--judge`` default. ``legacy_aliases``: also accept ``--api-key-env``
    and ``--spend-cap`` (the older spellings of ``judge compare``).
    """
    g = parser.add_argument_group("judge", "the audio-LLM judge (see docs/judge.md)")
    g.add_argument("--judge", default=default, metavar="SPEC",
                   help="none | gemini | gemini:MODEL | local:URL#MODEL (default: %(default)s)")
    key_flags = ["--judge-key-env"] + (["--api-key-env"] if legacy_aliases else [])
    g.add_argument(*key_flags, dest="judge_key_env", default=None, metavar="NAME",
                   help="read the judge's API key from environment variable NAME")
    g.add_argument("--judge-base-url", default=None, metavar="URL",
                   help="Gemini endpoint (default: $GOOGLE_GEMINI_BASE_URL, else Google's)")
    g.add_argument("--judge-price", default=None, metavar="IN,OUT[,CACHED]",
                   help="USD per million input, output[, cached input] tokens, e.g. 0.10,0.40")
    g.add_argument("--judge-max-output-tokens", type=int, default=None, metavar="N",
                   help="cap on the tokens of each judge answer")
    g.add_argument("--judge-thinking-budget", type=int, default=None, metavar="N",
                   help="Gemini thinking budget in tokens (-1 dynamic, 0 off)")
    g.add_argument("--judge-thinking-level", default=None,
                   choices=("minimal", "low", "medium", "high"),
                   help="Gemini thinking level")
    g.add_argument("--judge-rpm", type=float, default=None, metavar="N",
                   help="at most N judge requests per minute (client-side rate limit)")
    g.add_argument("--judge-concurrency", type=int, default=_DEFAULT_CONCURRENCY, metavar="N",
                   help="judge calls in flight at once (default: %(default)s)")
    g.add_argument("--judge-timeout", type=float, default=None, metavar="S",
                   help="total deadline of one judge HTTP attempt in seconds (default 180)")
    g.add_argument("--judge-retries", type=int, default=None, metavar="N",
                   help="retries after a 408/429/5xx/network failure (default 5)")
    cap_flags = ["--judge-spend-cap"] + (["--spend-cap"] if legacy_aliases else [])
    g.add_argument(*cap_flags, dest="judge_spend_cap", type=float, default=None,
                   metavar="USD", help="stop before the judge's spend could cross USD dollars")


def parse_price(text: str) -> Any:
    """``"IN,OUT[,CACHED]"`` (USD per million tokens) → a :class:`~vocencebench.judge.Price`."""
    from ..judge import Price

    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (2, 3) or not all(parts):
        raise ConfigError(f"--judge-price expects IN,OUT or IN,OUT,CACHED (USD per million "
                          f"tokens), got {text!r}")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ConfigError(f"--judge-price values must be numbers, got {text!r}") from None
    if not all(math.isfinite(v) and v >= 0 for v in values):
        raise ConfigError(f"--judge-price values must be finite and >= 0, got {text!r}")
    return Price(values[0], values[1], cached_input=values[2] if len(values) == 3 else None,
                 as_of=datetime.date.today().isoformat(), source="--judge-price")


def _given(args: argparse.Namespace) -> list[str]:
    """The judge flags set to something other than their default."""
    out = []
    for dest in JUDGE_FLAGS:
        value = getattr(args, dest, None)
        default = _DEFAULT_CONCURRENCY if dest == "judge_concurrency" else None
        if value is not None and value != default:
            out.append("--" + dest.replace("_", "-"))
    return out


def judge_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~vocencebench.judge.Judge` the flags describe, or None for ``--judge none``.

    Everything is checked before anything is sent: a bad flag, an unset key variable or a
    malformed spec raises a one-line :class:`~vocencebench.errors.ConfigError`.
    """
    spec = (getattr(args, "judge", None) or "none").strip()
    if spec == "none":
        given = _given(args)
        if given:
            raise ConfigError(f"{', '.join(given)} given but --judge is none; pass --judge "
                              "gemini[:MODEL] or local:URL#MODEL")
        return None
    from ..judge import BackendOptions, Judge

    settings: dict[str, Any] = {}
    concurrency = getattr(args, "judge_concurrency", _DEFAULT_CONCURRENCY)
    if not is_whole_number(concurrency) or concurrency < 1:
        raise ConfigError(f"--judge-concurrency must be an integer >= 1, got {concurrency!r}")
    for dest, option in _OPTION_OF.items():
        value = getattr(args, dest, None)
        if value is not None:
            settings[option] = value
    price_text = getattr(args, "judge_price", None)
    if price_text is not None:
        settings["price"] = parse_price(price_text)
    base_url = getattr(args, "judge_base_url", None)
    if base_url is not None:
        if spec.startswith("local:"):
            raise ConfigError("--judge-base-url is for Gemini; a local judge's URL is part of "
                              "--judge local:URL#MODEL")
        settings["base_url"] = base_url
    try:
        options = BackendOptions(**settings)
    except ConfigError as exc:
        option = str(exc).split(" ", 1)[0]
        flag = {o: "--" + d.replace("_", "-") for d, o in _OPTION_OF.items()}.get(
            option, "--judge-base-url" if option == "base_url" else None)
        raise ConfigError(f"{flag}: {exc}" if flag else str(exc)) from None
    from .. import specs

    form, arg = specs.lookup("judge", spec, shown=safe_url(spec))  # lists the registered forms
    if form.name not in ("gemini", "local"):
        # A form registered from Python builds its own judge: the flags above configure the
        # HTTP judges (Judge.from_form) and would be lost on it, so they are refused.
        flags = _given(args)
        if flags:
            raise ConfigError(f"{', '.join(flags)} apply to the gemini and local judges, "
                              f"not to --judge {form.syntax}")
        return specs.build("judge", spec)
    return Judge.from_form(form.name, arg, spec=spec, options=options,
                           max_concurrency=concurrency)
