"""The offline leaderboard demo: the built-in systems on the shipped corpus, no judge, no ASR.

``vocencebench leaderboard --demo`` and ``vocencebench demo --leaderboard`` call
:func:`demo_leaderboard`; :func:`demo_systems` says which built-ins are installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .run import Leaderboard, leaderboard

__all__ = ["DEMO_ITEMS_WITH_NEURAL", "demo_leaderboard", "demo_systems"]


#: Items of the demo when the neural built-ins run too (the first half of the corpus; its
#: difficulty mix is 32 / 41 / 27 % against the corpus's 35 / 40 / 25 %). eSpeak alone runs
#: all 496. See docs/leaderboard.md, "The demo", for the timings behind this choice.
DEMO_ITEMS_WITH_NEURAL = 248


def demo_systems(*, neural: bool = True) -> tuple[dict[str, Any], list[str]]:
    """The offline built-ins: espeak-flat, espeak-follow and, when the neural module and
    hibari-tts are installed, hibari and hibari-follow. Returns (systems, notes on what was
    left out and why)."""
    from ..adapters import EspeakSystem

    systems: dict[str, Any] = {"espeak-flat": EspeakSystem("espeak-flat"),
                               "espeak-follow": EspeakSystem("espeak-follow")}
    notes: list[str] = []
    if not neural:
        notes.append("hibari, hibari-follow: left out (neural=False)")
        return systems, notes
    if importlib.util.find_spec("hibari") is None:
        notes.append("hibari, hibari-follow: skipped (hibari-tts is not installed; "
                     "pip install hibari-tts)")
        return systems, notes
    try:
        nmod = importlib.import_module("vocencebench.systems.hibari")
    except ImportError as exc:
        notes.append(f"hibari, hibari-follow: skipped (this vocencebench has no neural "
                     f"built-ins: {exc})")
        return systems, notes
    try:
        found = {name: nmod.HibariSystem(name) for name in ("hibari", "hibari-follow")}
    except Exception as exc:  # a failed model load is announced, not fatal to the demo
        notes.append(f"hibari, hibari-follow: skipped ({type(exc).__name__}: {exc})")
        return systems, notes
    systems.update(found)
    return systems, notes


def demo_leaderboard(
    out: str | Path = "runs/demo-leaderboard",
    *,
    limit: int | None = None,
    workers: int | None = None,
    cache: str | None = None,
    no_cache: bool = False,
    neural: bool = True,
    progress: bool = False,
    announce: Callable[[str], None] | None = None,
    canaries: bool = True,
) -> Leaderboard:
    """The offline leaderboard demo over the shipped corpus: the built-in systems of
    :func:`demo_systems`, acoustic probes, no judge, no ASR. Items: the first ``limit``; by
    default all 496 for eSpeak alone, :data:`DEMO_ITEMS_WITH_NEURAL` with the neural systems.
    ``canaries`` as for :func:`vocencebench.board.leaderboard`. Writes the outputs into
    ``out`` and returns the :class:`~vocencebench.board.Leaderboard`; ``announce`` receives
    the notes on what was left out and the lines of :func:`vocencebench.board.leaderboard`.
    """
    from ..corpus import load_benchmark
    from ..probes import default_probes

    items = load_benchmark("benchmark_v1")
    systems, notes = demo_systems(neural=neural)
    if limit is None and len(systems) > 2:
        limit = DEMO_ITEMS_WITH_NEURAL
        notes.append(f"demo subset: the first {limit} of {len(items)} items (neural systems "
                     "included; pass --limit to change it)")
    if limit is not None:
        if limit < 1:
            raise ConfigError("--limit must be ≥ 1")
        items = items[:limit]
    for n in notes:
        if announce is not None:
            announce(n)
    outdir = Path(out)
    store = None if no_cache else (cache or str(outdir / "cache.sqlite"))
    t0 = time.perf_counter()
    lb = leaderboard(items, systems, None, probes=default_probes(), cache=store,
                     workers=workers, progress=progress, announce=announce,
                     canaries=canaries)
    lb.metadata["status"] = [*lb.status(), *notes]
    lb.metadata["selection"] = {"corpus": "benchmark_v1", "limit": limit, "demo": True}
    lb.metadata.setdefault("timings", {})["wall_s"] = time.perf_counter() - t0
    lb.save(outdir)
    return lb
