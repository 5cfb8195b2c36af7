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
from ..schema import read_versioned_file
from ..scores import ScoresTable, read_scores
from .ranking import Standings, pairs_from_table, rank
from .run import LEADERBOARD_KIND, LEADERBOARD_SCHEMA_VERSION, decide_command, pair_folder

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
        return _board_standings(p, read_board(p), allow_incomplete=allow_incomplete)[0]
    order2, prs = pairs_from_table(read_scores(p), systems, anchor=anchor)
    return rank(order2, prs, anchor=anchor, allow_incomplete=allow_incomplete)


def _board_standings(p: Path, doc: dict[str, Any], *, allow_incomplete: bool = False
                     ) -> tuple[Standings, dict[str, ScoresTable]]:
    """The standings of the leaderboard directory ``p`` (its ``leaderboard.json`` read as
    ``doc``), and the scores files they were read from, by name (each read once)."""
    order = [s["name"] for s in doc["systems"]]
    tables: dict[str, ScoresTable] = {}
    out = []
    for cell in doc["pairs"]:
        f = cell["scores_file"]
        if f not in tables:
            tables[f] = read_scores(p / f)
        out.append(tables[f].pair(cell["incumbent"], cell["challenger"]))
    st = rank(order, out, anchor=doc.get("anchor"),
              allow_incomplete=bool(doc.get("allow_incomplete")) or allow_incomplete)
    return st, tables


def read_board(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``leaderboard.json`` of a leaderboard output directory, as written.

    Raises :class:`~vocencebench.errors.ConfigError` for a missing, invalid or foreign file,
    and for one of another ``schema_version`` than :data:`LEADERBOARD_SCHEMA_VERSION` (the
    message names both versions).
    """
    f = Path(directory) / "leaderboard.json"
    doc = read_versioned_file(
        f, kind=LEADERBOARD_KIND, reads=LEADERBOARD_SCHEMA_VERSION,
        missing=f"{directory} is not a leaderboard directory: {f} is missing",
        foreign=f"{f} is not a leaderboard file this vocencebench reads (kind "
                f"{LEADERBOARD_KIND!r}, schema_version {LEADERBOARD_SCHEMA_VERSION})")
    problem = _shape_problem(doc, Path(directory))
    if problem is not None:
        raise ConfigError(f"{f} is not a complete leaderboard record: {problem}")
    return doc


def _shape_problem(doc: dict[str, Any], root: Path) -> str | None:
    """What an edited ``leaderboard.json`` lacks for its standings to be recomputed (the
    systems, each pair and its scores file, a file inside the directory), or None."""
    systems = doc.get("systems")
    if not isinstance(systems, list) or not all(
            isinstance(x, dict) and isinstance(x.get("name"), str) for x in systems):
        return "'systems' must be a list of objects with a 'name'"
    pairs = doc.get("pairs")
    if not isinstance(pairs, list):
        return "'pairs' must be a list"
    inside = root.resolve()
    for k, cell in enumerate(pairs):
        if not isinstance(cell, dict) or not all(
                isinstance(cell.get(key), str) for key in ("incumbent", "challenger",
                                                           "scores_file")):
            return f"pairs[{k}] needs 'incumbent', 'challenger' and 'scores_file' as text"
        target = (root / cell["scores_file"]).resolve()
        if inside not in target.parents:
            return (f"pairs[{k}].scores_file {cell['scores_file']!r} is not a file inside "
                    "the leaderboard directory")
    return None


def verify(directory: str | os.PathLike[str]) -> list[str]:
    """Recompute every cell of a published leaderboard from its scores file(s) and compare
    it with ``leaderboard.json``, bit for bit: every field the scores determine (each cell's
    decision, outcomes, record folder and recompute command, the tiers, matrix, records,
    intervals, per-dimension means, Bradley–Terry, what was not compared, the item count).
    Returns the mismatches, each naming the field and both values (empty = reproduced). The
    run's own account of its instruments (status lines, canaries, failures, system ids) is
    not derived from the scores and is not checked."""
    p = Path(directory)
    doc = read_board(p)
    try:
        st, tables = _board_standings(p, doc)
    except ScoresError as exc:
        # A row whose S its own d and gate do not give (an edit) is refused on reading.
        return [f"the published scores cannot be recomputed: {exc}"]
    problems = []
    if len(doc["pairs"]) != len(st.cells):
        return [f"pairs: published {len(doc['pairs'])}, recomputed {len(st.cells)}"]
    # Every published field the scores determine, compared as JSON (tuples are lists there).
    again = json.loads(json.dumps(st.to_dict()))
    for k, (published, cell, mine) in enumerate(zip(doc["pairs"], st.cells, again["pairs"],
                                                    strict=True)):
        pair = (cell.incumbent, cell.challenger)
        mine = {**mine, "record": pair_folder(k, pair),
                "recompute": decide_command(str(published["scores_file"]), pair)}
        for key in sorted(mine):
            where = _first_difference(published.get(key), mine[key], key)
            if where is not None:
                problems.append(f"{cell.incumbent} vs {cell.challenger}: {where}")
    order = [x["name"] for x in doc["systems"]]
    again["not_compared"] = [[x, y] for i, x in enumerate(order) for y in order[i + 1:]
                             if st.cell(x, y) is None]
    again["items"] = len(set().union(*(t.items for t in tables.values())))
    for key in ("mode", "anchor", "allow_incomplete", "tiers", "matrix", "records",
                "system_scores", "traits", "bradley_terry", "not_compared", "items"):
        where = _first_difference(doc.get(key), again[key], key)
        if where is not None:
            problems.append(where)
    return problems


def _first_difference(published: Any, recomputed: Any, path: str) -> str | None:
    """``"PATH: published X, recomputed Y"`` at the first place the two JSON values differ
    (depth first, in key order), or None when they are equal."""
    if published == recomputed:
        return None
    if isinstance(published, dict) and isinstance(recomputed, dict):
        for key in sorted(set(published) | set(recomputed), key=str):
            if key not in published:
                return f"{path}.{key}: missing from the published file"
            if key not in recomputed:
                return f"{path}.{key}: published, but not a field the scores give"
            deeper = _first_difference(published[key], recomputed[key], f"{path}.{key}")
            if deeper is not None:
                return deeper
    if (isinstance(published, list) and isinstance(recomputed, list)
            and len(published) == len(recomputed)):
        for i, (x, y) in enumerate(zip(published, recomputed, strict=True)):
            deeper = _first_difference(x, y, f"{path}[{i}]")
            if deeper is not None:
                return deeper
    return f"{path}: published {_shown(published)}, recomputed {_shown(recomputed)}"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."
