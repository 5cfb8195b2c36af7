"""Usage, cost and the spend cap of one judge backend.

:class:`Meter` keeps a backend's running :class:`~vocencebench.judge.Usage` (thread-safe),
prices each call with its :class:`~vocencebench.judge.Price` (USD per million tokens) and
refuses, with :class:`~vocencebench.errors.BudgetExceededError`, a call that could cross the
spend cap *before* it is sent. :class:`Metered` gives a backend ``usage``, ``cost_usd()`` and
``record_failure()`` over its meter.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import replace

from ..constants import JUDGE_OUTPUT_ALLOWANCE_TOKENS
from ..errors import BudgetExceededError, ConfigError
from ._types import AUDIO_TOKENS_PER_SECOND, CallUsage, JudgeRequest, Price, Usage

__all__ = ["Meter", "Metered"]


class Meter:
    """Thread-safe usage totals, pricing and the spend cap of one backend."""

    def __init__(self, model: str, price: Price | None, spend_cap_usd: float | None, *,
                 output_ceiling: int | None = None, needs_ceiling: bool = False) -> None:
        """``output_ceiling``: the most output tokens (thinking included) one answer can
        bill, enforced by the provider (``max_output_tokens`` plus any thinking budget), or
        None. ``needs_ceiling``: a spend cap is refused without one (an HTTP model, whose
        answers nothing else bounds)."""
        if spend_cap_usd is not None:
            if not (math.isfinite(spend_cap_usd) and spend_cap_usd > 0):
                raise ConfigError(f"spend_cap_usd must be a positive number, got {spend_cap_usd}")
            if price is None:
                raise ConfigError(
                    f"a spend cap needs a price for model {model!r}; pass "
                    "prices={model: Price(input=..., output=...)} or --judge-price IN,OUT"
                )
            if needs_ceiling and output_ceiling is None:
                raise ConfigError(
                    f"a spend cap needs a ceiling on each answer of model {model!r}: pass "
                    "max_output_tokens=N (--judge-max-output-tokens N; Gemini counts thinking "
                    "in it). Without one a single answer's cost has no bound (a thinking "
                    "model may think for tens of thousands of tokens), so no cap can be kept"
                )
        self.model = model
        self.price = price
        self.spend_cap_usd = spend_cap_usd
        self.output_ceiling = output_ceiling
        self._lock = threading.Lock()
        self._u = Usage()
        self._reserved = 0.0
        self._largest_call = 0.0

    def snapshot(self) -> Usage:
        with self._lock:
            return self._u

    def cost_usd(self) -> float | None:
        if self.price is None:
            return None
        return self.snapshot().cost_usd

    def guess(self, request: JudgeRequest) -> CallUsage:
        """A cautious token projection for ``request``: its text at 3 characters a token,
        its audio at the provider's rate, and the output ceiling (else
        :data:`~vocencebench.constants.JUDGE_OUTPUT_ALLOWANCE_TOKENS`)."""
        text_chars = len(request.system) + len(json.dumps(request.schema)) + sum(
            len(p) for p in request.parts if isinstance(p, str)
        )
        audio = sum(
            math.ceil((a.duration_s or len(a.data) / 32_000) * AUDIO_TOKENS_PER_SECOND)
            for a in request.audio()
        )
        output = (self.output_ceiling if self.output_ceiling is not None
                  else JUDGE_OUTPUT_ALLOWANCE_TOKENS)
        return CallUsage(
            prompt_tokens=text_chars // 3 + audio, output_tokens=output, audio_tokens=audio
        )

    def estimate(self, guess: CallUsage) -> float:
        """A cautious cost projection (USD) for a call of ``guess``'s tokens (:meth:`guess`):
        never below the largest call so far."""
        if self.price is None:
            return 0.0
        return max(self.price.cost(guess), self._largest_call)

    def reserve(self, amount: float) -> None:
        if self.spend_cap_usd is None:
            return
        with self._lock:
            spent = self._u.cost_usd
            if spent + self._reserved + amount > self.spend_cap_usd:
                raise BudgetExceededError(
                    f"judge spend cap ${self.spend_cap_usd:.4f} reached: spent "
                    f"${spent:.4f}, ${self._reserved:.4f} in flight, next call up to "
                    f"${amount:.4f}. Raise the cap to continue; finished verdicts are kept."
                )
            self._reserved += amount

    def release(self, amount: float) -> None:
        if self.spend_cap_usd is None:
            return
        with self._lock:
            self._reserved = max(0.0, self._reserved - amount)

    def record(self, usage: CallUsage, *, unreported: bool = False) -> None:
        """Add one answered call. ``unreported``: its reply had no usable token counts and
        ``usage`` is the pre-call :meth:`guess` (counted in :attr:`Usage.unreported`)."""
        cost = self.price.cost(usage) if self.price is not None else 0.0
        with self._lock:
            u = self._u
            self._largest_call = max(self._largest_call, cost)
            self._u = replace(
                u,
                prompt_tokens=u.prompt_tokens + usage.prompt_tokens,
                output_tokens=u.output_tokens + usage.output_tokens,
                thinking_tokens=u.thinking_tokens + usage.thinking_tokens,
                audio_tokens=u.audio_tokens + (usage.audio_tokens or 0),
                cached_tokens=u.cached_tokens + usage.cached_tokens,
                calls=u.calls + 1,
                cost_usd=u.cost_usd + cost,
                unreported=u.unreported + unreported,
            )

    def bump(self, *, failures: int = 0, retries: int = 0) -> None:
        with self._lock:
            u = self._u
            self._u = replace(u, failures=u.failures + failures, retries=u.retries + retries)


class Metered:
    """Mixin giving a backend ``usage``, ``cost_usd()`` and ``record_failure()``."""

    _meter: Meter

    @property
    def usage(self) -> Usage:
        """Running totals (a frozen snapshot)."""
        return self._meter.snapshot()

    def cost_usd(self) -> float | None:
        """Spend so far in USD from the provider's token counts and the price table, or None
        when the model has no price (the cost is unknown, not zero)."""
        return self._meter.cost_usd()

    def record_failure(self) -> None:
        """Count a judgement that produced no usable answer (called by the judge)."""
        self._meter.bump(failures=1)
