"""Held-out splits: a public / held-out partition chosen by a private salt."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ConfigError, CorpusError
from ..schema import Item

__all__ = ["Split", "split_holdout"]



@dataclass(frozen=True)
class Split:
    """A public / held-out partition; both keep the corpus's item order."""

    public: tuple[Item, ...]
    heldout: tuple[Item, ...]
    salt_digest: str


def split_holdout(items: Sequence[Item], fraction: float = 0.2, *, salt: str) -> Split:
    """Hold out the ``round(fraction · n)`` items with the smallest sha256(salt + id).

    Deterministic, independent of item order, and unknowable without the salt: keep the salt
    private and system builders cannot tell which items are held out. ``salt_digest`` is
    sha256(salt), safe to publish as proof of which salt was used.
    """
    if not isinstance(salt, str) or not salt:
        raise ConfigError("split_holdout needs a non-empty salt (keep it private)")
    try:
        salt.encode("utf-8")
    except UnicodeEncodeError:  # bytes the shell passed that are not UTF-8 (\xff)
        raise ConfigError("the hold-out salt must be UTF-8 text; these bytes are not") from None
    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"fraction must be strictly between 0 and 1, got {fraction}")
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        raise CorpusError("split_holdout needs unique item ids; run `vocencebench corpus check`")
    k = round(fraction * len(items))
    ranked = sorted(ids, key=lambda i: hashlib.sha256((salt + i).encode("utf-8")).hexdigest())
    held = set(ranked[:k])
    return Split(
        public=tuple(it for it in items if it.id not in held),
        heldout=tuple(it for it in items if it.id in held),
        salt_digest=hashlib.sha256(salt.encode("utf-8")).hexdigest(),
    )
