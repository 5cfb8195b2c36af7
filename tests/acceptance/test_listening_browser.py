"""The report's listening section and the blind listening page in a real browser: headless
Chromium (Debian's ``chromium``) driven over the DevTools protocol (``tests/cdp.py``), its
JavaScript running, offline, with nothing but 127.0.0.1 servers.

* every audio element of the report loads, from disk, from a copy of the folder and from a
  static server, and its duration matches the clip's within ±20 ms;
* a scripted rater answers 10 items of the listening page by keyboard, reloads midway
  without losing an answer, and exports; ``vocencebench calibrate`` reads the export and
  reproduces agreement numbers computed here by hand;
* a corpus item holding a script element, event-handler attributes and RTL/control
  characters renders inert in both pages (the DOM is scanned for scripts and on* handlers).
"""

from __future__ import annotations

import contextlib
import csv
import functools
import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdp import CHROMIUM, SKIP_REASON, Browser
from listening_run import HOSTILE_TEXT, listen_server, make_clip_run
from vocencebench._util.text import terminal_safe
from vocencebench.cli import main
from vocencebench.listen import build_listening_test

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

TOLERANCE_S = 0.020
_DURATIONS = """
Promise.all([...document.querySelectorAll('audio')].map(a => new Promise(ok => {
  const done = () => ok([a.getAttribute('src'), a.duration, a.error ? a.error.code : null]);
  if (a.readyState >= 1) { done(); return; }
  a.addEventListener('loadedmetadata', done); a.addEventListener('error', done);
  setTimeout(done, 20000);
})))
"""
_SCAN = """
(() => {
  const handlers = [];
  for (const el of document.querySelectorAll('*'))
    for (const at of el.attributes)
      if (at.name.toLowerCase().startsWith('on')) handlers.push(el.tagName + ' ' + at.name);
  return {scripts: document.querySelectorAll('script').length,
          handlers, pwned: window.__pwned === undefined ? null : window.__pwned,
          imgs: document.querySelectorAll('img').length,
          svgOnload: document.querySelectorAll('svg[onload]').length,
          bold: document.querySelectorAll('b[onmouseover]').length};
})()
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("listen-browser")
    run, h, durations = make_clip_run(base, n=24)
    test = build_listening_test(run, base / "blind", items=24)
    return {"base": base, "run": run, "h": h, "durations": durations, "test": test}


@contextlib.contextmanager
def static_server(root: Path) -> Iterator[str]:
    """Any static server: the standard library's, on 127.0.0.1."""
    handler = functools.partial(_Quiet, directory=str(root))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


def _truth(site: dict) -> dict[str, float]:
    h, durations = site["h"], site["durations"]
    out = {}
    for p in h.pairs:
        for side in ("a", "b"):
            an = getattr(p, f"analysis_{side}")
            if an.sha256:
                out[f"clips/{an.sha256[:20]}.flac"] = durations[(p.item.id, side)]
    return out


def test_report_audio_loads_with_the_clips_durations(site: dict, tmp_path: Path) -> None:
    truth = _truth(site)
    copy = tmp_path / "copied-report"
    shutil.copytree(site["run"], copy)
    with Browser(tmp_path / "profile") as b, static_server(site["run"]) as url:
        for where in (site["run"].resolve().as_uri() + "/report.html",
                      copy.resolve().as_uri() + "/report.html", f"{url}/report.html"):
            b.goto(where)
            got = b.js(_DURATIONS, timeout=90)
            assert len(got) >= 20, where
            for src, duration, error in got:
                assert error is None, (where, src, error)
                assert abs(duration - truth[src]) <= TOLERANCE_S, (where, src, duration)
        assert b.console_errors() == []


def _expected_rows(site: dict, answers: list[tuple[str, str, tuple[int, int] | None]],
                   rater: str) -> list[list[str]]:
    data = json.loads((site["test"].directory / "test.json").read_text(encoding="utf-8"))
    rows = []
    for t, (nat, tone, scores) in zip(data["trials"], answers, strict=False):
        for dim, key, sc in (("naturalness", nat, None), ("tone", tone, scores)):
            screen = {"ArrowLeft": "A", "ArrowRight": "B", "ArrowDown": "tie"}[key]
            winner = ("tie" if screen == "tie"
                      else "a" if (screen == "A") != t["swap"] else "b")
            sa = sb = ""
            if sc is not None:
                sa, sb = (str(sc[1]), str(sc[0])) if t["swap"] else (str(sc[0]), str(sc[1]))
            rows.append([t["id"], dim, winner, sa, sb, rater])
    return rows


def _kappa(human: list[str], judge: list[str]) -> float:
    n = len(human)
    p_o = sum(x == y for x, y in zip(human, judge, strict=True)) / n
    p_e = sum((human.count(c) / n) * (judge.count(c) / n) for c in ("a", "b", "tie"))
    return (p_o - p_e) / (1 - p_e)


def test_a_rater_answers_by_keyboard_reloads_and_exports(
        site: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = site["test"].directory / "index.html"
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    keys = ("ArrowLeft", "ArrowRight", "ArrowDown")
    answers = [(keys[i % 3], keys[(i + 1) % 3], (i % 4, 3 - i % 4) if i % 2 == 0 else None)
               for i in range(10)]
    rater = "Rater One"
    with Browser(tmp_path / "profile") as b:
        b.allow_downloads(downloads)
        b.goto(page.resolve().as_uri())
        b.js("document.getElementById('rater').focus()")
        b.type_text(rater)
        b.press("Enter")
        for i, (nat, tone, scores) in enumerate(answers):
            assert b.js("document.getElementById('pos').textContent") == (
                f"item {i + 1} of {len(site['test'].trials)}")
            b.press("a")
            assert b.js("new Promise(r => setTimeout(() => r("
                        "!document.getElementById('audio-A').paused), 200))") is True
            b.press("b")
            assert b.js("new Promise(r => setTimeout(() => r(["
                        "document.getElementById('audio-A').paused, "
                        "!document.getElementById('audio-B').paused]), 200))") == [True, True]
            b.press(nat)
            if scores is not None:
                b.press(str(scores[0]))
                b.press(str(scores[1]))
            b.press(tone)
            b.press("Enter")
            if i == 4:  # midway: a reload keeps every answer and the place
                b.reload()
                state = b.js("window.vbListen.state()")
                assert len([a for a in state["answers"].values() if a["w"]]) == 10
                assert state["rater"] == rater
                assert b.js("document.getElementById('done').textContent").startswith("5 of")
        mark = len(b.events)
        b.press("e")
        b.wait_download(since=mark)
        assert b.console_errors() == []
    exported = list(downloads.iterdir())
    assert [f.name for f in exported] == ["labels-Rater_One.csv"]
    with exported[0].open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["id", "dimension", "winner", "score_a", "score_b", "rater"]
    want = _expected_rows(site, answers, rater)
    assert rows[1:] == want
    # calibrate reads the export and reproduces the numbers computed here by hand.
    assert main(["calibrate", str(exported[0]), "--run", str(site["run"]), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    verdicts = {(p.item.id, d): v.winner for p in site["h"].pairs for d, v in p.verdicts.items()}
    for dim in ("naturalness", "tone"):
        mine = [(r[2], verdicts[(r[0], r[1])]) for r in want if r[1] == dim]
        human, judge = [m[0] for m in mine], [m[1] for m in mine]
        got = report["by_dimension"][dim]
        assert got["n"] == 10
        assert got["accuracy"] == pytest.approx(sum(x == y for x, y in mine) / 10)
        assert got["kappa"] == pytest.approx(_kappa(human, judge))
    assert report["raters"] == [rater]


def test_a_hostile_item_renders_inert_in_both_pages(site: dict, tmp_path: Path) -> None:
    data = json.loads((site["test"].directory / "test.json").read_text(encoding="utf-8"))
    n = next(t["n"] for t in data["trials"] if t["text"] == terminal_safe(HOSTILE_TEXT))
    with Browser(tmp_path / "profile") as b:
        b.goto((site["run"] / "report.html").resolve().as_uri())
        scan = b.js(_SCAN)
        assert scan == {"scripts": 0, "handlers": [], "pwned": None, "imgs": 0,
                        "svgOnload": 0, "bold": 0}
        shown = b.js("[...document.querySelectorAll('bdi')].map(e => e.textContent)"
                     ".filter(t => t.includes('window.__pwned = 1'))")
        assert shown and all("\x07" not in t and "\x00" not in t for t in shown)
        # The override is shown as a visible escape (never applied), inside its <bdi>.
        assert "\\u202e" in shown[0] and "\u202e" not in shown[0]
        b.goto((site["test"].directory / "index.html").resolve().as_uri())
        b.js("document.getElementById('rater').focus()")
        b.type_text("x")
        b.press("Enter")
        for _ in range(n - 1):
            b.press("Enter")
        assert b.js("document.getElementById('pos').textContent").startswith(f"item {n} of")
        scan = b.js(_SCAN)
        assert scan == {"scripts": 2, "handlers": [], "pwned": None, "imgs": 0,
                        "svgOnload": 0, "bold": 0}
        text = b.js("document.getElementById('script').textContent")
        assert text == terminal_safe(HOSTILE_TEXT) and "<script>" in text
        iso = b.js("[getComputedStyle(document.getElementById('script')).unicodeBidi, "
                   "document.getElementById('script').dir]")
        assert iso == ["isolate", "auto"]
        assert b.console_errors() == []


def test_served_page_writes_each_answer_as_it_is_given(site: dict, tmp_path: Path) -> None:
    """``listen --serve``: the page finds the server and every answer lands in the rater's
    labels file, the same rows the page exports."""
    import os
    import signal

    out = tmp_path / "served"
    with listen_server(site["run"], out, items=6) as (proc, url):
        with Browser(tmp_path / "profile") as b:
            b.goto(url)
            b.js("new Promise(r => { const t = () => window.vbListen.serve() ? r() : "
                 "setTimeout(t, 50); t(); })")
            b.js("document.getElementById('rater').focus()")
            b.type_text("Served Rater")
            b.press("Enter")
            for key in ("ArrowLeft", "ArrowRight", "Enter", "ArrowDown", "ArrowLeft"):
                b.press(key)
            b.js("new Promise(r => { const t = () => window.vbListen.state().pending.length"
                 " ? setTimeout(t, 50) : r(); t(); })")
            exported = b.js("window.vbListen.csv()")
            assert b.console_errors() == []
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    [labels] = list((out / "labels").iterdir())
    written = labels.read_text(encoding="utf-8").splitlines()
    assert len(written) == 1 + 4
    assert written == exported.replace("\r\n", "\n").splitlines()
