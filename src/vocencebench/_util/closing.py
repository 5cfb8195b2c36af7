"""The ``with`` block of the objects that hold a resource until ``close()`` (a database
connection, an HTTP connection pool)."""

from __future__ import annotations

from typing import Self

__all__ = ["Closing"]


class Closing:
    """``with obj:`` gives ``obj`` and calls ``obj.close()`` when the block ends, however it
    ends. A subclass says in ``close`` what it releases."""

    def close(self) -> None: ...  # each subclass releases its own resource

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
