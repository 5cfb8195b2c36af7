"""``check_corpus`` in worker processes finds exactly what it finds in one."""

from __future__ import annotations

import concurrent.futures
import dataclasses

import pytest

from vocencebench._corpus import checks
from vocencebench.corpus import check_corpus, load_benchmark


def _spoiled() -> list:
    """120 shipped items, some made to break rules of each scope (per item and corpus-wide)."""
    items = list(load_benchmark())[:120]
    items[3] = dataclasses.replace(items[3], id=items[2].id)  # duplicate id
    items[7] = dataclasses.replace(items[7], text=items[5].text)  # duplicate script
    items[11] = dataclasses.replace(items[11], difficulty=5)
    items[40] = dataclasses.replace(items[40], text="Say it in a loud, angry voice.")
    items[90] = dataclasses.replace(items[90], traits={**items[90].traits, "pace": "warp"})
    return items


@pytest.mark.parametrize("authoring", [True, False])
def test_workers_give_the_same_violations_in_the_same_order(monkeypatch, authoring):
    items = _spoiled()
    alone = check_corpus(items, max_opening_share=0.03, authoring=authoring)
    assert len({v.kind for v in alone}) >= 3  # the corpus really breaks rules
    # Below the threshold the workers are never started; lower it so that they are.
    monkeypatch.setattr(checks, "PARALLEL_CHECK_ITEMS", 10)
    pools: list[int] = []

    class Recorded(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, max_workers=None, **kw):
            pools.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recorded)
    together = check_corpus(items, max_opening_share=0.03, authoring=authoring, workers=2)
    assert pools == [2]  # the items really were checked in two worker processes
    assert together == alone

def test_small_corpus_is_checked_here(monkeypatch):
    items = _spoiled()[:20]
    seen: list[int] = []
    real = checks._check_chunk
    monkeypatch.setattr(checks, "_check_chunk",
                        lambda chunk, registry, auth: seen.append(len(chunk))
                        or real(chunk, registry, auth))
    check_corpus(items, workers=2)
    assert seen == [20]
