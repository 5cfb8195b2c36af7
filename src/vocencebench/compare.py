"""Head-to-head: two systems over a corpus → per-sample scores → :class:`Head2Head`.

:func:`benchmark` synthesises with both systems and then runs :func:`compare_models`, which
analyses every clip (decode, ASR gate, probes) on an executor, asks the judge about every pair
that needs it, folds each pair (:func:`vocencebench.pair.combine`) and decides. Every finished
unit is committed to the cache at once, so a killed run resumes where it stopped, redoing
nothing and re-paying no judge call. Results are put back in corpus order, so they do not
depend on the executor or its worker count.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import platform
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .adapters import synthesize_item, system_id
from .cache import Cache, NullCache, cache_key
from .decide import BOOTSTRAP_N, BOOTSTRAP_SEED, WER_THRESHOLD, decide
from .errors import ConfigError, JudgeError, SynthesisError, VocenceError
from .executor import Executor, make_executor
from .pair import ClipAnalysis, PairResult, analyse_clip, combine, needs_judge
from .schema import Decision, Item, ProbeResult, SampleScore, Verdict, dumps_canonical
from .traits import TRAITS, TraitRegistry

__all__ = ["Head2Head", "benchmark", "compare_models", "status_lines"]

# Synthesis results are committed in chunks of this many items (a resume redoes ≤ one chunk).
_SYNTH_CHUNK = 16


@dataclass(frozen=True)
class Head2Head:
    """The outcome of a duel: every pair, the decision and the run's metadata."""

    labels: tuple[str, str]
    pairs: tuple[PairResult, ...]
    decision: Decision
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def samples(self) -> list[SampleScore]:
        """Per-sample scores, item by item, system a then b (the input of ``decide``)."""
        return [s for p in self.pairs for s in (p.a, p.b)]

    def status(self) -> list[str]:
        """The honest first lines: gate and judge state, missing components."""
        return list(self.metadata.get("status", []))

    def summary(self) -> str:
        """A plain-text summary: status, per-dimension scores, gate, decision."""
        from .report import render_summary

        return render_summary(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "kind": "head2head",
            "labels": list(self.labels),
            "decision": self.decision.to_dict(),
            "metadata": self.metadata,
            "pairs": [p.to_dict(versioned=False) for p in self.pairs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Head2Head:
        return cls(
            labels=(data["labels"][0], data["labels"][1]),
            pairs=tuple(PairResult.from_dict(p) for p in data["pairs"]),
            decision=Decision.from_dict(data["decision"]),
            metadata=dict(data.get("metadata", {})),
        )

    def to_json(self) -> str:
        """Everything, as canonical JSON (``run.json``)."""
        return dumps_canonical(self.to_dict())

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write scores.jsonl, run.json, report.md and report.html into ``directory``."""
        from .report import save_run

        return save_run(self, directory)


def status_lines(transcriber: Any, judge: Any, probes: Any) -> list[str]:
    """What runs and what does not, said plainly; printed first everywhere."""
    from .transcribe import gate_status

    lines = list(gate_status(transcriber))
    if judge is None:
        lines.append(
            "JUDGE OFF: no audio-LLM judge; tone and naturalness are NOT scored "
            "(composites use the probe dimensions only)"
        )
    else:
        lines.append(f"judge: {getattr(judge, 'model', '?')} "
                     f"(prompt {getattr(judge, 'prompt_version', '?')})")
    if probes is not None:
        lines.append(f"probes: {', '.join(probes.ids)}")
        missing = [t.name for t in TRAITS.objective() if t.name not in probes.traits]
        if missing:
            lines.append(f"NOT MEASURED (no probe): {', '.join(missing)}")
    else:
        lines.append("PROBES OFF: no objective trait is measured")
    return lines


def _picklable(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def _analyse_unit(args: tuple[Item, bytes | None, str, Any, Any]) -> ClipAnalysis:
    item, wav, label, probes, transcriber = args
    return analyse_clip(item, wav, system=label, probes=probes, transcriber=transcriber)


def _progress(enabled: bool, total: int, what: str) -> Any:
    if not enabled or total == 0:
        return None
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    prog = Progress(TextColumn(f"{what:<12}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), transient=False)
    prog.start()
    prog.add_task(what, total=total)
    return prog


def _tick(prog: Any, n: int = 1) -> None:
    if prog is not None:
        prog.advance(prog.task_ids[0], n)


def _stop(prog: Any) -> None:
    if prog is not None:
        prog.stop()


def _open_cache(cache: Cache | str | os.PathLike[str] | None) -> Cache:
    if cache is None:
        return NullCache()
    if isinstance(cache, Cache):
        return cache
    return Cache(cache)


def synthesize_all(
    items: Sequence[Item],
    system: Callable[[str, str], bytes],
    *,
    cache: Cache,
    progress: bool = False,
    label: str = "",
) -> tuple[list[bytes | None], dict[str, str]]:
    """Clips for every item (from the cache when present); failures by item id."""
    sid = system_id(system)
    keys = [cache_key({"system": sid, "item": it.id, "text": it.text,
                       "instruction": it.instruction}) for it in items]
    clips: list[bytes | None] = [None] * len(items)
    failures: dict[str, str] = {}
    todo: list[int] = []
    if not getattr(system, "cache_clips", True):
        cache = NullCache()
    for i, k in enumerate(keys):
        hit = cache.get_bytes("clips", k)
        if hit is None:
            todo.append(i)
        else:
            clips[i] = hit[0]
    prog = _progress(progress, len(todo), f"synth {label}")
    many = getattr(system, "synthesize_many", None)

    def keep(i: int, res: bytes | Exception) -> None:
        if isinstance(res, Exception):
            failures[items[i].id] = f"synthesis: {res}"
        elif not res:
            failures[items[i].id] = "synthesis: the system returned no audio"
        else:
            clips[i] = bytes(res)
            cache.put_bytes("clips", keys[i], bytes(res), {"system": sid, "item": items[i].id})

    try:
        if many is None:
            # One call per item, committed as soon as it returns.
            for i in todo:
                try:
                    keep(i, synthesize_item(system, items[i]))
                except VocenceError as exc:
                    keep(i, exc)
                _tick(prog)
        else:
            # Batched systems: committed chunk by chunk (a resume redoes at most one chunk).
            for start in range(0, len(todo), _SYNTH_CHUNK):
                chunk = todo[start : start + _SYNTH_CHUNK]
                try:
                    results = list(many([(items[i].text, items[i].instruction)
                                         for i in chunk]))
                except ConfigError:
                    raise  # a missing package or bad setting stops the run, it is no item's fault
                except Exception as exc:  # a batch that fails as a whole fails its items
                    results = [SynthesisError(f"{sid}: {type(exc).__name__}: {exc}")] * len(chunk)
                if len(results) != len(chunk):
                    raise SynthesisError(
                        f"{sid}.synthesize_many returned {len(results)} results for "
                        f"{len(chunk)} requests"
                    )
                for i, res in zip(chunk, results, strict=True):
                    keep(i, res)
                _tick(prog, len(chunk))
    finally:
        _stop(prog)
    return clips, failures


def _analysis_keys(item: Item, wav: bytes, probes: Any, transcriber: Any) -> tuple[str, str]:
    sha = hashlib.sha256(wav).hexdigest()
    tkey = cache_key({"audio": sha, "engine": getattr(transcriber, "engine", None)})
    pkey = cache_key({"audio": sha, "probes": list(probes.ids) if probes else [],
                      "request": item.traits, "text": item.text})
    return tkey, pkey


def _assemble(item: Item, label: str, part: Mapping[str, Any],
              transcript: Mapping[str, Any] | None) -> ClipAnalysis:
    """A clip's analysis from its cached probe part and (optional) cached transcript."""
    wer = gate = None
    text = engine = None
    if transcript is not None:
        from .transcribe import Transcript, score_transcript

        tr = Transcript(str(transcript["text"]), str(transcript["engine"]))
        res = score_transcript(item.text, tr)
        text, engine, wer, gate = tr.text, tr.engine, res.wer, res.gate
    return ClipAnalysis(
        item.id, label, sha256=part["sha256"], duration=part["duration"],
        transcript=text, asr_engine=engine, wer=wer, gate=gate,
        probes={k: ProbeResult.from_dict(v) for k, v in part["probes"].items()},
        quality=dict(part.get("quality", {})),
        notes=tuple(part.get("notes", ())),
    )


# Clips per forward pass group for batched (GPU) probes such as the classifiers.
_BATCH_CLIPS = 32


def _split_batched(probes: Any) -> tuple[Any, tuple[Any, ...]]:
    """(probes that run per clip in the worker pool, probes with ``measure_batch`` that run
    batched in this process — the model-backed classifiers, one model copy on the GPU)."""
    if probes is None:
        return None, ()
    batched = tuple(p for p in probes.probes if callable(getattr(p, "measure_batch", None)))
    if not batched:
        return probes, ()
    from .probes import ProbeSet

    per_clip = ProbeSet([p for p in probes.probes if all(p is not q for q in batched)],
                        diagnostics=probes.diagnostics, registry=probes.registry)
    return per_clip, batched


def _merge_results(probes: Any, results: Sequence[Mapping[str, ProbeResult]]
                   ) -> dict[str, ProbeResult]:
    """Per trait, the result of the latest probe in ``probes`` (ProbeSet priority)."""
    rank = {pid: k for k, pid in enumerate(probes.ids)}
    best: dict[str, ProbeResult] = {}
    for res in results:
        for trait, r in res.items():
            if trait not in best or rank.get(r.probe, -1) >= rank.get(best[trait].probe, -1):
                best[trait] = r
    return {t: best[t] for t in probes.registry.names() if t in best}


def _add_batched(
    probes: Any,
    batched: tuple[Any, ...],
    done: list[tuple[int, ClipAnalysis, bytes]],
    items: Sequence[Item],
) -> list[ClipAnalysis]:
    """Run the batched probes over finished per-clip analyses and merge their results."""
    from dataclasses import replace

    from .audio import load_audio

    audios = [load_audio(wav, name=an.system + "/" + an.item) for _, an, wav in done]
    its = [items[i] for i, _, _ in done]
    extra: list[list[Mapping[str, ProbeResult]]] = [[] for _ in done]
    notes: list[list[str]] = [[] for _ in done]
    for p in batched:
        try:
            outs = p.measure_batch(audios, its)
        except VocenceError as exc:
            for k in range(len(done)):
                notes[k].append(f"probes failed: {exc}")
            continue
        for k, res in enumerate(outs):
            extra[k].append(res)
    return [
        replace(an, probes=_merge_results(probes, [an.probes, *extra[k]]),
                notes=(*an.notes, *notes[k]))
        for k, (_, an, _) in enumerate(done)
    ]


def _analyse_all(
    items: Sequence[Item],
    clips: Sequence[bytes | None],
    failures: Mapping[str, str],
    label: str,
    *,
    probes: Any,
    transcriber: Any,
    cache: Cache,
    executor: Executor,
    progress: bool,
) -> list[ClipAnalysis]:
    out: list[ClipAnalysis | None] = [None] * len(items)
    parts: dict[int, tuple[Any, Any]] = {}
    keys: dict[int, tuple[str, str]] = {}  # (transcript key, probe key), hashed once per clip
    per_clip, batched = _split_batched(probes)
    units: list[tuple[int, tuple[Item, bytes | None, str, Any, Any]]] = []
    for i, (item, wav) in enumerate(zip(items, clips, strict=True)):
        if wav is None:
            out[i] = ClipAnalysis(item.id, label, failure=failures.get(item.id, "no audio"))
            continue
        tkey, pkey = keys[i] = _analysis_keys(item, wav, probes, transcriber)
        part = cache.get_json("probes", pkey)
        tr = cache.get_json("transcripts", tkey) if transcriber is not None else None
        need_tr = transcriber is not None and tr is None
        if part is not None and not need_tr:
            out[i] = _assemble(item, label, part, tr)
            continue
        parts[i] = (part, tr)
        units.append((i, (item, wav, label, per_clip if part is None else None,
                          transcriber if need_tr else None)))

    def finish(i: int, an: ClipAnalysis) -> None:
        item = items[i]
        tkey, pkey = keys[i]
        part, tr = parts[i]
        if part is None:
            part = {"sha256": an.sha256, "duration": an.duration, "notes": list(an.notes),
                    "quality": an.quality,
                    "probes": {k: v.to_dict(versioned=False) for k, v in an.probes.items()}}
            cache.put_json("probes", pkey, part)
        if transcriber is not None and tr is None:
            tr = {"text": an.transcript, "engine": an.asr_engine}
            cache.put_json("transcripts", tkey, tr)
        out[i] = _assemble(item, label, part, tr)

    pending: list[tuple[int, ClipAnalysis, bytes]] = []

    def flush() -> None:
        for (i, _, _), an in zip(pending, _add_batched(probes, batched, pending, items),
                                 strict=True):
            finish(i, an)
        pending.clear()

    prog = _progress(progress, len(units), f"analyse {label}")
    try:
        for j, an in executor.map_unordered(_analyse_unit, [u for _, u in units]):
            i = units[j][0]
            if an.failure is not None:
                out[i] = an  # undecodable or ASR failure: not cached, redone on resume
            elif batched and parts[i][0] is None:
                wav = clips[i]
                assert wav is not None
                pending.append((i, an, wav))
                if len(pending) >= _BATCH_CLIPS:
                    flush()
            else:
                finish(i, an)
            _tick(prog)
        if pending:
            flush()
    finally:
        _stop(prog)
    return [a for a in out if a is not None]


def _judge_all(
    items: Sequence[Item],
    clips_a: Sequence[bytes | None],
    clips_b: Sequence[bytes | None],
    an_a: Sequence[ClipAnalysis],
    an_b: Sequence[ClipAnalysis],
    judge: Any,
    *,
    registry: TraitRegistry,
    consistent: bool,
    votes: int,
    concurrency: int,
    progress: bool,
    all_at_once: bool = False,
) -> tuple[list[dict[str, Verdict]], list[dict[str, str]]]:
    n = len(items)
    verdicts: list[dict[str, Verdict]] = [{} for _ in range(n)]
    failures: list[dict[str, str]] = [{} for _ in range(n)]
    if judge is None:
        return verdicts, failures
    dims = registry.judged_dimensions()
    todo = [i for i in range(n) if needs_judge(an_a[i], an_b[i])]
    # One job per dimension, or one per pair scoring every dimension in one upload.
    jobs: list[tuple[int, tuple[str, ...]]] = (
        [(i, tuple(dims)) for i in todo] if all_at_once else [(i, (d,)) for i in todo for d in dims]
    )

    def run(job: tuple[int, tuple[str, ...]]) -> tuple[int, tuple[str, ...], Any]:
        i, ds = job
        it = items[i]
        kw = dict(text=it.text, instruction=it.instruction, audio_a=clips_a[i],
                  audio_b=clips_b[i], consistent=consistent, votes=votes,
                  category=it.category)
        try:
            if all_at_once:
                return i, ds, judge.compare_all(dimensions=list(ds), all_at_once=True, **kw)
            return i, ds, {ds[0]: judge.compare(dimension=ds[0], **kw)}
        except JudgeError as exc:
            return i, ds, str(exc)

    prog = _progress(progress, len(jobs), "judge")
    try:
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            for i, ds, res in pool.map(run, jobs):
                for dim in ds:
                    if isinstance(res, str):
                        failures[i][dim] = res
                    elif isinstance(res.get(dim), Verdict):
                        verdicts[i][dim] = res[dim]
                    else:
                        failures[i][dim] = "the judge returned no verdict for this dimension"
                _tick(prog)
    finally:
        _stop(prog)
    return verdicts, failures


def compare_models(
    corpus: Iterable[Item],
    clips_a: Sequence[bytes | None] | Mapping[str, bytes],
    clips_b: Sequence[bytes | None] | Mapping[str, bytes],
    judge: Any = None,
    *,
    probes: Any = "default",
    transcriber: Any = None,
    labels: tuple[str, str] = ("a", "b"),
    cache: Cache | str | os.PathLike[str] | None = None,
    workers: int | None = None,
    executor: Executor | str | None = None,
    progress: bool = True,
    consistent: bool = True,
    votes: int = 1,
    judge_concurrency: int = 4,
    all_at_once: bool = False,
    registry: TraitRegistry = TRAITS,
    synthesis_failures: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {}),
    metadata: Mapping[str, Any] | None = None,
) -> Head2Head:
    """Score two sets of pre-synthesised clips (by position or by item id) and decide."""
    items = list(corpus)
    if labels[0] == labels[1]:
        raise ConfigError(f"the two systems need different labels, got {labels[0]!r} twice")
    if isinstance(probes, str) and probes == "default":
        from .probes import default_probes

        probes = default_probes()

    def align(clips: Sequence[bytes | None] | Mapping[str, bytes]) -> list[bytes | None]:
        if isinstance(clips, Mapping):
            return [clips.get(it.id) for it in items]
        if len(clips) != len(items):
            raise ConfigError(f"{len(clips)} clips for {len(items)} items")
        return list(clips)

    ca, cb = align(clips_a), align(clips_b)
    store = _open_cache(cache)
    own_executor = not hasattr(executor, "map_unordered")
    exe: Executor = (make_executor(executor if isinstance(executor, str) else None,
                                   workers=workers) if own_executor else executor)  # type: ignore[assignment]
    in_process = not (_picklable(_split_batched(probes)[0]) and _picklable(transcriber))
    if in_process and exe.workers > 1:
        exe.close()
        exe = make_executor("serial")
        own_executor = True
    timings: dict[str, float] = dict((metadata or {}).get("timings", {}))
    try:
        t0 = time.perf_counter()
        an_a = _analyse_all(items, ca, synthesis_failures[0], labels[0], probes=probes,
                            transcriber=transcriber, cache=store, executor=exe,
                            progress=progress)
        an_b = _analyse_all(items, cb, synthesis_failures[1], labels[1], probes=probes,
                            transcriber=transcriber, cache=store, executor=exe,
                            progress=progress)
        timings["analyse_s"] = time.perf_counter() - t0
    finally:
        if own_executor:
            exe.close()
    t0 = time.perf_counter()
    if judge is not None and hasattr(judge, "attach_cache") and not isinstance(store, NullCache):
        judge.attach_cache(store)
    verdicts, jfail = _judge_all(items, ca, cb, an_a, an_b, judge, registry=registry,
                                 consistent=consistent, votes=votes,
                                 concurrency=judge_concurrency, progress=progress,
                                 all_at_once=all_at_once)
    timings["judge_s"] = time.perf_counter() - t0
    pairs = tuple(
        combine(it, an_a[i], an_b[i], verdicts[i], labels=labels, judge_failures=jfail[i],
                registry=registry)
        for i, it in enumerate(items)
    )
    if not pairs:
        raise ConfigError("the corpus is empty: nothing to compare")
    decision = decide([p.a.S for p in pairs], [p.b.S for p in pairs], labels=labels)
    meta: dict[str, Any] = dict(metadata or {})
    meta.update(_run_metadata(items, probes, transcriber, judge, consistent, votes, exe))
    meta["judge_all_at_once"] = all_at_once
    meta["timings"] = timings
    meta["status"] = status_lines(transcriber, judge, probes)
    meta["cache"] = {"path": str(store.path), "hits": store.hits, "misses": store.misses}
    if cache is not None and not isinstance(cache, Cache):
        store.close()
    return Head2Head(labels=labels, pairs=pairs, decision=decision, metadata=meta)


def _run_metadata(items: Sequence[Item], probes: Any, transcriber: Any, judge: Any,
                  consistent: bool, votes: int, exe: Executor) -> dict[str, Any]:
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
        "bootstrap": {"n_boot": BOOTSTRAP_N, "seed": BOOTSTRAP_SEED},
        "executor": {"name": exe.name, "workers": exe.workers},
    }
    if judge is not None:
        backend = getattr(judge, "backend", None)
        usage = getattr(backend, "usage", None)
        if usage is not None:
            meta["judge_usage"] = usage.to_dict() if hasattr(usage, "to_dict") else dict(
                vars(usage))
        cost = getattr(backend, "cost_usd", None)
        if callable(cost):
            meta["judge_cost_usd"] = cost()
    return meta


def benchmark(
    corpus: Iterable[Item],
    model_a: Callable[[str, str], bytes],
    model_b: Callable[[str, str], bytes],
    judge: Any = None,
    *,
    probes: Any = "default",
    transcriber: Any = None,
    labels: tuple[str, str] = ("a", "b"),
    cache: Cache | str | os.PathLike[str] | None = None,
    workers: int | None = None,
    executor: Executor | str | None = None,
    progress: bool = True,
    consistent: bool = True,
    votes: int = 1,
    judge_concurrency: int = 4,
    all_at_once: bool = False,
    registry: TraitRegistry = TRAITS,
) -> Head2Head:
    """Synthesise with both systems, then :func:`compare_models`: the main job.

    ``cache`` (a path or :class:`~vocencebench.cache.Cache`) makes the run resumable.
    ``probes`` defaults to :func:`vocencebench.default_probes`; without ``transcriber`` the
    intelligibility gate is OFF and without ``judge`` tone and naturalness are not scored —
    both are announced in the summary's first lines and in the reports.
    """
    items = list(corpus)
    store = _open_cache(cache)
    try:
        t0 = time.perf_counter()
        clips_a, fail_a = synthesize_all(items, model_a, cache=store, progress=progress,
                                         label=labels[0])
        clips_b, fail_b = synthesize_all(items, model_b, cache=store, progress=progress,
                                         label=labels[1])
        synth_s = time.perf_counter() - t0
        return compare_models(
            items, clips_a, clips_b, judge, probes=probes, transcriber=transcriber,
            labels=labels, cache=store, workers=workers, executor=executor,
            progress=progress, consistent=consistent, votes=votes,
            judge_concurrency=judge_concurrency, all_at_once=all_at_once, registry=registry,
            synthesis_failures=(fail_a, fail_b),
            metadata={"systems": {labels[0]: system_id(model_a), labels[1]: system_id(model_b)},
                      "timings": {"synthesis_s": synth_s}},
        )
    finally:
        if cache is not None and not isinstance(cache, Cache):
            store.close()
