"""Judge migration: re-judge a seeded subset of a finished run with another judge.

:func:`agree` loads a saved run (``run.json``), reads its clips back from the run's cache
(the judge hears exactly what the run's judge heard: the clip sha256 is checked against the
run's analysis), asks the new judge the same questions (same dimensions, orders, votes,
combined or separate calls) on a seeded subset of the judged items, and reports:

* per judged dimension, the two judges' agreement on every single judgement (item, order,
  vote): raw agreement and Cohen's κ with a seeded bootstrap interval
  (:func:`vocencebench.judge_audit.agreement`);
* the verdict each judge implies on that subset (the run's own rule,
  :func:`vocencebench.scores.decide_pairs`, over the subset's composites);
* whether the run's headline verdict would change if the new judge's answers replaced the old
  ones on the subset (every other item as the run scored it).

The subset is the first ``items`` judged items in the order of
:func:`vocencebench.early_stopping.judge_order` under ``seed`` (default
:data:`~vocencebench.constants.AGREE_SEED`), so the same command re-judges the same items.
The new judge keeps no cache here: asking the same judge again measures its test–retest
agreement, which a cache would hide.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._numbers import is_real_number, is_whole_number
from ._util.text import terminal_safe
from .audio import Clip
from .cache import Cache, clip_key
from .constants import AGREE_BOOTSTRAP_N, AGREE_ITEMS, AGREE_SEED
from .early_stopping import judge_order
from .errors import ConfigError, ScoresError, VocenceError
from .judge_audit import Agreement, agreement
from .pair import PairResult, combine, judge_failure, judge_jobs, judge_pair, read_verdicts
from .result import Head2Head, load_run
from .schema import Decision, Verdict
from .scores import decide_pairs

__all__ = ["AgreeResult", "agree"]


@dataclass(frozen=True)
class AgreeResult:
    """What :func:`agree` found. ``items`` are the re-judged items (ids, in the seeded
    order); ``agreements`` one per judged dimension; ``subset_old`` / ``subset_new`` the
    verdicts each judge implies on those items; ``headline_old`` the run's verdict,
    ``headline_new`` the verdict with the new answers on the subset (None, with ``note``,
    when it cannot be decided); ``failed`` maps items the new judge could not judge to why."""

    run: str
    old_model: str
    new_model: str
    seed: int
    eligible: int
    items: tuple[str, ...]
    agreements: tuple[Agreement, ...]
    subset_old: Decision | None
    subset_new: Decision | None
    headline_old: Decision
    headline_new: Decision | None
    calls: int | None = None
    cost_usd: float | None = None
    failed: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def headline_changes(self) -> bool | None:
        """True when the new answers on the subset would change the run's winner (None:
        the new headline could not be decided)."""
        if self.headline_new is None:
            return None
        return self.headline_new.winner != self.headline_old.winner

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run, "old_model": self.old_model, "new_model": self.new_model,
            "seed": self.seed, "eligible_items": self.eligible, "items": list(self.items),
            "agreement": [a.to_dict() for a in self.agreements],
            "subset_verdict": {"old": _dec(self.subset_old), "new": _dec(self.subset_new)},
            "headline": {"old": _dec(self.headline_old), "new": _dec(self.headline_new),
                         "changes": self.headline_changes},
            "calls": self.calls, "cost_usd": self.cost_usd, "failed": dict(self.failed),
            "notes": list(self.notes),
        }

    def lines(self) -> list[str]:
        """A plain-text account (what ``vocencebench judge agree`` prints)."""
        out = [f"judge agree: {self.run}: the run's judge {self.old_model} vs {self.new_model} "
               f"on {len(self.items)} of {self.eligible} judged items (seed {self.seed})", "",
               f"{'dimension':<13} {'answers':>7} {'agreement':>9}  kappa [95% interval]"]
        for a in self.agreements:
            k = "undefined" if a.kappa is None else f"{a.kappa:.3f}"
            ci = ("" if a.low is None or a.high is None
                  else f" [{a.low:.3f}, {a.high:.3f}]")
            raw = "—" if a.raw is None else f"{100 * a.raw:.1f}%"
            out.append(f"{a.dimension:<13} {a.n:>7} {raw:>9}  {k}{ci}")
        out.append("")
        out.append(f"verdict on these items: run's judge {_word(self.subset_old)}; "
                   f"new judge {_word(self.subset_new)}")
        if self.headline_new is None:
            change = "cannot be decided (see the notes)"
        elif self.headline_changes:
            change = f"CHANGES to {_word(self.headline_new)}"
        else:
            change = f"unchanged ({_word(self.headline_new)})"
        out.append(f"headline verdict {_word(self.headline_old)}; with the new judge's "
                   f"answers on these items: {change}")
        if self.calls is not None:
            cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
            out.append(f"new judge: {self.calls} call(s), cost {cost}")
        out += [f"not judged by the new judge: {i}: {why}" for i, why in self.failed.items()]
        out += [f"note: {n}" for n in self.notes]
        # The run's model name, its path and the judge's failure reasons come from outside.
        return [terminal_safe(x) for x in out]


def _dec(d: Decision | None) -> dict[str, Any] | None:
    return d.to_dict() if d is not None else None


def _word(d: Decision | None) -> str:
    if d is None:
        return "—"
    return "tie" if d.winner == "tie" else f"{d.winner}" + (
        "" if d.winner == "incomplete" else " wins")


def _clip(store: Cache, system_id: str, p: PairResult, side: str) -> Clip | None:
    an = p.analysis_a if side == "a" else p.analysis_b
    hit = store.get_bytes("clips", clip_key(system_id, p.item))
    if hit is None or hashlib.sha256(hit[0]).hexdigest() != an.sha256:
        return None
    return Clip.from_bytes(hit[0], name=f"{side}/{p.item.id}")


def _labels_of(v: Verdict) -> dict[tuple[str, int], str]:
    return {(str(a["order"]), int(a["vote"])): str(a["winner"]) for a in v.answers}


def _decide(pairs: Sequence[PairResult], labels: tuple[str, str], allow: bool
            ) -> tuple[Decision | None, str | None]:
    try:
        return decide_pairs(pairs, labels, allow_incomplete=allow), None
    except ScoresError as exc:
        return None, str(exc)


def agree(
    run: str | os.PathLike[str],
    judge: Any,
    *,
    items: int = AGREE_ITEMS,
    seed: int = AGREE_SEED,
    cache: str | os.PathLike[str] | None = None,
    judge_concurrency: int = 4,
    n_boot: int = AGREE_BOOTSTRAP_N,
) -> AgreeResult:
    """Re-judge ``items`` seeded judged items of the saved ``run`` with ``judge`` and compare
    (module docstring). ``cache``: the cache that holds the run's clips (default: the one its
    run.json names). Raises :class:`~vocencebench.errors.ConfigError` for a run without a
    judge, without recorded per-order answers, or whose clips are gone."""
    if items < 1:
        raise ConfigError(f"--items must be ≥ 1, got {items}")
    h = load_run(run)
    meta = h.metadata
    old_model = meta.get("judge_model")
    if old_model is None:
        raise ConfigError(f"{run}: the run had no judge; nothing to agree with")
    where = cache or (meta.get("cache") or {}).get("path")
    if not where or not Path(where).is_file():
        raise ConfigError(f"{run}: the run's cache {where!r} is not there, so its clips "
                          "cannot be heard again; pass --cache PATH to the file that holds them")
    systems = meta.get("systems") or {}
    ids = (systems.get(h.labels[0]), systems.get(h.labels[1]))
    if None in ids:
        raise ConfigError(f"{run}: run.json does not name its systems' ids; cannot find clips")
    consistent = bool(meta.get("judge_consistent", True))
    votes = int(meta.get("judge_votes", 1))
    all_at_once = bool(meta.get("judge_all_at_once", False))
    dims = h.registry.judged_dimensions()
    store = Cache(where, readonly=True)
    try:
        return _agree(h, judge, store, str(run), str(old_model), (str(ids[0]), str(ids[1])),
                      items=items, seed=seed, dims=dims, consistent=consistent, votes=votes,
                      all_at_once=all_at_once, judge_concurrency=judge_concurrency,
                      n_boot=n_boot)
    finally:
        store.close()


def _agree(h: Head2Head, judge: Any, store: Cache, run: str, old_model: str,
           ids: tuple[str, str], *, items: int, seed: int, dims: Sequence[str],
           consistent: bool, votes: int, all_at_once: bool, judge_concurrency: int,
           n_boot: int) -> AgreeResult:
    pairs = list(h.pairs)
    eligible = [k for k, p in enumerate(pairs)
                if all(d in p.verdicts and p.verdicts[d].answers for d in dims)]
    if not eligible:
        raise ConfigError(f"{run}: no item has the run judge's per-order answers (a run "
                          "written before they were kept, or nothing was judged); rerun it "
                          "to record them")
    rank = {i: r for r, i in enumerate(judge_order(len(pairs), seed=seed))}
    chosen = sorted(eligible, key=rank.__getitem__)[:items]
    notes: list[str] = []
    failed: dict[str, str] = {}
    clips: dict[int, tuple[Clip, Clip]] = {}
    for k in chosen:
        a = _clip(store, ids[0], pairs[k], "a")
        b = _clip(store, ids[1], pairs[k], "b")
        if a is None or b is None:
            failed[pairs[k].item.id] = "its clip is not in the cache (or differs from the run's)"
        else:
            clips[k] = (a, b)
    if not clips:  # "unchanged" on no evidence would be a verdict nobody measured
        raise ConfigError(
            f"{run}: none of the {len(chosen)} chosen items has both clips in the cache "
            f"{store.path} (a system whose clips are not cached, such as dir:, or another "
            "run's cache), so nothing can be re-judged; pass --cache PATH to the cache that "
            "holds them")
    calls0 = _calls(judge)
    cost0 = _cost(judge)  # the backend's running total: this comparison's is its growth
    new: dict[int, dict[str, Verdict]] = {}

    def one(k: int) -> tuple[int, dict[str, Verdict], dict[str, str]]:
        got: dict[str, Verdict] = {}
        why: dict[str, str] = {}
        for ds in judge_jobs(h.registry, all_at_once=all_at_once):
            try:
                ans = judge_pair(judge, pairs[k].item, clips[k][0], clips[k][1], ds,
                                 all_at_once=all_at_once, consistent=consistent, votes=votes)
            except ConfigError:
                raise
            except VocenceError as exc:  # the new judge's failure on this item
                why.update(dict.fromkeys(ds, judge_failure(ds, exc)))
                continue
            ok, missing = read_verdicts(ds, ans)
            got.update(ok)
            why.update(missing)
        return k, got, why

    with ThreadPoolExecutor(max(1, judge_concurrency)) as pool:
        for k, got, why in pool.map(one, sorted(clips)):
            if why:
                failed[pairs[k].item.id] = next(iter(why.values()))
            else:
                new[k] = got
    done = [k for k in chosen if k in new]
    agreements = []
    for d in dims:
        per_item = []
        for k in done:
            old_l, new_l = _labels_of(pairs[k].verdicts[d]), _labels_of(new[k][d])
            per_item.append([(old_l[u], new_l[u]) for u in sorted(old_l) if u in new_l])
        agreements.append(agreement(d, per_item, n_boot=n_boot, seed=seed))
    dims_run = tuple(h.metadata.get("dimensions") or h.registry.dimensions())
    allow = bool((h.metadata.get("incomplete") or {}).get("allowed", False))
    renewed = {k: combine(pairs[k].item, pairs[k].analysis_a, pairs[k].analysis_b, new[k],
                          labels=h.labels, registry=h.registry, dimensions=dims_run)
               for k in done}
    subset_old = subset_new = None
    if done:
        subset_old, w1 = _decide([pairs[k] for k in done], h.labels, allow)
        subset_new, w2 = _decide([renewed[k] for k in done], h.labels, allow)
        notes += [w for w in (w1, w2) if w]
    headline_new: Decision | None = None
    if done:
        headline_new, w3 = _decide([renewed.get(k, p) for k, p in enumerate(pairs)], h.labels,
                                   allow)
        if w3:
            notes.append(f"the headline verdict with the new answers: {w3}")
    else:
        notes.append(f"no item was re-judged (the new judge failed on all {len(clips)}), so "
                     "nothing is known about the headline verdict")
    if len(done) < items:
        notes.append(f"{len(done)} items re-judged ({len(eligible)} had the run judge's "
                     f"answers; {items} asked)")
    calls1 = _calls(judge)
    cost1 = _cost(judge)
    cost = cost1 - cost0 if cost1 is not None and cost0 is not None else None
    return AgreeResult(
        run=run, old_model=old_model, new_model=str(getattr(judge, "model", "?")), seed=seed,
        eligible=len(eligible), items=tuple(pairs[k].item.id for k in done),
        agreements=tuple(agreements), subset_old=subset_old, subset_new=subset_new,
        headline_old=h.decision, headline_new=headline_new,
        calls=(calls1 - calls0) if calls0 is not None and calls1 is not None else None,
        cost_usd=cost,
        failed=failed, notes=tuple(notes))


def _cost(judge: Any) -> float | None:
    """The judge backend's running cost (USD), or None when it has none."""
    cost_of = getattr(getattr(judge, "backend", None), "cost_usd", None)
    cost = cost_of() if callable(cost_of) else None
    return float(cost) if is_real_number(cost) else None


def _calls(judge: Any) -> int | None:
    usage = getattr(getattr(judge, "backend", None), "usage", None)
    calls = getattr(usage, "calls", None)
    return calls if is_whole_number(calls) else None
