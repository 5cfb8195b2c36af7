"""A judge backend that replays canned answers, for testing code that uses a judge offline."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import JudgeError
from ._metering import Meter, Metered
from ._types import AsyncInThread, CallUsage, JudgeReply, JudgeRequest, Price

__all__ = ["Scripted", "ScriptedBackend"]


Scripted = str | Mapping[str, Any] | BaseException | Callable[[JudgeRequest], Any]


class ScriptedBackend(Metered, AsyncInThread):
    """A judge backend that replays canned answers — for testing code that uses a judge.

    ``responses`` is either a sequence consumed in order (each a reply text, a JSON-ready
    mapping, an exception to raise, or a callable ``request -> text | mapping``) or one
    callable used for every call. Every request is kept in ``requests``; every answered call
    is billed ``usage_per_call`` at ``price`` (free by default). Running out of answers
    raises :class:`~vocencebench.errors.JudgeError`.
    """

    def __init__(
        self,
        responses: Iterable[Scripted] | Callable[[JudgeRequest], Any],
        *,
        model: str = "scripted",
        usage_per_call: CallUsage | None = None,
        price: Price | None = None,
        spend_cap_usd: float | None = None,
    ) -> None:
        self.model = model
        self._fn = responses if callable(responses) else None
        self._queue: list[Scripted] = [] if callable(responses) else list(responses)
        self._lock = threading.Lock()
        self.requests: list[JudgeRequest] = []
        self.usage_per_call = usage_per_call or CallUsage()
        self._meter = Meter(model, price or Price(0.0, 0.0, source="scripted"), spend_cap_usd)

    def __repr__(self) -> str:
        return f"ScriptedBackend(model={self.model!r}, remaining={len(self._queue)})"

    def complete(self, request: JudgeRequest) -> JudgeReply:
        """Answer with the next scripted response."""
        estimate = self._meter.price.cost(self.usage_per_call) if self._meter.price else 0.0
        self._meter.reserve(estimate)
        try:
            with self._lock:
                self.requests.append(request)
                if self._fn is not None:
                    item: Scripted = self._fn
                elif self._queue:
                    item = self._queue.pop(0)
                else:
                    self._meter.bump(failures=1)
                    raise JudgeError(
                        f"scripted judge {self.model!r} ran out of answers after "
                        f"{len(self.requests) - 1} calls; script more responses"
                    )
            if isinstance(item, BaseException):
                self._meter.bump(failures=1)
                raise item
            out = item(request) if callable(item) else item
            text = out if isinstance(out, str) else json.dumps(out)
            self._meter.record(self.usage_per_call)
            return JudgeReply(text=text, usage=self.usage_per_call, model=self.model)
        finally:
            self._meter.release(estimate)
