"""A saved run whose clips are real audio in a real run cache, for the listening tests.

:func:`make_clip_run` takes the synthetic duel of ``synthetic_run.make_head2head``, gives
every clip a real WAV (a seeded harmonic tone: system a at 22.05 kHz, system b at 24 kHz, so
the listening test has to bring them to one rate), stores it in a :class:`Cache` under the
key the pipeline uses (``clip_key(system id, item)``), and records the sha256 and duration
the run "measured". One item can be made hostile (:data:`HOSTILE_TEXT`,
:data:`HOSTILE_INSTRUCTION`); one clip gets a gate veto with a transcript.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from proc_tools import as_in_a_terminal
from seeding import make_rng
from synthetic_run import LABELS, make_head2head
from vocencebench.cache import Cache, clip_key
from vocencebench.result import Head2Head, save_run

#: System ids of the two synthetic systems (the cache keys derive from them).
SYSTEM_IDS = {LABELS[0]: "cmd:flat-tts@1.4.2+sysidA", LABELS[1]: "qwen3:steer-v2@sysidB"}
RATES = {LABELS[0]: 22050, LABELS[1]: 24000}
#: An item text and instruction that try every trick: a script element, an event-handler
#: attribute, a right-to-left override, a bell and a NUL.
HOSTILE_TEXT = ('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'
                " \u202egnikcah\u202c done\x07 \x00end")
HOSTILE_INSTRUCTION = ('"><svg onload=window.__pwned=3> \u2067speak \u05e9\u05dc\u05d5\u05dd'
                       '\u2069 calmly <b onmouseover="window.__pwned=4">x</b>')


def tone_wav(seconds: float, rate: int, f0: float, seed: int) -> bytes:
    """16-bit mono WAV of a harmonic tone with a little seeded noise."""
    rng = make_rng(seed)
    n = round(seconds * rate)
    t = np.arange(n) / rate
    x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 5))
    x = 0.3 * x / np.max(np.abs(x)) + 0.01 * rng.standard_normal(n)
    buf = io.BytesIO()
    sf.write(buf, x.astype(np.float32), rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def make_clip_head2head(cache_path: Path, *, n: int = 24, hostile: bool = True,
                        seed: int = 20261201) -> tuple[Head2Head, dict[tuple[str, str], float]]:
    """The duel with real clips in ``cache_path``; also the true duration (s) of every clip,
    keyed by (item id, side)."""
    h = make_head2head(n=n)
    deltas = [(p.b.S - p.a.S, i) for i, p in enumerate(h.pairs)
              if p.a.S is not None and p.b.S is not None]
    worst = max(deltas)[1]  # the most decisive item: it is in every report's section
    durations: dict[tuple[str, str], float] = {}
    pairs = []
    with Cache(cache_path) as cache:
        for i, p in enumerate(h.pairs):
            item = p.item
            if hostile and i == worst:
                item = dataclasses.replace(item, text=HOSTILE_TEXT,
                                           instruction=HOSTILE_INSTRUCTION)
            new: dict[str, Any] = {"item": item}
            for side, label in (("a", LABELS[0]), ("b", LABELS[1])):
                an = getattr(p, f"analysis_{side}")
                if an.failure is not None:
                    continue
                seconds = 0.8 + 0.07 * ((i * 7 + (side == "b") * 3) % 23)
                wav = tone_wav(seconds, RATES[label], 110.0 + 9 * i + 40 * (side == "b"),
                               seed + 2 * i + (side == "b"))
                cache.put_bytes("clips", clip_key(SYSTEM_IDS[label], item), wav,
                                {"system": SYSTEM_IDS[label], "item": item.id})
                frames = sf.info(io.BytesIO(wav)).frames
                durations[(item.id, side)] = frames / RATES[label]
                change: dict[str, Any] = {"sha256": hashlib.sha256(wav).hexdigest(),
                                          "duration": frames / RATES[label]}
                if i == 3 and side == "a":  # a gate veto, with what the ASR heard
                    change.update(gate=0, wer=0.5, transcript="the quarterly <b>figures</b>",
                                  asr_engine="whisper:tiny.en")
                new[f"analysis_{side}"] = dataclasses.replace(an, **change)
            pairs.append(dataclasses.replace(p, **new))
    meta = {**h.metadata, "systems": dict(SYSTEM_IDS),
            "cache": {"path": str(cache_path), "corrupt": {}}}
    return dataclasses.replace(h, pairs=tuple(pairs), metadata=meta), durations


def make_clip_run(base: Path, **kw: Any) -> tuple[Path, Head2Head, dict[tuple[str, str], float]]:
    """Save the duel of :func:`make_clip_head2head` into ``base/run`` (cache beside it)."""
    h, durations = make_clip_head2head(base / "cache.sqlite", **kw)
    return save_run(h, base / "run"), h, durations



@contextlib.contextmanager
def listen_server(run: Path, out: Path, *, items: int = 8, stderr: bool = False
                  ) -> Iterator[tuple[Any, str]]:
    """``vocencebench listen RUN --out OUT --serve --port 0`` in a child process: yields
    (the process, the page's URL); the process is killed (SIGKILL) and reaped on exit, its
    pipes closed. A test may SIGKILL it earlier itself. ``stderr``: keep standard error in
    ``proc.stderr`` (else it is discarded)."""
    src = Path(__file__).resolve().parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen([sys.executable, "-m", "vocencebench", "listen", str(run), "--out",
                             str(out), "--items", str(items), "--serve", "--port", "0"],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE if stderr else subprocess.DEVNULL,
                            text=True, env=env, preexec_fn=as_in_a_terminal)
    try:
        assert proc.stdout is not None
        url = next((ln.split()[1] for ln in proc.stdout if ln.startswith("serving ")), None)
        assert url is not None, "the server printed no URL"
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
