"""Merge the writers' batches with the assignment and freeze benchmark_v1.

Run from the repository root: ``.venv/bin/python corpus_work/build_benchmark.py [--check]``.
With ``--check`` it only reports violations (including opening variety) and writes nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from vocencebench.corpus import MAX_OPENING_SHARE, check_corpus, freeze
from vocencebench.schema import Item

ROOT = Path(__file__).resolve().parent
OUT = ROOT.parent / "src" / "vocencebench" / "datasets" / "benchmark_v1.jsonl"


def merged() -> list[Item]:
    assignment = {}
    for line in (ROOT / "assignment.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            a = json.loads(line)
            assignment[a["id"]] = a
    written: dict[str, dict[str, str]] = {}
    for k in (1, 2, 3):
        for n, line in enumerate((ROOT / f"batch_{k}.jsonl").read_text(
                encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            w = json.loads(line)
            if w["id"] in written:
                sys.exit(f"batch_{k}.jsonl:{n}: {w['id']} written twice")
            written[w["id"]] = w
    missing = [i for i in assignment if i not in written]
    if missing:
        sys.exit(f"missing ids: {', '.join(missing)}")
    items = []
    for i, a in assignment.items():
        w = written[i]
        items.append(Item(id=i, instruction=w["instruction"].strip(), text=w["text"].strip(),
                          traits=a["traits"], difficulty=a["difficulty"],
                          category=a["category"]))
    return items


def main() -> int:
    items = merged()
    problems = check_corpus(items, max_opening_share=MAX_OPENING_SHARE)
    for p in problems:
        print(p)
    if problems or "--check" in sys.argv:
        print(f"{len(items)} items, {len(problems)} violations")
        return 1 if problems else 0
    digest = freeze(items, OUT)
    print(f"froze {len(items)} items to {OUT}: sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
