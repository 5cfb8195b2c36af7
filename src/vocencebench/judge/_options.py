"""Every option of the HTTP judge backends in one frozen :class:`BackendOptions`.

The factories ``Judge.gemini`` / ``Judge.local`` / ``Judge.from_spec`` and the CLI build this
one object, so no option can be forgotten on the way. Times are in seconds, prices in USD per
million tokens.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar, overload

from .._numbers import is_finite_number, is_whole_number
from .._util.retry import RetryPolicy
from ..errors import ConfigError
from ..redact import safe_url
from ._types import Price

__all__ = ["BackendOptions", "OptionView"]

T = TypeVar("T")

#: The values of Gemini's ``thinkingConfig.thinkingLevel``.
_THINKING_LEVELS = ("minimal", "low", "medium", "high")


def _positive(name: str, v: Any, *, integer: bool = False, zero: bool = False) -> None:
    ok_type = is_whole_number(v) if integer else is_finite_number(v)
    if not ok_type or v < 0 or (v == 0 and not zero):
        kind = "an integer" if integer else "a number"
        bound = ">= 0" if zero else "> 0"
        raise ConfigError(f"{name} must be {kind} {bound}, got {v!r}")


@dataclass(frozen=True, repr=False)
class BackendOptions:
    """Every option of the HTTP judge backends, in one frozen object (times in seconds,
    prices in USD per million tokens).

    ``model``: the model name (None: the factory's default). ``base_url``: the server (None:
    Gemini uses ``$GOOGLE_GEMINI_BASE_URL`` or the public endpoint). ``api_key_env``: the
    environment variable holding the key (None: ``GEMINI_API_KEY``/``GOOGLE_API_KEY`` for
    Gemini, no key for a local server). ``timeout_s``: total deadline of one HTTP attempt.
    ``max_retries``, ``backoff_s``, ``max_backoff_s``, ``jitter``, ``max_retry_after_s``: the
    retry policy (:class:`vocencebench._util.retry.RetryPolicy`). ``requests_per_minute``: a
    client-side rate limit. ``max_output_tokens``: cap on the answer (Gemini
    ``maxOutputTokens``, OpenAI ``max_tokens``). ``thinking_budget`` / ``thinking_level``:
    Gemini ``thinkingConfig`` (budget in tokens, -1 = dynamic, 0 = off; level one of
    minimal/low/medium/high). ``schema_field``: where Gemini gets the answer schema
    (``responseJsonSchema`` or the older ``responseSchema``). ``send_schema``: send the schema
    as an OpenAI ``response_format``. ``price``: this model's :class:`Price` (wins over the
    table); ``prices``: extra table entries by model. ``spend_cap_usd``: stop before the
    spend could cross this. ``max_body_bytes``: largest answer read.

    Build one with keywords, or change one with :meth:`replace`; an unknown option name is a
    :class:`~vocencebench.errors.ConfigError` listing the valid ones.
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    timeout_s: float = 180.0
    max_retries: int = 5
    backoff_s: float = 2.0
    max_backoff_s: float = 60.0
    jitter: float = 0.5
    max_retry_after_s: float = 600.0
    requests_per_minute: float | None = None
    max_output_tokens: int | None = None
    thinking_budget: int | None = None
    thinking_level: str | None = None
    schema_field: str = "responseJsonSchema"
    send_schema: bool = True
    price: Price | None = None
    prices: Mapping[str, Price] | None = field(default=None, hash=False)
    spend_cap_usd: float | None = None
    max_body_bytes: int = 10_000_000

    def __post_init__(self) -> None:
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            raise ConfigError(f"model must be a non-empty string, got {self.model!r}")
        if self.base_url is not None and (
                not isinstance(self.base_url, str)
                or not self.base_url.startswith(("http://", "https://"))):
            raise ConfigError("base_url must start with http:// or https://, got "
                              f"{safe_url(str(self.base_url))!r}")
        if self.api_key_env is not None and (not isinstance(self.api_key_env, str)
                                             or not self.api_key_env):
            raise ConfigError(f"api_key_env must name an environment variable, got "
                              f"{self.api_key_env!r}")
        _positive("timeout_s", self.timeout_s)
        self.retry_policy()  # validates the retry fields
        if self.requests_per_minute is not None:
            _positive("requests_per_minute", self.requests_per_minute)
        if self.max_output_tokens is not None:
            _positive("max_output_tokens", self.max_output_tokens, integer=True)
        if self.thinking_budget is not None and (
                not is_whole_number(self.thinking_budget) or self.thinking_budget < -1):
            raise ConfigError(f"thinking_budget must be an integer >= -1 (tokens; -1 dynamic, "
                              f"0 off), got {self.thinking_budget!r}")
        if self.thinking_level is not None and self.thinking_level not in _THINKING_LEVELS:
            raise ConfigError(f"thinking_level must be one of {', '.join(_THINKING_LEVELS)}, "
                              f"got {self.thinking_level!r}")
        if self.schema_field not in ("responseJsonSchema", "responseSchema"):
            raise ConfigError("schema_field must be 'responseJsonSchema' or 'responseSchema'")
        if not isinstance(self.send_schema, bool):
            raise ConfigError(f"send_schema must be True or False, got {self.send_schema!r}")
        if self.price is not None and not isinstance(self.price, Price):
            raise ConfigError(f"price must be a Price, got {type(self.price).__name__}")
        if self.prices is not None:
            if not isinstance(self.prices, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, Price) for k, v in self.prices.items()):
                raise ConfigError("prices must map model names to Price objects")
            object.__setattr__(self, "prices", dict(self.prices))
        if self.spend_cap_usd is not None:
            _positive("spend_cap_usd", self.spend_cap_usd)
        _positive("max_body_bytes", self.max_body_bytes, integer=True)

    def output_ceiling(self) -> int | None:
        """The most output tokens one answer can bill (thinking included), or None when no
        ``max_output_tokens`` bounds it. Gemini 3 counts thinking inside
        ``maxOutputTokens``; a positive ``thinking_budget`` is added on top, in case a model
        bills it beside the answer's cap."""
        if self.max_output_tokens is None:
            return None
        extra = self.thinking_budget if self.thinking_budget and self.thinking_budget > 0 else 0
        return int(self.max_output_tokens) + int(extra)

    def __repr__(self) -> str:  # the base URL without credentials
        changed = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v == f.default or (f.name == "prices" and not v):
                continue
            shown = safe_url(v) if f.name == "base_url" else v
            changed.append(f"{f.name}={shown!r}")
        return f"BackendOptions({', '.join(changed)})"

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every option name."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def build(cls, options: BackendOptions | None = None, /, **settings: Any) -> BackendOptions:
        """``options`` (or the defaults) with ``settings`` applied by name."""
        base = options if options is not None else cls()
        if not isinstance(base, BackendOptions):
            raise ConfigError(f"options must be a BackendOptions, got {type(base).__name__}")
        return base.replace(**settings) if settings else base

    def replace(self, **changes: Any) -> BackendOptions:
        """A copy with ``changes`` applied (unknown names: ConfigError listing the valid)."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise ConfigError(f"unknown judge option(s) {', '.join(unknown)}; valid: "
                              f"{', '.join(self.names())}")
        return replace(self, **changes)

    def retry_policy(self) -> RetryPolicy:
        """The :class:`~vocencebench._util.retry.RetryPolicy` these options describe."""
        return RetryPolicy(max_retries=self.max_retries, backoff_s=self.backoff_s,
                           max_backoff_s=self.max_backoff_s, jitter=self.jitter,
                           max_retry_after_s=self.max_retry_after_s)

    def price_for(self, model: str, table: Mapping[str, Price] | None = None) -> Price | None:
        """``price``, else ``prices[model]``, else ``table[model]``, else None."""
        if self.price is not None:
            return self.price
        if self.prices and model in self.prices:
            return self.prices[model]
        return (table or {}).get(model)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict without credentials (the base URL through ``safe_url``)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Price):
                v = v.to_dict()
            elif f.name == "prices" and v is not None:
                v = {k: p.to_dict() for k, p in v.items()}
            elif f.name == "base_url" and v is not None:
                v = safe_url(v)
            out[f.name] = v
        return out


class OptionView(property, Generic[T]):
    """A read-only attribute of a backend that shows the field ``name`` of its ``options``
    (a :class:`BackendOptions`), documented by ``doc``: a property, written once."""

    def __init__(self, name: str, doc: str) -> None:
        def get(backend: Any) -> T:
            value: T = getattr(backend.options, name)
            return value

        get.__doc__ = doc
        super().__init__(get)

    @overload
    def __get__(self, obj: None, owner: type | None = None, /) -> OptionView[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None, /) -> T: ...

    def __get__(self, obj: object | None, owner: type | None = None, /) -> Any:
        return super().__get__(obj, owner)
