"""What ``vocencebench corpus check`` costs per item, and that a faster checker finds the same.

A large corpus is built from the shipped one: copy k of each ``benchmark_v1`` item gets the
id ``bk-<k>-<id>`` and one invented word (letters only, unique per copy, so it names no trait
and no number) appended to its instruction and to its script — every text distinct, so no
cache can help across items, and the same language as the shipped corpus. For each tree
given (``--src``, and ``--baseline-src``, e.g. an export of an older commit) the real CLI,
``python -m vocencebench corpus check FILE --show 0`` (every violation listed), runs in a
fresh subprocess on that file and on the shipped corpus; the script prints the wall time,
the cost per item and the sha256 of the whole report, and says whether the reports of the
two trees are identical byte for byte (they must be: the checks' results may not change).

Run:  python benchmarks/bench_corpus_check.py [--items 100000] [--src src]
          [--baseline-src /tmp/old/src] [--baseline-items 20000] [--timeout 900]

To get an older tree: ``git archive COMMIT src | tar -x -C /tmp/old``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "src" / "vocencebench" / "datasets" / "benchmark_v1.jsonl"


def _word(k: int) -> str:
    """An invented word, letters only, unique per k (zq + base-26 digits)."""
    out = ""
    while True:
        k, r = divmod(k, 26)
        out += "abcdefghijklmnopqrstuvwxyz"[r]
        if k == 0:
            return "Zq" + out


def build(n: int, path: Path) -> None:
    """``n`` items from copies of the shipped corpus (see the module docstring), as JSONL."""
    base = [json.loads(line) for line in SHIPPED.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    with open(path, "w", encoding="utf-8") as f:
        for k in range(n):
            row = dict(base[k % len(base)])
            word = _word(k)
            row["id"] = f"bk-{k // len(base)}-{row['id']}"
            row["instruction"] = f"{row['instruction']} {word}."
            row["text"] = f"{row['text']} {word}."
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


def check(src: Path, corpus: Path, timeout: float) -> dict[str, object]:
    """The CLI on ``corpus`` with the package from ``src``: wall seconds, report sha256."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.perf_counter()
    try:
        res = subprocess.run([sys.executable, "-m", "vocencebench", "corpus", "check",
                              str(corpus), "--show", "0"], env=env, capture_output=True,
                             timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "sha256": None, "rc": None, "lines": None}
    wall = time.perf_counter() - t0
    return {"seconds": wall, "sha256": hashlib.sha256(res.stdout).hexdigest(),
            "rc": res.returncode, "lines": res.stdout.count(b"\n"),
            "stderr": res.stderr.decode(errors="replace")[-300:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--src", type=Path, default=ROOT / "src")
    ap.add_argument("--baseline-src", type=Path, default=None)
    ap.add_argument("--baseline-items", type=int, default=None,
                    help="items for the baseline (default --items; an old checker may need "
                         "a smaller corpus to finish)")
    ap.add_argument("--timeout", type=float, default=900.0)
    args = ap.parse_args()
    trees = [("current", args.src, args.items)]
    if args.baseline_src is not None:
        n_old = args.baseline_items or args.items
        if n_old != args.items:  # the current tree on the baseline's corpus too, to compare
            trees.append(("current", args.src, n_old))
        trees.append(("baseline", args.baseline_src, n_old))
    with tempfile.TemporaryDirectory(prefix="vb-bench-corpus-") as tmp:
        sizes = sorted({n for _, _, n in trees})
        files = {}
        for n in sizes:
            files[n] = Path(tmp) / f"corpus-{n}.jsonl"
            build(n, files[n])
        print(f"{'tree':<9} {'corpus':>14} {'seconds':>9} {'ms/item':>8} {'rc':>3} "
              f"{'report lines':>12}  report sha256")
        results: dict[tuple[str, str], dict[str, object]] = {}
        for name, src, n in trees:
            shipped = [] if (name, "benchmark_v1") in results else [
                ("benchmark_v1", SHIPPED, 496)]
            for label, path, count in ((f"{n} items", files[n], n), *shipped):
                r = check(src, path, args.timeout)
                results[(name, label)] = r
                secs = r["seconds"]
                shown = (f"{secs:>9.1f} {1000 * secs / count:>8.3f}"
                         if isinstance(secs, float) else f"{'timeout':>9} {'—':>8}")
                print(f"{name:<9} {label:>14} {shown} {r['rc']!s:>3} {r['lines']!s:>12}  "
                      f"{str(r['sha256'])[:16]}")
        if args.baseline_src is not None:
            for label in {lab for _, lab in results}:
                cur, old = results.get(("current", label)), results.get(("baseline", label))
                if cur and old and old["sha256"] is not None:
                    same = cur["sha256"] == old["sha256"]
                    print(f"{label}: reports {'IDENTICAL' if same else 'DIFFER'}")
                    if not same:
                        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
