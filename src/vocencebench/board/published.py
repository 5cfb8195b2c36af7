"""A published leaderboard, read back: its standings recomputed from the scores it ships.

:func:`standings_from_scores` rebuilds the whole standings (cells, tiers, intervals,
Bradley–Terry) from a combined ``scores.jsonl`` or a leaderboard output directory, with no
audio; :func:`verify` compares them with ``leaderboard.json``, bit for bit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ScoresError
from ..schema import check_schema_version
from ..scores import read_scores
from .ranking import Standings, pairs_from_table, rank
from .run import LEADERBOARD_KIND, LEADERBOARD_SCHEMA_VERSION

__all__ = ["read_board", "standings_from_scores", "verify"]


def standings_from_scores(
    path: str | os.PathLike[str],
    *,
    systems: Sequence[str] | None = None,
    anchor: str | None = None,
    allow_incomplete: bool = False,
) -> Standings:
    """Recompute the whole leaderboard from what was published.

    ``path`` is a combined ``scores.jsonl`` (one row per item and system), or a leaderboard
    output directory (its ``leaderboard.json`` names the order, the mode and the scores file
    of every pair).
    """
    p = Path(path)
    if p.is_dir():
        doc = read_board(p)
        order = [s["name"] for s in doc["systems"]]
        anc = doc.get("anchor")
        tables: dict[str, Any] = {}
        out = []
        for cell in doc["pairs"]:
            f = cell["scores_file"]
            if f not in tables:
                tables[f] = read_scores(p / f)
            paired = tables[f].pair(cell["incumbent"], cell["challenger"])
            out.append(paired)
        return rank(order, out, anchor=anc, allow_incomplete=bool(doc.get("allow_incomplete"))
                    or allow_incomplete)
    order2, prs = pairs_from_table(read_scores(p), systems, anchor=anchor)
    return rank(order2, prs, anchor=anchor, allow_incomplete=allow_incomplete)


def read_board(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``leaderboard.json`` of a leaderboard output directory, as written.

    Raises :class:`~vocencebench.errors.ConfigError` for a missing, invalid or foreign file,
    and for one of another ``schema_version`` than :data:`LEADERBOARD_SCHEMA_VERSION` (the
    message names both versions).
    """
    f = Path(directory) / "leaderboard.json"
    if not f.is_file():
        raise ConfigError(f"{directory} is not a leaderboard directory: {f} is missing")
    try:
        doc: dict[str, Any] = json.loads(f.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{f} is not valid JSON: {exc}") from exc
    if doc.get("kind") != LEADERBOARD_KIND:
        raise ConfigError(f"{f} is not a leaderboard file this vocencebench reads "
                          f"(kind {LEADERBOARD_KIND!r}, schema_version "
                          f"{LEADERBOARD_SCHEMA_VERSION})")
    check_schema_version(doc.get("schema_version"), str(f), reads=LEADERBOARD_SCHEMA_VERSION)
    return doc


def verify(directory: str | os.PathLike[str]) -> list[str]:
    """Recompute every cell of a published leaderboard from its scores file(s) and compare
    it with ``leaderboard.json``, bit for bit. Returns the mismatches (empty = reproduced)."""
    p = Path(directory)
    doc = read_board(p)
    try:
        st = standings_from_scores(p)
    except ScoresError as exc:
        # A row whose S its own d and gate do not give (an edit) is refused on reading.
        return [f"the published scores cannot be recomputed: {exc}"]
    problems = []
    for published, cell in zip(doc["pairs"], st.cells, strict=True):
        mine = cell.decision.to_dict() if cell.decision is not None else None
        if published.get("decision") != mine:
            problems.append(f"{cell.incumbent} vs {cell.challenger}: published "
                            f"{published.get('winner')}, recomputed {cell.winner}")
    tiers = [t.to_dict() for t in st.tiers]
    if doc.get("tiers") != tiers:
        problems.append(f"tiers: published {doc.get('tiers')}, recomputed {tiers}")
    return problems
