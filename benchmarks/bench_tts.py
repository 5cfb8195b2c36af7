"""Throughput of the built-in eSpeak systems: clips per second.

Compares the shipped design (one fresh forked process per clip, bit-identical output) with the
alternative it rejects (one long-lived engine per worker process, faster but not repeatable),
on the same short sentences and the same number of worker processes, and counts how many of
the long-lived engine's clips differ from the deterministic rendering.

    .venv/bin/python benchmarks/bench_tts.py --clips 400 --workers 2 --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import platform
import resource
import statistics
import time
from multiprocessing.connection import Connection

import numpy as np

from vocencebench import tts
from vocencebench._tts import render
from vocencebench.audio import to_wav_bytes

SENTENCES = (
    "The old lighthouse stood watch over the restless grey sea.",
    "Please restart the router and wait thirty seconds.",
    "Our train leaves at half past nine from platform four.",
    "She painted the fence a bright shade of yellow.",
    "Turn left at the bakery, then take the second right.",
    "The meeting has been moved to Thursday afternoon.",
    "A gentle breeze carried the smell of fresh bread.",
    "Remember to water the plants before you leave.",
    "The children laughed as the kite climbed higher.",
    "Your order will arrive within three working days.",
)
SETTINGS = (
    tts.NEUTRAL,
    tts.voice_settings({"gender": "female", "pace": "fast"}),
    tts.voice_settings({"pitch": "low", "loudness": "quiet", "pace": "slow"}),
    tts.voice_settings({"gender": "female", "accent": "British", "age": "78"}),
)


def workload(n: int) -> list[tuple[str, tts.EspeakSettings]]:
    """``n`` (sentence, settings) requests, cycling through both lists."""
    return [(SENTENCES[i % len(SENTENCES)], SETTINGS[(i // len(SENTENCES)) % len(SETTINGS)])
            for i in range(n)]


def _long_lived(jobs: list[tuple[str, tts.EspeakSettings]], conn: Connection) -> None:
    engine = render._Engine(*render._paths(), reuse=True)
    out = [to_wav_bytes(np.frombuffer(engine.render(t, s), np.int16), tts.SAMPLE_RATE)
           for t, s in jobs]
    conn.send(out)
    conn.close()


def run_long_lived(jobs: list[tuple[str, tts.EspeakSettings]], workers: int) -> list[bytes]:
    """The rejected design: each worker process loads the library once and renders its share
    of the clips in sequence (clip i goes to worker i mod workers)."""
    ctx = multiprocessing.get_context("fork")
    procs = []
    for w in range(workers):
        recv, send = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_long_lived, args=(jobs[w::workers], send))
        p.start()
        send.close()
        procs.append((p, recv))
    shares = []
    for p, recv in procs:
        shares.append(recv.recv())
        p.join()
    out: list[bytes] = [b""] * len(jobs)
    for w, share in enumerate(shares):
        out[w::workers] = share
    return out


def _cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished children, in seconds."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", type=int, default=400, help="clips per timed run")
    ap.add_argument("--workers", type=int, default=2, help="worker processes")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per design (median)")
    args = ap.parse_args()
    jobs = workload(args.clips)

    fresh_rates, long_rates = [], []
    fresh_cpu, long_cpu = [], []
    fresh: list[bytes] = []
    long: list[bytes] = []
    for _ in range(args.repeats):
        c0, t0 = _cpu_seconds(), time.perf_counter()
        fresh = tts.render_many(jobs, workers=args.workers)
        fresh_rates.append(len(jobs) / (time.perf_counter() - t0))
        fresh_cpu.append((_cpu_seconds() - c0) / len(jobs))
        c0, t0 = _cpu_seconds(), time.perf_counter()
        long = run_long_lived(jobs, args.workers)
        long_rates.append(len(jobs) / (time.perf_counter() - t0))
        long_cpu.append((_cpu_seconds() - c0) / len(jobs))

    again = tts.render_many(jobs, workers=args.workers)
    audio_s = sum(len(w) - 44 for w in fresh) / 2 / tts.SAMPLE_RATE
    differ = sum(a != b for a, b in zip(fresh, long, strict=True))
    f, g = statistics.median(fresh_rates), statistics.median(long_rates)
    fc, gc = statistics.median(fresh_cpu) * 1e3, statistics.median(long_cpu) * 1e3
    digest = hashlib.sha256(b"".join(fresh)).hexdigest()[:16]
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs visible, "
          f"Python {platform.python_version()}, {tts.ENGINE_VERSION}")
    print(f"workload: {len(jobs)} clips, {audio_s / len(jobs):.2f} s of audio per clip on "
          f"average, {args.workers} worker processes, median of {args.repeats} runs\n")
    print("| design | clips/s | CPU ms/clip | repeatable |")
    print("| --- | ---: | ---: | --- |")
    print(f"| fresh process per clip (shipped) | {f:.1f} | {fc:.1f} | "
          f"yes: a second run gave {'identical' if again == fresh else 'DIFFERENT'} bytes |")
    print(f"| one long-lived engine per worker | {g:.1f} | {gc:.1f} | "
          f"no: {differ}/{len(jobs)} clips differ from the fresh-process rendering |")
    print(f"\nratio long-lived / fresh: {g / f:.2f}x;  fresh-process batch sha256 {digest}…")


if __name__ == "__main__":
    main()
