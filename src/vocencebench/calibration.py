"""Judge-vs-human agreement: a diagnostic, never an input to the ranking.

Inputs (formats documented in ``docs/validation.md``):

* human labels, CSV with a header: ``id``, ``dimension``, ``winner`` (``a``, ``b`` or ``tie``)
  and optionally ``score_a``, ``score_b`` (the rater's 0–3 scores; blank when not given);
* judge verdicts, JSON Lines: one object per line with ``id`` and the
  :class:`~vocencebench.schema.Verdict` fields, either at top level or under ``"verdict"``.

Rows are matched on ``(id, dimension)``. Reported per dimension and overall
(:class:`Agreement`): accuracy of the 3-way winner, Cohen's κ over {a, b, tie}, Spearman's ρ
between human and judge per-clip scores (both clips of every matched pair with human scores,
average ranks for ties), and the judge's order-swap consistency rate. A statistic that is
undefined for the data (κ when chance agreement is 1, ρ with fewer than two points or no
variance) is None, never a made-up number.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._util.text import terminal_safe
from .errors import ConfigError
from .schema import Verdict

__all__ = [
    "LABELS",
    "Agreement",
    "CalibrationReport",
    "HumanLabel",
    "agreement",
    "calibrate",
    "calibrate_files",
    "cohen_kappa",
    "read_human_csv",
    "read_verdicts_jsonl",
    "spearman",
]

#: The winner labels compared (order of the confusion matrix).
LABELS: tuple[str, str, str] = ("a", "b", "tie")


@dataclass(frozen=True)
class HumanLabel:
    """One human judgement: item ``id``, ``dimension``, ``winner`` and optional 0–3 scores."""

    id: str
    dimension: str
    winner: str
    score_a: float | None = None
    score_b: float | None = None


@dataclass(frozen=True)
class Agreement:
    """Agreement of the judge with humans over ``n`` matched pairs.

    ``accuracy`` (fraction, 0–1) and ``kappa`` (Cohen's κ, −1–1) of the winner;
    ``spearman`` (ρ, −1–1) of per-clip scores over ``n_scored`` pairs (2 clips each);
    ``consistency_rate`` the fraction of verdicts whose two orders agreed;
    ``confusion[human][judge]`` counts. Undefined statistics are None.
    """

    n: int
    accuracy: float | None
    kappa: float | None
    spearman: float | None
    n_scored: int
    consistency_rate: float | None
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class CalibrationReport:
    """Overall and per-dimension :class:`Agreement`, plus what could not be matched."""

    overall: Agreement
    by_dimension: dict[str, Agreement]
    unmatched_human: int
    unmatched_verdicts: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        from dataclasses import asdict

        return {
            "overall": asdict(self.overall),
            "by_dimension": {d: asdict(a) for d, a in self.by_dimension.items()},
            "unmatched_human": self.unmatched_human,
            "unmatched_verdicts": self.unmatched_verdicts,
        }

    def summary(self) -> str:
        """A small text table (diagnostic only)."""

        def f(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.3f}"

        lines = [f"{'dimension':<14}{'n':>5}{'acc':>8}{'kappa':>8}{'rho':>8}{'consist':>9}"]
        rows = [*self.by_dimension.items(), ("ALL", self.overall)]
        for name, a in rows:
            lines.append(f"{terminal_safe(name):<14}{a.n:>5}{f(a.accuracy):>8}{f(a.kappa):>8}"
                         f"{f(a.spearman):>8}{f(a.consistency_rate):>9}")
        lines.append(f"unmatched: {self.unmatched_human} human rows, "
                     f"{self.unmatched_verdicts} verdicts (matched on id + dimension)")
        lines.append("Diagnostic only: these numbers never change a benchmark verdict.")
        return "\n".join(lines)


def cohen_kappa(
    first: Sequence[str], second: Sequence[str], labels: Sequence[str] = LABELS
) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e) of two raters over ``labels``; None if p_e = 1."""
    if len(first) != len(second):
        raise ConfigError("cohen_kappa needs two label lists of equal length")
    n = len(first)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(first, second, strict=True)) / n
    p_e = math.fsum((first.count(c) / n) * (second.count(c) / n) for c in labels)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def _ranks(x: Sequence[float]) -> list[float]:
    order = sorted(range(len(x)), key=lambda i: x[i])
    ranks = [0.0] * len(x)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ: Pearson correlation of average ranks; None if undefined."""
    if len(x) != len(y):
        raise ConfigError("spearman needs two sequences of equal length")
    if len(x) < 2:
        return None
    rx, ry = _ranks(x), _ranks(y)
    mx, my = math.fsum(rx) / len(rx), math.fsum(ry) / len(ry)
    cov = math.fsum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = math.fsum((a - mx) ** 2 for a in rx)
    vy = math.fsum((b - my) ** 2 for b in ry)
    if vx == 0 or vy == 0:
        return None
    return cov / math.sqrt(vx * vy)


def agreement(pairs: Sequence[tuple[HumanLabel, Verdict]]) -> Agreement:
    """:class:`Agreement` of matched (human label, verdict) pairs."""
    human = [h.winner for h, _ in pairs]
    judge = [v.winner for _, v in pairs]
    n = len(pairs)
    xs: list[float] = []
    ys: list[float] = []
    n_scored = 0
    for h, v in pairs:
        if h.score_a is not None and h.score_b is not None:
            n_scored += 1
            xs += [h.score_a, h.score_b]
            ys += [v.score_a, v.score_b]
    confusion = {r: {c: 0 for c in LABELS} for r in LABELS}
    for a, b in zip(human, judge, strict=True):
        confusion[a][b] += 1
    return Agreement(
        n=n,
        accuracy=(sum(a == b for a, b in zip(human, judge, strict=True)) / n) if n else None,
        kappa=cohen_kappa(human, judge),
        spearman=spearman(xs, ys),
        n_scored=n_scored,
        consistency_rate=(sum(v.consistent for _, v in pairs) / n) if n else None,
        confusion=confusion,
    )


def calibrate(
    human: Iterable[HumanLabel], verdicts: Mapping[tuple[str, str], Verdict]
) -> CalibrationReport:
    """Match ``human`` labels to ``verdicts`` keyed by ``(id, dimension)`` and measure."""
    pairs: list[tuple[HumanLabel, Verdict]] = []
    seen: set[tuple[str, str]] = set()
    unmatched_human = 0
    for h in human:
        key = (h.id, h.dimension)
        if key in seen:
            raise ConfigError(f"two human labels for id {h.id!r}, dimension {h.dimension!r}; "
                              "keep one row per pair (e.g. the raters' majority)")
        seen.add(key)
        v = verdicts.get(key)
        if v is None:
            unmatched_human += 1
        else:
            pairs.append((h, v))
    by_dim: dict[str, list[tuple[HumanLabel, Verdict]]] = {}
    for h, v in pairs:
        by_dim.setdefault(h.dimension, []).append((h, v))
    return CalibrationReport(
        overall=agreement(pairs),
        by_dimension={d: agreement(p) for d, p in sorted(by_dim.items())},
        unmatched_human=unmatched_human,
        unmatched_verdicts=len(verdicts) - len(pairs),
    )


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


def read_human_csv(path: str | os.PathLike[str]) -> list[HumanLabel]:
    """Read human labels (see the module docstring for the columns)."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            cols = set(reader.fieldnames or ())
            missing = {"id", "dimension", "winner"} - cols
            if missing:
                raise ConfigError(f"{path}: missing column(s) {', '.join(sorted(missing))}; "
                                  "need id,dimension,winner[,score_a,score_b]")
            out = []
            for line, row in enumerate(reader, start=2):
                where = f"{path}:{line}"
                winner = (row.get("winner") or "").strip().lower()
                if winner not in LABELS:
                    raise ConfigError(f"{where}: winner {row.get('winner')!r} is not a, b or tie")
                ident, dim = (row.get("id") or "").strip(), (row.get("dimension") or "").strip()
                if not ident or not dim:
                    raise ConfigError(f"{where}: id and dimension must not be empty")
                sa, sb = _score(row.get("score_a"), where), _score(row.get("score_b"), where)
                if (sa is None) != (sb is None):
                    raise ConfigError(f"{where}: give both score_a and score_b, or neither")
                out.append(HumanLabel(ident, dim, winner, sa, sb))
    except OSError as exc:
        raise ConfigError(f"cannot read human labels {path}: {exc.strerror}") from exc
    return out


def read_verdicts_jsonl(path: str | os.PathLike[str]) -> dict[tuple[str, str], Verdict]:
    """Read verdicts keyed by ``(id, dimension)`` (see the module docstring)."""
    out: dict[tuple[str, str], Verdict] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{line_no}"
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"{where}: not JSON ({exc.msg})") from None
                if not isinstance(obj, dict) or "id" not in obj:
                    raise ConfigError(f"{where}: each line needs an object with an 'id'")
                body = obj["verdict"] if isinstance(obj.get("verdict"), dict) else obj
                try:
                    v = Verdict.from_dict(body)
                except ConfigError as exc:
                    raise ConfigError(f"{where}: {exc}") from None
                key = (str(obj["id"]), v.dimension)
                if key in out:
                    raise ConfigError(f"{where}: a second verdict for {key}")
                out[key] = v
    except OSError as exc:
        raise ConfigError(f"cannot read verdicts {path}: {exc.strerror}") from exc
    return out


def calibrate_files(
    human_csv: str | os.PathLike[str], verdicts_jsonl: str | os.PathLike[str]
) -> CalibrationReport:
    """:func:`calibrate` over the two files."""
    return calibrate(read_human_csv(human_csv), read_verdicts_jsonl(verdicts_jsonl))
