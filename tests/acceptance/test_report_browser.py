"""report.html rendered by a real browser: headless Chromium (Debian's ``chromium``).

The page is opened from a file:// URL with networking features off; the screenshot must be
a PNG of the requested size showing the report's colours (the SVG bars and histogram), and
the DOM after load must hold the decision and the charts. Skipped only when no Chromium
binary is installed (``apt-get install chromium``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from cdp import CHROMIUM, SKIP_REASON
from synthetic_run import LABELS, make_head2head
from vocencebench.result import save_run

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

WIDTH, HEIGHT = 1200, 2400
_COL_A = (0x25, 0x63, 0xEB)  # system a's bars (report._COL_A)
_COL_B = (0xF5, 0x9E, 0x0B)  # system b's bars (report._COL_B)
_COL_HIST = (0xA7, 0x8B, 0xFA)  # bootstrap histogram


def chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[bytes]:
    """Run headless Chromium with every background network feature off."""
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-extensions", "--hide-scrollbars",
        f"--user-data-dir={profile}", *args,
    ]
    return subprocess.run(cmd, capture_output=True, timeout=120, check=False)


def screenshot(html: Path, png: Path, profile: Path) -> None:
    """Write a ``WIDTH``×``HEIGHT`` PNG of ``html`` (a file on disk)."""
    proc = chromium([f"--screenshot={png}", f"--window-size={WIDTH},{HEIGHT}",
                     html.resolve().as_uri()], profile)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    base = tmp_path_factory.mktemp("browser")
    run = save_run(make_head2head(), base / "run")
    png = base / "report.png"
    screenshot(run / "report.html", png, base / "profile-shot")
    proc = chromium(["--dump-dom", (run / "report.html").resolve().as_uri()],
                    base / "profile-dom")
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    return run, png, proc.stdout.decode("utf-8")


def test_screenshot_is_a_png_of_the_requested_size(rendered: tuple[Path, Path, str]) -> None:
    _, png, _ = rendered
    assert png.is_file()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(png) as im:
        assert im.format == "PNG"
        assert im.size == (WIDTH, HEIGHT)
        im.verify()


def test_screenshot_shows_the_charts(rendered: tuple[Path, Path, str]) -> None:
    _, png, _ = rendered
    with Image.open(png) as im:
        rgb = im.convert("RGB")
    colours = rgb.getcolors(maxcolors=WIDTH * HEIGHT)
    assert colours is not None
    count = {c: n for n, c in colours}
    # Not blank: a mostly white page with text, tables and charts in many colours.
    assert len(count) > 200
    white = count.get((255, 255, 255), 0)
    assert 0.3 * WIDTH * HEIGHT < white < 0.98 * WIDTH * HEIGHT
    # The inline SVG was drawn: solid bars for both systems and the histogram.
    assert count.get(_COL_A, 0) > 2000, "no bars in system a's colour"
    assert count.get(_COL_B, 0) > 2000, "no bars in system b's colour"
    assert count.get(_COL_HIST, 0) > 5000, "no bootstrap histogram"
    # The decision box (green border, a winner was declared) is in the top quarter.
    top = rgb.crop((0, 0, WIDTH, HEIGHT // 4)).getcolors(maxcolors=WIDTH * HEIGHT)
    assert top is not None and (0x10, 0xB9, 0x81) in {c for _, c in top}


def test_dom_after_load_has_the_decision_and_the_svg(rendered: tuple[Path, Path, str]) -> None:
    run, _, dom = rendered
    assert f'<div class="decision">{LABELS[1]} wins</div>' in dom
    assert dom.count("<svg") == 2
    assert len(re.findall(r"<rect\b", dom)) > 30
    assert "intelligibility gate OFF" in dom
    assert "LCB (5th pct)" in dom
    assert dom.count("<table") >= 9  # dimensions + 4 traits × 2 systems
    assert f"<title>vocencebench: {LABELS[0]} vs {LABELS[1]}</title>" in dom
    # The parsed page kept every element written to disk (nothing was dropped as invalid).
    page = (run / "report.html").read_text(encoding="utf-8")
    for tag in ("rect", "line", "table", "caption", "td"):
        assert len(re.findall(rf"<{tag}\b", dom)) == len(re.findall(rf"<{tag}\b", page)), tag
