"""Diagnostic metrics beside the verdict: win rates, control success, confusion, bootstrap CIs.

Pure functions of per-sample data; every result is a frozen dataclass. The verdict itself
comes only from :func:`vocencebench.decide.decide`; these numbers explain it.

* :func:`win_rates` — per dimension, the share of paired items where system b's
  desirability beats system a's (exact ties count one half);
* :func:`control_success` — per trait, the share of clips whose desirability is exactly 1
  (the voice came out as asked);
* :func:`confusion_matrices` — requested × measured label counts for every categorical and
  ordinal trait of the registry;
* :func:`bootstrap_ci` — a two-sided percentile bootstrap interval of a mean, on the same
  PCG64 index stream and exactly rounded means as the decision;
* :func:`cohen_kappa` — two raters' agreement beyond chance, from their label counts
  (:func:`label_counts`, :func:`kappa_of_counts`): the one κ of ``calibrate`` and
  ``judge agree``;
* :func:`level_response` — per trait and requested level, the n, mean and spread of the raw
  measured value (LUFS per requested loudness, F0 per requested pitch, phones/s per pace):
  a system that renders every request at one level is visibly flat, whatever its buckets say.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._numbers import is_finite_number, is_real_number
from .constants import BOOTSTRAP_N, BOOTSTRAP_SEED
from .decide import bootstrap_means
from .errors import ConfigError, ScoresError
from .schema import WINNERS
from .traits import NATURALNESS, TRAITS, TraitRegistry

__all__ = [
    "ConfidenceInterval",
    "ConfusionMatrix",
    "ControlSuccess",
    "LevelResponse",
    "LevelStats",
    "WinRate",
    "bootstrap_ci",
    "cohen_kappa",
    "confusion_matrices",
    "control_success",
    "kappa_of_counts",
    "label_counts",
    "level_response",
    "win_rates",
]


def _check_d(value: object, where: str) -> float:
    if not is_real_number(value):
        raise ScoresError(f"{where}: desirability {value!r} is not a number")
    v = float(value)
    if not (math.isfinite(v) and 0.0 <= v <= 1.0):
        raise ScoresError(f"{where}: desirability {v!r} is not in [0, 1]")
    return v


# --------------------------------------------------------------------------- win rate


@dataclass(frozen=True)
class WinRate:
    """Head-to-head on one dimension over the items both systems were scored on.

    ``rate`` is the win rate of system b, ``(wins_b + ties / 2) / n`` on [0, 1]; system a's
    is ``1 − rate``. ``n`` counts the paired items that had this dimension for both.
    """

    dimension: str
    wins_a: int
    wins_b: int
    ties: int
    n: int
    rate: float

    @property
    def rate_a(self) -> float:
        """Win rate of system a, ``(wins_a + ties / 2) / n``."""
        return (self.wins_a + self.ties / 2) / self.n


def win_rates(
    d_a: Sequence[Mapping[str, float]],
    d_b: Sequence[Mapping[str, float]],
    *,
    registry: TraitRegistry = TRAITS,
) -> dict[str, WinRate]:
    """Per-dimension win rate of system b over system a from paired per-sample ``d`` maps.

    ``d_a[i]`` and ``d_b[i]`` map dimension → desirability (0–1) for item i (e.g.
    ``SampleScore.d``). A dimension counts on item i only when both systems have it. Keys
    are in registry order (traits, then naturalness); unknown dimensions are an error.
    """
    if len(d_a) != len(d_b):
        raise ScoresError(f"unpaired samples: {len(d_a)} for a but {len(d_b)} for b")
    counts: dict[str, list[int]] = {}
    for i, (ra, rb) in enumerate(zip(d_a, d_b, strict=True)):
        for dim in list(ra) + [k for k in rb if k not in ra]:
            registry.check_dimension(dim)
            if dim not in ra or dim not in rb:
                continue
            va = _check_d(ra[dim], f"sample {i} system a {dim}")
            vb = _check_d(rb[dim], f"sample {i} system b {dim}")
            c = counts.setdefault(dim, [0, 0, 0])
            c[0 if va > vb else 1 if vb > va else 2] += 1
    out: dict[str, WinRate] = {}
    for dim in registry.dimensions():
        if dim in counts:
            wa, wb, ties = counts[dim]
            n = wa + wb + ties
            out[dim] = WinRate(dim, wa, wb, ties, n, (wb + ties / 2) / n)
    return out


# --------------------------------------------------------------------------- control success


@dataclass(frozen=True)
class ControlSuccess:
    """Share of clips that realised a trait exactly as requested: ``successes / n`` with a
    success meaning desirability d == 1."""

    trait: str
    successes: int
    n: int
    rate: float


def control_success(
    samples: Sequence[Mapping[str, float]], *, registry: TraitRegistry = TRAITS
) -> dict[str, ControlSuccess]:
    """Per-trait control success over clips' ``d`` maps (trait → desirability, 0–1).

    Naturalness is a quality dimension, not a controllable trait, and is left out; any
    other unknown name is an error listing the valid traits. Keys follow registry order.
    """
    counts: dict[str, list[int]] = {}
    for i, row in enumerate(samples):
        for name, value in row.items():
            if name == NATURALNESS:
                continue
            registry.get(name)
            v = _check_d(value, f"sample {i} {name}")
            c = counts.setdefault(name, [0, 0])
            c[0] += v == 1.0
            c[1] += 1
    return {
        name: ControlSuccess(name, counts[name][0], counts[name][1],
                             counts[name][0] / counts[name][1])
        for name in registry.names()
        if name in counts
    }


# --------------------------------------------------------------------------- confusion


@dataclass(frozen=True)
class ConfusionMatrix:
    """Counts of requested (rows) against measured (columns) labels for one trait.

    ``rows`` are the trait's values in registry order; ``columns`` the same values followed by
    any other label a probe reported (sorted), e.g. a classifier class outside the
    vocabulary. ``counts[r][c]`` is the number of clips. ``missing`` counts clips that
    requested a value but had no measurement.
    """

    trait: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    missing: int = 0

    @property
    def total(self) -> int:
        """Clips with both a request and a measurement."""
        return sum(sum(r) for r in self.counts)

    @property
    def accuracy(self) -> float:
        """Share of measured clips on the diagonal (measured == requested); NaN if none."""
        total = self.total
        diag = sum(self.counts[i][i] for i in range(len(self.rows)))
        return diag / total if total else float("nan")

    def count(self, requested: str, measured: str) -> int:
        """Clips that asked for ``requested`` and were measured as ``measured``."""
        try:
            return self.counts[self.rows.index(requested)][self.columns.index(measured)]
        except ValueError:
            raise ConfigError(
                f"{self.trait}: no cell ({requested!r}, {measured!r}); rows: "
                f"{', '.join(self.rows)}; columns: {', '.join(self.columns)}"
            ) from None


def confusion_matrices(
    requested: Sequence[Mapping[str, str]],
    measured: Sequence[Mapping[str, str]],
    *,
    registry: TraitRegistry = TRAITS,
) -> dict[str, ConfusionMatrix]:
    """Requested-vs-measured confusion for every categorical and ordinal trait.

    ``requested[i]`` is clip i's request (trait → value, e.g. ``Item.traits``) and
    ``measured[i]`` the labels the probes reported (trait → label, e.g. ``ProbeResult.label``).
    Every categorical/ordinal trait of ``registry`` gets a matrix, empty if never requested.
    A requested value outside the registry is an error; numeric and rubric traits are skipped.
    """
    if len(requested) != len(measured):
        raise ScoresError(
            f"{len(requested)} requests but {len(measured)} measurements; pass one per clip"
        )
    out: dict[str, ConfusionMatrix] = {}
    for trait in registry:
        if trait.scoring not in ("categorical", "ordinal"):
            continue
        pairs: list[tuple[str, str]] = []
        missing = 0
        for req, got in zip(requested, measured, strict=True):
            if trait.name not in req:
                continue
            r = trait.check_value(str(req[trait.name]))
            if trait.name not in got or got[trait.name] is None:
                missing += 1
                continue
            pairs.append((r, str(got[trait.name])))
        extra = sorted({m for _, m in pairs if m not in trait.values})
        columns = (*trait.values, *extra)
        col = {c: j for j, c in enumerate(columns)}
        grid = [[0] * len(columns) for _ in trait.values]
        for r, m in pairs:
            grid[trait.values.index(r)][col[m]] += 1
        out[trait.name] = ConfusionMatrix(
            trait=trait.name,
            rows=trait.values,
            columns=columns,
            counts=tuple(tuple(row) for row in grid),
            missing=missing,
        )
    return out


# --------------------------------------------------------------------------- rater agreement

def label_counts(first: Sequence[str], second: Sequence[str],
                 labels: Sequence[str] = WINNERS) -> npt.NDArray[np.int64]:
    """The ``len(labels)`` × ``len(labels)`` counts of two raters' labels on the same units:
    row = the first rater's label, column = the second's. Unequal lengths, or a label outside
    ``labels``, are a ConfigError."""
    if len(first) != len(second):
        raise ConfigError(f"two raters need one label per unit each, got {len(first)} and "
                          f"{len(second)} labels")
    index = {label: i for i, label in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for u, v in zip(first, second, strict=True):
        if u not in index or v not in index:
            bad = u if u not in index else v
            raise ConfigError(f"label {bad!r} is not one of {', '.join(map(repr, labels))}")
        m[index[u], index[v]] += 1
    return m


def kappa_of_counts(counts: npt.ArrayLike) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e) of a square matrix of label counts: p_o = trace / n,
    p_e = Σᵢ rowᵢ · columnᵢ / n² (integer sums, so each share is rounded once). None when
    n = 0 or p_e = 1 (both raters used one and the same label throughout: κ is undefined)."""
    m = np.asarray(counts)
    n = int(m.sum())
    if n == 0:
        return None
    po = float(np.trace(m)) / n
    pe = float(np.dot(m.sum(axis=1), m.sum(axis=0))) / (n * n)
    if pe >= 1.0:
        return None
    return (po - pe) / (1.0 - pe)


def cohen_kappa(first: Sequence[str], second: Sequence[str],
                labels: Sequence[str] = WINNERS) -> float | None:
    """Cohen's κ of two raters' labels (over ``labels``) on the same units; None where it is
    undefined (:func:`kappa_of_counts`)."""
    return kappa_of_counts(label_counts(first, second, labels))


# --------------------------------------------------------------------------- bootstrap CI


@dataclass(frozen=True)
class ConfidenceInterval:
    """Percentile bootstrap interval of a mean, in the values' own units.

    ``mean`` is the exactly rounded sample mean; ``low``/``high`` the
    ``50·(1 − level)``-th and ``50·(1 + level)``-th percentiles (linear interpolation) of
    ``n_boot`` resampled means drawn with ``seed``.
    """

    mean: float
    low: float
    high: float
    level: float
    n: int
    n_boot: int
    seed: int


def bootstrap_ci(
    values: Sequence[float] | npt.NDArray[np.float64],
    *,
    level: float = 0.95,
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> ConfidenceInterval:
    """Two-sided percentile bootstrap CI of ``mean(values)``.

    Uses :func:`vocencebench.decide.bootstrap_means` (same PCG64 raw index stream, same
    ``fsum`` means), so for the paired differences δ and ``level=0.90`` the lower end is
    exactly the decision's LCB. Percentile positions are rounded to 10 decimals so that
    ``level=0.90`` asks for exactly the 5th and 95th percentiles.
    """
    if not (is_real_number(level) and 0.0 < level < 1.0):
        raise ConfigError(f"level {level!r} must be strictly between 0 and 1, e.g. 0.95")
    means = bootstrap_means(values, n_boot=n_boot, seed=seed)
    vals = [float(v) for v in values]
    q_low = round(50.0 * (1.0 - level), 10)
    q_high = round(50.0 * (1.0 + level), 10)
    low = float(np.percentile(means, q_low))
    high = float(np.percentile(means, q_high))
    return ConfidenceInterval(
        mean=math.fsum(vals) / len(vals),
        low=low,
        high=high,
        level=float(level),
        n=len(vals),
        n_boot=n_boot,
        seed=seed,
    )


@dataclass(frozen=True)
class LevelStats:
    """The raw measured values of one trait at one requested level.

    ``n``: clips with a measured value; ``unmeasurable``: clips whose result had no value
    (excluded from the statistics); ``mean``, ``sd`` (sample standard deviation, 0 for one
    value), ``median``, ``min``, ``max``: in ``unit``; None when n = 0. For pitch, ``mean_st``
    is the mean offset in semitones from the requested speaker's reference F0 (the probe's
    ``detail["semitones"]``), when the results carry it.
    """

    level: str
    n: int
    unmeasurable: int
    mean: float | None
    sd: float | None
    median: float | None
    min: float | None
    max: float | None
    mean_st: float | None = None


@dataclass(frozen=True)
class LevelResponse:
    """How one trait's measured value moves with the requested level (levels in the order
    given by the registry's vocabulary, else sorted)."""

    trait: str
    unit: str
    levels: tuple[LevelStats, ...]

    def get(self, level: str) -> LevelStats:
        for s in self.levels:
            if s.level == level:
                return s
        raise KeyError(level)


def level_response(
    pairs: Sequence[tuple[Mapping[str, str], Mapping[str, object]]],
    traits: Sequence[str] = ("loudness", "pitch", "pace"),
    *,
    registry: TraitRegistry = TRAITS,
) -> dict[str, LevelResponse]:
    """Per trait, per requested level: statistics of the raw measured value.

    ``pairs``: (requested traits of an item, {trait: ProbeResult} measured on its clip), one
    per clip of one system. Results whose ``value`` is not a finite number (UNMEASURABLE,
    value None) are counted in ``unmeasurable`` and left out. A trait with no result at all
    is skipped for that clip. Returns {trait: LevelResponse} for the traits that occur.
    """
    values: dict[str, dict[str, list[float]]] = {}
    semis: dict[str, dict[str, list[float]]] = {}
    missing: dict[str, dict[str, int]] = {}
    units: dict[str, str] = {}
    for requested, results in pairs:
        for t in traits:
            r = results.get(t)
            if r is None or t not in requested:
                continue
            level = str(requested[t])
            values.setdefault(t, {}).setdefault(level, [])
            missing.setdefault(t, {}).setdefault(level, 0)
            v = getattr(r, "value", None)
            if not is_finite_number(v):
                missing[t][level] += 1
                continue
            units.setdefault(t, str(getattr(r, "unit", "")))
            values[t][level].append(float(v))
            st = (getattr(r, "detail", None) or {}).get("semitones")
            if is_finite_number(st):
                semis.setdefault(t, {}).setdefault(level, []).append(float(st))
    out: dict[str, LevelResponse] = {}
    for t in traits:
        if t not in values:
            continue
        try:
            vocab = list(registry.get(t).values or ())
        except Exception:
            vocab = []
        order = [v for v in vocab if v in values[t]] + sorted(
            v for v in values[t] if v not in vocab)
        stats = []
        for level in order:
            xs = values[t][level]
            st = semis.get(t, {}).get(level, [])
            if xs:
                arr = np.asarray(xs, dtype=np.float64)
                mean = math.fsum(xs) / len(xs)
                sd = (math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
                      if len(xs) > 1 else 0.0)
                stats.append(LevelStats(level, len(xs), missing[t][level], mean, sd,
                                        float(np.median(arr)), float(arr.min()),
                                        float(arr.max()),
                                        math.fsum(st) / len(st) if st else None))
            else:
                stats.append(LevelStats(level, 0, missing[t][level], None, None, None, None,
                                        None, None))
        out[t] = LevelResponse(t, units.get(t, ""), tuple(stats))
    return out
