"""What a leaderboard run will ask the judge, before it starts: :class:`JudgePlan`.

:func:`plan_judge_calls` counts the judge calls of a :func:`vocencebench.board.leaderboard`
run (pairs × items × calls per item), how many are already in the cache (keyed exactly as the
judge keys them) and what the rest will cost (USD, from the backend's price table). It
synthesises nothing and calls nothing.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._numbers import is_real_number
from ..cache import Cache, NullCache
from ..constants import JUDGE_OUTPUT_ALLOWANCE_TOKENS
from ..errors import ConfigError, VocenceError
from ..schema import Item
from ..traits import TRAITS, TraitRegistry, unscored_words
from .cells import pair_order

__all__ = ["JudgePlan", "plan_judge_calls", "system_order"]

# Cost estimate per judge call (see JudgePlan): tokens per character of prompt text.
_CHARS_PER_TOKEN = 3
# Speaking rate assumed for a clip not yet synthesised (words per second, ≈ 150 wpm).
_WORDS_PER_SECOND = 2.5


@dataclass(frozen=True)
class JudgePlan:
    """What a leaderboard run will ask the judge, before it starts.

    ``total_calls`` = pairs × items × calls per item, calls per item = (1 if all-at-once else
    the judged dimensions) × orders (2 with the order swap) × votes. It is an upper bound:
    items where either clip failed, or both fail the ASR gate, are not judged. ``cached_calls``
    counts single judgements already in the cache (None when it cannot be known cheaply: some
    clip is not cached yet). ``estimated_cost_usd`` prices ``calls_to_make`` with the
    backend's price table (None = unknown: no price for the model); each call is estimated at
    prompt characters / 3 text tokens + 32 audio tokens per second for both clips (their real
    length when cached, else 2.5 words per second) + the output ceiling the judge's spend cap
    reserves (``max_output_tokens``, plus any thinking budget), or, with none set,
    :data:`~vocencebench.constants.JUDGE_OUTPUT_ALLOWANCE_TOKENS` output tokens (an
    allowance, not a bound).
    """

    mode: str
    anchor: str | None
    pairs: tuple[tuple[str, str], ...]
    items: int
    dimensions: tuple[str, ...]
    orders: int
    votes: int
    all_at_once: bool
    judge_model: str | None
    cached_calls: int | None = None
    estimated_cost_usd: float | None = None
    price: str = "unknown"
    #: Mean estimated tokens of one call: prompt text, audio (both clips), output ceiling.
    tokens_per_call: dict[str, float] | None = None
    #: The judge's spend cap (USD), if it has one.
    spend_cap_usd: float | None = None
    #: The known-answer canaries' judge calls (before any item), and how many are cached;
    #: None when the run skips them or the judge is not checked.
    canary_calls: int | None = None
    canary_cached: int = 0
    #: Clips whose real duration the token estimate used (the rest: 2.5 words per second).
    clips_measured: int = 0
    clips_estimated: int = 0
    #: The judge's output ceiling per answer (tokens, thinking included), or None: the
    #: estimate then assumes JUDGE_OUTPUT_ALLOWANCE_TOKENS and bounds nothing.
    output_ceiling: int | None = None

    @property
    def calls_per_item(self) -> int:
        if self.judge_model is None:
            return 0
        return (1 if self.all_at_once else len(self.dimensions)) * self.orders * self.votes

    @property
    def total_calls(self) -> int:
        return len(self.pairs) * self.items * self.calls_per_item

    @property
    def calls_to_make(self) -> int:
        return self.total_calls - (self.cached_calls or 0)

    @property
    def requests(self) -> int:
        """The judge calls the run will make, canaries included: an upper bound (items where
        a clip fails or both clips fail the gate are not judged; ``--stop-when-decided`` may
        stop sooner), exact for a run whose every clip is produced and judged."""
        canary = (self.canary_calls or 0) - self.canary_cached
        return self.calls_to_make + canary if self.judge_model is not None else 0

    @property
    def fits_cap(self) -> bool | None:
        """Whether the estimated cost fits the spend cap (None: no cap, or cost unknown)."""
        if self.spend_cap_usd is None or self.estimated_cost_usd is None:
            return None
        return self.estimated_cost_usd <= self.spend_cap_usd

    def describe(self) -> list[str]:
        """Plain lines: the mode, what it publishes and what the judge will cost."""
        n_sys = len({s for p in self.pairs for s in p})
        if self.mode == "anchor":
            head = (f"MODE: anchor {self.anchor!r} — {len(self.pairs)} pairs (the anchor "
                    f"against each of the other {n_sys - 1} systems); only the anchor's row and "
                    "column are decided, every other cell is NOT COMPARED")
        else:
            head = (f"MODE: all pairs — {len(self.pairs)} pairs of {n_sys} systems; every "
                    "cell is decided")
        lines = [head]
        if self.judge_model is None:
            lines.append(f"judge calls: 0 (no judge; {unscored_words(self.dimensions)} not "
                         "scored)")
            if self.mode == "anchor":
                lines.append("note: without a judge, anchor mode saves nothing (probes are "
                             "shared across pairs); drop --anchor to decide every cell")
            return lines
        per = (f"{'1 combined call' if self.all_at_once else f'{len(self.dimensions)} dimensions'}"
               f" × {self.orders} order{'s' if self.orders > 1 else ''} × {self.votes} "
               f"vote{'s' if self.votes > 1 else ''}")
        lines.append(f"judge calls: {self.total_calls} at most = {len(self.pairs)} "
                     f"pair{'s' if len(self.pairs) != 1 else ''} × "
                     f"{self.items} items × {per} ({self.judge_model})")
        if self.cached_calls is None:
            lines.append("already cached: unknown until every clip is synthesised")
        else:
            lines.append(f"already cached: {self.cached_calls}; to make: {self.calls_to_make}")
        if self.canary_calls is not None:
            lines.append(f"canary calls: {self.canary_calls} (known-answer checks before any "
                         f"item; cached: {self.canary_cached})")
        lines.append(f"judge requests to make: {self.requests} at most (exact when every clip "
                     "is produced and judged; an invalid answer is asked again)")
        t = self.tokens_per_call
        if t is not None:
            how = (f"{self.clips_measured} clips already made (cached, or a dir: system's "
                   f"files) at their real duration"
                   + (f", {self.clips_estimated} not yet synthesised at 2.5 words per second"
                      if self.clips_estimated else ""))
            out = ("the ceiling: --judge-max-output-tokens" if self.output_ceiling is not None
                   else "an allowance, not a bound: no --judge-max-output-tokens caps an answer")
            lines.append(f"tokens per call (estimated): {t['prompt_text']:.0f} prompt text "
                         f"+ {t['audio']:.0f} audio ({how}, 32 tokens/s) + "
                         f"{t['output']:.0f} output ({out})")
        cost = ("unknown (no price for this model)" if self.estimated_cost_usd is None
                else f"${self.estimated_cost_usd:.2f}")
        cap = ""
        if self.spend_cap_usd is not None:
            fits = self.fits_cap
            cap = (f"; spend cap ${self.spend_cap_usd:.2f}: "
                   + ("fits" if fits else "DOES NOT FIT (the run would stop at the cap)"
                      if fits is not None else "cannot tell (no price)"))
        what = " (canaries included)" if self.canary_calls else ""
        lines.append(f"estimated cost of the calls to make{what}: {cost} [{self.price}]{cap}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mode": self.mode, "anchor": self.anchor, "pairs": [list(p) for p in self.pairs],
            "items": self.items, "dimensions": list(self.dimensions), "orders": self.orders,
            "votes": self.votes, "all_at_once": self.all_at_once,
            "judge_model": self.judge_model, "calls_per_item": self.calls_per_item,
            "total_calls": self.total_calls, "cached_calls": self.cached_calls,
            "calls_to_make": self.calls_to_make,
            "estimated_cost_usd": self.estimated_cost_usd, "price": self.price,
        }
        if self.judge_model is not None:  # a plan without a judge keeps its older keys only
            out.update({"tokens_per_call": self.tokens_per_call,
                        "spend_cap_usd": self.spend_cap_usd, "fits_spend_cap": self.fits_cap,
                        "canary_calls": self.canary_calls, "canary_cached": self.canary_cached,
                        "requests": self.requests, "output_ceiling": self.output_ceiling})
        return out


def system_order(systems: Sequence[str], anchor: str | None) -> tuple[str, ...]:
    """The leaderboard order: ``systems`` as given, with ``anchor`` (if any) moved first."""
    names = list(systems)
    if anchor is None:
        return tuple(names)
    if anchor not in names:
        raise ConfigError(f"--anchor {anchor!r} is not one of the systems: {', '.join(names)}")
    return (anchor, *(s for s in names if s != anchor))


def _cached_clips(items: Sequence[Item], system: Any, store: Any
                  ) -> list[bytes | None] | None:
    """The system's clips that exist already (None where missing): a ``dir:`` system's
    files, read as the run reads them (reading is not synthesis), else those in ``store``
    under the pipeline's own cache keys; None for a system whose clips are never cached."""
    from ..compare import cached_clips
    from ..systems.directory import DirectoryAdapter

    if isinstance(system, DirectoryAdapter):
        return [_stored_clip(system, it) for it in items]
    if not getattr(system, "cache_clips", True):
        return None
    return cached_clips(items, system, store)


def _stored_clip(system: Any, item: Item) -> bytes | None:
    """``item``'s clip file of a ``dir:`` system, or None when it is missing or unusable
    (the run will then fail that item the same way)."""
    try:
        return bytes(system.synthesize_item(item))
    except VocenceError:
        return None


def _clip_seconds(clip: bytes | None, item: Item) -> float:
    if clip is not None:
        from ..judge import wav_duration_s

        d = wav_duration_s(clip)
        if d is not None:
            return d
    return max(1.0, len(item.text.split()) / _WORDS_PER_SECOND)


def plan_judge_calls(
    items: Sequence[Item],
    systems: Mapping[str, Any],
    judge: Any = None,
    *,
    anchor: str | None = None,
    cache: Cache | str | os.PathLike[str] | None = None,
    consistent: bool = True,
    votes: int = 1,
    all_at_once: bool = False,
    registry: TraitRegistry = TRAITS,
    canaries: bool = True,
) -> JudgePlan:
    """The :class:`JudgePlan` of a :func:`leaderboard` run, or of a duel (two systems):
    synthesises and calls nothing. ``canaries``: the run checks the judge on the known-answer
    canaries first (their calls are counted)."""
    order = system_order(list(systems), anchor)
    pairs = pair_order(order, anchor)
    dims = tuple(registry.judged_dimensions())
    model = getattr(judge, "model", None) if judge is not None else None
    if judge is not None and model is None:
        model = type(judge).__name__
    plan = JudgePlan("anchor" if anchor else "all-pairs", anchor, pairs, len(items), dims,
                     2 if consistent else 1, votes, all_at_once, model)
    if judge is None:
        return plan
    store, close = _store_for_reading(cache)
    canary: list[tuple[bool, str, str, float]] | None = None
    try:
        clips = {s: _cached_clips(items, systems[s], store) for s in order}
        cached: int | None = 0
        prompts: dict[Any, Any] = {}
        seconds: dict[str, list[float]] = {
            s: [_clip_seconds((clips.get(s) or [None] * len(items))[k], it)
                for k, it in enumerate(items)] for s in order}
        measured = sum(1 for s in order for c in (clips.get(s) or []) if c is not None)
        if canaries:
            canary = _canary_calls(judge, store)
        for x, y in pairs if not isinstance(store, NullCache) else ():  # none: 0 cached
            cx, cy = clips.get(x), clips.get(y)
            if cached is None or cx is None or cy is None or None in cx or None in cy:
                cached = None
                continue
            try:
                cached += _count_cached(items, cx, cy, judge, store, dims, plan, prompts)
            except Exception:  # a judge without the usual prompt/key functions: unknown
                cached = None
    finally:
        if close:
            store.close()
    price, label = _price_of(judge)
    ceiling = _output_ceiling(judge)
    output = ceiling if ceiling is not None else JUDGE_OUTPUT_ALLOWANCE_TOKENS
    cost: float | None = None
    calls = _call_tokens(items, pairs, seconds, registry, dims, plan)
    tokens = _tokens_per_call(calls, output)
    if price is not None:
        cost = _estimate_cost(calls, plan, price, cached, output)
        if canary:
            cost += _canary_cost(canary, registry, price, output)
    cap = getattr(getattr(judge, "backend", None), "spend_cap_usd", None)
    if cap is None:
        cap = getattr(getattr(getattr(judge, "backend", None), "_meter", None),
                      "spend_cap_usd", None)
    n_clips = len(order) * len(items)
    return JudgePlan(plan.mode, anchor, pairs, len(items), dims, plan.orders, votes,
                     all_at_once, model, cached, cost, label, tokens,
                     float(cap) if is_real_number(cap) else None,
                     len(canary) if canary is not None else None,
                     sum(1 for c in canary if c[0]) if canary else 0,
                     measured, n_clips - measured, ceiling)


def _output_ceiling(judge: Any) -> int | None:
    """The output tokens one answer of ``judge`` can bill at most (its backend options'
    ``output_ceiling()``), or None when nothing bounds them."""
    options = getattr(getattr(judge, "backend", None), "options", None)
    ceiling = getattr(options, "output_ceiling", None)
    value = ceiling() if callable(ceiling) else None
    return int(value) if is_real_number(value) else None


def _canary_calls(judge: Any, store: Any) -> list[tuple[bool, str, str, float]] | None:
    """The canaries' judge calls (cached?, script, request, seconds) — None for a judge the
    canaries do not check."""
    from ..canaries import judge_call_plan
    from ..judge import Judge

    if not isinstance(judge, Judge):
        return None
    return judge_call_plan(judge, store)


def _canary_cost(calls: Sequence[tuple[bool, str, str, float]], registry: TraitRegistry,
                 price: Any, output: int) -> float:
    """Estimated USD of the canary calls not cached (naturalness prompts, as estimated for
    the items)."""
    from ..judge import AUDIO_TOKENS_PER_SECOND, CallUsage
    from ..traits import NATURALNESS

    out = []
    for hit, text, instruction, seconds in calls:
        if hit:
            continue
        it = Item("canary", instruction, text, {}, 0)
        chars = _prompt_chars(it, [(NATURALNESS,)], registry)[0]
        audio = math.ceil(seconds * AUDIO_TOKENS_PER_SECOND)
        out.append(float(price.cost(CallUsage(prompt_tokens=chars // _CHARS_PER_TOKEN + audio,
                                              output_tokens=output,
                                              audio_tokens=audio))))
    return math.fsum(out)


def _store_for_reading(cache: Any) -> tuple[Cache, bool]:
    """(the cache to read, whether to close it). No cache, ``--no-cache`` or a file not
    made yet (a first run) hold nothing: an empty store, so that nothing is cached and a
    ``dir:`` system's files are still read (both were "unknown" before)."""
    if cache is None or isinstance(cache, NullCache):
        return NullCache(), False
    if isinstance(cache, Cache):
        return cache, False
    if not Path(cache).is_file():
        return NullCache(), False
    return Cache(cache), True


def _units(plan: JudgePlan) -> list[tuple[str, int]]:
    orders = ("ab", "ba")[: plan.orders]
    return [(o, v) for o in orders for v in range(plan.votes)]


def _count_cached(items: Sequence[Item], cx: Sequence[bytes | None],
                  cy: Sequence[bytes | None], judge: Any, store: Any,
                  dims: tuple[str, ...], plan: JudgePlan, prompts: dict[Any, Any]) -> int:
    """Single judgements of one pair already in the cache, keyed exactly as the judge keys
    them (its own prompt and key functions); 0 when the judge does not expose them."""
    import hashlib

    from ..judge import verdict_cache_key

    prompt_of = getattr(judge, "_prompt", None)
    if not callable(prompt_of) or not hasattr(judge, "model"):
        return 0
    temperature = float(getattr(judge, "temperature", 0.0))

    def key_of(prompt: Any, a: bytes, b: bytes, order: str, vote: int) -> str:
        # The judge keys a single judgement by the sha256 of each clip as given.
        return verdict_cache_key(
            clip_a_sha256=hashlib.sha256(a).hexdigest(),
            clip_b_sha256=hashlib.sha256(b).hexdigest(), dimensions=prompt.dimensions,
            order=order, vote=vote, model=judge.model, prompt_version=prompt.version,
            prompt_sha256=prompt.sha256, temperature=temperature)

    n = 0
    groups: list[str | tuple[str, ...]] = [dims] if plan.all_at_once else list(dims)
    for it, a, b in zip(items, cx, cy, strict=True):
        if a is None or b is None:
            continue
        for g in groups:
            if (it.id, g) not in prompts:
                prompts[(it.id, g)] = prompt_of(it.text, it.instruction, g, it.category)
            prompt = prompts[(it.id, g)]
            for order, vote in _units(plan):
                if store.get_json("verdicts", key_of(prompt, a, b, order, vote)) is not None:
                    n += 1
    return n


def _price_of(judge: Any) -> tuple[Any, str]:
    backend = getattr(judge, "backend", None)
    price = getattr(backend, "price", None)
    if price is None:
        meter = getattr(backend, "_meter", None)
        price = getattr(meter, "price", None)
    model = getattr(judge, "model", None)
    if price is None:
        from ..judge import PRICES

        price = PRICES.get(str(model))
    if price is None or not hasattr(price, "cost"):
        return None, f"no price for {model!r}"
    src = getattr(price, "source", "") or "price table"
    return price, f"{model} at ${price.input}/M input, ${price.output}/M output tokens, " \
                  f"{src} as of {getattr(price, 'as_of', '?')}"


def _prompt_chars(it: Item, groups: Sequence[tuple[str, ...]], registry: TraitRegistry
                  ) -> list[int]:
    """Characters of each call's prompt (system text, schema, text parts) for one item."""
    from ..prompts import build_combined_prompt, build_prompt

    chars = []
    for g in groups:
        p = (build_combined_prompt(text=it.text, instruction=it.instruction, dimensions=g,
                                   category=it.category, registry=registry)
             if len(g) > 1 else
             build_prompt(text=it.text, instruction=it.instruction, dimension=g[0],
                          category=it.category, registry=registry))
        chars.append(len(p.system) + len(json.dumps(p.schema))
                     + sum(len(s) for s in p.parts if isinstance(s, str)))
    return chars


def _call_tokens(items: Sequence[Item], pairs: Sequence[tuple[str, str]],
                 seconds: Mapping[str, Sequence[float]], registry: TraitRegistry,
                 dims: tuple[str, ...], plan: JudgePlan) -> list[tuple[int, int]]:
    """(prompt text tokens, audio tokens) of each distinct call of the plan (item × pair ×
    call group; every order and vote of it costs the same)."""
    from ..judge import AUDIO_TOKENS_PER_SECOND

    groups: list[tuple[str, ...]] = [dims] if plan.all_at_once else [(d,) for d in dims]
    out: list[tuple[int, int]] = []
    for k, it in enumerate(items):
        chars = _prompt_chars(it, groups, registry)
        for x, y in pairs:
            audio = math.ceil((seconds[x][k] + seconds[y][k]) * AUDIO_TOKENS_PER_SECOND)
            out += [(c // _CHARS_PER_TOKEN, audio) for c in chars]
    return out


def _tokens_per_call(calls: Sequence[tuple[int, int]], output: int
                     ) -> dict[str, float] | None:
    """Mean estimated tokens of one call over every call of the plan."""
    if not calls:
        return None
    return {"prompt_text": math.fsum(t for t, _ in calls) / len(calls),
            "audio": math.fsum(a for _, a in calls) / len(calls),
            "output": float(output)}


def _estimate_cost(calls: Sequence[tuple[int, int]], plan: JudgePlan, price: Any,
                   cached: int | None, output: int) -> float:
    from ..judge import CallUsage

    per_item_pair_cost = [
        float(price.cost(CallUsage(prompt_tokens=text + audio,
                                   output_tokens=output,
                                   audio_tokens=audio))) * len(_units(plan))
        for text, audio in calls]
    total = math.fsum(per_item_pair_cost)
    # ``plan`` is the first draft, whose cached_calls are not filled in yet: the calls
    # already answered are ``cached`` (they were priced as still to make).
    if cached and plan.total_calls:
        total *= (plan.total_calls - cached) / plan.total_calls
    return total
