"""docs/traits.md's "add a trait" walkthrough runs as written, as a script of its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import DOCS


@pytest.mark.slow
def test_the_add_a_trait_walkthrough_runs_and_names_a_winner(tmp_path: Path) -> None:
    doc = (DOCS / "traits.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    first = next(i for i, b in enumerate(blocks) if "registry = TRAITS.copy()" in b)
    code = "\n".join(blocks[first:first + 4])
    # What the walkthrough leaves to the reader: the measurement, the systems, a third one.
    assert code.count("ratio_db = ...") == 1
    code = code.replace("ratio_db = ...", "ratio_db = -8.0")
    code = re.sub(r"\nlb = vb\.leaderboard\(.*\nlb\.save\(.*\)\n", "\n", code)
    script = tmp_path / "walk.py"
    script.write_text(
        "from vocencebench.adapters import EspeakSystem\n" + code.replace(
            "h = vb.benchmark(", "system_a, system_b = EspeakSystem('espeak-flat'), "
            "EspeakSystem('espeak-follow')\nh = vb.benchmark(", 1)
        + "\nprint('winner', h.decision.winner, len(h.pairs))\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env=dict(os.environ), check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r"^winner (a|b|tie) 6$", proc.stdout, re.M), proc.stdout + proc.stderr
    rows = (tmp_path / "out" / "scores.jsonl").read_text(encoding="utf-8")
    assert '"breathiness"' in rows
