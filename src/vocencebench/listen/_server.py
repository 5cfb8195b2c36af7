"""``vocencebench listen --serve``: the listening folder's ``page/`` on 127.0.0.1, each
answer appended to its rater's labels file as it is given.

* Bound to 127.0.0.1 only (no option to widen it). A request whose ``Host`` is not
  127.0.0.1/localhost on this port is refused (DNS rebinding), and an answer must be
  ``application/json`` (a page elsewhere cannot post one without a CORS preflight, which is
  never granted).
* ``POST /api/answer``: ``{trial, id, dimension, choice, score_left, score_right, rater}``
  (the page knows clips by side only: ``choice`` is left, right or tie), checked against the
  test's own ``page/test.json`` (the trial's item id, a question it asks, both scores 0–3 or
  neither), mapped to the run's a/b here with the test's ``key.json``, then one CSV line
  (``id,dimension,winner,score_a,score_b,rater``) appended to ``labels/<rater>.csv`` with
  one ``write`` on an ``O_APPEND``
  descriptor, flushed and fsynced before the answer is acknowledged: a killed server loses
  no acknowledged answer and never leaves half a row. One file per rater; a later row for the
  same item and question supersedes an earlier one (the rater changed their mind), which is
  how ``vocencebench calibrate`` reads it.
* ``GET``: the files of ``page/`` (the document root) and never a directory listing. The key
  (``key.json``, which clip is which system) and ``labels/`` are beside ``page/``, not under
  it; requests for them are refused by name too, however the path is spelt (defence in
  depth).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .._numbers import is_whole_number
from .._util import strict_json
from .._util.human_labels import (
    KEY_FILE,
    LABEL_COLUMNS,
    PAGE_DIR,
    ListeningKey,
    read_listening_key,
)
from ..errors import ConfigError

__all__ = ["HOST", "LABEL_COLUMNS", "LabelsLog", "serve_listening_test"]

#: The only address the server listens on.
HOST = "127.0.0.1"
_MAX_BODY = 4096  # bytes: one answer is a few hundred


def _rater_file(rater: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", rater).strip("._")[:40] or "rater"
    # The digest keeps two raters apart whose names slug alike ("Ann B" and "Ann_B").
    return f"{slug}-{hashlib.sha256(rater.encode('utf-8')).hexdigest()[:8]}.csv"


class LabelsLog:
    """Append-only labels files under ``directory``, one per rater."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._lock = threading.Lock()

    def path(self, rater: str) -> Path:
        return self.directory / _rater_file(rater)

    def append(self, row: dict[str, str]) -> Path:
        """Append one row (a dict over :data:`LABEL_COLUMNS`) to its rater's file, durably."""
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([row[c] for c in LABEL_COLUMNS])
        line = buf.getvalue().encode("utf-8")
        path = self.path(row["rater"])
        with self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if os.fstat(fd).st_size == 0:
                    line = (",".join(LABEL_COLUMNS) + "\n").encode("utf-8") + line
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
        return path


def _check_answer(body: Any, test: dict[str, Any], key: ListeningKey) -> dict[str, str]:
    """The CSV row (the run's a/b) of a posted answer (left/right), or ConfigError saying
    what is wrong with it."""
    if not isinstance(body, dict):
        raise ConfigError("an answer is a JSON object")
    trials = {t["n"]: t for t in test["trials"]}
    dims = {q["dim"] for q in test["questions"]}
    n = body.get("trial")
    if not is_whole_number(n) or n not in trials or not isinstance(body.get("id"), str) \
            or trials[n]["id"] != body["id"]:
        raise ConfigError("trial and id do not name an item of this test")
    if not isinstance(body.get("dimension"), str) or body["dimension"] not in dims:
        raise ConfigError("dimension is not a question of this test")
    if body.get("choice") not in ("left", "right", "tie"):
        raise ConfigError("choice must be left, right or tie")
    rater = body.get("rater")
    if (not isinstance(rater, str) or not rater.strip() or len(rater) > 100
            or any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in rater)):
        raise ConfigError("rater must be a name of 1-100 printable characters")
    scores = [body.get("score_left"), body.get("score_right")]
    if all(s in ("", None) for s in scores):
        sl = sr = ""
    elif all(is_whole_number(s) and 0 <= s <= 3 for s in scores):
        sl, sr = str(scores[0]), str(scores[1])
    else:
        raise ConfigError("scores must both be integers 0-3, or both empty")
    winner, sa, sb = key.to_run(n, body["id"], body["choice"], sl, sr)
    return {"id": str(body["id"]), "dimension": str(body["dimension"]), "winner": winner,
            "score_a": sa, "score_b": sb, "rater": rater.strip()}


def _handler(root: Path, test: dict[str, Any], key: ListeningKey, log: LabelsLog,
             port: Callable[[], int]) -> type[SimpleHTTPRequestHandler]:
    # Nothing private is under ``root`` (the key and the labels are beside it); refused by
    # name all the same, should one ever be put there.
    private = tuple(Path(os.path.realpath(d)) for d in (
        log.directory, root / "labels", root / "api", root / KEY_FILE, root.parent / KEY_FILE))

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, directory=str(root), **kw)

        def log_message(self, format: str, *args: Any) -> None:
            return  # answers are in the labels file; no per-request noise on the terminal

        def _host_ok(self) -> bool:
            host = (self.headers.get("Host") or "").lower()
            return host in (f"127.0.0.1:{port()}", f"localhost:{port()}")

        def _json(self, status: int, obj: dict[str, Any]) -> None:
            data = json.dumps(obj).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if not self._host_ok():
                self._json(HTTPStatus.FORBIDDEN, {"error": "unexpected Host"})
                return
            path = self.path.split("?", 1)[0]
            if path == "/api/hello":
                self._json(HTTPStatus.OK, {"serve": True, "test": test["test"]})
                return
            if path.startswith(("/labels", "/api")) or (path.endswith("/") and path != "/") \
                    or self._private(self.translate_path(self.path)):
                self.send_error(HTTPStatus.NOT_FOUND)
                return
            super().do_GET()

        def _private(self, local: str) -> bool:
            """Whether the file a request maps to (after its %-escapes and dot segments are
            undone: ``/%6cabels/…``, ``/./labels/…``) is an answer file, the key or under
            ``api``."""
            target = Path(os.path.realpath(local))
            return any(target == d or d in target.parents for d in private)

        def do_HEAD(self) -> None:
            self.send_error(HTTPStatus.METHOD_NOT_ALLOWED)

        def list_directory(self, path: str | os.PathLike[str]) -> None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return None

        def do_POST(self) -> None:
            if not self._host_ok() or self.path != "/api/answer":
                self._json(HTTPStatus.FORBIDDEN, {"error": "not here"})
                return
            if (self.headers.get("Content-Type") or "").split(";")[0].strip() \
                    != "application/json":
                self._json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "JSON only"})
                return
            try:
                size = int(self.headers.get("Content-Length") or "0")
            except ValueError:
                size = -1
            if not 0 < size <= _MAX_BODY:
                self._json(HTTPStatus.BAD_REQUEST, {"error": "bad Content-Length"})
                return
            try:
                row = _check_answer(strict_json.loads(self.rfile.read(size)), test, key)
            except (ValueError, ConfigError) as exc:  # nested too deeply included
                self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                return
            log.append(row)
            self._json(HTTPStatus.OK, {"ok": True})

    return Handler


def serve_listening_test(
    directory: str | os.PathLike[str],
    *,
    port: int = 0,
    labels: str | os.PathLike[str] | None = None,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``page/`` of the listening folder ``directory`` on 127.0.0.1:``port`` (0: any
    free port) until interrupted, mapping answers with ``directory/key.json`` and writing
    them under ``labels`` (default ``directory/labels``). ``ready`` receives the page's URL
    once the server listens."""
    folder = Path(directory)
    root = folder / PAGE_DIR
    try:
        test = json.loads((root / "test.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{folder} is not a listening folder ({PAGE_DIR}/test.json: "
                          f"{exc})") from None
    key = read_listening_key(folder / KEY_FILE)
    if key.test != test.get("test"):
        raise ConfigError(f"{folder / KEY_FILE} is the key of test {key.test}, not of this "
                          f"folder's test {test.get('test')}")
    if not is_whole_number(port) or not 0 <= port <= 65535:
        raise ConfigError(f"--port must be 0-65535, got {port!r}")
    log = LabelsLog(labels if labels is not None else folder / "labels")
    box: list[int] = []
    try:
        server = ThreadingHTTPServer((HOST, port), _handler(root, test, key, log, lambda: box[0]))
    except OSError as exc:
        raise ConfigError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    box.append(int(server.server_address[1]))
    server.daemon_threads = True
    try:
        if ready is not None:
            ready(f"http://{HOST}:{box[0]}/index.html")
        server.serve_forever()
    finally:
        server.server_close()
