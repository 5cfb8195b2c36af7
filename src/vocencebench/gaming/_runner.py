"""``redteam()``: every attack of the catalogue, head to head against its base and the honest
reference, with the caller's instruments, through :func:`vocencebench.compare.benchmark`.

Sharing: one cache (the caller's, or a temporary file) serves every duel, so the reference's
and each base's clips are synthesised once (rendered here first, in batches, and served to
every duel from memory), every clip is analysed once (analyses are keyed by the audio's
sha256 and the request), and a transformation that leaves a request alone returns the
base's bytes, whose analysis is then shared too. One executor serves all duels.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._numbers import is_whole_number
from .._util.text import terminal_safe
from ..adapters import synthesize_item, system_id
from ..cache import Cache, NullCache, cache_key
from ..errors import ConfigError, VocenceError
from ..schema import Item
from ..specs import build_system
from ..systems.hibari import NEURAL_SYSTEMS
from ..traits import TRAITS
from ._result import RedteamResult
from ._verdict import AttackRow, Duel, verdict
from .attacks import CATALOGUE, INSTRUMENTS, Attack, AttackSpec, RewriteAttack, get_spec

__all__ = ["default_reference", "instruments_on", "print_progress", "redteam", "resolve_system"]

System = Callable[[str, str], bytes]


# ----------------------------------------------------------------------------- systems


def _hibari(name: str) -> System | None:
    """The built-in ``name`` (``hibari`` or ``hibari-follow``, from the spec registry) when
    hibari-tts is installed, else None."""
    if importlib.util.find_spec("hibari") is None:
        return None
    try:
        return build_system(name)
    except (ImportError, AttributeError, VocenceError):
        return None


def default_reference() -> tuple[System, str, System, str]:
    """(reference, its label, flat base, its label): ``hibari-follow`` and ``hibari`` when
    hibari-tts and :mod:`vocencebench.systems.hibari` are available, else ``espeak-follow``
    and ``espeak-flat``."""
    ref = _hibari("hibari-follow")
    flat = _hibari("hibari") if ref is not None else None
    if ref is not None and flat is not None:
        return ref, "hibari-follow", flat, "hibari"
    from ..adapters import EspeakSystem

    return EspeakSystem("espeak-follow"), "espeak-follow", EspeakSystem("espeak-flat"), \
        "espeak-flat"


def print_progress(line: str) -> None:
    """Show one progress line on stderr; labels come from specs and may carry controls."""
    print(terminal_safe(line), file=sys.stderr, flush=True)


def resolve_system(spec: str | System) -> tuple[System, str]:
    """A system and its table label from a CLI spec (``hibari-follow``, ``espeak-follow``,
    ``cmd:…`` …, built by the spec registry) or a system object."""
    if not isinstance(spec, str):
        sid = system_id(spec)
        return spec, sid.split("@")[0].split("/")[-1][:40] or "reference"
    kind, _, rest = spec.partition(":")
    label = kind if not rest else f"{kind}-{rest.replace(os.sep, '/').rstrip('/')[-30:]}"
    if spec in NEURAL_SYSTEMS:
        system = _hibari(spec)
        if system is None:
            raise ConfigError(f"{spec} needs hibari-tts and vocencebench.neural; "
                              "install with: pip install hibari-tts")
        return system, label
    return build_system(spec), label


def _flat_for(label: str) -> tuple[System, str]:
    if label == "hibari-follow":
        flat = _hibari("hibari")
        if flat is not None:
            return flat, "hibari"
    from ..adapters import EspeakSystem

    return EspeakSystem("espeak-flat"), "espeak-flat"


class _Rendered:
    """``system`` with clips rendered in advance, keyed by (script, instruction); anything
    else goes to ``system`` (through ``executor`` when it can run there). Same
    ``system_id``, so caches see the same system."""

    def __init__(self, system: System, clips: Mapping[tuple[str, str], bytes],
                 executor: Any = None) -> None:
        self.system = system
        self.system_id = system_id(system)
        self._clips = dict(clips)
        self.executor = executor

    def synthesize_item(self, item: Item) -> bytes:
        hit = self._clips.get((item.text, item.instruction))
        return hit if hit is not None else synthesize_item(self.system, item)

    def __call__(self, text: str, instruction: str) -> bytes:
        hit = self._clips.get((text, instruction))
        return hit if hit is not None else bytes(self.system(text, instruction))

    def synthesize_many(self, requests: Sequence[tuple[str, str]], *,
                        workers: int | None = None) -> list[bytes | Exception]:
        out: list[bytes | Exception | None] = [self._clips.get(r) for r in requests]
        todo = [i for i, r in enumerate(out) if r is None]
        if todo:
            rendered = _render_requests(self.system, [requests[i] for i in todo],
                                        self.executor)
            for i, res in zip(todo, rendered, strict=True):
                out[i] = res  # not kept: the duel caches the attacker's clips itself
        return [r if r is not None else ConfigError("internal: not rendered") for r in out]

    def __repr__(self) -> str:
        return f"<rendered {self.system_id}>"


def _forks_itself(system: Any) -> bool:
    """Whether ``system`` (through any wrappers) is an eSpeak built-in, which renders in
    parallel in its own clip processes already."""
    from ..adapters import EspeakSystem
    from ..tts import EspeakFlat, EspeakFollow

    seen = 0
    while seen < 8:
        if isinstance(system, EspeakSystem | EspeakFollow | EspeakFlat):
            return True
        inner = getattr(system, "base", None) or getattr(system, "system", None)
        if inner is None:
            return False
        system, seen = inner, seen + 1
    return False


def _render_unit(args: tuple[Any, str, str]) -> bytes | Exception:
    """One request rendered in a worker process (module level: picklable)."""
    system, text, instruction = args
    try:
        return bytes(system(text, instruction))
    except Exception as exc:  # a user's system may raise anything
        from ..errors import SynthesisError

        return exc if _picklable(exc) else SynthesisError(f"{type(exc).__name__}: {exc}")


def _render_requests(system: System, requests: Sequence[tuple[str, str]],
                     executor: Any = None) -> list[bytes | Exception]:
    """Clips for ``requests``: on the worker pool when there is one and ``system`` can be
    sent there (a system that renders in parallel itself, like eSpeak, is called directly),
    else through ``synthesize_many`` or one call each. An attack is never sent: its
    ``synthesize_many`` rewrites the requests and hands them to its (rendered) base."""
    if executor is not None and getattr(executor, "workers", 1) > 1 and len(requests) > 1 \
            and not isinstance(system, Attack) and not _forks_itself(system) \
            and _picklable(system):
        out: list[bytes | Exception | None] = [None] * len(requests)
        for i, res in executor.map_unordered(
                _render_unit, [(system, t, ins) for t, ins in requests]):
            out[i] = res
        return [r if r is not None else ConfigError("internal: not rendered") for r in out]
    many = getattr(system, "synthesize_many", None)
    if many is not None:
        return list(many(list(requests)))
    done: list[bytes | Exception] = []
    for text, instruction in requests:
        try:
            done.append(bytes(system(text, instruction)))
        except Exception as exc:  # a user's system may raise anything
            done.append(exc)
    return done


def _prerender(system: System, items: Sequence[Item], store: Cache,
               executor: Any = None) -> _Rendered:
    """Every item's clip once (from the cache, else batched or on the worker pool), kept in
    memory and in the cache under the key :func:`vocencebench.compare.benchmark` uses for
    its clips."""
    sid = system_id(system)
    use_cache = getattr(system, "cache_clips", True)
    clips: dict[tuple[str, str], bytes] = {}
    todo: list[tuple[Item, str]] = []
    for it in items:
        if (it.text, it.instruction) in clips:
            continue
        key = cache_key({"system": sid, "item": it.id, "text": it.text,
                         "instruction": it.instruction})
        hit = store.get_bytes("clips", key) if use_cache else None
        if hit is not None:
            clips[(it.text, it.instruction)] = hit[0]
        else:
            todo.append((it, key))
    if todo:
        if getattr(system, "synthesize_item", None) is not None \
                and getattr(system, "synthesize_many", None) is None:
            results: list[bytes | Exception] = []
            for it, _ in todo:
                try:
                    results.append(synthesize_item(system, it))
                except VocenceError as exc:
                    results.append(exc)
        else:
            results = _render_requests(system, [(it.text, it.instruction) for it, _ in todo],
                                       executor)
        for (it, key), res in zip(todo, results, strict=True):
            if isinstance(res, bytes | bytearray) and res:
                clips[(it.text, it.instruction)] = bytes(res)
                if use_cache:
                    store.put_bytes("clips", key, bytes(res), {"system": sid, "item": it.id})
    return _Rendered(system, clips, executor)


# ----------------------------------------------------------------------------- instruments


def _has_classifiers(probes: Any) -> bool:
    if probes is None:
        return False
    return any(type(p).__module__.endswith("probes.classifiers")
               or {"age", "emotion", "accent"} & set(getattr(p, "traits", ()))
               for p in getattr(probes, "probes", ()))


def instruments_on(*, probes: Any, transcriber: Any, judge: Any,
                   holdout_salt: str | None) -> dict[str, bool]:
    """Which instruments (:data:`~vocencebench.gaming.attacks.INSTRUMENTS`) are on."""
    return {
        "probes": probes is not None and bool(getattr(probes, "probes", ())),
        "classifiers": _has_classifiers(probes),
        "gate": transcriber is not None,
        "judge": judge is not None,
        "holdout": bool(holdout_salt),
    }


# ----------------------------------------------------------------------------- duels


def _duel(h2h: Any, *, opponent: str, partition: str) -> Duel:
    la, lb = h2h.labels
    sums: dict[str, dict[str, list[float]]] = {la: {}, lb: {}}
    deltas: dict[str, list[float]] = {}
    dropped: dict[str, int] = {}
    for p in h2h.pairs:
        for dim in p.dropped:
            dropped[dim] = dropped.get(dim, 0) + 1
        for dim in set(p.a.d) & set(p.b.d):
            sums[la].setdefault(dim, []).append(float(p.a.d[dim]))
            sums[lb].setdefault(dim, []).append(float(p.b.d[dim]))
            deltas.setdefault(dim, []).append(float(p.b.d[dim]) - float(p.a.d[dim]))
    order = {d: k for k, d in enumerate(h2h.registry.dimensions())}  # the duel's own traits
    mean_d = {lab: {d: math.fsum(v) / len(v) for d, v in sorted(
        per.items(), key=lambda kv: order.get(kv[0], 99))} for lab, per in sums.items()}
    delta_d = {d: math.fsum(v) / len(v) for d, v in sorted(
        deltas.items(), key=lambda kv: order.get(kv[0], 99))}
    return Duel(opponent=opponent, partition=partition, attacker=lb, opponent_label=la,
                decision=h2h.decision, mean_d=mean_d, delta_d=delta_d,
                dropped=dict(sorted(dropped.items())), n=len(h2h.pairs))


def _moved(duel: Duel | None) -> tuple[str, float] | None:
    if duel is None:
        return None
    if duel.delta_d:
        dim = max(duel.delta_d, key=lambda d: (abs(duel.delta_d[d]), d))
        return dim, duel.delta_d[dim]
    d = duel.decision
    change = d.mean_b - d.mean_a
    return ("S", change) if math.isfinite(change) else None


def _open_store(cache: Cache | str | os.PathLike[str] | None,
                tmp: list[tempfile.TemporaryDirectory[str]]) -> tuple[Cache, bool]:
    if isinstance(cache, Cache) and not isinstance(cache, NullCache):
        return cache, False
    if cache is None or isinstance(cache, NullCache):
        # Sharing clips and analyses across duels is the point: without a cache of the
        # caller's, a temporary one lives as long as the call.
        d = tempfile.TemporaryDirectory(prefix="vocence-redteam-")
        tmp.append(d)
        return Cache(Path(d.name) / "cache.sqlite"), True
    return Cache(cache), True


def redteam(
    items: Iterable[Item],
    *,
    reference: str | System | None = None,
    flat: str | System | None = None,
    judge: Any = None,
    transcriber: Any = None,
    probes: Any = "default",
    holdout_salt: str | None = None,
    holdout_fraction: float = 0.2,
    cache: Cache | str | os.PathLike[str] | None = None,
    attacks: Sequence[str] | None = None,
    limit: int | None = None,
    workers: int | None = None,
    executor: Any = None,
    consistent: bool = True,
    votes: int = 1,
    all_at_once: bool = False,
    judge_concurrency: int = 4,
    progress: bool | Callable[[str], None] = False,
    canaries: bool = True,
) -> RedteamResult:
    """Run the attack catalogue against the honest ``reference`` with these instruments.

    ``items``: the corpus (e.g. ``vb.load_benchmark()``). With ``holdout_salt``, it is split
    by :func:`vocencebench.split_holdout` (``holdout_fraction`` held out): the memoriser
    memorises the public part and every deciding duel runs on the held-out part; without a
    salt the duels run on all items. ``limit`` keeps the first N items of each partition
    used. ``reference``: a system or spec (default: :func:`default_reference`); ``flat``:
    the voice that ignores the instruction, base of most attacks (default: ``hibari`` beside
    ``hibari-follow``, else ``espeak-flat``). ``judge``, ``transcriber``, ``probes`` are the
    instruments, as in :func:`vocencebench.benchmark` (``probes="default"`` = the acoustic
    probes). ``cache``: a path or Cache shared by every duel (default: a temporary file).
    ``attacks``: names from :data:`~vocencebench.gaming.CATALOGUE` (default: all).
    ``progress``: True prints one line per duel to stderr, or a callable receives them.
    ``canaries``: check the instruments on the known-answer canaries once, before anything
    is synthesised (:func:`vocencebench.canaries.preflight`; the duels do not check them
    again); the record is the result's ``canaries`` and a status line. An instrument that
    fails them raises :class:`~vocencebench.errors.CanaryError` (``canaries: …``, naming the
    failed checks) before any clip is rendered: no attack is tested with an instrument that
    cannot be trusted, and a paid reference is not called.
    """
    t_start = time.perf_counter()
    corpus = list(items)
    if not corpus:
        raise ConfigError("the corpus is empty: nothing to attack")
    from ..corpus import validate_corpus

    # The one corpus gate, before the clips are pre-rendered (the duels' own gate in
    # benchmark() would only see the corpus after that synthesis).
    validate_corpus(corpus, registry=getattr(probes, "registry", None) or TRAITS)
    if limit is not None and (not is_whole_number(limit) or limit < 1):
        raise ConfigError(f"limit must be a whole number of attacks ≥ 1, got {limit!r}")
    specs: list[AttackSpec] = (list(CATALOGUE) if attacks is None
                               else [get_spec(a) for a in attacks])
    if not specs:
        raise ConfigError("no attack selected")
    say: Callable[[str], None]
    if callable(progress):
        say = progress
    elif progress:
        say = print_progress
    else:
        def say(line: str) -> None:
            return None

    def cut(xs: Sequence[Item]) -> list[Item]:
        return list(xs[:limit]) if limit is not None else list(xs)

    selection: dict[str, Any] = {"corpus_items": len(corpus), "limit": limit}
    if holdout_salt is not None:  # "" is refused by split_holdout, not ignored
        from ..corpus import split_holdout

        split = split_holdout(corpus, holdout_fraction, salt=holdout_salt)
        evaluation = cut(split.heldout)
        public = cut(split.public)
        memorised: list[Item] = list(split.public)
        eval_partition = "held-out"
        selection["holdout"] = {"salt_sha256": split.salt_digest, "fraction": holdout_fraction,
                                "heldout_items": len(split.heldout),
                                "public_items": len(split.public)}
        if not evaluation:
            raise ConfigError("the held-out partition is empty; use a larger corpus or "
                              "fraction")
    else:
        evaluation = cut(corpus)
        public = evaluation
        memorised = list(corpus)
        eval_partition = "evaluation"
    selection["evaluation_items"] = len(evaluation)

    if reference is None:
        ref_sys, ref_label, flat_default, flat_default_label = default_reference()
    else:
        ref_sys, ref_label = resolve_system(reference)
        flat_default, flat_default_label = _flat_for(ref_label)
    flat_sys, flat_label = (flat_default, flat_default_label) if flat is None \
        else resolve_system(flat)
    if flat_label == ref_label:
        flat_label = f"{flat_label}-flat"
    if isinstance(probes, str) and probes == "default":
        from ..probes import default_probes

        probes = default_probes()
    on = instruments_on(probes=probes, transcriber=transcriber, judge=judge,
                        holdout_salt=holdout_salt)

    tmp: list[tempfile.TemporaryDirectory[str]] = []
    store, own_store = _open_store(cache, tmp)
    from ..canaries import preflight, skipped_record, status_line
    from ..specs import make_executor

    exe: Any = None
    own_exe = False
    timings: dict[str, float] = {}
    rows: list[AttackRow] = []
    try:
        t0 = time.perf_counter()
        # Once, before any clip: every duel uses the same instruments, and a reference that
        # costs money must not be called for an instrument that fails its known answers.
        canary_record = (preflight(probes=probes, judge=judge, cache=store,
                                   registry=getattr(probes, "registry", None) or TRAITS)
                         if canaries else skipped_record())
        canary_line = status_line(canary_record)
        timings["canaries_s"] = time.perf_counter() - t0
        say(f"redteam: {canary_line}")
        if not hasattr(executor, "map_unordered") and not (_picklable(probes)
                                                           and _picklable(transcriber)):
            executor = "serial"  # instruments that cannot travel to worker processes
        exe = executor if hasattr(executor, "map_unordered") else make_executor(
            executor if isinstance(executor, str) else None, workers=workers)
        own_exe = exe is not executor
        t0 = time.perf_counter()
        need_public = holdout_salt is not None and any(s.name == "memoriser" for s in specs)
        render_items = evaluation + (public if need_public else [])
        ref = _prerender(ref_sys, render_items, store, exe)
        base_flat = _prerender(flat_sys, render_items, store, exe)
        timings["render_s"] = time.perf_counter() - t0
        say(f"redteam: reference {ref_label}, flat {flat_label}, {len(evaluation)} items "
            f"({eval_partition}), {len(specs)} attacks")
        from ..compare import benchmark

        def duel(attacker: System, label: str, opponent: _Rendered, opp_label: str,
                 which: str, part: str, its: Sequence[Item]) -> Duel:
            t = time.perf_counter()
            h2h = benchmark(its, opponent, attacker, judge, probes=probes,
                            transcriber=transcriber, labels=(opp_label, label), cache=store,
                            executor=exe, progress=False, consistent=consistent, votes=votes,
                            judge_concurrency=judge_concurrency, all_at_once=all_at_once,
                            canaries=False)  # checked once above
            d = _duel(h2h, opponent=which, partition=part)
            timings[f"{label} vs {opp_label} ({part})"] = time.perf_counter() - t
            say(f"  {label:<18} vs {opp_label:<14} [{part}] {d.brief()}")
            return d

        held: dict[tuple[tuple[str, str], ...], tuple[_Rendered, str]] = {}

        def base_of(spec: AttackSpec) -> tuple[_Rendered, str]:
            if spec.base == "flat":
                return base_flat, flat_label
            if not spec.base_overrides:
                return ref, ref_label
            key = tuple(sorted(spec.base_overrides))
            if key not in held:
                tag = ",".join(f"{k}={v}" for k, v in key)
                # on the rendered reference: a request it leaves alone is not rendered twice
                system = RewriteAttack(ref, name=f"held[{tag}]", overrides=dict(key))
                held[key] = (_prerender(system, render_items, store, exe),
                             f"{ref_label}[{tag}]")
            return held[key]

        for spec in specs:
            base, base_label = base_of(spec)
            same = base is ref
            attacker = spec.make(base, ref, memorised)
            label = spec.name if spec.name not in (ref_label, flat_label) \
                else f"attack-{spec.name}"
            extra: list[Duel] = []
            if spec.name == "memoriser" and holdout_salt:
                part = eval_partition
                for opp, opp_label, which in ((base, base_label, "base"),
                                              (ref, ref_label, "reference")):
                    extra.append(duel(attacker, label, opp, opp_label, which, "public",
                                      public))
            else:
                part = "public" if spec.name == "memoriser" else eval_partition
            if same:
                vs_ref = duel(attacker, label, ref, ref_label, "reference", part, evaluation)
                vs_base: Duel | None = vs_ref
            else:
                vs_base = duel(attacker, label, base, base_label, "base", part, evaluation)
                vs_ref = duel(attacker, label, ref, ref_label, "reference", part, evaluation)
            deciding = [d for d in _unique([vs_base, vs_ref])
                        if d.opponent in spec.decided_by or same]
            v, reason = verdict(needs=spec.needs, instruments=on, deciding=deciding)
            if extra:
                reason += "; on the public items: " + ", ".join(
                    d.detail() for d in extra)
            rows.append(AttackRow(
                name=spec.name, summary=spec.summary, defence=spec.defence, needs=spec.needs,
                decided_by=spec.decided_by, system_id=system_id(attacker),
                base_label=base_label, vs_base=vs_base, vs_reference=vs_ref,
                extra=tuple(extra), moved=_moved(vs_base), verdict=v, reason=reason))
    finally:
        if own_exe and exe is not None:
            exe.close()
        if own_store:
            store.close()
        for d in tmp:
            d.cleanup()
    timings["total_s"] = time.perf_counter() - t_start
    from ..compare import status_lines
    from ..corpus import corpus_hash

    configuration: dict[str, Any] = {
        "reference": {"label": ref_label, "system_id": system_id(ref_sys)},
        "flat": {"label": flat_label, "system_id": system_id(flat_sys)},
        "selection": selection,
        "evaluation_partition": eval_partition,
        "corpus_hash": corpus_hash(evaluation),
        "probes": list(getattr(probes, "ids", ())) if probes is not None else [],
        "asr_engine": getattr(transcriber, "engine", None),
        "judge_model": getattr(judge, "model", None),
        "judge_prompt_version": getattr(judge, "prompt_version", None),
        "judge_consistent": consistent,
        "judge_votes": votes,
        "cache": None if own_store else str(store.path),
        "executor": {"name": getattr(exe, "name", "?"), "workers": getattr(exe, "workers", 0)},
        "attacks": [s.name for s in specs],
    }
    from ..constants import PACKAGE_VERSION as __version__

    configuration["vocencebench"] = __version__
    return RedteamResult(
        rows=tuple(rows), configuration=configuration,
        instruments={k: on[k] for k in INSTRUMENTS},
        status=[*status_lines(transcriber, judge, probes), canary_line],
        canaries=canary_record, timings=timings)


def _picklable(obj: Any) -> bool:
    import pickle

    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def _unique(duels: Iterable[Duel | None]) -> list[Duel]:
    out: list[Duel] = []
    for d in duels:
        if d is not None and all(d is not e for e in out):
            out.append(d)
    return out
