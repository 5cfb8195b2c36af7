"""leaderboard.html rendered by headless Chromium (Debian's ``chromium``), as report.html is.

A real three-system leaderboard (eSpeak-based, three items, no judge) is saved and opened from
a file:// URL with networking off. The screenshot must show the verdict matrix in the outcome
colours and the per-system bars in the system colours; the DOM after load must hold the whole
matrix, the tiers and the Bradley–Terry block labelled as a summary. Skipped only when no
Chromium binary is installed (``apt-get install chromium``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

import vocencebench as vb
from board_fakes import CountingEspeak
from cdp import CHROMIUM, SKIP_REASON
from vocencebench.board import leaderboard
from vocencebench.board.report import OUTCOME_COLOURS, PALETTE

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

WIDTH, HEIGHT = 1200, 2000
SYSTEMS = ("flat", "follow", "follow-fast")


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    from test_report_browser import chromium

    base = tmp_path_factory.mktemp("board-browser")
    items = vb.load_benchmark("benchmark_v1")[:3]
    systems = {"flat": CountingEspeak("flat", "espeak-flat"),
               "follow": CountingEspeak("follow"),
               "follow-fast": CountingEspeak("follow-fast", rate=60)}
    lb = leaderboard(items, systems, None, probes=vb.default_probes(), executor="serial")
    out = lb.save(base / "board")
    png = base / "leaderboard.png"
    shot = chromium([f"--screenshot={png}", f"--window-size={WIDTH},{HEIGHT}",
                     (out / "leaderboard.html").resolve().as_uri()], base / "profile-shot")
    assert shot.returncode == 0, shot.stderr.decode("utf-8", "replace")[-2000:]
    proc = chromium(["--dump-dom", (out / "leaderboard.html").resolve().as_uri()],
                    base / "profile-dom")
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    return out, png, proc.stdout.decode("utf-8")


def test_screenshot_shows_the_matrix_and_the_bars(rendered: tuple[Path, Path, str]) -> None:
    out, png, _ = rendered
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(png) as im:
        assert im.size == (WIDTH, HEIGHT)
        rgb = im.convert("RGB")
    colours = rgb.getcolors(maxcolors=WIDTH * HEIGHT)
    assert colours is not None
    count = {c: n for n, c in colours}
    assert len(count) > 200
    import json

    doc = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    seen = {o for row in doc["matrix"]["cells"] for o in row} - {"self"}
    assert seen, "no decided cell"
    for outcome in seen:  # every outcome in the matrix is painted in its colour
        assert count.get(_rgb(OUTCOME_COLOURS[outcome]), 0) > 3000, outcome
    for k in range(len(SYSTEMS)):  # each system's bars and interval dot
        assert count.get(_rgb(PALETTE[k]), 0) > 1500, SYSTEMS[k]


def test_dom_has_the_matrix_tiers_and_the_labelled_summary(
        rendered: tuple[Path, Path, str]) -> None:
    out, _, dom = rendered
    assert len(re.findall(r'<td class="cell ', dom)) == len(SYSTEMS) ** 2
    assert dom.count('class="tier"') >= 1
    assert "Summary, not the verdict." in dom
    assert "LCB" in dom and "vocencebench decide scores.jsonl --incumbent flat" in dom
    assert dom.count("<svg") == 2
    assert "<title>vocencebench leaderboard: 3 systems, 3 items</title>" in dom
    page = (out / "leaderboard.html").read_text(encoding="utf-8")
    # Self-contained: nothing is fetched (no external src/href, no stylesheet link).
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "<script" not in page
    for tag in ("rect", "circle", "td", "table", "span"):
        assert len(re.findall(rf"<{tag}\b", dom)) == len(re.findall(rf"<{tag}\b", page)), tag
