"""``vocencebench listen --serve``: answers reach the labels file as they are given, a server
killed with SIGKILL leaves exactly the rows it acknowledged, and it answers 127.0.0.1 only."""

from __future__ import annotations

import csv
import json
import os
import signal
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from listening_run import listen_server, make_clip_run
from vocencebench.calibration import read_human_csv, read_listening_key

pytestmark = pytest.mark.slow


def post(url: str, body: object, *, ctype: str = "application/json",
         host: str | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": ctype})
    if host is not None:
        req.add_header("Host", host)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        with e:
            return e.code, json.loads(e.read() or b"{}")


def post_raw(url: str, data: bytes) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read()


def test_sigkill_after_five_answers_leaves_five_rows(tmp_path: Path) -> None:
    run, _, _ = make_clip_run(tmp_path, n=12)
    out = tmp_path / "blind"
    with listen_server(run, out) as (proc, url):
        assert url.startswith("http://127.0.0.1:") and url.endswith("/index.html")
        base = url.rsplit("/", 1)[0]
        with urllib.request.urlopen(f"{base}/api/hello", timeout=10) as r:
            assert json.loads(r.read())["serve"] is True
        trials = json.loads((out / "page" / "test.json").read_text(encoding="utf-8")
                            )["trials"]
        key = read_listening_key(out)
        given, want = [], []
        for k, t in enumerate(trials[:5]):
            # The page answers by side; the server maps each answer to the run's a/b.
            body = {"trial": t["n"], "id": t["id"], "dimension": ("naturalness", "tone")[k % 2],
                    "choice": ("left", "right", "tie")[k % 3], "rater": "Ann, \"the\" rater",
                    "score_left": k % 4 if k % 2 else "",
                    "score_right": 3 - k % 4 if k % 2 else ""}
            assert post(f"{base}/api/answer", body) == (200, {"ok": True})
            given.append(body)
            side = key.left[t["n"]][1]
            winner = ("tie" if body["choice"] == "tie" else side if body["choice"] == "left"
                      else {"a": "b", "b": "a"}[side])
            scores = (body["score_left"], body["score_right"])
            want.append((winner, *(scores if side == "a" else scores[::-1])))
        assert {key.left[t["n"]][1] for t in trials[:5]} == {"a", "b"}  # both sides seen
        # Refused, and never written: a wrong item, a bad score, a form post, a foreign Host.
        bad = {**given[0], "id": "not-in-the-test"}
        assert post(f"{base}/api/answer", bad)[0] == 400
        assert post(f"{base}/api/answer", {**given[0], "score_left": 7, "score_right": 1}
                    )[0] == 400
        # An answer that names a system instead of a side is not the page's: refused.
        side_less = {k: v for k, v in given[0].items() if k != "choice"}
        assert post(f"{base}/api/answer", {**side_less, "winner": "a"})[0] == 400
        assert post(f"{base}/api/answer", given[0], ctype="text/plain")[0] == 415
        assert post(f"{base}/api/answer", given[0], host="evil.example:80")[0] == 403
        # Wrong types and a body nested past the parser's depth: a 400, not a dropped reply.
        assert post(f"{base}/api/answer", {**given[0], "dimension": ["tone"]})[0] == 400
        assert post(f"{base}/api/answer", {**given[0], "choice": {"a": 1}})[0] == 400
        assert post(f"{base}/api/answer", {**given[0], "id": [given[0]["id"]]})[0] == 400
        assert post_raw(f"{base}/api/answer", b"[" * 3000)[0] == 400
        [answers] = (out / "labels").iterdir()
        assert not (out / "page" / "labels").exists()  # answers live beside the page
        # What a rater's browser can fetch names no system: test.json has no side, and the
        # key (beside the served page/, not under it) is never served, however the path is
        # spelt.
        with urllib.request.urlopen(f"{base}/test.json", timeout=10) as r:
            served = json.loads(r.read())
        assert all(set(t) == {"n", "id", "instruction", "text", "left", "right"}
                   for t in served["trials"])
        # The document root is page/: its files are served as they are on disk.
        for rel in ("index.html", trials[0]["left"]):
            with urllib.request.urlopen(f"{base}/{rel}", timeout=10) as r:
                assert r.read() == (out / "page" / rel).read_bytes(), rel
        # One rater never reads another's answers: no spelling of the path reaches labels/.
        for path in ("/labels/", "/clips/", f"/labels/{answers.name}",
                     f"/%6cabels/{answers.name}", f"/./labels/{answers.name}",
                     f"/clips/../labels/{answers.name}", f"/%2e/labels/{answers.name}",
                     "/key.json", "/%6bey.json", "/./key.json", "/clips/../key.json",
                     "/key.json?x=1", "/../key.json", "/%2e%2e/key.json",
                     "/clips/../../key.json", f"/../labels/{answers.name}",
                     "/page/key.json", "/../.vocencebench"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(f"{base}{path}", timeout=10)
            assert err.value.code == 404, path
            err.value.close()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    files = list((out / "labels").iterdir())
    assert len(files) == 1  # one rater, one file
    with files[0].open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["id", "dimension", "winner", "score_a", "score_b", "rater"]
    assert len(rows) == 1 + 5 and all(len(r) == 6 for r in rows)
    labels = read_human_csv(files[0])
    assert [(h.id, h.dimension, h.winner, h.rater) for h in labels] == [
        (b["id"], b["dimension"], w[0], "Ann, \"the\" rater") for b, w in zip(given, want,
                                                                               strict=True)]
    assert [(h.score_a, h.score_b) for h in labels] == [
        (None, None) if w[1] == "" else (float(w[1]), float(w[2])) for w in want]


def test_ctrl_c_ends_a_served_test_saying_where_the_answers_are(tmp_path: Path) -> None:
    run, _, _ = make_clip_run(tmp_path, n=8)
    out = tmp_path / "blind"
    with listen_server(run, out, stderr=True) as (proc, _url):
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0  # the way a served test ends, not an interruption
        err = proc.stderr.read()
    assert "vocencebench listen: stopped; every answer given is in " in err, err
    assert str(out / "labels") in err and "resume" not in err, err
