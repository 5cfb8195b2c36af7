"""A small Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (standard library
only): real headless Chromium (Debian's ``chromium``) with its JavaScript running, driven
without a websocket, a browser download or any network.

The browser reads NUL-terminated JSON messages on fd 3 and writes them on fd 4; a reader
thread files responses by id and keeps every event, so a test can wait for one. Only what
the browser tests need: open a page, evaluate JavaScript (awaiting promises), press keys,
reload, capture downloads and screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_CANDIDATES = ("chromium", "chromium-browser")
CHROMIUM = next((p for p in map(shutil.which, _CANDIDATES) if p), None)
SKIP_REASON = (f"no Chromium binary on PATH (looked for {', '.join(_CANDIDATES)}); "
               "install it with: apt-get install chromium")

# Key name → (code, Windows virtual key code, text typed) for Input.dispatchKeyEvent.
_KEYS: dict[str, tuple[str, int, str]] = {
    "ArrowLeft": ("ArrowLeft", 37, ""), "ArrowRight": ("ArrowRight", 39, ""),
    "ArrowUp": ("ArrowUp", 38, ""), "ArrowDown": ("ArrowDown", 40, ""),
    "Enter": ("Enter", 13, "\r"), "Backspace": ("Backspace", 8, ""), "Tab": ("Tab", 9, ""),
    " ": ("Space", 32, " "),
}


class CDPError(RuntimeError):
    """The browser answered a command with an error, or did not answer in time."""


def _high_fd(fd: int) -> int:
    """``fd`` moved to a number ≥ 10, so that dup2 onto 3 and 4 in the child cannot clash."""
    new = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return new


class Browser:
    """Headless Chromium with a fresh profile, every background network feature off."""

    def __init__(self, profile: Path, *, width: int = 1200, height: int = 900) -> None:
        assert CHROMIUM is not None, SKIP_REASON
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        child_r, child_w = _high_fd(to_browser_r), _high_fd(from_browser_w)

        def remap() -> None:  # in the child, before exec: the pipe becomes fds 3 and 4
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)

        args = [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
            "--autoplay-policy=no-user-gesture-required", "--remote-debugging-pipe",
            f"--window-size={width},{height}", f"--user-data-dir={profile}", "about:blank",
        ]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, pass_fds=(3, 4),
                                     preexec_fn=remap)
        os.close(child_r)
        os.close(child_w)
        self._w = os.fdopen(to_browser_w, "wb", buffering=0)
        self._r = os.fdopen(from_browser_r, "rb", buffering=0)
        self._next = 0
        self._lock = threading.Condition()
        self._answers: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime"):
            self.call(f"{domain}.enable", session=self.session)

    # ---------------------------------------------------------------- the wire

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = self._r.read(65536)
            except OSError:
                chunk = b""
            if not chunk:
                with self._lock:
                    self._lock.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._lock:
                    if "id" in msg:
                        self._answers[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._lock.notify_all()

    def call(self, method: str, params: dict[str, Any] | None = None, *,
             session: str | None = None, timeout: float = 60.0) -> dict[str, Any]:
        """Send one command and return its result (CDPError on an error answer)."""
        with self._lock:
            self._next += 1
            ident = self._next
        msg: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session is not None:
            msg["sessionId"] = session
        self._w.write(json.dumps(msg).encode("utf-8") + b"\0")
        deadline = time.monotonic() + timeout
        with self._lock:
            while ident not in self._answers:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise CDPError(f"{method}: no answer from Chromium")
                self._lock.wait(left)
            answer = self._answers.pop(ident)
        if "error" in answer:
            raise CDPError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    def page(self, method: str, params: dict[str, Any] | None = None,
             **kw: Any) -> dict[str, Any]:
        """:meth:`call` in the page's session."""
        return self.call(method, params, session=self.session, **kw)

    def wait_event(self, method: str, where: Callable[[dict[str, Any]], bool] = lambda p: True,
                   *, since: int = 0, timeout: float = 60.0) -> dict[str, Any]:
        """The first event ``method`` (its params) at index ≥ ``since`` satisfying ``where``."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for ev in self.events[since:]:
                    if ev.get("method") == method and where(ev.get("params", {})):
                        params: dict[str, Any] = ev.get("params", {})
                        return params
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CDPError(f"no {method} event within {timeout} s")
                self._lock.wait(left)

    # ---------------------------------------------------------------- the page

    def goto(self, url: str) -> None:
        """Open ``url`` and wait for its load event."""
        mark = len(self.events)
        self.page("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", since=mark)

    def reload(self) -> None:
        mark = len(self.events)
        self.page("Page.reload", {"ignoreCache": True})
        self.wait_event("Page.loadEventFired", since=mark)

    def js(self, expression: str, *, timeout: float = 60.0) -> Any:
        """The value of ``expression`` in the page (promises awaited); CDPError on a throw."""
        got = self.page("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                             "returnByValue": True}, timeout=timeout)
        if "exceptionDetails" in got:
            raise CDPError(f"JavaScript threw: {got['exceptionDetails']}")
        return got["result"].get("value")

    def press(self, key: str) -> None:
        """Press and release ``key`` (a character or a name of :data:`_KEYS`)."""
        if key in _KEYS:
            code, vk, text = _KEYS[key]
        else:
            code = f"Key{key.upper()}" if key.isalpha() else f"Digit{key}"
            vk, text = ord(key.upper()), key
        down: dict[str, Any] = {"type": "keyDown", "key": key, "code": code,
                                "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
        if text:
            down["text"] = text
        self.page("Input.dispatchKeyEvent", down)
        self.page("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code,
                                             "windowsVirtualKeyCode": vk,
                                             "nativeVirtualKeyCode": vk})

    def type_text(self, text: str) -> None:
        self.page("Input.insertText", {"text": text})

    def allow_downloads(self, directory: Path) -> None:
        self.call("Browser.setDownloadBehavior", {"behavior": "allow",
                                                  "downloadPath": str(directory),
                                                  "eventsEnabled": True})

    def wait_download(self, *, since: int = 0, timeout: float = 60.0) -> None:
        self.wait_event("Browser.downloadProgress", lambda p: p.get("state") == "completed",
                        since=since, timeout=timeout)

    def screenshot(self, png: Path, *, full_page: bool = False,
                   clip: dict[str, float] | None = None) -> None:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        data = self.page("Page.captureScreenshot", params)["data"]
        png.write_bytes(base64.b64decode(data))

    def console_errors(self) -> list[dict[str, Any]]:
        """Uncaught exceptions the page threw so far."""
        with self._lock:
            return [e for e in self.events if e.get("method") == "Runtime.exceptionThrown"]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.call("Browser.close", timeout=10)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self._w, self._r):
            with contextlib.suppress(OSError):
                f.close()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
