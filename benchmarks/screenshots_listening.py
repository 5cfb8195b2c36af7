"""The screenshots of docs/validation.md, taken from real headless Chromium (the DevTools
pipe client of tests/cdp.py): the report's listening section and the listening page.

    PYTHONPATH=src .venv/bin/python benchmarks/screenshots_listening.py RUN_DIR LISTEN_DIR

RUN_DIR is a saved run with its clips (e.g. runs/demo after ``make demo``), LISTEN_DIR a
folder written by ``vocencebench listen RUN_DIR --out LISTEN_DIR``. Writes
docs/img/report-listening.png and docs/img/listen-page.png.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from cdp import Browser  # noqa: E402


def main() -> int:
    run, listen = Path(sys.argv[1]), Path(sys.argv[2])
    img = ROOT / "docs" / "img"
    with tempfile.TemporaryDirectory() as tmp, Browser(Path(tmp), width=1180,
                                                       height=1000) as b:
        b.goto((run / "report.html").resolve().as_uri())
        b.js("new Promise(r => setTimeout(r, 800))")
        top = b.js("document.getElementById('listening').getBoundingClientRect().top"
                   " + window.scrollY")
        b.screenshot(img / "report-listening.png", full_page=True,
                     clip={"x": 0, "y": float(top) - 10, "width": 1180, "height": 1000})
        b.goto((listen / "index.html").resolve().as_uri())
        b.js("document.getElementById('rater').focus()")
        b.type_text("Ann")
        b.press("Enter")
        for key in ("ArrowRight", "2", "3", "ArrowRight", "Enter", "ArrowLeft", "ArrowDown",
                    "Enter", "a"):
            b.press(key)
        time.sleep(0.6)
        b.screenshot(img / "listen-page.png")
    print(f"wrote {img / 'report-listening.png'} and {img / 'listen-page.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
