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
from vocencebench.calibration import read_human_csv, read_listening_key
from vocencebench.cli import main
from vocencebench.listen import EXPORT_COLUMNS, build_listening_test

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
                   rater: str) -> tuple[list[list[str]], list[list[str]]]:
    """(the page's export: sides, the same rows as the run's a/b by key.json)."""
    folder = site["test"].directory
    data = json.loads((folder / "page" / "test.json").read_text(encoding="utf-8"))
    key = read_listening_key(folder)
    page, run = [], []
    for t, (nat, tone, scores) in zip(data["trials"], answers, strict=False):
        left = key.left[t["n"]][1]
        for dim, pressed, sc in (("naturalness", nat, None), ("tone", tone, scores)):
            choice = {"ArrowLeft": "left", "ArrowRight": "right", "ArrowDown": "tie"}[pressed]
            sl, sr = ("", "") if sc is None else (str(sc[0]), str(sc[1]))
            page.append([data["test"], str(t["n"]), t["id"], dim, choice, sl, sr, rater])
            winner = ("tie" if choice == "tie" else left if choice == "left"
                      else {"a": "b", "b": "a"}[left])
            sa, sb = (sl, sr) if left == "a" else (sr, sl)
            run.append([t["id"], dim, winner, sa, sb, rater])
    return page, run


def _kappa(human: list[str], judge: list[str]) -> float:
    n = len(human)
    p_o = sum(x == y for x, y in zip(human, judge, strict=True)) / n
    p_e = sum((human.count(c) / n) * (judge.count(c) / n) for c in ("a", "b", "tie"))
    return (p_o - p_e) / (1 - p_e)


def test_a_rater_answers_by_keyboard_reloads_and_exports(
        site: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = site["test"].directory / "page" / "index.html"
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
    assert rows[0] == list(EXPORT_COLUMNS)
    page_rows, want = _expected_rows(site, answers, rater)
    assert rows[1:] == page_rows
    # Without the test's key, calibrate refuses the export (its rows name sides): one line.
    assert main(["calibrate", str(exported[0]), "--run", str(site["run"])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vocencebench calibrate: error:") and err.count("\n") == 1, err
    assert "key.json" in err and site["test"].test_id in err, err
    # With it, calibrate reproduces the numbers computed here by hand.
    assert main(["calibrate", str(exported[0]), "--run", str(site["run"]), "--key",
                 str(site["test"].directory), "--json"]) == 0
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
    data = json.loads((site["test"].page / "test.json").read_text(encoding="utf-8"))
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
        b.goto((site["test"].page / "index.html").resolve().as_uri())
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
    # The server wrote the run's a/b; the page's export (sides) maps to the same rows.
    export = out / "export.csv"
    export.write_text(exported, encoding="utf-8")
    mapped = ["id,dimension,winner,score_a,score_b,rater"] + [
        f"{h.id},{h.dimension},{h.winner},,,{h.rater}" for h in read_human_csv(export)]
    assert written == mapped


def _name(b: Browser, rater: str) -> None:
    """Replace the rater name the way a person does: select the field's text, type over it."""
    b.js("(() => { const r = document.getElementById('rater'); r.focus(); r.select(); })()")
    b.type_text(rater)
    b.press("Enter")


def _done(b: Browser) -> str:
    return str(b.js("document.getElementById('done').textContent"))


def test_a_new_rater_name_starts_empty_and_keeps_the_old_answers(
        site: dict, tmp_path: Path) -> None:
    """Two raters on one browser: Bo, typing his name over Ann's, gets none of her answers
    (not on the page, not in his export), and hers are still there under her name."""
    page = site["test"].page / "index.html"
    with Browser(tmp_path / "profile") as b:
        b.goto(page.resolve().as_uri())
        _name(b, "Ann")
        for _ in range(3):
            for key in ("ArrowLeft", "ArrowLeft", "Enter"):
                b.press(key)
        assert _done(b).startswith("3 of")
        _name(b, "Bo")
        assert b.js("window.vbListen.state().rater") == "Bo"
        assert _done(b).startswith("0 of")
        assert b.js("document.querySelectorAll('#questions button.on').length") == 0
        assert b.js("window.vbListen.csv()").count("\r\n") == 1  # the header only
        b.press("ArrowRight")
        b.reload()
        rows = list(csv.reader(b.js("window.vbListen.csv()").splitlines()))
        assert len(rows) == 2 and rows[1][-1] == "Bo" and rows[1][4] == "right"
        _name(b, "Ann")
        assert _done(b).startswith("3 of")
        rows = list(csv.reader(b.js("window.vbListen.csv()").splitlines()))
        assert len(rows) == 1 + 6 and {r[-1] for r in rows[1:]} == {"Ann"}
        assert {r[4] for r in rows[1:]} == {"left"}
        assert b.console_errors() == []


def test_another_test_on_the_same_items_opens_empty(site: dict, tmp_path: Path) -> None:
    """A test of other clips (another run) on the same items, seed and sides is another
    test: its page does not open with the first test's answers."""
    other_run, _, _ = make_clip_run(tmp_path / "other", n=24, seed=99)
    other = build_listening_test(other_run, tmp_path / "blind2", items=24)
    assert [t.item for t in other.trials] == [t.item for t in site["test"].trials]
    assert other.test_id != site["test"].test_id
    with Browser(tmp_path / "profile") as b:
        b.goto((site["test"].page / "index.html").resolve().as_uri())
        _name(b, "Ann")
        for key in ("ArrowLeft", "ArrowLeft", "Enter", "ArrowRight", "ArrowRight", "Enter"):
            b.press(key)
        assert _done(b).startswith("2 of")
        b.goto((other.page / "index.html").resolve().as_uri())  # same origin: file://
        assert _done(b).startswith("0 of")
        assert b.js("window.vbListen.state().rater") == ""
        assert b.js("window.vbListen.csv()").count("\r\n") == 1
        b.goto((site["test"].page / "index.html").resolve().as_uri())
        assert _done(b).startswith("2 of")  # the first test's answers are still its own
        assert b.console_errors() == []
