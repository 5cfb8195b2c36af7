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
from vocencebench.calibration import read_human_csv

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
        trials = json.loads((out / "test.json").read_text(encoding="utf-8"))["trials"]
        given = []
        for k, t in enumerate(trials[:5]):
            body = {"trial": t["n"], "id": t["id"], "dimension": ("naturalness", "tone")[k % 2],
                    "winner": ("a", "b", "tie")[k % 3], "rater": "Ann, \"the\" rater",
                    "score_a": k % 4 if k % 2 else "", "score_b": 3 - k % 4 if k % 2 else ""}
            assert post(f"{base}/api/answer", body) == (200, {"ok": True})
            given.append(body)
        # Refused, and never written: a wrong item, a bad score, a form post, a foreign Host.
        bad = {**given[0], "id": "not-in-the-test"}
        assert post(f"{base}/api/answer", bad)[0] == 400
        assert post(f"{base}/api/answer", {**given[0], "score_a": 7, "score_b": 1})[0] == 400
        assert post(f"{base}/api/answer", given[0], ctype="text/plain")[0] == 415
        assert post(f"{base}/api/answer", given[0], host="evil.example:80")[0] == 403
        # Wrong types and a body nested past the parser's depth: a 400, not a dropped reply.
        assert post(f"{base}/api/answer", {**given[0], "dimension": ["tone"]})[0] == 400
        assert post(f"{base}/api/answer", {**given[0], "winner": {"a": 1}})[0] == 400
        assert post(f"{base}/api/answer", {**given[0], "id": [given[0]["id"]]})[0] == 400
        assert post_raw(f"{base}/api/answer", b"[" * 3000)[0] == 400
        [answers] = (out / "labels").iterdir()
        # One rater never reads another's answers: no spelling of the path reaches labels/.
        for path in ("/labels/", "/clips/", f"/labels/{answers.name}",
                     f"/%6cabels/{answers.name}", f"/./labels/{answers.name}",
                     f"/clips/../labels/{answers.name}", f"/%2e/labels/{answers.name}"):
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
        (b["id"], b["dimension"], b["winner"], "Ann, \"the\" rater") for b in given]
    assert [(h.score_a, h.score_b) for h in labels][1] == (1.0, 2.0)


def test_ctrl_c_ends_a_served_test_saying_where_the_answers_are(tmp_path: Path) -> None:
    run, _, _ = make_clip_run(tmp_path, n=8)
    out = tmp_path / "blind"
    with listen_server(run, out, stderr=True) as (proc, _url):
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0  # the way a served test ends, not an interruption
        err = proc.stderr.read()
    assert "vocencebench listen: stopped; every answer given is in " in err, err
    assert str(out / "labels") in err and "resume" not in err, err
