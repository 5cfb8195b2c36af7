"""Any TTS model as a ``(text, instruction) -> wav bytes`` callable.

The extension point is :class:`TTSSystem`. A system may also implement optional hooks, each a
declared :class:`~typing.Protocol` below; the pipeline checks them once, when a run starts
(:func:`system_hooks`), and refuses an attribute that looks like a misspelt hook
(``cache_clip``, ``synthesise_many``) instead of silently ignoring it:

* :class:`IdentifiedSystem` — ``system_id: str``, a stable identity for the cache (else the
  class/function name is used);
* :class:`ItemSystem` — ``synthesize_item(item) -> bytes``, when the system needs the item
  itself (directories of clips);
* :class:`BatchedSystem` — ``synthesize_many(requests, *, workers=None) -> list[bytes |
  Exception]``: one result per ``(text, instruction)`` request, in order; an item's failure
  is its exception in its slot, never raised for the batch (the same contract as
  :func:`vocencebench.tts.synthesize_many`);
* :class:`CachePolicy` — ``cache_clips: bool``; ``False`` keeps this system's clips out of the
  run cache (they are read afresh every run);
* :class:`ConcurrentSystem` — ``concurrency: int``, requests this system may have in flight
  at once (I/O-bound systems: HTTP APIs, command lines); ``benchmark(concurrency=...)``
  overrides it;
* :class:`PlacedSystem` — ``placement: "client" | "worker"``: where a batched system runs on
  a Dask cluster (model adapters default to the workers, everything else to the client).

A system that raises or times out on an item scores S = 0 on it, with the reason kept; the
pipeline catches :class:`~vocencebench.errors.VocenceError` and any other exception alike. An
error blamed on an instrument (``ServiceError``: a speech API's 429/5xx/network after its
retries) makes the item incomplete instead, and a rerun retries it.
"""

from __future__ import annotations

import abc
import contextlib
import difflib
import os
import re
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import httpx

from .errors import ConfigError, MissingDependencyError, SynthesisError, VocenceError
from .schema import Item

__all__ = [
    "CLIP_MAX_BYTES",
    "SYSTEM_HOOKS",
    "BatchedSystem",
    "CachePolicy",
    "CommandAdapter",
    "ConcurrentSystem",
    "DirectoryAdapter",
    "EspeakSystem",
    "IdentifiedSystem",
    "ItemSystem",
    "OpenAISpeechAdapter",
    "ParlerTTSAdapter",
    "PlacedSystem",
    "Qwen3TTSAdapter",
    "SystemHooks",
    "TTSSystem",
    "kill_running_commands",
    "parse_system_spec",
    "synthesize_item",
    "system_hooks",
    "system_id",
]

Placement = Literal["client", "worker"]


@runtime_checkable
class TTSSystem(Protocol):
    """A prompt-controllable TTS system: script + voice instruction → WAV bytes."""

    def __call__(self, text: str, instruction: str) -> bytes: ...


@runtime_checkable
class IdentifiedSystem(Protocol):
    """A system with a stable cache identity (change it when its output changes)."""

    system_id: str


@runtime_checkable
class ItemSystem(Protocol):
    """A system that serves clips by item (e.g. a directory of pre-synthesised clips)."""

    def synthesize_item(self, item: Item) -> bytes: ...


@runtime_checkable
class BatchedSystem(Protocol):
    """A system that renders many requests at once (a GPU model, the eSpeak lanes).

    One result per ``(text, instruction)`` request, in order: WAV bytes, or the exception
    that failed that item. Raising fails the whole batch (each item gets the error).
    """

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]: ...


@runtime_checkable
class CachePolicy(Protocol):
    """``cache_clips = False``: never keep this system's clips in the run cache."""

    cache_clips: bool


@runtime_checkable
class ConcurrentSystem(Protocol):
    """``concurrency``: how many requests the system may have in flight at once."""

    concurrency: int


@runtime_checkable
class PlacedSystem(Protocol):
    """``placement``: ``"worker"`` runs a batched system on the Dask workers, ``"client"`` in
    the process that runs the benchmark."""

    placement: Placement


#: Every optional hook: attribute name → what it must be.
SYSTEM_HOOKS: dict[str, str] = {
    "system_id": "a non-empty str",
    "synthesize_item": "a method (item) -> bytes",
    "synthesize_many": "a method (requests, *, workers=None) -> list[bytes | Exception]",
    "cache_clips": "a bool",
    "concurrency": "an int >= 1",
    "placement": "'client' or 'worker'",
}


@dataclass(frozen=True)
class SystemHooks:
    """What a system offers, read once at the start of a run (:func:`system_hooks`)."""

    system_id: str
    per_item: bool
    batched: bool
    cache_clips: bool
    concurrency: int | None
    placement: Placement | None


def _misspelt_hooks(system: object) -> list[tuple[str, str]]:
    names = [n for n in dir(system) if not n.startswith("_") and n not in SYSTEM_HOOKS]
    out = []
    for n in names:
        # A misspelling is close *and* about as long: ``cache_clip`` for ``cache_clips``, not
        # an attribute that merely starts the same (``system`` beside ``system_id``).
        close = [h for h in difflib.get_close_matches(n, SYSTEM_HOOKS, n=1, cutoff=0.85)
                 if abs(len(h) - len(n)) <= 2]
        if close:
            out.append((n, close[0]))
    return out


def system_hooks(system: Callable[[str, str], bytes], *, label: str = "system") -> SystemHooks:
    """Check ``system``'s optional hooks once; a wrong type or a name that looks like a
    misspelt hook is a :class:`~vocencebench.errors.ConfigError` naming the fix."""
    name = f"{label} {system!r}"
    for bad, hook in _misspelt_hooks(system):
        raise ConfigError(
            f"{name} has an attribute {bad!r}, which looks like the hook {hook!r} misspelt; "
            f"rename it to {hook!r} ({SYSTEM_HOOKS[hook]}) or to a name starting with '_'"
        )
    if not callable(system) and not isinstance(system, ItemSystem):
        raise ConfigError(f"{name} is not callable as (text, instruction) -> WAV bytes")
    sid = getattr(system, "system_id", None)
    if sid is not None and not (isinstance(sid, str) and sid):
        raise ConfigError(f"{name}: system_id must be {SYSTEM_HOOKS['system_id']}, "
                          f"got {sid!r}")
    for hook in ("synthesize_item", "synthesize_many"):
        if hasattr(system, hook) and not callable(getattr(system, hook)):
            raise ConfigError(f"{name}: {hook} must be {SYSTEM_HOOKS[hook]}")
    cache_clips = getattr(system, "cache_clips", True)
    if not isinstance(cache_clips, bool):
        raise ConfigError(f"{name}: cache_clips must be a bool, got {cache_clips!r}")
    conc = getattr(system, "concurrency", None)
    if conc is not None and (isinstance(conc, bool) or not isinstance(conc, int) or conc < 1):
        raise ConfigError(f"{name}: concurrency must be {SYSTEM_HOOKS['concurrency']}, "
                          f"got {conc!r}")
    placement = getattr(system, "placement", None)
    if placement not in (None, "client", "worker"):
        raise ConfigError(f"{name}: placement must be {SYSTEM_HOOKS['placement']}, "
                          f"got {placement!r}")
    return SystemHooks(
        system_id=system_id(system),
        per_item=isinstance(system, ItemSystem),
        batched=isinstance(system, BatchedSystem),
        cache_clips=cache_clips,
        concurrency=conc,
        placement=placement,
    )


def system_id(system: Callable[[str, str], bytes]) -> str:
    """A stable identity for ``system`` (cache key part): its ``system_id`` or its name."""
    sid = getattr(system, "system_id", None)
    if isinstance(sid, str) and sid:
        return sid
    mod = getattr(system, "__module__", "") or ""
    name = getattr(system, "__qualname__", None) or type(system).__qualname__
    return f"callable:{mod}.{name}"


def check_distinct_identities(systems: Mapping[str, Callable[[str, str], bytes]]) -> None:
    """Refuse two different systems that would share one identity (and so one cache row per
    item: the second would be scored on the first one's clips).

    Only fallback identities (``callable:module.qualname``, from a system without a
    ``system_id``) can collide by accident: two lambdas of one function, two instances of one
    class. Equal explicit ``system_id`` values mean the same configuration (an A/A test), and
    one object passed twice is an A/A test too."""
    seen: dict[str, tuple[str, Callable[[str, str], bytes]]] = {}
    for label, system in systems.items():
        sid = system_id(system)
        if sid in seen and seen[sid][1] is not system and not _has_own_id(system):
            raise ConfigError(
                f"systems {seen[sid][0]!r} and {label!r} are different objects with the same "
                f"identity {sid!r}, so they would share cached clips; give each a distinct "
                "system_id attribute (a string naming the model and its settings), or pass "
                "the same object twice for an A/A test")
        seen.setdefault(sid, (label, system))


def _has_own_id(system: Callable[[str, str], bytes]) -> bool:
    sid = getattr(system, "system_id", None)
    return isinstance(sid, str) and bool(sid)


def synthesize_item(system: Callable[[str, str], bytes], item: Item) -> bytes:
    """Synthesise ``item`` with ``system``.

    Our own errors pass through as they are (a ``ServiceError`` stays the instrument's, a
    ``ConfigError`` stops the run); anything else a user's system raises becomes a
    SynthesisError naming the item, and so does an empty or non-bytes result.
    """
    try:
        fn = getattr(system, "synthesize_item", None)
        wav = fn(item) if fn is not None else system(item.text, item.instruction)
    except VocenceError:
        raise
    except Exception as exc:  # a user's system may raise anything
        raise SynthesisError(
            f"{system_id(system)} failed on {item.id}: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(wav, bytes | bytearray):
        raise SynthesisError(f"{system_id(system)} returned {type(wav).__name__} instead of "
                             f"WAV bytes for {item.id}")
    if not wav:
        raise SynthesisError(f"{system_id(system)} returned no audio (0 bytes) instead of WAV "
                             f"bytes for {item.id}")
    return bytes(wav)


class EspeakSystem:
    """A built-in eSpeak NG system (``espeak-follow`` or ``espeak-flat``); offline."""

    def __init__(self, name: str = "espeak-follow") -> None:
        from . import tts

        self._impl = tts.get_system(name)
        self.name = name
        self.system_id = f"{name}@{tts.ENGINE_VERSION}"

    def __call__(self, text: str, instruction: str) -> bytes:
        return self._impl(text, instruction)

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        from . import tts

        return tts.synthesize_requests(self.name, requests, workers=workers)

    def __repr__(self) -> str:
        return f"EspeakSystem({self.name!r})"


#: Largest clip a command or directory system may hand over (bytes), checked before reading
#: (the same figure as ``audio.DEFAULT_MAX_BYTES``): 50 MB is about 9 minutes of 48 kHz
#: 16-bit stereo WAV.
CLIP_MAX_BYTES = 50_000_000

_GUARD = str(Path(__file__).with_name("_cmdguard.py"))

# Command groups running now in this process. A command runs in a stage thread, which never
# sees the main thread's KeyboardInterrupt; without this the interrupted run would wait, at
# interpreter exit, for that thread and so for the command (the guard's lifeline only fires
# once this process is gone): Ctrl-C would hang until the command's timeout.
_running: set[tuple[subprocess.Popen[bytes], bool]] = set()
_running_lock = threading.Lock()


def kill_running_commands() -> int:
    """Kill the process group of every command system this process is running now (what an
    interrupted run does before it returns); their calls then fail. Returns how many."""
    with _running_lock:
        running = list(_running)
    for proc, grouped in running:
        _kill_group(proc, grouped)
    return len(running)


def _size(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


def _check_max_bytes(max_bytes: int) -> int:
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise ConfigError(f"max_bytes must be a whole number of bytes ≥ 1, got {max_bytes!r}")
    return max_bytes


def _read_clip(path: str | os.PathLike[str], max_bytes: int, who: str) -> bytes | None:
    """The file's bytes, or None when it does not exist. Refuses, before reading anything, a
    file over ``max_bytes`` or one that is not a regular file (a FIFO, a device)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SynthesisError(f"{who}: cannot read {path}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SynthesisError(f"{who}: {path} is not a regular file")
        over = (f"{who}: the clip is over the {_size(max_bytes)} size cap (max_bytes="
                f"{max_bytes}); not read")
        if st.st_size > max_bytes:
            raise SynthesisError(over.replace("the clip is", f"the clip is {_size(st.st_size)},"))
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total)):
            total += len(chunk)
            if total > max_bytes:  # grew while we read it
                raise SynthesisError(over)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _stderr_tail(path: str, lines: int = 3) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
            tail = f.read()
    except OSError:
        return ""
    return " | ".join(tail.decode("utf-8", "replace").strip().splitlines()[-lines:])


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """``proc.wait(timeout)`` without its polling (which adds up to 50 ms per call): a pidfd
    becomes readable the moment the process exits (Linux ≥ 5.3)."""
    pidfd_open = getattr(os, "pidfd_open", None)
    fd = None
    if pidfd_open is not None:
        with contextlib.suppress(OSError):
            fd = pidfd_open(proc.pid)
    if fd is None:
        return proc.wait(timeout=timeout)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    if not ready:
        raise subprocess.TimeoutExpired(proc.args, timeout)
    return proc.wait()


def _kill_group(proc: subprocess.Popen[bytes], grouped: bool) -> None:
    """Kill the command and everything it started (its process group), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if grouped:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    with contextlib.suppress(Exception):
        proc.wait(timeout=10)


class CommandAdapter:
    """Runs a command per item, without a shell: ``{text}``, ``{instruction}``, ``{out}``.

    The template is split with :func:`shlex.split` first and placeholders are filled per
    argument, so a script containing quotes or ``;`` is passed verbatim, never interpreted.
    The command must write a WAV file to ``{out}``. ``timeout`` is in seconds; ``max_bytes``
    caps the clip it writes (checked before reading; default :data:`CLIP_MAX_BYTES`).

    Process hygiene (POSIX): the command runs in a session and process group of its own under
    a small guard (:mod:`vocencebench._cmdguard`). On a timeout, or when the caller is
    interrupted, the whole group is killed, grandchildren included; when the calling process
    dies (even by SIGKILL) the guard kills the group. Its stdin is empty, its stdout
    discarded and only the last lines of its stderr kept for the failure reason. A command
    that moves itself into a new session (``setsid``) escapes the group.
    """

    def __init__(self, template: str, *, timeout: float = 300.0, name: str | None = None,
                 max_bytes: int = CLIP_MAX_BYTES) -> None:
        try:
            self.argv_template = shlex.split(template)
        except ValueError as exc:  # an unbalanced quote
            raise ConfigError(f"cannot parse command template {template!r}: {exc}") from None
        if not self.argv_template:
            raise ConfigError("command template is empty")
        if not any("{out}" in a for a in self.argv_template):
            raise ConfigError(f"command template {template!r} must contain {{out}}")
        self.timeout = timeout
        self.max_bytes = _check_max_bytes(max_bytes)
        self.system_id = name or f"cmd:{template}"

    def __call__(self, text: str, instruction: str) -> bytes:
        with tempfile.TemporaryDirectory(prefix="vocence-cmd-") as tmp:
            out = os.path.join(tmp, "out.wav")
            values = {"text": text, "instruction": instruction, "out": out}
            argv = [_fill(a, values) for a in self.argv_template]
            if shutil.which(argv[0]) is None:
                raise SynthesisError(f"command not found: {argv[0]}")
            err_path = os.path.join(tmp, "stderr.txt")
            code = self._run(argv, err_path)
            if code != 0:
                raise SynthesisError(
                    f"command exited {code}: {argv[0]}: {_stderr_tail(err_path)}"
                )
            wav = _read_clip(out, self.max_bytes, f"command {argv[0]}")
            if wav is None:
                raise SynthesisError(f"command {argv[0]} wrote no file to {{out}}")
            return wav

    def _run(self, argv: list[str], err_path: str) -> int:
        grouped = os.name == "posix" and bool(sys.executable)
        # The guard holds the read end of a lifeline pipe; only this process holds the
        # write end, so the guard sees end-of-file the moment this process dies.
        life_r, life_w = os.pipe() if grouped else (-1, -1)
        full = ([sys.executable, "-I", "-S", _GUARD, str(life_r), "--", *argv]
                if grouped else argv)
        try:
            with open(err_path, "wb") as err:
                try:
                    proc = subprocess.Popen(full, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=err,
                                            start_new_session=grouped,
                                            pass_fds=(life_r,) if grouped else ())
                except OSError as exc:
                    raise SynthesisError(f"cannot run {argv[0]}: {exc.strerror or exc}") \
                        from exc
                finally:
                    if grouped:
                        os.close(life_r)
                entry = (proc, grouped)
                with _running_lock:
                    _running.add(entry)
                try:
                    return _wait(proc, self.timeout)
                except subprocess.TimeoutExpired:
                    _kill_group(proc, grouped)
                    raise SynthesisError(
                        f"command timed out after {self.timeout:g} s: {argv[0]}"
                    ) from None
                except BaseException:  # Ctrl-C, an error here: take the command along
                    _kill_group(proc, grouped)
                    raise
                finally:
                    with _running_lock:
                        _running.discard(entry)
        finally:
            if grouped:
                os.close(life_w)

    def __repr__(self) -> str:
        return f"CommandAdapter({self.system_id!r})"


def _fill(arg: str, values: dict[str, str]) -> str:
    # Replace only our three placeholders; other braces stay as they are.
    return re.sub(r"\{(text|instruction|out)\}", lambda m: values[m.group(1)], arg)


_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class DirectoryAdapter:
    """Pre-synthesised clips: ``<dir>/<item id>.wav``. Refuses ids that leave the folder.

    Its clips are read afresh on every run (``cache_clips = False``): replacing a file in
    place is seen at once; analyses and verdicts are still cached by the audio's sha256.
    A clip over ``max_bytes`` (default :data:`CLIP_MAX_BYTES`) fails its item unread.
    """

    #: Reading a file is cheaper than caching it, and a cached copy could go stale.
    cache_clips = False

    def __init__(self, path: str | os.PathLike[str], *, suffix: str = ".wav",
                 max_bytes: int = CLIP_MAX_BYTES) -> None:
        self.root = Path(path).resolve()
        if not self.root.is_dir():
            raise ConfigError(f"clip directory {self.root} does not exist")
        self.suffix = suffix
        self.max_bytes = _check_max_bytes(max_bytes)
        self.system_id = f"dir:{self.root}"

    def path_for(self, item_id: str) -> Path:
        if not _SAFE_ID.match(item_id) or ".." in item_id:
            raise SynthesisError(f"refusing item id {item_id!r}: not a plain file name")
        p = (self.root / f"{item_id}{self.suffix}").resolve()
        if p.parent != self.root:
            raise SynthesisError(f"refusing item id {item_id!r}: leaves {self.root}")
        return p

    def synthesize_item(self, item: Item) -> bytes:
        p = self.path_for(item.id)
        wav = _read_clip(p, self.max_bytes, f"clip {p.name}")
        if wav is None:
            raise SynthesisError(f"no clip for {item.id}: {p} is missing")
        return wav

    def __call__(self, text: str, instruction: str) -> bytes:
        raise ConfigError(
            "DirectoryAdapter serves clips by item id; use it through vb.benchmark or "
            "call .synthesize_item(item)"
        )

    def __repr__(self) -> str:
        return f"DirectoryAdapter({str(self.root)!r})"


#: Words in a 400 answer that say the speech server refused the *content* (the system's
#: failure for that item), not the request's shape.
_REFUSAL_WORDS = ("policy", "refus", "safety", "moderation", "content_filter", "flagged",
                  "inappropriate", "not allowed", "violat")


class OpenAISpeechAdapter:
    """Any ``/v1/audio/speech`` server with an ``instructions`` field (e.g. gpt-4o-mini-tts).

    Requests go through the shared HTTP layer (:mod:`vocencebench._util.http`): ``timeout`` is the
    total deadline of one attempt (s); 408/429/5xx, connection resets and truncated answers
    are retried ``max_retries`` times (jittered backoff from ``backoff`` s, or the wait the
    server asks for); the answer is read up to ``max_bytes``. Safe to call from several
    threads at once. What a failure means:

    * the system's failure (:class:`~vocencebench.errors.SynthesisError`, S = 0 for the item):
      a 400 whose body says the content was refused (policy, safety, moderation), an empty
      answer, an answer over ``max_bytes``;
    * infrastructure (:class:`~vocencebench.errors.ServiceError`, ``blame="instrument"``: the
      item is incomplete, never scored): 429/5xx/network still failing after the retries —
      ``fatal=True`` when retrying cannot help (401/403/404/other 400s, a per-day quota).

    The bytes are returned as the server sent them, whatever their format (several servers
    ignore ``response_format``); :func:`vocencebench.audio.load_audio` decodes WAV, FLAC,
    OGG and MP3. The key comes from ``api_key`` or the ``api_key_env`` variable and is never in
    ``repr``, ``system_id`` or an error; neither are credentials in ``base_url``.
    """

    def __init__(
        self,
        base_url: str = "https://api.openai.com",
        model: str = "gpt-4o-mini-tts",
        voice: str = "alloy",
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_bytes: int | None = None,
        response_format: str = "wav",
        requests_per_minute: float | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        from ._util.http import HttpClient, check_credentials
        from ._util.retry import RateLimiter, RetryPolicy
        from .audio import DEFAULT_MAX_BYTES
        from .redact import register_secret, register_url_secrets, safe_url

        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://, got "
                              f"{safe_url(base_url)!r}")
        register_url_secrets(base_url)
        self._base = base_url.rstrip("/")
        self.base_url = safe_url(self._base)
        self.model = model
        self.voice = voice
        self.response_format = response_format
        self._key = api_key if api_key is not None else os.environ.get(api_key_env)
        register_secret(self._key)
        check_credentials(base_url, has_key=bool(self._key))
        self.system_id = f"openai-speech:{self.base_url}#{model}#{voice}"
        self._http = HttpClient(
            "speech server", timeout_s=timeout,
            retry=RetryPolicy(max_retries=max_retries, backoff_s=backoff,
                              max_backoff_s=max(backoff, 30.0)),
            max_body_bytes=max_bytes or DEFAULT_MAX_BYTES, secrets=[self._key],
            transport=transport, sleep=sleep,
            limiter=RateLimiter(requests_per_minute, sleep=sleep or time.sleep))

    def _url(self) -> str:
        from ._util.http import join_url

        return join_url(self._base, "/v1/audio/speech", strip="/v1")

    def __call__(self, text: str, instruction: str) -> bytes:
        from ._util.http import HTTPFailure
        from .errors import ServiceError
        from .redact import redact

        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        body = {"model": self.model, "voice": self.voice, "input": text,
                "instructions": instruction, "response_format": self.response_format}
        try:
            r = self._http.request("POST", self._url(), json=body, headers=headers)
        except HTTPFailure as exc:
            if exc.reason == "too-large":
                raise SynthesisError(f"{self.system_id}: {redact(exc)}") from None
            if exc.status == 400 and any(w in exc.body.lower() for w in _REFUSAL_WORDS):
                raise SynthesisError(
                    f"{self.system_id}: the server refused the input (HTTP 400): {exc.body}"
                ) from None
            raise ServiceError(f"{self.system_id}: {redact(exc, limit=600)}",
                               fatal=exc.fatal, blame="instrument", status=exc.status,
                               calls=exc.calls) from None
        if not r.content:
            raise SynthesisError(f"{self.system_id}: HTTP {r.status} with an empty body "
                                 "(no audio)")
        ctype = r.headers.get("content-type", "")
        if ctype.startswith(("application/json", "text/")):
            raise SynthesisError(f"{self.system_id}: HTTP {r.status} answered {ctype} instead "
                                 f"of audio: {redact(r.text, limit=200)}")
        return r.content

    def close(self) -> None:
        """Close the HTTP connection pool (a later call opens a new one)."""
        self._http.close()

    def __repr__(self) -> str:
        return f"OpenAISpeechAdapter({self.base_url!r}, model={self.model!r}, voice={self.voice!r})"


def _in_batches(
    sid: str,
    requests: Sequence[tuple[str, str]],
    size: int,
    render: Callable[[Sequence[tuple[str, str]]], list[bytes]],
) -> list[bytes | Exception]:
    """``render`` each chunk of ``size`` requests; a chunk that raises fails its own items."""
    out: list[bytes | Exception] = []
    for start in range(0, len(requests), size):
        chunk = requests[start : start + size]
        try:
            wavs = render(chunk)
            if len(wavs) != len(chunk):
                raise SynthesisError(f"{len(wavs)} clips for {len(chunk)} requests")
            out.extend(wavs)
        except Exception as exc:  # one bad batch fails its items, not the run
            out.extend(SynthesisError(f"{sid}: {type(exc).__name__}: {exc}") for _ in chunk)
    return out


def _torch_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda:0" if torch.cuda.is_available() else "cpu"


class _BatchedModelAdapter(abc.ABC):
    """A local model that renders batches: one clip is a batch of one."""

    @abc.abstractmethod
    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]: ...

    def __call__(self, text: str, instruction: str) -> bytes:
        res = self.synthesize_many([(text, instruction)])[0]
        if isinstance(res, Exception):
            raise res
        return res


class Qwen3TTSAdapter(_BatchedModelAdapter):
    """Qwen3-TTS VoiceDesign (``qwen-tts``): ``generate_voice_design(text, language,
    instruct)``, 24 kHz output. Loaded lazily on first use; batched by ``batch_size``."""

    def __init__(
        self,
        checkpoint: str,
        *,
        language: str = "English",
        device: str = "auto",
        batch_size: int = 8,
        dtype: str = "bfloat16",
    ) -> None:
        self.checkpoint = checkpoint
        self.language = language
        self.device = device
        self.batch_size = batch_size
        self.dtype = dtype
        self.system_id = f"qwen3:{checkpoint}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                import torch
                from qwen_tts import Qwen3TTSModel
            except ImportError as exc:
                raise MissingDependencyError(
                    "Qwen3TTSAdapter", "qwen3", package="qwen-tts"
                ) from exc
            self._model = Qwen3TTSModel.from_pretrained(
                self.checkpoint,
                device_map=_torch_device(self.device),
                dtype=getattr(torch, self.dtype),
            )
        return self._model

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        from .audio import to_wav_bytes

        model = self._load()

        def render(chunk: Sequence[tuple[str, str]]) -> list[bytes]:
            wavs, sr = model.generate_voice_design(
                text=[t for t, _ in chunk],
                language=[self.language] * len(chunk),
                instruct=[i for _, i in chunk],
            )
            return [to_wav_bytes(w, int(sr)) for w in wavs]

        return _in_batches(self.system_id, requests, self.batch_size, render)


class ParlerTTSAdapter(_BatchedModelAdapter):
    """Parler-TTS: the instruction is the voice *description*, the script the *prompt*."""

    def __init__(self, checkpoint: str, *, device: str = "auto", batch_size: int = 8) -> None:
        self.checkpoint = checkpoint
        self.device = device
        self.batch_size = batch_size
        self.system_id = f"parler:{checkpoint}"
        self._loaded: tuple[Any, Any, str] | None = None

    def _load(self) -> tuple[Any, Any, str]:
        if self._loaded is None:
            try:
                from parler_tts import ParlerTTSForConditionalGeneration
                from transformers import AutoTokenizer
            except ImportError as exc:
                raise MissingDependencyError(
                    "ParlerTTSAdapter", "parler", package="parler-tts"
                ) from exc
            dev = _torch_device(self.device)
            model = ParlerTTSForConditionalGeneration.from_pretrained(self.checkpoint).to(dev)
            tok = AutoTokenizer.from_pretrained(self.checkpoint)
            self._loaded = (model, tok, dev)
        return self._loaded

    def synthesize_many(
        self, requests: Sequence[tuple[str, str]], *, workers: int | None = None
    ) -> list[bytes | Exception]:
        from .audio import to_wav_bytes

        model, tok, dev = self._load()
        sr = int(model.config.sampling_rate)

        def render(chunk: Sequence[tuple[str, str]]) -> list[bytes]:
            desc = tok([i for _, i in chunk], return_tensors="pt", padding=True).to(dev)
            prompt = tok([t for t, _ in chunk], return_tensors="pt", padding=True).to(dev)
            gen = model.generate(
                input_ids=desc.input_ids, attention_mask=desc.attention_mask,
                prompt_input_ids=prompt.input_ids,
                prompt_attention_mask=prompt.attention_mask,
                do_sample=False, return_dict_in_generate=True,
            )
            return [
                to_wav_bytes(gen.sequences[k, : int(gen.audios_length[k])].float().cpu().numpy(),
                             sr)
                for k in range(len(chunk))
            ]

        return _in_batches(self.system_id, requests, self.batch_size, render)


def parse_system_spec(spec: str) -> Callable[[str, str], bytes]:
    """A system from a CLI spec (:mod:`vocencebench.specs`): a built-in name
    (``espeak-follow``, ``espeak-flat``, ``hibari``, ``hibari-follow``), ``cmd:TEMPLATE``,
    ``dir:PATH``, ``openai-speech:URL#MODEL#VOICE``, ``qwen3:CHECKPOINT`` or
    ``parler:CHECKPOINT``."""
    from . import specs

    system: Callable[[str, str], bytes] = specs.build("system", spec)
    return system
