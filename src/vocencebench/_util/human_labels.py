"""Human labels as files: the labels CSV that ``vocencebench calibrate`` reads, the CSV the
blind listening page exports, and the key that maps the page's clips back to the run's a/b.

* A labels file: ``id,dimension,winner[,score_a,score_b][,rater]``; ``winner`` is a, b or
  tie *of the run* (what ``listen --serve`` writes, and what a person writes by hand).
* A page export: ``test,trial,id,dimension,choice,score_left,score_right,rater``; ``choice``
  is left, right or tie: the clip on the screen, never a system. Only the test's key says
  which clip of each trial is the run's a. It is ``DIR/key.json``, outside ``DIR/page/`` (the
  folder the raters get), and the page never loads it. Without that key a page export is
  refused, never guessed.

The listening package writes these files and the calibration reads them; both go through
here, so the format is defined once.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .._numbers import is_whole_number
from ..errors import ConfigError
from ..schema import WINNERS

__all__ = ["EXPORT_COLUMNS", "KEY_FILE", "LABEL_COLUMNS", "LISTENING_DIMENSIONS", "PAGE_DIR",
           "HumanLabel", "ListeningKey", "read_human_csv", "read_listening_key"]

#: The columns of a labels file (the run's a/b), as ``listen --serve`` writes them.
LABEL_COLUMNS = ("id", "dimension", "winner", "score_a", "score_b", "rater")
#: The columns of the listening page's export (clips by screen position, not by system).
EXPORT_COLUMNS = ("test", "trial", "id", "dimension", "choice", "score_left", "score_right",
                  "rater")
#: The questions a listening test can ask: a dimension of every run, judged or not.
LISTENING_DIMENSIONS = ("naturalness", "tone", "instruction")
#: The key's file name, in the listening folder (never in its ``page/``).
KEY_FILE = "key.json"
#: The sub-folder of a listening folder that the raters get (the page, its data, its clips).
PAGE_DIR = "page"
_KEY_KIND = "vocencebench-listening-key"
_CHOICES = ("left", "right", "tie")
_T = TypeVar("_T")


@dataclass(frozen=True)
class HumanLabel:
    """One human judgement: item ``id``, ``dimension``, ``winner`` (a, b or tie of the
    run), optional 0–3 scores and the ``rater`` who gave it."""

    id: str
    dimension: str
    winner: str
    score_a: float | None = None
    score_b: float | None = None
    rater: str = ""


@dataclass(frozen=True)
class ListeningKey:
    """Which clip of each trial of test ``test`` is the run's a: ``left[n]`` = (item id of
    trial n, ``"a"`` or ``"b"``: the run's side of its left clip)."""

    test: str
    left: Mapping[int, tuple[str, str]]

    def to_json(self) -> str:
        """The key file's text (deterministic)."""
        doc = {"kind": _KEY_KIND, "test": self.test,
               "note": "Which clip of each trial is the run's a or b. Keep this file; do not "
                       "send it to raters. calibrate reads it to map a page's export.",
               "trials": [{"n": n, "id": item, "left": side}
                          for n, (item, side) in sorted(self.left.items())]}
        return json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n"

    def to_run(self, n: object, item: object, choice: object, score_left: _T,
               score_right: _T) -> tuple[str, _T, _T]:
        """(winner, score_a, score_b) of the run for an answer given on the page: trial
        ``n`` showing ``item``, ``choice`` left/right/tie and the two clips' scores.
        ConfigError (one line) when the trial, item or choice is not this test's."""
        if not is_whole_number(n) or n not in self.left or self.left[n][0] != item:
            raise ConfigError(f"trial {n!r} of test {self.test} is not item {item!r}")
        if choice not in _CHOICES:
            raise ConfigError(f"choice must be left, right or tie, got {choice!r}")
        side = self.left[n][1]
        other = "b" if side == "a" else "a"
        winner = "tie" if choice == "tie" else side if choice == "left" else other
        if side == "a":
            return winner, score_left, score_right
        return winner, score_right, score_left


def _key_in(folder: Path) -> Path:
    """Where the key of the listening folder ``folder`` is: ``folder/key.json``, or, when
    ``folder`` is a listening folder's ``page/`` (it holds ``test.json``) and has no key of
    its own, the key beside it. May not exist."""
    own = folder / KEY_FILE
    if not own.is_file() and folder.name == PAGE_DIR and (folder / "test.json").is_file():
        return folder.parent / KEY_FILE
    return own


def read_listening_key(path: str | os.PathLike[str]) -> ListeningKey:
    """The key of a listening test: ``path`` is its ``key.json``, the listening folder
    holding it, or that folder's ``page/``."""
    p = Path(path)
    if p.is_dir():
        p = _key_in(p)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("kind") != _KEY_KIND:
            raise ValueError("not a listening test's key")
        left: dict[int, tuple[str, str]] = {}
        for t in doc["trials"]:
            if not is_whole_number(t["n"]) or t["left"] not in ("a", "b") \
                    or not isinstance(t["id"], str):
                raise ValueError(f"trial {t!r} is not a trial of a key")
            left[t["n"]] = (t["id"], t["left"])
        return ListeningKey(str(doc["test"]), left)
    except OSError as exc:
        raise ConfigError(f"cannot read the listening key {p}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{p} is not a listening key ({str(exc)[:200]})") from None


def _score(value: str | None, where: str) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        x = float(value)
    except ValueError:
        raise ConfigError(f"{where}: score {value!r} is not a number (0-3)") from None
    if not (math.isfinite(x) and 0 <= x <= 3):
        raise ConfigError(f"{where}: score {value!r} is outside 0-3")
    return x


def _keys_near(path: Path, given: Iterable[ListeningKey]) -> dict[str, ListeningKey]:
    """The keys given, and a key.json beside the file or in its parent folder (an export
    saved into the test's folder, its ``labels/`` or its ``page/``: the key of a ``page/`` is
    the one beside it)."""
    out = {k.test: k for k in given}
    for folder in (path.parent, path.parent.parent):
        if _key_in(folder).is_file():
            k = read_listening_key(folder)
            out.setdefault(k.test, k)
    return out


def _page_row(row: Mapping[str, Any], keys: Mapping[str, ListeningKey], where: str
              ) -> tuple[str, str, float | None, float | None]:
    """(winner, score_a, score_b, dimension) of one row of a page export."""
    test = (row.get("test") or "").strip()
    key = keys.get(test)
    if key is None:
        raise ConfigError(
            f"{where}: an export of the listening page of test {test!r}, whose answers name "
            f"the left or right clip, not a system; its key ({KEY_FILE}) was not found "
            "beside the file, in its parent folder or beside its page/ folder: move the file "
            "into the test's folder, or pass calibrate --key LISTEN_DIR")
    try:
        n: object = int((row.get("trial") or "").strip())
    except ValueError:
        n = row.get("trial")
    sl, sr = _score(row.get("score_left"), where), _score(row.get("score_right"), where)
    choice = (row.get("choice") or "").strip().lower()
    try:
        winner, sa, sb = key.to_run(n, (row.get("id") or "").strip(), choice, sl, sr)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return winner, (row.get("dimension") or "").strip(), sa, sb


def read_human_csv(path: str | os.PathLike[str], keys: Iterable[ListeningKey] = ()
                   ) -> list[HumanLabel]:
    """Read a labels file or a listening page's export (see the module docstring). A file
    without a ``rater`` column is one rater named after the file (its stem); with one, a
    blank rater is the file's stem too, and a later row for the same rater, id and dimension
    replaces the earlier one. A page export is mapped to the run's a/b with its test's key
    (``keys``, or a key.json beside the file, in its parent folder or beside the
    listening folder's ``page/`` holding it)."""
    stem = Path(path).stem
    try:
        # utf-8-sig: a spreadsheet's UTF-8 export starts with a byte-order mark, which would
        # otherwise become part of the first column's name.
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            cols = set(reader.fieldnames or ())
            page = "choice" in cols
            need = set(EXPORT_COLUMNS[:5]) if page else {"id", "dimension", "winner"}
            missing = need - cols
            if missing:
                form = (",".join(EXPORT_COLUMNS) if page
                        else "id,dimension,winner[,score_a,score_b][,rater]")
                raise ConfigError(f"{path}: missing column(s) {', '.join(sorted(missing))}; "
                                  f"need {form}")
            found = _keys_near(Path(path), keys) if page else {}
            log = "rater" in cols
            out: dict[tuple[str, str, str], HumanLabel] = {}
            plain: list[HumanLabel] = []
            start = reader.line_num + 1  # the physical line a row begins on: a quoted
            for row in reader:           # field may hold line breaks
                where = f"{path}:{start}"
                start = reader.line_num + 1
                ident = (row.get("id") or "").strip()
                if page:
                    winner, dim, sa, sb = _page_row(row, found, where)
                else:
                    winner = (row.get("winner") or "").strip().lower()
                    if winner not in WINNERS:
                        raise ConfigError(f"{where}: winner {row.get('winner')!r} is not a, b "
                                          "or tie")
                    dim = (row.get("dimension") or "").strip()
                    sa, sb = _score(row.get("score_a"), where), _score(row.get("score_b"), where)
                if not ident or not dim:
                    raise ConfigError(f"{where}: id and dimension must not be empty")
                if (sa is None) != (sb is None):
                    both = "score_left and score_right" if page else "score_a and score_b"
                    raise ConfigError(f"{where}: give both {both}, or neither")
                rater = (row.get("rater") or "").strip() or stem
                label = HumanLabel(ident, dim, winner, sa, sb, rater)
                if log:
                    out.pop((rater, ident, dim), None)  # re-insert: the latest row's place
                    out[(rater, ident, dim)] = label
                else:
                    plain.append(label)
    except OSError as exc:
        raise ConfigError(f"cannot read human labels {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason})") from None
    except csv.Error as exc:  # e.g. a field over the csv module's size limit
        raise ConfigError(f"{path}:{reader.line_num}: not a readable CSV row ({exc})") from None
    return list(out.values()) if log else plain
