"""The stage units and the engine around them: components travel once per process (a model
loads once per worker), a clip is decoded once in the client, the judge starts while
synthesis is still running, open items stay within max_in_flight."""

from __future__ import annotations

import os
import pickle
import threading
from typing import Any

import pytest

import vocencebench as vb
from judge_fakes import tone_wav
from vocencebench._pipeline.stages import handle
from vocencebench.schema import Item, ProbeResult, Verdict

ITEMS = vb.load_benchmark("benchmark_v1")[:6]


class WhereProbe:
    """Records which process and which object measured each clip."""

    name, version, traits = "where", "1", ("pitch",)

    def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
        return {"pitch": ProbeResult("pitch", 1.0, "", "low", 1.0, "where@1",
                                     detail={"pid": os.getpid(), "obj": id(self)})}


def test_a_handle_is_unpickled_once_per_process() -> None:
    h = handle(WhereProbe())
    blob = pickle.dumps(h)
    one, two = pickle.loads(blob).get(), pickle.loads(blob).get()
    assert one is two  # the second unit in this process reuses the first one's object


@pytest.mark.slow
def test_every_unit_of_a_worker_uses_the_same_component_object() -> None:
    def hum(text: str, instruction: str) -> bytes:
        return tone_wav(200.0 + len(text) % 5, seconds=0.4)

    probes = vb.ProbeSet([WhereProbe()], check_speech=False)  # the systems render tones
    h = vb.benchmark(ITEMS, hum, hum, probes=probes, labels=("a", "b"),
                     workers=2, progress=False, canaries=False)
    seen: dict[int, set[int]] = {}
    for p in h.pairs:
        for an in (p.analysis_a, p.analysis_b):
            d = an.probes["pitch"].detail
            seen.setdefault(d["pid"], set()).add(d["obj"])
    assert os.getpid() not in seen  # measured in the pool's processes
    assert all(len(objs) == 1 for objs in seen.values())


def test_a_large_run_keeps_its_pairs_on_disk(monkeypatch: Any, tmp_path: Any) -> None:
    import vocencebench._pipeline.engine as engine
    from vocencebench.result import PairList, load_run

    def hum(text: str, instruction: str) -> bytes:
        return tone_wav(200.0 + len(text) % 5, seconds=0.4)

    probes = vb.ProbeSet([WhereProbe()], check_speech=False)
    small = vb.benchmark(ITEMS, hum, hum, probes=probes, labels=("a", "b"), workers=1,
                         progress=False, canaries=False)
    monkeypatch.setattr(engine, "SPILL_PAIRS", 2)
    big = vb.benchmark(ITEMS, hum, hum, probes=probes, labels=("a", "b"), workers=1,
                       progress=False, canaries=False)
    assert isinstance(small.pairs, tuple) and isinstance(big.pairs, PairList)
    assert big.pairs == small.pairs and small.pairs == big.pairs
    assert big.pairs[-1] == small.pairs[-1] and big.pairs[1:3] == small.pairs[1:3]
    assert big.decision == small.decision and big.samples == small.samples
    assert pickle.loads(pickle.dumps(big)).pairs == small.pairs
    assert load_run(big.save(tmp_path / "run")).pairs == small.pairs


def test_compare_models_scores_given_clips_like_benchmark() -> None:
    def hum(text: str, instruction: str) -> bytes:
        return tone_wav(200.0 + len(text) % 5, seconds=0.4)

    probes = vb.ProbeSet([WhereProbe()], check_speech=False)
    ran = vb.benchmark(ITEMS, hum, hum, probes=probes, labels=("a", "b"), workers=1,
                       progress=False, canaries=False)
    clips = [hum(it.text, it.instruction) for it in ITEMS]
    missing = {ITEMS[0].id: "synthesis: the GPU ran out of memory"}
    given = vb.compare_models(ITEMS, [None, *clips[1:]], {it.id: c for it, c
                                                           in zip(ITEMS, clips, strict=True)},
                              probes=probes, labels=("a", "b"), workers=1, progress=False,
                              synthesis_failures=(missing, {}), canaries=False)
    assert given.pairs[0].a.S == 0.0
    assert given.pairs[0].a.failure == "synthesis: the GPU ran out of memory"
    assert [p.b for p in given.pairs] == [p.b for p in ran.pairs]


# ------------------------------------------------------------------ one decode per clip


def _tones(base: float) -> Any:
    import zlib

    def hum(text: str, instruction: str) -> bytes:  # a distinct clip per system and item
        k = zlib.crc32(text.encode()) % 97
        return tone_wav(base + k, seconds=0.4 + 0.002 * k)

    hum.system_id = f"tone:{base}"  # type: ignore[attr-defined]  # its own clip-cache key
    return hum


def test_a_serial_run_decodes_each_clip_once_in_the_client(monkeypatch: Any) -> None:
    import hashlib
    import json

    import vocencebench.audio as audio_mod
    from dask_fakes import BatchedLoudness
    from judge_fakes import Call, FakeJudgeServer, Reply, answer
    from vocencebench.judge import Judge

    decodes: dict[str, int] = {}
    real = audio_mod.load_audio

    def counting(data: Any, **kw: Any) -> Any:
        sha = hashlib.sha256(bytes(data)).hexdigest()
        decodes[sha] = decodes.get(sha, 0) + 1
        return real(data, **kw)

    monkeypatch.setattr(audio_mod, "load_audio", counting)

    def longer_wins(call: Call) -> Reply:
        a, b = (len(x) for x in call.audio)
        return Reply(json.dumps(answer("A", 3, 1) if a >= b else answer("B", 1, 3)))

    probes = vb.ProbeSet([WhereProbe(), BatchedLoudness()], check_speech=False)
    with FakeJudgeServer("openai", longer_wins) as js:
        h = vb.benchmark(ITEMS, _tones(200.0), _tones(310.0),
                         Judge.local(base_url=js.url, model="fake-omni"), probes=probes,
                         labels=("a", "b"), workers=1, progress=False, canaries=False)
        judged = len(js.calls)
    assert h.metadata["executor"]["name"] == "serial"  # analysis in this process
    assert judged == 4 * len(ITEMS)  # two dimensions × two orders per pair: the judge ran
    assert all({"loudness", "pitch", "tone"} <= set(p.a.d) for p in h.pairs)  # batch ran
    shas = {an.sha256 for p in h.pairs for an in (p.analysis_a, p.analysis_b)}
    assert len(shas) == 2 * len(ITEMS)
    # Analysis, the batched probes and the judge share one Clip: one decode per clip.
    assert decodes == dict.fromkeys(shas, 1)


# ------------------------------------------------------------------------ streaming


class _Recorder:
    """An event log shared by the systems and the judge below (appends are atomic)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.judged = threading.Event()


class _LoggedSystem:
    """A per-item system: logs each synthesis as it starts and ends; ``hold`` makes the synthesis
    of that item wait until the judge has been called (or a deadlock guard expires)."""

    def __init__(self, rec: _Recorder, hz: float, label: str, hold: str | None = None) -> None:
        self.rec, self.hz, self.label, self.hold = rec, hz, label, hold
        self.system_id = f"logged:{label}"
        self.released: bool | None = None

    def synthesize_item(self, item: Item) -> bytes:
        self.rec.log.append((f"synth {self.label}", item.id))
        if item.id == self.hold:
            self.released = self.rec.judged.wait(timeout=60)  # guard only, never a timing
        self.rec.log.append((f"synthesised {self.label}", item.id))
        return tone_wav(self.hz + len(item.text) % 7, seconds=0.4)

    def __call__(self, text: str, instruction: str) -> bytes:  # pragma: no cover
        raise AssertionError("served by item")


class _LoggedJudge:
    """A PairJudge that logs each call and its end; A always wins."""

    model, prompt_version = "logged", "p1"

    def __init__(self, rec: _Recorder, ids: dict[str, str]) -> None:
        self.rec, self.ids = rec, ids

    def compare(self, *, text: str, dimension: str, **kw: Any) -> Verdict:
        self.rec.log.append(("judge", self.ids[text]))
        self.rec.judged.set()
        self.rec.log.append((f"judged {dimension}", self.ids[text]))
        return Verdict("a", 2.0, 1.0, "", "", 0.9, True, dimension, self.model,
                       self.prompt_version)

    def compare_all(self, **kw: Any) -> dict[str, Verdict]:  # pragma: no cover
        raise AssertionError("one dimension per call in these runs")


def _logged_run(rec: _Recorder, *, hold: str | None, window: int) -> _LoggedSystem:
    items = vb.load_benchmark("benchmark_v1")[:6]
    a = _LoggedSystem(rec, 200.0, "a")
    b = _LoggedSystem(rec, 320.0, "b", hold=hold)
    h = vb.benchmark(items, a, b, _LoggedJudge(rec, {it.text: it.id for it in items}),
                     probes=vb.ProbeSet([WhereProbe()], check_speech=False),
                     labels=("a", "b"), workers=1, progress=False, canaries=False,
                     max_in_flight=window)
    assert h.complete and all(len(p.verdicts) == 2 for p in h.pairs)
    return b


def test_the_judge_starts_while_synthesis_is_still_running() -> None:
    rec = _Recorder()
    last = vb.load_benchmark("benchmark_v1")[5].id
    b = _logged_run(rec, hold=last, window=64)  # every item admitted at once
    assert b.released is True
    events = [e for e, _ in rec.log]
    first_judge = events.index("judge")
    last_synth = rec.log.index(("synthesised b", last))
    # The held synthesis ended only once the judge had been called (a barrier design would
    # wait for it instead: the guard expires and `released` is False in _logged_run).
    assert first_judge < last_synth
    assert rec.log[first_judge][1] != last  # judging an earlier, finished item


def test_open_items_never_exceed_max_in_flight(monkeypatch: Any) -> None:
    import vocencebench._pipeline.engine as engine

    peak = [0]
    admit = engine.Engine._admit

    def watched(self: Any) -> None:
        admit(self)
        peak[0] = max(peak[0], len(self._open))

    monkeypatch.setattr(engine.Engine, "_admit", watched)
    rec = _Recorder()
    window = 2
    _logged_run(rec, hold=None, window=window)
    assert peak[0] == window  # reached, never passed
    # The same from the outside: item k starts synthesising only after at least
    # k - window + 1 earlier items have had both their judgements returned (closed).
    done: dict[str, int] = {}
    order = [it.id for it in vb.load_benchmark("benchmark_v1")[:6]]
    for event, item in rec.log:
        if event.startswith("judged "):
            done[item] = done.get(item, 0) + 1
        elif event.startswith("synth "):
            closed = sum(n == 2 for n in done.values())
            assert closed >= order.index(item) - window + 1, (item, rec.log)


# -------------------------------------------------- components that cannot travel


def _local_probe_set() -> tuple[vb.ProbeSet, list[int]]:
    calls: list[int] = []

    class LocalPitch(WhereProbe):  # a class local to a function: it does not pickle
        name = "local-pitch"

        def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
            calls.append(os.getpid())
            return super().measure(audio, item)

    return vb.ProbeSet([LocalPitch()], check_speech=False), calls


def test_a_probe_the_pool_cannot_take_runs_in_the_client_and_says_so(caplog: Any) -> None:
    import logging

    probes, calls = _local_probe_set()
    with caplog.at_level(logging.WARNING, logger="vocencebench._pipeline.engine"):
        h = vb.benchmark(ITEMS[:2], _tones(200.0), _tones(310.0), probes=probes,
                         labels=("a", "b"), workers=2, progress=False, canaries=False)
    assert h.metadata["executor"]["name"] == "local"
    assert calls and set(calls) == {os.getpid()}  # measured here, not in the pool
    note = ("ANALYSIS IN ONE CLIENT THREAD: probe local-pitch@1 cannot be pickled "
            "(AttributeError: Can't pickle local object")
    assert any(r.levelno == logging.WARNING and note in r.getMessage() for r in caplog.records)
    assert any(line.startswith(note) for line in h.metadata["status"])
    assert h.metadata["executor"]["notes"][0].startswith(note)
    assert note in h.summary()


def test_a_run_checks_its_instruments_against_their_protocols() -> None:
    import pytest

    from vocencebench.errors import ConfigError

    class NoJudge:
        model = prompt_version = "x"

        def compare(self, **kw: Any) -> Any:  # no compare_all
            raise AssertionError

    with pytest.raises(ConfigError, match="judge NoJudge is missing compare_all"):
        vb.benchmark(ITEMS[:1], _tones(200.0), _tones(310.0), NoJudge(), progress=False)
    with pytest.raises(ConfigError, match=r"probes list is missing .*unmeasurable_results"):
        vb.benchmark(ITEMS[:1], _tones(200.0), _tones(310.0),
                     probes=[WhereProbe()], progress=False)  # a list, not a ProbeSet
    with pytest.raises(ConfigError, match="transcriber function is missing engine"):
        vb.benchmark(ITEMS[:1], _tones(200.0), _tones(310.0), transcriber=lambda wav: "",
                     progress=False)


# ------------------------------------------------------------------- spec registry


def test_spec_errors_list_the_registered_forms(monkeypatch: Any) -> None:
    import argparse

    import pytest

    from vocencebench import specs
    from vocencebench.commands._judge_args import judge_from_args
    from vocencebench.errors import ConfigError
    from vocencebench.specs import validate_executor_spec

    monkeypatch.setitem(specs._REGISTRY["executor"], "ray",
                        specs.SpecForm("executor", "ray", "ray:ADDRESS", lambda arg: None))
    with pytest.raises(ConfigError, match=r"unknown executor 'spark'; use local \| serial \| "
                                          r"dask\[:ADDRESS\] \| ray:ADDRESS"):
        validate_executor_spec("spark")
    validate_executor_spec("ray:tcp://127.0.0.1:1")  # a registered form is valid
    with pytest.raises(ConfigError, match="expected serial, got 'serial:4'"):
        validate_executor_spec("serial:4")  # an argument is refused, never ignored
    with pytest.raises(ConfigError, match="expected dask:ADDRESS"):
        validate_executor_spec("dask:")

    monkeypatch.setitem(specs._REGISTRY["judge"], "mine",
                        specs.SpecForm("judge", "mine", "mine:NAME", lambda arg: ("mine", arg)))
    args = argparse.Namespace(judge="gpt4", judge_concurrency=4)
    with pytest.raises(ConfigError, match=r"unknown judge 'gpt4'; use none \| gemini\[:MODEL\] "
                                          r"\| local:URL#MODEL \| mine:NAME"):
        judge_from_args(args)
    assert judge_from_args(argparse.Namespace(judge="mine:x", judge_concurrency=4)) \
        == ("mine", "x")  # built by its own registered builder
    with pytest.raises(ConfigError, match="--judge-rpm apply to the gemini and local"):
        judge_from_args(argparse.Namespace(judge="mine:x", judge_concurrency=4, judge_rpm=5.0))
