"""The eSpeak NG render engine: libespeak-ng through ctypes, one fresh process per clip.

libespeak-ng keeps hidden state between syntheses, so every clip is rendered in a process of
its own, forked from a *template* process in which the library has just been initialised
(the process diagram is above :data:`CLIP_TIMEOUT`). :func:`render_jobs` renders a batch on
worker lanes, one template per lane, and returns one result per job. Public through
:mod:`vocencebench.tts`; the calling process never loads the library.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import multiprocessing
import os
import select
import signal
import time
import unicodedata
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Final

import numpy as np

from .._numbers import is_whole_number
from .._util.deps import require
from .._util.procs import WATCH_INTERVAL_S, die_with_parent, usable_cpus
from ..audio import to_wav_bytes
from ..errors import ConfigError, SynthesisError
from .settings import ESPEAKNG_LOADER_VERSION, SAMPLE_RATE, EspeakSettings

__all__ = ["CLIP_TIMEOUT", "render_jobs", "short_text"]

_AUDIO_OUTPUT_SYNCHRONOUS: Final = 2
_POS_CHARACTER: Final = 1
_CHARS_UTF8: Final = 1
_ENDPAUSE: Final = 0x1000
_PARAM_RATE, _PARAM_VOLUME, _PARAM_PITCH, _PARAM_RANGE = 1, 2, 3, 4
_EE_STATUS: Final = {0: "OK", -1: "internal error", 1: "buffer full", 2: "not found"}
_SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)
#: Voice the template process selects after initialising (loads the English dictionary once).
_TEMPLATE_VOICE: Final = "en-us"


@cache
def _paths() -> tuple[str, str]:
    """(library file, data directory) of the pinned wheel; resolving them loads nothing."""
    espeakng_loader = require("espeakng_loader", "the built-in eSpeak systems", "probes",
                              package="espeakng-loader")
    return str(espeakng_loader.get_library_path()), str(espeakng_loader.get_data_path())


class _Engine:
    """libespeak-ng loaded and initialised in *this* process.

    A rendering depends on what the library rendered before in the same process, so by default
    an engine renders once per process (a second call raises); ``reuse=True`` lifts that for the
    test and benchmark that demonstrate the problem.
    """

    def __init__(self, lib_path: str, data_path: str, *, reuse: bool = False) -> None:
        lib = ctypes.CDLL(lib_path)
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                          ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint,
                                     ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                     ctypes.c_void_p, ctypes.c_void_p]
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_Synchronize.restype = ctypes.c_int
        try:
            seed_fn = lib.espeak_ng_SetRandSeed
        except AttributeError:
            raise SynthesisError(
                f"{lib_path} lacks espeak_ng_SetRandSeed, so its noise cannot be seeded and "
                f"renderings would not repeat; install espeakng-loader=={ESPEAKNG_LOADER_VERSION}"
            ) from None
        seed_fn.argtypes = [ctypes.c_long]
        seed_fn.restype = None
        rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path.encode(), 0)
        if rate != SAMPLE_RATE:
            raise SynthesisError(
                f"espeak_Initialize returned {rate} (expected {SAMPLE_RATE} Hz) with data "
                f"at {data_path}; reinstall espeakng-loader=={ESPEAKNG_LOADER_VERSION}"
            )
        self._chunks: list[bytes] = []

        def collect(wav: Any, n: int, _events: Any) -> int:
            if n > 0 and wav:
                self._chunks.append(ctypes.string_at(wav, 2 * n))
            return 0

        self._callback = _SynthCallback(collect)  # keep a reference: C holds the pointer
        lib.espeak_SetSynthCallback(self._callback)
        self._lib = lib
        self._seed = seed_fn
        self._reuse = reuse
        self._rendered_in: int | None = None

    def select_voice(self, voice: str) -> None:
        """``espeak_SetVoiceByName``; a status other than OK is an error."""
        status = self._lib.espeak_SetVoiceByName(voice.encode())
        if status != 0:
            raise SynthesisError(f"eSpeak voice {voice!r}: {_EE_STATUS.get(status, status)}")

    def render(self, text: str, settings: EspeakSettings) -> bytes:
        """Native-endian 16-bit PCM samples of ``text`` at :data:`SAMPLE_RATE`."""
        if not self._reuse:
            if self._rendered_in == os.getpid():
                raise SynthesisError("internal: a second clip in one engine process would "
                                     "inherit eSpeak's hidden state")
            self._rendered_in = os.getpid()
        lib = self._lib
        self.select_voice(settings.voice)
        for param, value in ((_PARAM_RATE, settings.rate), (_PARAM_VOLUME, settings.volume),
                             (_PARAM_PITCH, settings.pitch), (_PARAM_RANGE, settings.range)):
            status = lib.espeak_SetParameter(param, value, 0)
            if status != 0:
                raise SynthesisError(f"espeak_SetParameter({param}, {value}): "
                                     f"{_EE_STATUS.get(status, status)}")
        self._seed(settings.seed)
        data = text.encode("utf-8") + b"\0"
        self._chunks.clear()
        status = lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0,
                                  _CHARS_UTF8 | _ENDPAUSE, None, None)
        if status != 0:
            raise SynthesisError(f"espeak_Synth: {_EE_STATUS.get(status, status)}")
        lib.espeak_Synchronize()
        return b"".join(self._chunks)


def _clean_text(text: str) -> str:
    if not isinstance(text, str):
        raise SynthesisError(f"text must be a string, got {type(text).__name__}")
    # Control characters (NUL would end the C string early) become spaces.
    cleaned = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    if not cleaned.strip():
        raise SynthesisError(f"nothing to say: text {text!r} is empty")
    return cleaned


def _render_wav(engine: _Engine, text: str, settings: EspeakSettings) -> bytes:
    """Render one clip with ``engine`` (in a fresh clip process) and encode it as WAV."""
    pcm = engine.render(text, settings)
    if not pcm:
        raise SynthesisError("eSpeak produced no samples")
    return to_wav_bytes(np.frombuffer(pcm, dtype=np.int16), SAMPLE_RATE)


# ------------------------------------------------------------------ processes
#
#   caller (never loads the library)
#     └── template process, one per worker lane: loads + initialises the library, selects
#         the en-us voice, never synthesises; then, for each clip it is given:
#           └── clip process (os.fork of the template): renders exactly one clip, writes
#               b"W"+wav or b"E"+message to a pipe, and exits with os._exit.
#
# Both kinds die with their parent (PR_SET_PDEATHSIG on Linux, else a poll of the parent
# pid in the template), even when the caller is SIGKILLed, and ignore SIGINT: a Ctrl-C stops
# the caller, which then kills its templates at once (see vocencebench._util.procs).
#
# Every clip process starts from the same memory image (a just-initialised library), which is
# what a brand-new process that loads the library would have, minus the cost of loading it:
# the reference renderings are the same bytes either way (tests/unit/synthesis/test_tts.py
# checks both).

#: Seconds one clip may take before its clip process is killed.
CLIP_TIMEOUT: Final = 120.0


def _read_all(fd: int, deadline: float) -> bytes | None:
    """Everything written to ``fd`` until EOF, or None when ``deadline`` passes first."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _clip_process(engine: _Engine, text: str, settings: EspeakSettings, fd: int,
                  template_pid: int | None = None) -> None:
    """Body of a clip process. Never returns: always ends in ``os._exit``."""
    code = 0
    try:
        if template_pid is not None:
            die_with_parent(template_pid)
        try:
            msg = b"W" + _render_wav_in_clip_process(engine, text, settings)
        except BaseException as exc:  # reported through the pipe
            msg = b"E" + f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
        view = memoryview(msg)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        code = 70
    finally:
        os._exit(code)


def _render_wav_in_clip_process(engine: _Engine, text: str, settings: EspeakSettings
                                ) -> bytes:
    # A separate name so tests can replace the clip work (the forks inherit the patch).
    return _render_wav(engine, text, settings)


def _render_one(engine: _Engine, text: str, settings: EspeakSettings, timeout: float
                ) -> tuple[bool, bytes]:
    """In the template process: fork a clip process and collect (ok, WAV bytes or message)."""
    r, w = os.pipe()
    template_pid = os.getpid()
    pid = os.fork()
    if pid == 0:  # the clip process
        os.close(r)
        _clip_process(engine, text, settings, w, template_pid)
    os.close(w)
    try:
        data = _read_all(r, time.monotonic() + timeout)
    finally:
        os.close(r)
    if data is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return False, f"timed out after {timeout:g} s".encode()
    _, status = os.waitpid(pid, 0)
    if data[:1] == b"W" and os.waitstatus_to_exitcode(status) == 0:
        return True, data[1:]
    if data[:1] == b"E":
        return False, data[1:]
    code = os.waitstatus_to_exitcode(status)
    how = f"signal {-code}" if code < 0 else f"exit code {code}"
    return False, f"eSpeak clip process died ({how})".encode()


def _template_main(conn: Connection, timeout: float, parent_pid: int | None = None) -> None:
    """A worker lane: initialise the library once, then one clip process per request."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller handles Ctrl-C
    armed = die_with_parent(parent_pid) if parent_pid is not None else True
    engine: _Engine | None = None
    try:
        ready = _Engine(*_paths())
        ready.select_voice(_TEMPLATE_VOICE)
        engine, failure = ready, b""
    except BaseException as exc:
        engine = None
        failure = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
    while True:
        try:
            if not armed:  # no parent-death signal here: watch the parent between jobs
                while not conn.poll(WATCH_INTERVAL_S):
                    if os.getppid() != parent_pid:
                        os._exit(1)
            job = conn.recv()
        except EOFError:
            break
        if job is None:
            break
        index, text, settings = job
        if engine is None:
            conn.send((index, False, failure))
            continue
        ok, payload = _render_one(engine, text, settings, timeout)
        conn.send((index, ok, payload))
    conn.close()



def _default_workers() -> int:
    return min(usable_cpus(), 8)


def short_text(text: str) -> str:
    """``text`` cut to at most 60 characters, for messages."""
    return text if len(text) <= 60 else text[:57] + "..."


#: Requests sent ahead to each template, so it never waits for the caller between clips.
_PREFETCH: Final = 3


@dataclass
class _Lane:
    process: BaseProcess
    conn: Connection
    jobs: deque[tuple[int, str]] = field(default_factory=deque)  # (index, text) in flight
    deadline: float = math.inf  # when the head job is overdue


def _start_lane(ctx: Any, timeout: float) -> _Lane:
    parent_end, child_end = ctx.Pipe(duplex=True)
    proc = ctx.Process(target=_template_main, args=(child_end, timeout, os.getpid()),
                       name="vocencebench-espeak", daemon=True)
    proc.start()
    child_end.close()
    return _Lane(proc, parent_end)


def render_jobs(jobs: Sequence[tuple[str, EspeakSettings]], workers: int | None,
         *, timeout: float = CLIP_TIMEOUT) -> list[bytes | SynthesisError]:
    """Render ``jobs`` on ``workers`` lanes, one fresh clip process per job; per-job result.

    Not ``multiprocessing.Pool(maxtasksperchild=1)``: a clip process that crashes in C or hangs
    becomes that clip's error instead of hanging the pool, and forking clip processes from an
    initialised template costs half the CPU of loading the library in each of them.
    """
    n = _default_workers() if workers is None else workers
    if not is_whole_number(n) or n < 1:
        raise ConfigError(f"workers must be a positive integer, got {workers!r}")
    n = min(n, usable_cpus())  # lanes are CPU-bound: more than the CPUs only costs memory
    out: list[bytes | SynthesisError | None] = [None] * len(jobs)
    todo: deque[tuple[int, str, EspeakSettings]] = deque()
    settings_of: dict[int, EspeakSettings] = {}
    for i, (text, settings) in enumerate(jobs):
        if not isinstance(settings, EspeakSettings):
            raise ConfigError(f"expected EspeakSettings, got {type(settings).__name__}")
        try:
            todo.append((i, _clean_text(text), settings))
            settings_of[i] = settings
        except SynthesisError as exc:
            out[i] = exc
    if not todo:
        return [r if r is not None else SynthesisError("internal: job not run") for r in out]
    _paths()  # resolve (and fail on a missing wheel) here, before any process starts
    ctx = multiprocessing.get_context("fork")
    lanes = [_start_lane(ctx, timeout) for _ in range(min(n, len(todo)))]
    grace = 30.0  # seconds a template may lag behind its clip's own timeout

    def lane_lost(k: int, why: str) -> None:
        """Fail the lane's current clip with ``why``; requeue the rest; start a new lane."""
        lane = lanes[k]
        i, text = lane.jobs.popleft()
        out[i] = SynthesisError(f"{why} while rendering {short_text(text)!r}")
        for j, t in reversed(lane.jobs):
            todo.appendleft((j, t, settings_of[j]))
        lanes[k] = _replace_lane(lane, ctx, timeout)

    finished = False
    try:
        while True:
            for k, lane in enumerate(lanes):
                while todo and len(lane.jobs) < _PREFETCH:
                    i, text, settings = todo.popleft()
                    if not lane.jobs:
                        lane.deadline = time.monotonic() + timeout + grace
                    lane.jobs.append((i, text))
                    try:
                        lane.conn.send((i, text, settings))
                    except OSError as exc:  # the template died while idle
                        lane_lost(k, f"eSpeak worker unavailable ({exc})")
                        break
            busy = [lane for lane in lanes if lane.jobs]
            if not busy:
                break
            wait_s = max(0.0, min(lane.deadline for lane in busy) - time.monotonic())
            ready = wait([lane.conn for lane in busy], timeout=wait_s)
            for k, lane in enumerate(lanes):
                if not lane.jobs:
                    continue
                if lane.conn in ready:
                    try:
                        index, ok, payload = lane.conn.recv()
                    except (EOFError, OSError):
                        lane.process.join(timeout=5)
                        lane_lost(k, f"eSpeak worker died (exit code {lane.process.exitcode})")
                        continue
                    i, text = lane.jobs.popleft()
                    if index != i:  # pragma: no cover - the template answers in order
                        raise SynthesisError(f"internal: answer for job {index}, expected {i}")
                    out[i] = payload if ok else SynthesisError(
                        f"eSpeak failed on {short_text(text)!r}: "
                        f"{payload.decode('utf-8', 'replace')}")
                    lane.deadline = time.monotonic() + timeout + grace
                elif time.monotonic() >= lane.deadline:
                    lane_lost(k, "eSpeak worker stopped answering")
        finished = True
    finally:
        for lane in lanes:
            if finished:
                _stop_lane(lane)
            else:  # interrupted (Ctrl-C, an error): stop at once, do not drain the queue
                _kill_lane(lane)
    return [r if r is not None else SynthesisError("internal: job not run") for r in out]


def _stop_lane(lane: _Lane) -> None:
    with contextlib.suppress(OSError):
        lane.conn.send(None)
    lane.conn.close()
    lane.process.join(timeout=5)
    if lane.process.is_alive():
        lane.process.kill()
        lane.process.join()


def _kill_lane(lane: _Lane) -> None:
    with contextlib.suppress(OSError, ValueError):
        lane.process.kill()
        lane.process.join()
    lane.conn.close()


def _replace_lane(lane: _Lane, ctx: Any, timeout: float) -> _Lane:
    lane.process.kill()
    lane.process.join()
    lane.conn.close()
    return _start_lane(ctx, timeout)

