"""N systems on one corpus: every system synthesised and analysed once, every pair decided.

:func:`leaderboard` synthesises each system's clips once, then runs each compared pair
through :func:`vocencebench.compare.benchmark` with ONE cache, so a clip's analysis
(keyed by the audio's sha256) and a judge verdict (keyed by both clips' sha256) are computed
once and reused by every pair and every later run. The pure statistics (cells, tiers,
intervals, Bradley–Terry) are :mod:`vocencebench.board.ranking`; the judge plan announced
before the run is :mod:`vocencebench.board.plan`; the files a person reads are written by
:mod:`vocencebench.board.report`.

Modes:

* **all pairs** (default): N(N−1)/2 pairs, each judged — every cell of the matrix is decided;
* **anchor** (``anchor=NAME``): only the N−1 pairs of the anchor against each other system are
  run and judged (O(N) judge cost). Only the anchor's row and column are published; every other
  cell is NOT COMPARED. A non-anchor pair is never decided on the probe dimensions alone: such
  a cell would not be comparable with the judged ones beside it.

Adding a system later costs its own clips and its pairs only (everything else comes from the
cache); removing one changes no other cell (each cell depends on its two systems only).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Unpack

from .._numbers import is_whole_number
from ..cache import Cache, NullCache
from ..constants import BOOTSTRAP_N, BOOTSTRAP_SEED
from ..early_stopping import sample_range
from ..errors import ConfigError
from ..judge_audit import JudgeBehaviour, judge_behaviour
from ..schema import Item, SampleScore
from ..scores import PairedScores
from ..traits import TRAITS, TraitRegistry
from .cells import pair_order
from .plan import JudgePlan, plan_judge_calls, system_order
from .ranking import Standings, rank
from .report import render_summary, save_leaderboard

if TYPE_CHECKING:
    from ..compare import RunKeywords

__all__ = ["LEADERBOARD_KIND", "LEADERBOARD_SCHEMA_VERSION", "Leaderboard", "decide_command",
           "leaderboard", "pair_folder"]

#: ``kind`` of leaderboard.json.
LEADERBOARD_KIND: Final = "leaderboard"
#: ``schema_version`` of leaderboard.json: the layout this install writes and reads.
LEADERBOARD_SCHEMA_VERSION: Final = 1


def _slug(name: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)
    return out.strip("._") or "system"


def pair_folder(k: int, pair: tuple[str, str]) -> str:
    """The folder, relative to the output directory, of the ``k``-th pair (0-based): its
    full record (``run.json``); its scores file is this name plus ``.scores.jsonl``."""
    x, y = pair
    return f"pairs/{k + 1:02d}-{_slug(x)}--{_slug(y)}"


def decide_command(scores_file: str, pair: tuple[str, str]) -> str:
    """The command that recomputes the cell of ``pair`` from ``scores_file`` (run in the
    output directory)."""
    x, y = pair
    return (f"vocencebench decide {scores_file} --incumbent {_q(x)} --challenger {_q(y)} "
            "--json")


@dataclass(frozen=True)
class Leaderboard:
    """A leaderboard run: the standings, every pair's head-to-head and what the run reported.

    ``runs`` maps (incumbent, challenger) to the pair's
    :class:`~vocencebench.result.Head2Head` (every row, analysis and verdict);
    ``systems`` maps each name to its system id; ``plan`` is the judge plan announced before
    the run; ``judge_calls`` the calls the judge actually answered (None if not reported);
    ``registry`` the run's traits (the reports lay their dimensions out by it).
    """

    standings: Standings
    runs: dict[tuple[str, str], Any]
    items: tuple[str, ...]
    systems: dict[str, str]
    plan: JudgePlan
    metadata: dict[str, Any] = field(default_factory=dict)
    judge_calls: int | None = None
    registry: TraitRegistry = TRAITS

    @property
    def order(self) -> tuple[str, ...]:
        return self.standings.systems

    @property
    def mode(self) -> str:
        return self.standings.mode

    @property
    def complete(self) -> bool:
        return self.standings.complete

    def status(self) -> list[str]:
        return list(self.metadata.get("status", []))

    # -- published scores
    def combined_scores(self) -> list[SampleScore] | None:
        """Every system's rows, item by item (corpus order), systems in leaderboard order —
        or None when some system's row differs between its pairs (a judge scored it against
        each opponent), so no single file can reproduce every cell."""
        return self._combined

    @cached_property
    def _combined(self) -> list[SampleScore] | None:
        rows: dict[tuple[str, str], SampleScore] = {}
        for h in self.runs.values():
            for p in h.pairs:
                for s in (p.a, p.b):
                    key = (s.item, s.system)
                    prev = rows.get(key)
                    if prev is None:
                        rows[key] = s
                    elif prev.to_dict() != s.to_dict():
                        return None
        return [rows[(i, s)] for i in self.items for s in self.order if (i, s) in rows]

    def scores_files(self) -> dict[tuple[str, str], str]:
        """Pair → the published scores file (relative to the output directory) that
        ``vocencebench decide`` recomputes its cell from."""
        return dict(self._files)

    @cached_property
    def _files(self) -> dict[tuple[str, str], str]:
        if self.combined_scores() is not None:
            return {p: "scores.jsonl" for p in self.runs}
        return {(x, y): f"{pair_folder(k, (x, y))}.scores.jsonl"
                for k, (x, y) in enumerate(self.runs)}

    def records(self) -> dict[tuple[str, str], str]:
        """Pair → the folder (relative to the output directory) holding the pair's full
        record, ``run.json`` (every row, analysis and verdict), which ``vocencebench listen
        --pair`` and ``calibrate --run`` read."""
        return {pair: pair_folder(k, pair) for k, pair in enumerate(self.runs)}

    def recompute_command(self, pair: tuple[str, str]) -> str:
        """The command that recomputes the cell of ``pair`` (run in the output directory)."""
        return decide_command(self._files[pair], pair)

    # -- sections
    def judge_behaviour(self) -> JudgeBehaviour | None:
        """The judge's behaviour over every pair (None when no judge ran)."""
        if self.metadata.get("judge_model") is None:
            return None
        return judge_behaviour([(pair, h.pairs) for pair, h in self.runs.items()],
                               registry=self.registry,
                               both_orders=bool(self.metadata.get("judge_consistent", True)))

    def failures(self) -> dict[str, Any]:
        """Failures per system (its own: synthesis, audio) and per instrument, and the
        incomplete pairs."""
        per_system: dict[str, dict[str, Any]] = {}
        instruments: dict[str, int] = {}
        seen: set[tuple[str, str, str]] = set()
        judge_dropped: dict[str, int] = {}
        for (x, y), h in self.runs.items():
            for p in h.pairs:
                for s, an in ((p.a, p.analysis_a), (p.b, p.analysis_b)):
                    entry = per_system.setdefault(s.system, {"synthesis": 0, "audio": 0,
                                                             "other": 0, "examples": []})
                    key = (s.system, s.item, "failure")
                    if s.failure and key not in seen:
                        seen.add(key)
                        kind = s.failure.split(":", 1)[0]
                        kind = kind if kind in ("synthesis", "audio") else "other"
                        entry[kind] += 1
                        if len(entry["examples"]) < 3:
                            entry["examples"].append(f"{s.item}: {s.failure[:200]}")
                    reason = getattr(s, "incomplete", None)
                    for note in (reason, *(n for n in an.notes
                                           if n.startswith("probes failed"))):
                        nkey = (s.system, s.item, str(note))
                        if note and nkey not in seen:
                            seen.add(nkey)
                            inst = str(note).split(":", 1)[0].replace("probes failed", "probes")
                            instruments[inst] = instruments.get(inst, 0) + 1
                pair_incomplete = getattr(p, "incomplete", None)
                if pair_incomplete:
                    inst = str(pair_incomplete).split(":", 1)[0]
                    k2 = (f"{x}|{y}", p.item.id, str(pair_incomplete))
                    if k2 not in seen:
                        seen.add(k2)
                        instruments[inst] = instruments.get(inst, 0) + 1
                for why in p.dropped.values():
                    if why.startswith("judge failed"):
                        judge_dropped[f"{x} vs {y}"] = judge_dropped.get(f"{x} vs {y}", 0) + 1
        if judge_dropped:
            instruments["judge"] = instruments.get("judge", 0) + sum(judge_dropped.values())
        return {
            "systems": per_system,
            "instruments": instruments,
            "judge_dimensions_dropped": judge_dropped,
            "incomplete_pairs": [
                {"incumbent": c.incumbent, "challenger": c.challenger, "reason": c.incomplete}
                for c in self.standings.cells if not c.decided
            ],
        }

    def canaries(self) -> dict[str, Any]:
        """The known-answer canaries, checked once on the shared instruments before the first
        pair (every pair's record is this one): ``status`` is ``passed``, ``failed``,
        ``skipped`` (``--skip-canaries``) or ``not run`` (no probe and no judge to check);
        ``line`` is the status line; the rest is the record run.json keeps."""
        from ..canaries import status_line

        record = self.metadata.get("canaries")
        if not isinstance(record, Mapping):
            return {"status": "not recorded",
                    "note": "this leaderboard was built without a canary record"}
        if record.get("skipped"):
            status = "skipped"
        elif not record.get("ran"):
            status = "not run"
        else:
            status = "passed" if record.get("passed") else "failed"
        return {"status": status, "line": status_line(record), **record}

    def to_dict(self) -> dict[str, Any]:
        """Everything of ``leaderboard.json``."""
        st = self.standings.to_dict()
        files = self.scores_files()
        records = self.records()
        for cell, pair in zip(st["pairs"], self.runs, strict=True):
            cell["scores_file"] = files[pair]
            cell["record"] = records[pair]
            cell["recompute"] = self.recompute_command(pair)
        layout = "combined" if self.combined_scores() is not None else "per-pair"
        return {
            "schema_version": LEADERBOARD_SCHEMA_VERSION,
            "kind": LEADERBOARD_KIND,
            "status": self.status(),
            "mode": self.mode,
            "anchor": self.standings.anchor,
            "systems": [{"name": s, "id": self.systems.get(s)} for s in self.order],
            **{k: v for k, v in st.items() if k not in ("systems", "mode", "anchor")},
            "not_compared": [[x, y] for i, x in enumerate(self.order)
                             for y in self.order[i + 1:] if self.standings.cell(x, y) is None],
            "scores": {
                "layout": layout,
                "files": sorted(set(files.values())),
                "order": ("one row per item and system: items in corpus order, systems in "
                          "leaderboard order" if layout == "combined" else
                          "one file per pair, as `vocencebench run` writes it: item by item, "
                          "incumbent then challenger (a judge scored each system against each "
                          "opponent, so a system's rows differ between its pairs)"),
            },
            "judge": {"plan": self.plan.to_dict(), "calls_answered": self.judge_calls,
                      "cost_usd": self.metadata.get("judge_cost_usd")},
            "failures": self.failures(),
            **({"judge_behaviour": jb.to_dict()} if (jb := self.judge_behaviour()) else {}),
            "canaries": self.canaries(),
            "items": len(self.items),
            "metadata": {k: v for k, v in self.metadata.items()
                         if k not in ("status", "canaries")},  # both have their own keys
        }

    def summary(self) -> str:
        return render_summary(self)

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the scores file(s), leaderboard.json, leaderboard.md and leaderboard.html
        (each atomically: a temporary name, then a rename) into ``directory``. A write error
        (a full disk) is one line naming the directory (:func:`vocencebench.outputs.saving`)."""
        from ..outputs import saving

        with saving(directory, "saving the leaderboard",
                    state="leaderboard.json is written last: until it is, the set is not "
                          "complete"):
            return save_leaderboard(self, directory)


def _q(name: str) -> str:
    import shlex

    return shlex.quote(name)


# --------------------------------------------------------------------------- runner


class _SharedExecutor:
    """The run's one executor, lent to every pair: a pair cannot close it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.workers = inner.workers

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any], *,
                      max_in_flight: int | None = None) -> Iterator[tuple[int, Any]]:
        return self.inner.map_unordered(fn, items, max_in_flight=max_in_flight)  # type: ignore[no-any-return]

    def close(self) -> None:
        return None


def _pair_scores(x: str, y: str, h: Any) -> PairedScores:
    a: list[float | None] = []
    b: list[float | None] = []
    reasons: list[tuple[str, str]] = []
    stopped = any(p.a.unjudged or p.b.unjudged for p in h.pairs)
    for p in h.pairs:
        a.append(p.a.S)
        b.append(p.b.S)
        why = [r for r in (getattr(p, "incomplete", None), getattr(p.a, "incomplete", None),
                           getattr(p.b, "incomplete", None)) if r]
        unjudged = bool(p.a.unjudged or p.b.unjudged) and not why
        if why or (not unjudged and (p.a.S is None or p.b.S is None)):
            reasons.append((p.item.id, why[0] if why else "no score"))
    bounds = ((tuple(sample_range(p.a) for p in h.pairs),
               tuple(sample_range(p.b) for p in h.pairs)) if stopped else ((), ()))
    return PairedScores(x, y, tuple(p.item.id for p in h.pairs), tuple(a), tuple(b),
                      tuple(reasons), tuple(dict(p.a.d) for p in h.pairs),
                      tuple(dict(p.b.d) for p in h.pairs), bounds[0], bounds[1])


def _judge_cost(judge: Any) -> float | None:
    """The judge backend's running cost in USD (None: no judge, or an unpriced model)."""
    cost = getattr(getattr(judge, "backend", None), "cost_usd", None)
    if not callable(cost):
        return None
    try:
        value = cost()
    except Exception:  # an unpriced model: the cost is unknown, never a crash
        return None
    return float(value) if value is not None else None


def _usage_calls(judge: Any) -> int | None:
    usage = getattr(getattr(judge, "backend", None), "usage", None)
    calls = getattr(usage, "calls", None)
    return int(calls) if is_whole_number(calls) else None


def leaderboard(
    items: Iterable[Item],
    systems: Mapping[str, Callable[[str, str], bytes]],
    judge: Any = None,
    *,
    anchor: str | None = None,
    progress: bool = False,
    announce: Callable[[str], None] | None = None,
    n_boot: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
    **settings: Unpack[RunKeywords],
) -> Leaderboard:
    """Benchmark every system in ``systems`` (name → system) on ``items`` and decide every
    compared pair (all pairs, or with ``anchor`` the anchor against each other system).

    Each system is synthesised once; each pair runs through
    :func:`vocencebench.compare.compare_models` with one cache, so analyses and verdicts are
    shared. Without ``cache`` a temporary one lives for the run. ``announce`` receives the mode
    and judge-cost lines (:meth:`JudgePlan.describe`) before any work starts. The other
    options (``settings``: :class:`~vocencebench.compare.RunKeywords`, with the defaults of
    :class:`~vocencebench.compare.RunSettings`) are those of :func:`vocencebench.benchmark`,
    except ``labels`` (each pair is labelled with its systems' names) and ``progress`` (off
    here unless asked for); as there, the run's trait ``registry`` defaults
    to the probe set's (else :data:`~vocencebench.traits.TRAITS`), and every pair, the judge
    plan, the canaries and the reports use that one. ``canaries`` runs the known-answer
    checks once, before the first pair and before anything is synthesised (the pairs do not
    check them again; every pair's record is that one); an instrument that fails them raises
    :class:`~vocencebench.errors.CanaryError` (``canaries: …``, naming the failed checks).
    ``stop_when_decided``: each pair stops judging once its verdict cannot change
    (:func:`vocencebench.benchmark`); its cell is that verdict, and the per-system intervals,
    trait means and Bradley–Terry outcomes of such a pair use its judged items only.
    """
    from ..adapters import check_distinct_identities, system_id
    from ..canaries import preflight, skipped_record, status_line
    from ..compare import RunKeywords, RunSettings, benchmark, status_lines
    from ..specs import make_executor

    unknown = sorted(set(settings) - set(RunKeywords.__optional_keys__))
    if unknown:  # labels included: every pair is labelled with its systems' names
        raise TypeError(f"leaderboard() got an unexpected keyword argument {unknown[0]!r}")
    s = RunSettings(progress=progress, **settings)
    its = list(items)
    if not its:
        raise ConfigError("the corpus is empty: nothing to rank")
    check_distinct_identities(systems)
    order = system_order(list(systems), anchor)
    pairs = pair_order(order, anchor)
    probes = s.probe_set()
    reg: TraitRegistry = s.registry or getattr(probes, "registry", None) or TRAITS
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if s.cache is None or isinstance(s.cache, NullCache):
        tmp = tempfile.TemporaryDirectory(prefix="vocencebench-board-")
        store = Cache(Path(tmp.name) / "cache.sqlite")
    elif isinstance(s.cache, Cache):
        store = s.cache
    else:
        store = Cache(s.cache)
    own_store = not isinstance(s.cache, Cache)
    inner: Any = (s.executor if hasattr(s.executor, "map_unordered")
                  else make_executor(s.executor if isinstance(s.executor, str) else None,
                                     workers=s.workers))
    shared = _SharedExecutor(inner)
    calls_before = _usage_calls(judge) if judge is not None else None
    cost_before = _judge_cost(judge)
    judge_cache = getattr(judge, "cache", None)
    hits0: dict[str, int] = {}
    misses0: dict[str, int] = {}
    corrupt0: dict[str, int] = {}
    try:
        plan = plan_judge_calls(its, systems, judge, anchor=anchor, cache=store,
                                consistent=s.consistent, votes=s.votes,
                                all_at_once=s.all_at_once, registry=reg, canaries=s.canaries)
        for line in plan.describe():
            if announce is not None:
                announce(line)
        hits0, misses0, corrupt0 = dict(store.hits), dict(store.misses), dict(store.corrupt)
        timings: dict[str, Any] = {"pairs_s": {}}
        t_all = time.perf_counter()
        # Once, before any pair: every pair measures with the same instruments, and no system
        # (a paid API included) is called for an instrument that fails its known answers.
        canary_record = (preflight(probes=probes, judge=judge, cache=store, registry=reg)
                         if s.canaries else skipped_record())
        canary_line = status_line(canary_record)
        skipped = status_line(skipped_record())  # what each pair says of itself
        timings["canaries_s"] = time.perf_counter() - t_all
        runs: dict[tuple[str, str], Any] = {}
        # One cache for every pair: a system's clips are synthesised in its first pair and
        # read back in the others; analyses and verdicts are keyed by the clips' sha256.
        for x, y in pairs:
            t0 = time.perf_counter()
            h = benchmark(
                its, systems[x], systems[y], judge, probes=probes, transcriber=s.transcriber,
                labels=(x, y), cache=store, executor=shared, progress=s.progress,
                consistent=s.consistent, votes=s.votes, judge_concurrency=s.judge_concurrency,
                all_at_once=s.all_at_once, registry=reg, canaries=False,  # checked above
                stop_when_decided=s.stop_when_decided,
            )
            # The pair's record is the leaderboard's check, not "skipped".
            h.metadata["canaries"] = dict(canary_record)
            h.metadata["status"] = [canary_line if line == skipped else line
                                    for line in h.metadata.get("status", [])]
            runs[(x, y)] = h
            timings["pairs_s"][f"{x} vs {y}"] = time.perf_counter() - t0
        timings["total_s"] = time.perf_counter() - t_all
    finally:
        inner.close()
        if judge is not None and hasattr(judge, "cache"):
            judge.cache = judge_cache  # the run's store is closed below; give the judge back
        cache_meta = {"path": None if tmp is not None else str(store.path),
                      "hits": {k: v - hits0.get(k, 0) for k, v in store.hits.items()},
                      "misses": {k: v - misses0.get(k, 0) for k, v in store.misses.items()},
                      "corrupt": {k: v - corrupt0.get(k, 0) for k, v in store.corrupt.items()}}
        if own_store:
            store.close()
        if tmp is not None:
            tmp.cleanup()
    standings = rank(order, [_pair_scores(x, y, runs[(x, y)]) for x, y in pairs],
                     anchor=anchor, allow_incomplete=s.allow_incomplete, n_boot=n_boot,
                     seed=seed)
    calls_after = _usage_calls(judge) if judge is not None else None
    first = runs[pairs[0]].metadata
    meta: dict[str, Any] = {
        k: first[k] for k in ("vocencebench", "python", "platform", "corpus_hash", "n_items",
                              "probes", "asr_engine", "gate_threshold", "judge_model",
                              "prompt_version", "judge_consistent", "judge_votes",
                              "executor") if k in first
    }
    meta["bootstrap"] = {"n_boot": n_boot, "seed": seed}
    meta["judge_all_at_once"] = s.all_at_once
    if s.stop_when_decided:  # only when asked for: other leaderboards keep their bytes
        meta["early_stopping"] = {
            f"{x} vs {y}": {k: v for k, v in runs[(x, y)].metadata.get(
                "early_stopping", {}).items() if k != "evaluations"} for x, y in pairs}
    meta["timings"] = timings
    meta["cache"] = cache_meta
    meta["canaries"] = canary_record
    status = [*plan.describe()[:1], *status_lines(s.transcriber, judge, probes, reg),
              canary_line]
    if not standings.complete:
        bad = [f"{c.incumbent} vs {c.challenger}" for c in standings.cells if not c.decided]
        status.insert(0, f"INCOMPLETE: {len(bad)} pair(s) decide nothing because an instrument "
                         f"failed: {', '.join(bad)}; rerun the same command to retry them")
    meta["status"] = status
    if judge is not None and callable(getattr(getattr(judge, "backend", None), "cost_usd",
                                              None)):
        cost_after = _judge_cost(judge)  # this board's share of a judge that served others
        meta["judge_cost_usd"] = (cost_after - cost_before if cost_after is not None
                                  and cost_before is not None else None)
    judge_calls = (calls_after - calls_before
                   if calls_after is not None and calls_before is not None else None)
    return Leaderboard(standings, runs, tuple(it.id for it in its),
                       {s: system_id(systems[s]) for s in order}, plan, meta, judge_calls,
                       reg)
