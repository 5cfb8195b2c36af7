"""Head-to-head: two systems over a corpus → per-sample scores → :class:`Head2Head`.

:func:`benchmark` checks its inputs once (the corpus gate, every system's and probe's
optional hooks, the executor), then streams every item through synthesis, analysis and the
judge (:mod:`vocencebench._pipeline.engine`) and decides (:func:`vocencebench.result.decide_pairs`).
Every finished unit is committed to the cache at once, so a killed run resumes where it
stopped, redoing nothing and re-paying no judge call; failed and incomplete units are never
cached as done, so a rerun retries them. Results are put back in corpus order, so they do not
depend on the executor, its worker count or the order in which units finish.

:class:`Head2Head` lives in :mod:`vocencebench.result` (the reports depend on it, not on the
pipeline); it is re-exported here.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

from ._numbers import is_whole_number
from ._pipeline.engine import DEFAULT_WINDOW, Engine, RunOptions
from ._util.protocols import check_component
from .adapters import SystemHooks, check_distinct_identities, system_hooks
from .cache import Cache, NullCache, clip_key
from .canaries import canary_status, run_preflight
from .constants import BOOTSTRAP_N, BOOTSTRAP_SEED, WER_THRESHOLD
from .constants import PACKAGE_VERSION as __version__
from .errors import ConfigError, SynthesisError
from .executor import Executor
from .judge import CachingJudge, PairJudge
from .pair import covered_dimensions
from .probes.base import BatchedProbe, ProbeSuite
from .result import Head2Head, decide_pairs
from .schema import OUTCOME_WORDS, Item
from .specs import make_executor
from .traits import TRAITS, TraitRegistry, unscored_words
from .transcribe import Transcriber

__all__ = ["Head2Head", "RunKeywords", "RunSettings", "benchmark", "cached_clips", "clip_key",
           "compare_models", "status_lines"]

Concurrency = int | tuple[int | None, int | None] | None


class RunKeywords(TypedDict, total=False):
    """The run options :func:`benchmark`, :func:`compare_models` and
    :func:`vocencebench.board.leaderboard` share; their defaults are :class:`RunSettings`'s."""

    probes: Any
    transcriber: Any
    cache: Cache | str | os.PathLike[str] | None
    workers: int | None
    executor: Executor | str | None
    consistent: bool
    votes: int
    judge_concurrency: int
    all_at_once: bool
    registry: TraitRegistry | None
    allow_incomplete: bool
    canaries: bool
    stop_when_decided: bool


class _DuelKeywords(RunKeywords, total=False):
    """The keywords of :func:`benchmark` and :func:`compare_models`: the shared ones plus the
    two that a leaderboard sets itself (each pair's labels, and progress bars)."""

    labels: tuple[str, str]
    progress: bool


#: The systems' labels unless told otherwise.
_LABELS = ("a", "b")


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """One run's options, each default written down once: the keywords of
    :func:`benchmark` (:class:`RunKeywords` plus ``labels`` and ``progress``), read by
    :func:`benchmark`, :func:`compare_models` and :func:`vocencebench.board.leaderboard`.
    An unknown keyword is a ``TypeError``, as for any function."""

    probes: Any = "default"
    transcriber: Any = None
    labels: tuple[str, str] = _LABELS
    cache: Cache | str | os.PathLike[str] | None = None
    workers: int | None = None
    executor: Executor | str | None = None
    progress: bool = True
    consistent: bool = True
    votes: int = 1
    judge_concurrency: int = 4
    all_at_once: bool = False
    registry: TraitRegistry | None = None
    allow_incomplete: bool = False
    canaries: bool = True
    stop_when_decided: bool = False

    def probe_set(self) -> Any:
        """``probes`` with ``"default"`` made :func:`vocencebench.default_probes` over the
        run's registry (else :data:`~vocencebench.traits.TRAITS`); anything else as given."""
        if isinstance(self.probes, str) and self.probes == "default":
            from .probes import default_probes

            return default_probes(registry=self.registry or TRAITS)
        return self.probes


def status_lines(transcriber: Any, judge: Any, probes: Any,
                 registry: TraitRegistry | None = None) -> list[str]:
    """What runs and what does not, said plainly; printed first everywhere. ``registry`` is
    the run's (default: the probe set's, else :data:`~vocencebench.traits.TRAITS`)."""
    from .transcribe import gate_status

    reg = registry or getattr(probes, "registry", None) or TRAITS
    lines = list(gate_status(transcriber))
    if judge is None:
        lines.append(
            f"JUDGE OFF: no audio-LLM judge; {unscored_words(reg.judged_dimensions())} NOT "
            "scored (composites use the probe dimensions only)"
        )
    else:
        lines.append(f"judge: {getattr(judge, 'model', '?')} "
                     f"(prompt {getattr(judge, 'prompt_version', '?')})")
    if probes is not None:
        lines.append(f"probes: {', '.join(probes.ids)}")
        missing = [t.name for t in reg.objective() if t.name not in probes.traits]
        if missing:
            lines.append(f"NOT MEASURED (no probe): {', '.join(missing)}")
    else:
        lines.append("PROBES OFF: no objective trait is measured")
    return lines


def cached_clips(items: Sequence[Item], system: Callable[[str, str], bytes],
                 store: Cache) -> list[bytes | None]:
    """The clips ``system`` already has in ``store`` for ``items`` (None where missing, and
    everywhere for a system whose clips are never cached); synthesises nothing."""
    from .adapters import system_id

    if not getattr(system, "cache_clips", True):
        return [None] * len(items)
    sid = system_id(system)
    out: list[bytes | None] = []
    for it in items:
        hit = store.get_bytes("clips", clip_key(sid, it))
        out.append(None if hit is None else hit[0])
    return out


def _open_cache(cache: Cache | str | os.PathLike[str] | None) -> Cache:
    if cache is None:
        return NullCache()
    if isinstance(cache, Cache):
        return cache
    return Cache(cache)


def _judge_with_cache(judge: PairJudge | None, store: Cache) -> PairJudge | None:
    """The judge the run uses: with the run cache when there is one, never by changing the
    caller's object (it may be reused for another run after this cache is closed). A judge
    without :class:`~vocencebench.judge.CachingJudge`'s ``with_cache`` is used as it is."""
    if judge is None or isinstance(store, NullCache) or not isinstance(judge, CachingJudge):
        return judge
    return judge.with_cache(store)


def _check_probes(probes: Any, registry: TraitRegistry) -> None:
    """The probe set's hooks, checked once: ``measure_batch`` spelled right and callable,
    every trait known to the run's registry."""
    import difflib

    for p in getattr(probes, "probes", ()):
        for name in dir(p):
            if name.startswith("_") or name == "measure_batch" or name == "measure":
                continue
            if difflib.get_close_matches(name, ["measure_batch"], n=1, cutoff=0.85):
                raise ConfigError(
                    f"probe {getattr(p, 'name', p)!r} has an attribute {name!r}, which looks "
                    "like the hook 'measure_batch' misspelt; rename it to 'measure_batch' "
                    "(a method (audios, items) -> list of results) or to a name starting "
                    "with '_'"
                )
        if hasattr(p, "measure_batch") and not isinstance(p, BatchedProbe):
            raise ConfigError(f"probe {getattr(p, 'name', p)!r}: measure_batch must be a "
                              "method (audios, items) -> list of results, with name, version "
                              "and traits")
        for t in getattr(p, "traits", ()):
            if t not in registry:
                raise ConfigError(
                    f"probe {getattr(p, 'name', p)!r} measures {t!r}, which the run's trait "
                    f"registry does not know; pass registry= (valid: "
                    f"{', '.join(registry.names())})"
                )


def _check_components(probes: object, transcriber: object, judge: object) -> None:
    """The run's instruments, checked once against the protocols the pipeline calls, so a
    missing or misspelt method fails here with its name, not mid-run."""
    if probes is not None:
        check_component(probes, ProbeSuite, "probes", "pass a vocencebench.ProbeSet "
                        "(e.g. vb.ProbeSet([...]) or vb.default_probes()), \"default\" or None")
    if transcriber is not None:
        check_component(transcriber, Transcriber, "transcriber", "a transcriber has an "
                        "'engine' name and is called with a clip (see vocencebench.transcribe)")
    if judge is not None:
        check_component(judge, PairJudge, "judge", "pass a vocencebench.judge.Judge (e.g. "
                        "Judge.gemini() or Judge.local(URL, MODEL)) or None")


def _concurrency(concurrency: Concurrency) -> tuple[int | None, int | None]:
    if concurrency is None:
        return (None, None)
    pair = (tuple(concurrency) if isinstance(concurrency, tuple | list)
            else (concurrency, concurrency))
    if len(pair) != 2:
        raise ConfigError(f"concurrency must be an int or an (a, b) pair, got {concurrency!r}")
    for c in pair:
        if c is not None and (not is_whole_number(c) or c < 1):
            raise ConfigError(f"concurrency must be ≥ 1 (requests in flight), got {c!r}")
    return (pair[0], pair[1])


class _GivenClips:
    """Pre-synthesised clips served by item (for :func:`compare_models`)."""

    cache_clips = False

    def __init__(self, clips: Mapping[str, bytes | None], failures: Mapping[str, str],
                 label: str) -> None:
        self._clips = clips
        self._failures = failures
        self.system_id = f"given:{label}"

    def synthesize_item(self, item: Item) -> bytes:
        wav = self._clips.get(item.id)
        if wav is None:
            why = self._failures.get(item.id, "no audio")
            raise SynthesisError(why.removeprefix("synthesis: "))
        return wav

    def __call__(self, text: str, instruction: str) -> bytes:  # pragma: no cover
        raise ConfigError("given clips are served by item")


def _run(
    items: list[Item],
    systems: tuple[Callable[[str, str], bytes], Callable[[str, str], bytes]],
    judge: PairJudge | None,
    *,
    metadata: Mapping[str, Any],
    concurrency: Concurrency = None,
    max_in_flight: int = DEFAULT_WINDOW,
    settings: RunSettings,
) -> Head2Head:
    s = settings
    labels, transcriber = s.labels, s.transcriber
    if labels[0] == labels[1]:
        raise ConfigError(f"the two systems need different labels, got {labels[0]!r} twice")
    for lab in labels:
        if lab in OUTCOME_WORDS:
            raise ConfigError(f"{lab!r} cannot label a system: it is a decision outcome")
    probes = s.probe_set()
    _check_components(probes, transcriber, judge)
    assert not isinstance(probes, str)  # refused above
    reg = s.registry or (probes.registry if probes is not None else TRAITS)
    if s.judge_concurrency < 1 or s.votes < 1 or max_in_flight < 1:
        raise ConfigError("judge_concurrency, votes and max_in_flight must be ≥ 1")
    conc = _concurrency(concurrency)
    from .corpus import validate_corpus

    validate_corpus(items, registry=reg)
    if transcriber is not None:
        from .transcribe import unscorable_scripts

        bad = unscorable_scripts(items)
        if bad:
            raise ConfigError(
                f"{len(bad)} item(s) have a script the intelligibility gate cannot score (no "
                f"word is left after WER normalisation): {', '.join(bad[:5])}"
                f"{' …' if len(bad) > 5 else ''}; give them a script with words, or run "
                "without --asr")
    check_distinct_identities({labels[0]: systems[0], labels[1]: systems[1]})
    hooks: tuple[SystemHooks, SystemHooks] = (
        system_hooks(systems[0], label=f"system {labels[0]!r}"),
        system_hooks(systems[1], label=f"system {labels[1]!r}"))
    _check_probes(probes, reg)
    dims = covered_dimensions(probes.traits if probes is not None else (), judge is not None,
                              reg)
    store = _open_cache(s.cache)
    own_store = s.cache is not None and not isinstance(s.cache, Cache)
    scratch_dir: str | None = None
    scratch: Cache | None = None
    exe: Any = None
    own_executor = not callable(getattr(s.executor, "map_unordered", None))
    try:
        exe = (make_executor(s.executor if isinstance(s.executor, str) else None,
                             workers=s.workers, units=2 * len(items))
               if own_executor else s.executor)
        clip_stores: list[Cache] = []
        for hk in hooks:
            if hk.cache_clips and not isinstance(store, NullCache):
                clip_stores.append(store)
                continue
            if scratch is None:  # clips never stay in memory: a temporary on-disk store
                scratch_dir = tempfile.mkdtemp(prefix="vocencebench-clips-")
                scratch = Cache(Path(scratch_dir) / "clips.sqlite")
            clip_stores.append(scratch)
        dask = None
        if getattr(exe, "name", "") == "dask" and hasattr(exe, "client"):
            from ._pipeline.dask import DaskPlan

            dask = DaskPlan(exe)
        run_judge = _judge_with_cache(judge, store)
        canary_meta: dict[str, Any] = {"ran": False}
        # One judge may serve several runs (a leaderboard's pairs, a notebook): this run's
        # usage and cost are its totals minus what they were now.
        judge_start = getattr(getattr(judge, "backend", None), "usage", None)

        def preflight() -> None:
            run_preflight(probes, run_judge, store, reg, canary_meta)

        engine = Engine(
            items, systems, hooks,
            options=RunOptions(labels=labels, registry=reg, dimensions=dims,
                               consistent=s.consistent, votes=s.votes,
                               judge_concurrency=s.judge_concurrency, all_at_once=s.all_at_once,
                               concurrency=conc, window=max_in_flight, progress=s.progress,
                               stop_when_decided=s.stop_when_decided),
            probes=probes, transcriber=transcriber, judge=run_judge, store=store,
            clip_stores=(clip_stores[0], clip_stores[1]), executor=exe, dask=dask,
            preflight=preflight if s.canaries else None,
        )
        pairs = engine.run()
        decision = decide_pairs(pairs, labels, allow_incomplete=s.allow_incomplete)
        meta: dict[str, Any] = dict(metadata)
        meta.update(_run_metadata(items, probes, transcriber, judge, s.consistent, s.votes,
                                  exe, reg, dims, judge_start))
        meta["systems"] = {labels[0]: hooks[0].system_id, labels[1]: hooks[1].system_id,
                           **dict(metadata.get("systems", {}))}
        meta["judge_all_at_once"] = s.all_at_once
        meta["canaries"] = canary_meta if s.canaries else {"ran": False, "skipped": True}
        meta["timings"] = {**dict(metadata.get("timings", {})), **engine.timings()}
        meta["status"] = status_lines(transcriber, judge, probes, reg)
        meta["status"].append(canary_status(canary_meta if s.canaries else None))
        if engine.notes:  # work that did not run where the executor would have run it
            meta["status"].extend(engine.notes)
            meta["executor"]["notes"] = list(engine.notes)
        meta["cache"] = {"path": str(store.path), "hits": dict(store.hits),
                         "misses": dict(store.misses), "corrupt": dict(store.corrupt)}
        meta["incomplete"] = {"items": sum(p.incomplete is not None for p in pairs),
                              "allowed": s.allow_incomplete, "stopped": engine.stop_reason}
        if s.stop_when_decided:  # the key exists only when asked for: other runs keep their bytes
            meta["early_stopping"] = engine.early_stopping() or {
                "enabled": True, "note": "no judge ran: nothing to stop"}
            meta["status"].append(_early_status(meta["early_stopping"]))
        return Head2Head(labels=labels, pairs=pairs, decision=decision, metadata=meta,
                         registry=reg)
    finally:
        if own_executor and exe is not None:
            exe.close()
        if scratch is not None:
            scratch.close()
        if scratch_dir is not None:
            shutil.rmtree(scratch_dir, ignore_errors=True)
        if own_store:
            store.close()


def _early_status(record: Mapping[str, Any]) -> str:
    """The status line of a ``stop_when_decided`` run."""
    if "judged" not in record:
        return "EARLY STOPPING requested, but no judge ran: nothing to stop"
    if record.get("halted"):
        return (f"EARLY STOPPING cut short: judging stopped on an error after {record['judged']} "
                f"of {record['needing_judge']} items that needed the judge were sent "
                f"({record.get('answered', '?')} answered); the other "
                f"{record['unjudged']} were never asked")
    if record.get("stopped_early"):
        return (f"EARLY STOPPING: judged {record['judged']} of {record['needing_judge']} items "
                f"that needed the judge; the verdict ({record['verdict']}) could no longer "
                "change (see the decision's reason)")
    return (f"early stopping: all {record['judged']} items that needed the judge were judged "
            "(the verdict was not certain earlier)")


def benchmark(
    corpus: Iterable[Item],
    model_a: Callable[[str, str], bytes],
    model_b: Callable[[str, str], bytes],
    judge: Any = None,
    *,
    concurrency: Concurrency = None,
    max_in_flight: int = DEFAULT_WINDOW,
    **settings: Unpack[_DuelKeywords],
) -> Head2Head:
    """Synthesise with both systems, analyse, judge and decide: the main job.

    ``cache`` (a path or :class:`~vocencebench.cache.Cache`) makes the run resumable.
    ``probes`` defaults to :func:`vocencebench.default_probes`; without ``transcriber`` the
    intelligibility gate is OFF and without ``judge`` tone and naturalness are not scored —
    both are announced in the summary's first lines and in the reports.

    ``concurrency``: requests in flight per system, an int for both or an ``(a, b)`` pair
    (default: the system's ``concurrency`` attribute, else 1) — raise it for I/O-bound
    systems (HTTP APIs, command lines); for batched systems it is chunks in flight.
    ``registry``: the run's traits (default: the probe set's). ``allow_incomplete``: when an
    instrument failed on some items, decide on the complete ones (the reason says so) instead
    of naming no winner. ``max_in_flight``: items open at once (bounds memory).
    ``canaries``: first check the probes and the judge on known-answer clips
    (:mod:`vocencebench.canaries`); an instrument that fails them stops the run before any
    item (INCOMPLETE, reason ``canaries: …``); the outcome is in ``metadata["canaries"]``.
    ``stop_when_decided``: measure every item first, then judge them in the seeded order of
    :func:`vocencebench.early_stopping.judge_order`, batch by batch, and stop as soon as no
    outcome of the unjudged items could change the verdict (the verdict is always the one the
    full run would reach; docs/judge.md, "Early stopping"). The unjudged samples have no
    composite (``SampleScore.unjudged``), the decision records the proof
    (``Decision.early_stop``) and ``metadata["early_stopping"]`` the schedule.

    A fatal instrument error (a judge that answers 401/404, an exhausted daily quota) stops
    the run within seconds: queued work is cancelled, finished work stays cached, and the
    returned :class:`Head2Head` is incomplete (``decision.winner == "incomplete"``).
    """
    return _run(list(corpus), (model_a, model_b), judge, metadata={},
                concurrency=concurrency, max_in_flight=max_in_flight,
                settings=RunSettings(**settings))


def compare_models(
    corpus: Iterable[Item],
    clips_a: Sequence[bytes | None] | Mapping[str, bytes],
    clips_b: Sequence[bytes | None] | Mapping[str, bytes],
    judge: Any = None,
    *,
    synthesis_failures: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {}),
    metadata: Mapping[str, Any] | None = None,
    **settings: Unpack[_DuelKeywords],
) -> Head2Head:
    """Score two sets of pre-synthesised clips (by position or by item id) and decide.

    A missing clip (None, or an id absent from the mapping) is that system's failure
    (S = 0), with the reason from ``synthesis_failures`` when given. ``canaries`` and
    ``stop_when_decided`` as for :func:`benchmark`."""
    items = list(corpus)

    def align(clips: Sequence[bytes | None] | Mapping[str, bytes]) -> dict[str, bytes | None]:
        if isinstance(clips, Mapping):
            return {it.id: clips.get(it.id) for it in items}
        if len(clips) != len(items):
            raise ConfigError(f"{len(clips)} clips for {len(items)} items")
        return {it.id: c for it, c in zip(items, clips, strict=True)}

    run = RunSettings(**settings)
    labels = run.labels
    given = (_GivenClips(align(clips_a), synthesis_failures[0], labels[0]),
             _GivenClips(align(clips_b), synthesis_failures[1], labels[1]))
    return _run(items, (given[0], given[1]), judge, metadata=dict(metadata or {}),
                concurrency=None, max_in_flight=DEFAULT_WINDOW, settings=run)


def _run_metadata(items: Sequence[Item], probes: ProbeSuite | None,
                  transcriber: Transcriber | None, judge: PairJudge | None,
                  consistent: bool, votes: int, exe: Any, registry: TraitRegistry,
                  dims: Sequence[str], judge_start: Any = None) -> dict[str, Any]:
    from .corpus import corpus_hash

    meta: dict[str, Any] = {
        "vocencebench": __version__,
        "python": platform.python_version(),
        "platform": sys.platform,
        "corpus_hash": corpus_hash(items),
        "n_items": len(items),
        "probes": list(probes.ids) if probes is not None else [],
        "asr_engine": getattr(transcriber, "engine", None),
        "gate_threshold": WER_THRESHOLD if transcriber is not None else None,
        "judge_model": getattr(judge, "model", None),
        "prompt_version": getattr(judge, "prompt_version", None),
        "judge_consistent": consistent,
        "judge_votes": votes,
        "dimensions": list(dims),
        "bootstrap": {"n_boot": BOOTSTRAP_N, "seed": BOOTSTRAP_SEED},
        "executor": {"name": getattr(exe, "name", "?"), "workers": getattr(exe, "workers", 1)},
    }
    if transcriber is not None:  # what gated: name, size, package, model digest
        from .transcribe import recogniser_record

        meta["asr"] = recogniser_record(transcriber)
    if judge is not None:
        backend = getattr(judge, "backend", None)
        usage = getattr(backend, "usage", None)
        if usage is not None and judge_start is not None and hasattr(usage, "since"):
            usage = usage.since(judge_start)
        if usage is not None:
            meta["judge_usage"] = usage.to_dict() if hasattr(usage, "to_dict") else dict(
                vars(usage))
        cost = getattr(backend, "cost_usd", None)
        if callable(cost):
            try:
                total = cost()
                # This run's share: the running total's growth since the run began.
                meta["judge_cost_usd"] = (total - judge_start.cost_usd
                                          if total is not None and judge_start is not None
                                          and hasattr(judge_start, "cost_usd") else total)
            except ConfigError as exc:  # an unpriced model: the run's result stands
                meta["judge_cost_usd"] = None
                meta["judge_cost_note"] = str(exc)
    return meta
