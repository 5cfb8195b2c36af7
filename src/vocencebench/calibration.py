"""Judge-vs-human agreement and the human verdict: a diagnostic, never an input to the
ranking.

Inputs (formats documented in ``docs/validation.md``):

* human labels, CSV with a header: ``id``, ``dimension``, ``winner`` (``a``, ``b`` or ``tie``)
  and optionally ``score_a``, ``score_b`` (the rater's 0–3 scores; blank when not given) and
  ``rater``. One file or several (one per rater, as ``vocencebench listen`` writes them); a
  file without a ``rater`` column is one rater named after the file. In a file with a
  ``rater`` column a later row for the same rater, id and dimension supersedes an earlier one
  (the append-only log of ``listen --serve``); in one without, a repeated row is an error.
  The listening page's own export names the clip on the left or right, not a system: it is
  read with its test's key (``key.json``) and refused without it (``_util/human_labels.py``);
* judge verdicts: a run directory (its ``run.json``: every pair's verdicts, the labels and
  the run's winner) or JSON Lines, one object per line with ``id`` and the
  :class:`~vocencebench.schema.Verdict` fields, at top level or under ``"verdict"``.

Only labels of the run's items and dimensions count; the others are left out of every
number and named (:attr:`CalibrationReport.left_out`). Rows are matched on
``(id, dimension)``. Reported per dimension and overall
(:class:`Agreement`): agreement of the 3-way winner with a seeded percentile-bootstrap
interval over items, Cohen's κ over {a, b, tie}, Spearman's ρ between human and judge
per-clip scores (average ranks for ties), and the judge's order-swap consistency rate; with
two or more raters, Krippendorff's α (nominal) between the raters (:func:`krippendorff_alpha`);
and the human head-to-head (:func:`human_head_to_head`): the paired-bootstrap rule of
:func:`vocencebench.decide.decide` applied to the raters' preferences. A statistic that is
undefined for the data is None, never a made-up number.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._util.human_labels import (
    LISTENING_DIMENSIONS,
    HumanLabel,
    ListeningKey,
    read_human_csv,
    read_listening_key,
)
from ._util.text import terminal_safe
from .constants import BOOTSTRAP_N, BOOTSTRAP_SEED, CALIBRATION_BOOTSTRAP_N, CALIBRATION_CI
from .errors import ConfigError, VocenceError
from .schema import SCHEMA_VERSION, WINNERS, Decision, Verdict, check_schema_version

if TYPE_CHECKING:
    from .pair import PairResult

__all__ = [
    "LABELS",
    "Agreement",
    "CalibrationReport",
    "HumanLabel",
    "HumanVerdict",
    "JudgeSource",
    "ListeningKey",
    "agreement",
    "calibrate",
    "calibrate_files",
    "cohen_kappa",
    "human_head_to_head",
    "judge_source",
    "krippendorff_alpha",
    "preference_scores",
    "read_human_csv",
    "read_judge",
    "read_listening_key",
    "read_verdicts_jsonl",
    "spearman",
]

#: The winner labels compared (order of the confusion matrix): :data:`~vocencebench.schema.WINNERS`.
LABELS: tuple[str, str, str] = WINNERS


#: A preference as the paired score of each side (:func:`preference_scores`).
PREFERENCE = {"a": (1.0, 0.0), "b": (0.0, 1.0), "tie": (0.5, 0.5)}


@dataclass(frozen=True)
class Agreement:
    """Agreement of the judge with humans over ``n`` matched pairs.

    ``accuracy`` (fraction, 0–1) and ``kappa`` (Cohen's κ, −1–1) of the winner;
    ``spearman`` (ρ, −1–1) of per-clip scores over ``n_scored`` pairs (2 clips each);
    ``consistency_rate`` the fraction of verdicts whose two orders agreed;
    ``confusion[human][judge]`` counts. Undefined statistics are None. With several raters
    ``n`` counts (rater, item) rows and ``accuracy`` is the mean over ``items`` of the share of
    raters agreeing with the judge (each item weighs the same; one rater: the plain share);
    ``ci_low``/``ci_high`` bound it (percentile bootstrap over items, ``ci_level``).
    """

    n: int
    accuracy: float | None
    kappa: float | None
    spearman: float | None
    n_scored: int
    consistency_rate: float | None
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)
    items: int = 0
    ci_low: float | None = None
    ci_high: float | None = None
    ci_level: float = CALIBRATION_CI


@dataclass(frozen=True)
class HumanVerdict:
    """The raters' head-to-head on one dimension (or ``"ALL"``): the decision of
    :func:`vocencebench.decide.decide` on the per-item preference scores, and whether it
    names the run's winner (``same_as_run``; None when the run's winner is not known)."""

    dimension: str
    decision: Decision | None
    run_winner: str | None
    same_as_run: bool | None

    def deciding_numbers(self) -> str:
        """The bound and margin that decided it, as the run's reason states them: the
        incumbent's win is read from LCB(a−b) against margin(b), anything else from
        LCB(b−a) against margin(a)."""
        d = self.decision
        if d is None:
            return "n/a"
        a, b = d.labels
        if d.winner == a:
            return f"LCB({a}−{b}) {d.lcb_reverse:+.3f} vs margin({b}) {d.margin_reverse:.3f}"
        return f"LCB({b}−{a}) {d.lcb:+.3f} vs margin({a}) {d.margin:.3f}"


@dataclass(frozen=True)
class CalibrationReport:
    """Overall and per-dimension :class:`Agreement`, plus what could not be matched."""

    overall: Agreement
    by_dimension: dict[str, Agreement]
    unmatched_human: int
    unmatched_verdicts: int
    raters: tuple[str, ...] = ()
    inter_rater: dict[str, float | None] = field(default_factory=dict)
    human_verdicts: dict[str, HumanVerdict] = field(default_factory=dict)
    labels: tuple[str, str] = ("a", "b")
    #: Dimensions the human labels name that are not the run's (a typo such as ``tonee`` or
    #: ``Tone``); empty when nothing says what the run's dimensions are (no verdict at all).
    unknown_dimensions: tuple[str, ...] = ()
    #: Human rows left out of every number: their id is not an item of the run, or their
    #: dimension is not the run's (``unknown_ids``, ``unknown_dimensions``).
    left_out: int = 0
    unknown_ids: tuple[str, ...] = ()

    def left_out_line(self) -> str | None:
        """The WARNING naming what was left out (raw text: the caller escapes it), or None."""
        if not self.left_out:
            return None

        def first(names: Sequence[str]) -> str:
            more = f" and {len(names) - 5} more" if len(names) > 5 else ""
            return ", ".join(repr(x) for x in names[:5]) + more

        why = ([f"id(s) not in the run: {first(self.unknown_ids)}"] if self.unknown_ids
               else []) + ([f"dimension(s) not the run's: {first(self.unknown_dimensions)}"]
                           if self.unknown_dimensions else [])
        return (f"WARNING: {self.left_out} human label row(s) left out of every number; "
                + "; ".join(why))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "overall": asdict(self.overall),
            "by_dimension": {d: asdict(a) for d, a in self.by_dimension.items()},
            "unmatched_human": self.unmatched_human,
            "unmatched_verdicts": self.unmatched_verdicts,
            "unknown_dimensions": list(self.unknown_dimensions),
            "left_out": self.left_out,
            "unknown_ids": list(self.unknown_ids),
            "raters": list(self.raters),
            "inter_rater_alpha": dict(self.inter_rater),
            "labels": list(self.labels),
            "human_head_to_head": {
                d: {"winner": None if v.decision is None else v.decision.winner,
                    "decision": None if v.decision is None else v.decision.to_dict(),
                    "run_winner": v.run_winner, "same_as_run": v.same_as_run}
                for d, v in self.human_verdicts.items()},
        }

    def rows(self) -> list[tuple[str, Agreement, float | None, HumanVerdict | None]]:
        """Per dimension then ``ALL``: (name, agreement, inter-rater α, human verdict)."""
        names = [*self.by_dimension, *(d for d in self.human_verdicts
                                       if d not in self.by_dimension and d != "ALL")]
        out = [(d, self.by_dimension.get(d, agreement([])), self.inter_rater.get(d),
                self.human_verdicts.get(d)) for d in names]
        out.append(("ALL", self.overall, self.inter_rater.get("ALL"),
                    self.human_verdicts.get("ALL")))
        return out

    def summary(self) -> str:
        """A small text table (diagnostic only)."""

        def f(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.3f}"

        raters = ", ".join(terminal_safe(r) for r in self.raters) or "none"
        lines = [f"raters: {len(self.raters)} ({raters})",
                 f"{'dimension':<14}{'n':>5}{'acc':>8}{'95% CI':>16}{'kappa':>8}{'rho':>8}"
                 f"{'consist':>9}{'alpha':>8}  human verdict"]
        for name, a, alpha, hv in self.rows():
            ci = ("n/a" if a.ci_low is None or a.ci_high is None
                  else f"[{a.ci_low:.3f}, {a.ci_high:.3f}]")
            lines.append(f"{terminal_safe(name):<14}{a.n:>5}{f(a.accuracy):>8}{ci:>16}"
                         f"{f(a.kappa):>8}{f(a.spearman):>8}{f(a.consistency_rate):>9}"
                         f"{f(alpha):>8}  {_verdict_line(hv)}")
        lines.append(f"unmatched: {self.unmatched_human} human rows, "
                     f"{self.unmatched_verdicts} verdicts (matched on id + dimension)")
        warning = self.left_out_line()
        if warning is not None:
            lines.append(terminal_safe(warning))
        if self.overall.n == 0 and self.unmatched_verdicts == 0:
            lines.append("no judge verdict at all: agreement needs a run made with a judge "
                         "(--judge); the human verdict column needs none")
        lines.append("Diagnostic only: these numbers never change a benchmark verdict.")
        return "\n".join(lines)


def _verdict_line(hv: HumanVerdict | None) -> str:
    if hv is None or hv.decision is None:
        return "n/a"
    d = hv.decision
    same = ("" if hv.same_as_run is None else
            " = the run's" if hv.same_as_run else f" ≠ the run's ({terminal_safe(hv.run_winner)})")
    return (f"{terminal_safe(d.winner)} (n={d.n}, {terminal_safe(hv.deciding_numbers())})"
            f"{same}")


def cohen_kappa(
    first: Sequence[str], second: Sequence[str], labels: Sequence[str] = LABELS
) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e) of two raters over ``labels``; None if p_e = 1.
    The one κ of ``calibrate`` and ``judge agree``: :func:`vocencebench.metrics.cohen_kappa`
    (loaded on first use, so that this module stays free of numpy)."""
    from .metrics import cohen_kappa as kappa

    return kappa(first, second, labels)


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


def agreement(
    pairs: Sequence[tuple[HumanLabel, Verdict]],
    *,
    n_boot: int = CALIBRATION_BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
    level: float = CALIBRATION_CI,
) -> Agreement:
    """:class:`Agreement` of matched (human label, verdict) pairs; the interval is seeded
    (``seed``, ``n_boot`` resamples of the items) and pure."""
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
    per_item: dict[str, list[float]] = {}
    for h, v in pairs:
        per_item.setdefault(h.id, []).append(1.0 if h.winner == v.winner else 0.0)
    shares = [math.fsum(x) / len(x) for x in per_item.values()]
    low = high = None
    if len(shares) >= 2:
        from .metrics import bootstrap_ci

        ci = bootstrap_ci(shares, level=level, n_boot=n_boot, seed=seed)
        low, high = ci.low, ci.high
    return Agreement(
        n=n,
        accuracy=(math.fsum(shares) / len(shares)) if shares else None,
        kappa=cohen_kappa(human, judge),
        spearman=spearman(xs, ys),
        n_scored=n_scored,
        consistency_rate=_consistency(pairs),
        confusion=confusion,
        items=len(shares),
        ci_low=low,
        ci_high=high,
        ci_level=level,
    )


def _consistency(pairs: Sequence[tuple[HumanLabel, Verdict]]) -> float | None:
    """The share of matched verdicts (one per item and dimension, however many raters
    labelled it) whose two presentation orders named the same winner."""
    by_verdict = {(h.id, h.dimension): v.consistent for h, v in pairs}
    return sum(by_verdict.values()) / len(by_verdict) if by_verdict else None


def krippendorff_alpha(units: Iterable[Sequence[str]]) -> float | None:
    """Krippendorff's α for nominal labels: ``units`` are the labels the raters gave each
    unit (an item and a dimension); units with fewer than two labels are not pairable and
    are left out. α = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c · n_k over the coincidence
    matrix o (each unit's ordered pairs of labels weighted 1 / (m_u − 1)); None when there
    is no pairable unit or every label is the same (no disagreement is possible)."""
    o: dict[tuple[str, str], float] = {}
    for labels in units:
        m = len(labels)
        if m < 2:
            continue
        for i, c in enumerate(labels):
            for j, k in enumerate(labels):
                if i != j:
                    o[(c, k)] = o.get((c, k), 0.0) + 1.0 / (m - 1)
    if not o:
        return None
    n_c: dict[str, float] = {}
    for (c, _), w in o.items():
        n_c[c] = n_c.get(c, 0.0) + w
    n = math.fsum(n_c.values())
    observed = math.fsum(w for (c, k), w in o.items() if c != k)
    expected = math.fsum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
    if expected == 0:
        return None
    return 1.0 - (n - 1.0) * observed / expected


def preference_scores(labels: Sequence[HumanLabel]) -> tuple[float, float]:
    """The paired score (S_a, S_b) of one item from its raters' preferences: each rater's
    winner a → (1, 0), b → (0, 1), tie → (½, ½), averaged over the raters (and over the
    dimensions when ``labels`` spans several). S_a + S_b = 1, so δ = S_b − S_a runs from −1
    (everyone preferred a) to +1."""
    if not labels:
        raise ConfigError("preference_scores needs at least one label")
    sa = math.fsum(PREFERENCE[h.winner][0] for h in labels) / len(labels)
    return sa, 1.0 - sa


def human_head_to_head(
    human: Sequence[HumanLabel],
    *,
    labels: tuple[str, str] = ("a", "b"),
    run_winner: str | None = None,
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, HumanVerdict]:
    """The raters' verdict per dimension and over all of them (``"ALL"``: per item, the mean
    over its labelled dimensions of :func:`preference_scores`), decided by exactly the run's
    rule, :func:`vocencebench.decide.decide` (same resamples, seed and margin), on the items
    the raters labelled."""
    from .decide import decide

    by_dim: dict[str, dict[str, list[HumanLabel]]] = {}
    for h in human:
        by_dim.setdefault(h.dimension, {}).setdefault(h.id, []).append(h)
    out: dict[str, HumanVerdict] = {}

    def verdict(name: str, items: Mapping[str, Sequence[Sequence[HumanLabel]]]) -> None:
        sa, sb = [], []
        for groups in items.values():
            # Each dimension of the item weighs the same, whatever its number of raters.
            per_dim = [preference_scores(g)[0] for g in groups]
            a = math.fsum(per_dim) / len(per_dim)
            sa.append(a)
            sb.append(1.0 - a)
        d = decide(sa, sb, labels=labels, n_boot=n_boot, seed=seed) if sa else None
        same = None if run_winner is None or d is None else d.winner == run_winner
        out[name] = HumanVerdict(name, d, run_winner, same)

    for dim in sorted(by_dim):
        verdict(dim, {i: [g] for i, g in by_dim[dim].items()})
    every: dict[str, list[list[HumanLabel]]] = {}
    for dim in sorted(by_dim):
        for i, g in by_dim[dim].items():
            every.setdefault(i, []).append(g)
    if every:
        verdict("ALL", every)
    return out


def calibrate(
    human: Iterable[HumanLabel],
    verdicts: Mapping[tuple[str, str], Verdict],
    *,
    labels: tuple[str, str] = ("a", "b"),
    run_winner: str | None = None,
    items: Iterable[str] | None = None,
    dimensions: Iterable[str] | None = None,
    n_boot: int = CALIBRATION_BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
    level: float = CALIBRATION_CI,
) -> CalibrationReport:
    """Match ``human`` labels to ``verdicts`` keyed by ``(id, dimension)`` and measure:
    agreement per dimension and overall, Krippendorff's α between raters, and the human
    head-to-head (``labels`` and ``run_winner``: the run's, to say whether the raters name
    the same winner). ``items`` and ``dimensions``: the run's (default: those of
    ``verdicts``, plus the listening test's questions); a label of another id or dimension
    is left out of every number and named. A rater labelling the same id and dimension
    twice is an error."""
    rows = list(human)
    seen: set[tuple[str, str, str]] = set()
    for h in rows:
        key = (h.rater, h.id, h.dimension)
        if key in seen:
            who = f"rater {h.rater!r}: " if h.rater else ""
            raise ConfigError(f"{who}two human labels for id {h.id!r}, dimension "
                              f"{h.dimension!r}; keep one row per pair and rater")
        seen.add(key)
    # With no verdict and no run, nothing says which ids and dimensions are the run's.
    known_ids = (set(items) if items is not None
                 else {i for i, _ in verdicts} if verdicts else None)
    known_dims = (set(dimensions) if dimensions is not None
                  else {d for _, d in verdicts} | set(LISTENING_DIMENSIONS) if verdicts
                  else None)
    bad_ids = sorted({h.id for h in rows} - known_ids) if known_ids is not None else []
    bad_dims = (sorted({h.dimension for h in rows} - known_dims) if known_dims is not None
                else [])
    rows_all, rows = rows, [h for h in rows if h.id not in set(bad_ids)
                            and h.dimension not in set(bad_dims)]
    pairs: list[tuple[HumanLabel, Verdict]] = []
    unmatched_human = 0
    matched: set[tuple[str, str]] = set()
    for h in rows:
        v = verdicts.get((h.id, h.dimension))
        if v is None:
            unmatched_human += 1
        else:
            pairs.append((h, v))
            matched.add((h.id, h.dimension))
    by_dim: dict[str, list[tuple[HumanLabel, Verdict]]] = {}
    for h, v in pairs:
        by_dim.setdefault(h.dimension, []).append((h, v))
    kw: dict[str, Any] = {"n_boot": n_boot, "seed": seed, "level": level}
    raters = tuple(sorted({h.rater for h in rows}))
    alpha: dict[str, float | None] = {}
    if len(raters) >= 2:
        units: dict[tuple[str, str], list[str]] = {}
        for h in rows:
            units.setdefault((h.dimension, h.id), []).append(h.winner)
        for dim in sorted({d for d, _ in units}):
            alpha[dim] = krippendorff_alpha([u for (d, _), u in units.items() if d == dim])
        alpha["ALL"] = krippendorff_alpha(units.values())
    # The overall agreement weighs each (item, dimension) the same.
    overall_pairs = [(HumanLabel(f"{h.id}\x1f{h.dimension}", h.dimension, h.winner, h.score_a,
                                 h.score_b, h.rater), v) for h, v in pairs]
    return CalibrationReport(
        overall=agreement(overall_pairs, **kw),
        by_dimension={d: agreement(p, **kw) for d, p in sorted(by_dim.items())},
        unmatched_human=unmatched_human,
        unmatched_verdicts=len(set(verdicts) - matched),
        unknown_dimensions=tuple(bad_dims),
        raters=raters,
        inter_rater=alpha,
        human_verdicts=human_head_to_head(rows, labels=labels, run_winner=run_winner),
        labels=labels,
        left_out=len(rows_all) - len(rows),
        unknown_ids=tuple(bad_ids),
    )


@dataclass(frozen=True)
class JudgeSource:
    """The judge's side of a calibration: ``verdicts`` keyed by (id, dimension), the run's
    ``labels`` and ``winner`` (None when read from JSON Lines, which carry neither)."""

    verdicts: dict[tuple[str, str], Verdict]
    labels: tuple[str, str] = ("a", "b")
    winner: str | None = None
    #: The run's item ids and dimensions (None: JSON Lines, where the verdicts say them).
    items: frozenset[str] | None = None
    dimensions: frozenset[str] | None = None


def judge_source(pairs: Iterable[PairResult], labels: tuple[str, str], winner: str
                 ) -> JudgeSource:
    """The :class:`JudgeSource` of a run's pairs: every verdict, and the run's items and
    dimensions (those judged or scored, and the listening test's questions)."""
    out: dict[tuple[str, str], Verdict] = {}
    items: set[str] = set()
    dims: set[str] = set(LISTENING_DIMENSIONS)
    for pr in pairs:
        items.add(pr.item.id)
        dims |= set(pr.verdicts) | set(pr.a.d) | set(pr.b.d)
        for dim, v in pr.verdicts.items():
            out[(pr.item.id, dim)] = v
    return JudgeSource(out, labels, winner, frozenset(items), frozenset(dims))


def read_judge(source: str | os.PathLike[str]) -> JudgeSource:
    """The judge's verdicts from a run directory (``run.json``: every pair's verdicts, with
    the run's labels and winner) or from a JSON Lines file (:func:`read_verdicts_jsonl`)."""
    p = Path(source)
    if not p.is_dir():
        return JudgeSource(read_verdicts_jsonl(p))
    from .pair import PairResult

    f = p / "run.json"
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{p} is not a run directory: {f} is missing") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{f} cannot be read: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != "head2head":
        raise ConfigError(f"{f} is not a vocencebench run record (kind 'head2head')")
    check_schema_version(data.get("schema_version", SCHEMA_VERSION), str(f))
    try:
        labels = (str(data["labels"][0]), str(data["labels"][1]))
        winner = str(data["decision"]["winner"])
        return judge_source([PairResult.from_dict(raw) for raw in data["pairs"]], labels,
                            winner)
    except VocenceError as exc:
        raise ConfigError(f"{f} is not a readable run record: {str(exc)[:300]}") from None
    except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise ConfigError(f"{f} is not a complete run record ({type(exc).__name__}: "
                          f"{exc})") from None


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
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason})") from None
    return out


def calibrate_files(
    human_csv: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    verdicts: str | os.PathLike[str],
    *,
    keys: Sequence[str | os.PathLike[str]] = (),
    n_boot: int = CALIBRATION_BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
    level: float = CALIBRATION_CI,
) -> CalibrationReport:
    """:func:`calibrate` over one or several human-label files (one rater each, or with a
    ``rater`` column, or a listening page's export) and the judge's verdicts: a run
    directory or a JSON Lines file (:func:`read_judge`). ``keys``: listening tests' key
    files or folders, for page exports whose folder does not hold their key."""
    files = [human_csv] if isinstance(human_csv, str | os.PathLike) else list(human_csv)
    if not files:
        raise ConfigError("calibrate needs at least one human-label file")
    known = [read_listening_key(k) for k in keys]
    human = [h for f in files for h in read_human_csv(f, known)]
    judge = read_judge(verdicts)
    return calibrate(human, judge.verdicts, labels=judge.labels, run_winner=judge.winner,
                     items=judge.items, dimensions=judge.dimensions, n_boot=n_boot,
                     seed=seed, level=level)
