"""The deadline transport: an HTTP/1.1 transport whose socket reads and writes never outlast
the total deadline of the current attempt (public httpcore API only).

:class:`~vocencebench._util.http.HttpClient` sets that deadline with :func:`deadline_at`
around each attempt; each read and write then waits at most for what is left of it, so a
server that trickles one byte every 50 ms is cut off at the deadline, not after the timeout
once per read. Outside :func:`deadline_at` the transport uses the plain per-operation
timeouts.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

__all__ = ["DeadlineTransport", "deadline_at"]

#: Monotonic time at which the current attempt must end (set by :func:`deadline_at`).
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "vocencebench_http_deadline", default=None)


@contextlib.contextmanager
def deadline_at(deadline: float) -> Iterator[None]:
    """Bound every socket read and write of a :class:`DeadlineTransport` in this context
    (this thread or task) by ``deadline``, a :func:`time.monotonic` time in seconds."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: float | None) -> float | None:
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the attempt's total deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                     _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_tcp(
            host, port, _left(timeout), local_address=local_address,
            socket_options=socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:  # pragma: no cover - not used
        return _DeadlineStream(self._inner.connect_unix_socket(
            path, _left(timeout), socket_options=socket_options))

    def sleep(self, seconds: float) -> None:  # pragma: no cover - httpcore retries only
        self._inner.sleep(seconds)


_EXC_MAP: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _mapped() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for src, dst in _EXC_MAP:
            if isinstance(exc, src):
                raise dst(str(exc)) from exc
        raise


class _Body(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _mapped():
            yield from self._stream

    def close(self) -> None:
        closer = getattr(self._stream, "close", None)
        if callable(closer):
            with _mapped():
                closer()


class DeadlineTransport(httpx.BaseTransport):
    """An HTTP/1.1 transport whose socket reads and writes never outlast the deadline that
    :class:`HttpClient` sets for the current attempt (public httpcore API only)."""

    def __init__(self, *, max_connections: int = 32) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=5.0,
            network_backend=_DeadlineBackend(),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        req = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                             port=request.url.port, target=request.url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _mapped():
            resp = self._pool.handle_request(req)
        assert isinstance(resp.stream, Iterable)
        return httpx.Response(status_code=resp.status, headers=resp.headers,
                              stream=_Body(resp.stream), extensions=resp.extensions)

    def close(self) -> None:
        self._pool.close()
