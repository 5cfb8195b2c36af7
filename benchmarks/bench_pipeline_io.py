"""A simulated real run on 127.0.0.1: the streaming pipeline against the barrier design.

Two speech servers (``/v1/audio/speech``, one per system) answer each request after a fixed
latency with at most ``--cap`` requests in service at once; a judge server (OpenAI chat
completions with audio, tests/judge_fakes.py) answers after its own latency. The servers run in
a separate process, so the client's CPU is the client's. The systems are the real
``OpenAISpeechAdapter``; the probes are the acoustic ones; the judge is the real ``Judge``.

Both designs run in this one invocation, on the same corpus and servers:

* **streaming** — ``vb.benchmark`` (synthesis at ``--cap`` requests in flight per system,
  analysis and judging start as soon as an item's clips exist);
* **barrier** — the previous design, given the same concurrency: synthesise every clip of
  system A, then of B, then analyse every clip, then judge every pair.

Printed: wall time of each, each stage's bound, and wall / slowest bound (target ≤ 1.15 at
496 items). The bounds: synthesis ``items × latency / cap`` (both systems at once), judging
``calls × latency / judge concurrency`` (calls = items × 2 dimensions × 2 orders), analysis the
barrier design's analysis stage (CPU, measured).

    .venv/bin/python benchmarks/bench_pipeline_io.py                 # 496 items
    .venv/bin/python benchmarks/bench_pipeline_io.py --items 100 --latency 0.1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # judge_fakes: the real fake judge server

SCRIPTS = (
    "The quarterly figures arrive on Thursday, so please keep the afternoon free.",
    "Turn left at the old mill and follow the river until you see the bridge.",
    "She sells sea shells by the sea shore, and the shells she sells are surely seashells.",
    "Call the office before nine thirty to confirm your appointment.",
    "Although the storm had raged all night, the roads stayed open.",
    "A warm cup of tea and a good book make a quiet evening.",
)


class _Speech:
    """One speech server: fixed latency, at most ``cap`` requests in service."""

    def __init__(self, clips: list[bytes], latency: float, cap: int) -> None:
        sem = threading.BoundedSemaphore(cap)
        self.peak = 0
        self._now = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                key = int(hashlib.sha256(body["input"].encode()).hexdigest(), 16)
                with sem:
                    with lock:
                        outer._now += 1
                        outer.peak = max(outer.peak, outer._now)
                    time.sleep(latency)
                    with lock:
                        outer._now -= 1
                wav = clips[key % len(clips)]
                self.send_response(200)
                self.send_header("Content-Type", "audio/wav")
                self.send_header("Content-Length", str(len(wav)))
                self.end_headers()
                self.wfile.write(wav)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.request_queue_size = 128
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def _serve(conn: Any, latency: float, cap: int, judge_latency: float) -> None:
    """The server process: two speech servers and a judge; sends their ports, then waits."""
    from judge_fakes import FakeJudgeServer, Reply, answer
    from vocencebench import tts

    voices = [tts.EspeakSettings(), tts.EspeakSettings(voice="en-us+f3", pitch=70),
              tts.EspeakSettings(rate=210, volume=140)]
    clips_a = tts.render_many([(s, voices[0]) for s in SCRIPTS], workers=2)
    clips_b = tts.render_many([(s, v) for s in SCRIPTS for v in voices[1:]], workers=2)
    a, b = _Speech(clips_a, latency, cap), _Speech(clips_b, latency, cap)
    reply = json.dumps(answer("tie", 2, 2))
    judge = FakeJudgeServer("openai", lambda call: Reply(reply, delay_s=judge_latency))
    judge.httpd.request_queue_size = 128
    judge.__enter__()
    conn.send((a.port, b.port, judge.url))
    conn.recv()  # stop
    conn.send((a.peak, b.peak, judge.max_in_flight, len(judge.calls)))


def _streaming(items: list[Any], systems: tuple[Any, Any], judge: Any, args: Any,
               cache: Path) -> tuple[float, Any]:
    import vocencebench as vb

    t0 = time.perf_counter()
    h = vb.benchmark(items, systems[0], systems[1], judge, probes=vb.default_probes(),
                     labels=("a", "b"), cache=cache, workers=args.workers, progress=False,
                     concurrency=args.cap, judge_concurrency=args.judge_concurrency)
    return time.perf_counter() - t0, h


def _barrier(items: list[Any], systems: tuple[Any, Any], judge: Any, args: Any
             ) -> tuple[float, dict[str, float], Any]:
    """The previous design with the same concurrency: three barriers in a row."""
    from vocencebench.adapters import synthesize_item
    from vocencebench.pair import analyse_clip, combine, covered_dimensions
    from vocencebench.probes import default_probes
    from vocencebench.scores import decide_pairs
    from vocencebench.specs import make_executor
    from vocencebench.traits import TRAITS

    probes = default_probes()
    stages: dict[str, float] = {}
    t0 = time.perf_counter()
    clips: list[list[bytes]] = []
    for system in systems:  # A, then B
        with ThreadPoolExecutor(args.cap) as pool:
            clips.append(list(pool.map(lambda it, s=system: synthesize_item(s, it), items)))
    stages["synthesis"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    exe = make_executor(None, workers=args.workers)
    units = [(it, c, lab) for lab, side in zip("ab", clips, strict=True)
             for it, c in zip(items, side, strict=True)]
    try:
        out = dict(exe.map_unordered(_analyse, [(u, probes) for u in units]))
    finally:
        exe.close()
    analyses = [out[k] for k in range(len(units))]
    stages["analysis"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    n = len(items)
    dims = TRAITS.judged_dimensions()

    def ask(job: tuple[int, str]) -> tuple[int, str, Any]:
        i, d = job
        it = items[i]
        return i, d, judge.compare(text=it.text, instruction=it.instruction,
                                   audio_a=clips[0][i], audio_b=clips[1][i], dimension=d,
                                   category=it.category)

    verdicts: list[dict[str, Any]] = [{} for _ in items]
    with ThreadPoolExecutor(args.judge_concurrency) as pool:
        for i, d, v in pool.map(ask, [(i, d) for i in range(n) for d in dims]):
            verdicts[i][d] = v
    stages["judge"] = time.perf_counter() - t2
    cover = covered_dimensions(probes.traits, True)
    pairs = [combine(items[i], analyses[i], analyses[n + i], verdicts[i], labels=("a", "b"),
                     dimensions=cover) for i in range(n)]
    decision = decide_pairs(pairs, ("a", "b"))
    _ = analyse_clip
    return time.perf_counter() - t0, stages, decision


def _analyse(arg: tuple[tuple[Any, bytes, str], Any]) -> Any:
    from vocencebench.pair import analyse_clip

    (item, clip, label), probes = arg
    return analyse_clip(item, clip, system=label, probes=probes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=496)
    ap.add_argument("--latency", type=float, default=0.25, help="speech server latency (s)")
    ap.add_argument("--cap", type=int, default=8, help="requests in service per server")
    ap.add_argument("--judge-latency", type=float, default=0.05)
    ap.add_argument("--judge-concurrency", type=int, default=8)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--skip-barrier", action="store_true")
    args = ap.parse_args()

    parent, child = multiprocessing.get_context("fork").Pipe()
    server = multiprocessing.get_context("fork").Process(
        target=_serve, args=(child, args.latency, args.cap, args.judge_latency))
    server.start()
    port_a, port_b, judge_url = parent.recv()

    import vocencebench as vb
    from vocencebench.adapters import OpenAISpeechAdapter

    items = vb.load_benchmark("benchmark_v1")[: args.items]
    systems = (OpenAISpeechAdapter(f"http://127.0.0.1:{port_a}", "sim-a", "alloy", api_key=""),
               OpenAISpeechAdapter(f"http://127.0.0.1:{port_b}", "sim-b", "alloy", api_key=""))
    judge = vb.Judge.local(judge_url, "fake-omni", validate_audio=False)
    n = len(items)
    synth_bound = n * args.latency / args.cap
    judge_bound = n * 2 * 2 * args.judge_latency / args.judge_concurrency
    with tempfile.TemporaryDirectory() as tmp:
        wall, h = _streaming(items, systems, judge, args, Path(tmp) / "cache.sqlite")
    barrier: tuple[float, dict[str, float], Any] | None = None
    if not args.skip_barrier:
        barrier = _barrier(items, systems, judge, args)
    parent.send("stop")
    peaks = parent.recv()
    server.terminate()

    analysis_bound = barrier[1]["analysis"] if barrier else 0.0
    slowest = max(synth_bound, judge_bound, analysis_bound)
    print(f"{n} items: speech latency {args.latency:g} s, cap {args.cap} per server; judge "
          f"latency {args.judge_latency:g} s, concurrency {args.judge_concurrency}; "
          f"{h.metadata['executor']['workers']} analysis workers")
    print(f"stage bounds: synthesis {synth_bound:.2f} s (each system, in parallel), "
          f"analysis {analysis_bound:.2f} s (measured, barrier run), judge {judge_bound:.2f} s")
    print(f"peak requests in service: speech a {peaks[0]}, b {peaks[1]}; judge {peaks[2]} "
          f"({peaks[3]} judge calls)")
    print(f"{'design':<12}{'wall s':>9}{'/ slowest bound':>17}")
    print(f"{'streaming':<12}{wall:>9.2f}{wall / slowest:>17.3f}   "
          f"decision: {h.decision.winner}")
    if barrier is not None:
        bw, st, dec = barrier
        print(f"{'barrier':<12}{bw:>9.2f}{bw / slowest:>17.3f}   synthesis {st['synthesis']:.2f}"
              f" + analysis {st['analysis']:.2f} + judge {st['judge']:.2f} s; "
              f"decision: {dec.winner}")
        print(f"streaming is {bw / wall:.2f}x faster than the barrier design; a strictly "
              f"serial synthesis (the design before this one) alone would take "
              f"{2 * n * args.latency:.0f} s")


if __name__ == "__main__":
    main()
