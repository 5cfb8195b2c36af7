"""docs/traits.md's recipe end to end: a ninth trait registered on a copy of the registry
flows from the corpus through the pipeline into Head2Head, run.json and back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import vocencebench as vb
from judge_fakes import tone_wav
from vocencebench.cli import main
from vocencebench.corpus import generate_template_corpus
from vocencebench.result import load_run
from vocencebench.schema import Item, ProbeResult
from vocencebench.traits import TRAITS, Trait


def _registry() -> vb.TraitRegistry:
    registry = TRAITS.copy()
    registry.register(Trait(
        "breathiness", "objective", "ordinal", ("clear", "slight", "breathy"),
        "Audible breath noise in the voice.",
    ))
    return registry


class BreathinessProbe:
    """Calls every clip 'slight' (a stand-in for a real breath-noise measure)."""

    name, version, traits = "breath-fake", "1", ("breathiness",)

    def measure(self, audio: Any, item: Item) -> dict[str, ProbeResult]:
        want = item.traits["breathiness"]
        d = 1.0 if want == "slight" else 0.5
        return {"breathiness": ProbeResult("breathiness", 0.2, "ratio", "slight", d,
                                           "breath-fake@1")}


class Hum:
    def __init__(self, hz: float) -> None:
        self.hz = hz
        self.system_id = f"hum:{hz}"

    def __call__(self, text: str, instruction: str) -> bytes:
        return tone_wav(self.hz + len(text) % 9, seconds=0.5)


def _run() -> vb.Head2Head:
    registry = _registry()
    items = generate_template_corpus(15, registry=registry)
    assert all("breathiness" in it.traits for it in items)
    probes = vb.ProbeSet([BreathinessProbe()], registry=registry)
    return vb.benchmark(items, Hum(180.0), Hum(240.0), probes=probes, labels=("a", "b"),
                        workers=1, progress=False)  # the registry comes with the probe set


def test_a_ninth_trait_flows_from_corpus_to_head2head_and_run_json() -> None:
    h = _run()
    assert "breathiness" in h.registry and h.complete
    assert all(set(p.a.d) == {"breathiness"} for p in h.pairs)
    assert h.metadata["dimensions"] == ["breathiness"]
    assert not any("breathiness" in line for line in h.status())  # it is measured
    back = vb.Head2Head.from_dict(json.loads(h.to_json()))
    assert back.registry.names() == h.registry.names()
    assert back.registry.get("breathiness").values == ("clear", "slight", "breathy")
    assert back.pairs == h.pairs and back.decision == h.decision


def test_a_ninth_trait_flows_to_the_saved_reports(tmp_path: Path, capsys: Any) -> None:
    h = _run()
    registry = h.registry
    out = h.save(tmp_path / "run")
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert "breathiness" in [t["name"] for t in run["registry"]["traits"]]
    back = load_run(out)
    assert back.registry.names() == registry.names()
    assert back.registry.get("breathiness").values == ("clear", "slight", "breathy")
    assert back.pairs == h.pairs and back.decision == h.decision
    assert "composite S" in back.summary()
    capsys.readouterr()
    assert main(["report", str(out)]) == 0  # re-rendered with the run's own registry
    assert "breathiness" in capsys.readouterr().out
    assert "breathiness" in (out / "report.md").read_text(encoding="utf-8")
    assert main(["decide", str(out / "scores.jsonl"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["winner"] == h.decision.winner and repr(got["lcb"]) == repr(h.decision.lcb)


def test_a_run_whose_registry_lacks_the_trait_is_refused_up_front() -> None:
    registry = _registry()
    items = generate_template_corpus(15, registry=registry)
    probes = vb.ProbeSet([BreathinessProbe()], registry=registry)
    # The corpus gate (or, past it, the probe check) names the unknown trait before any work.
    with pytest.raises((vb.CorpusError, vb.ConfigError), match="breathiness"):
        vb.benchmark(items, Hum(180.0), Hum(240.0), probes=probes, labels=("a", "b"),
                     workers=1, progress=False, registry=TRAITS)
    with pytest.raises(vb.ConfigError, match="breathiness"):
        vb.benchmark(vb.load_benchmark("benchmark_v1")[:2], Hum(180.0), Hum(240.0),
                     probes=probes, labels=("a", "b"), workers=1, progress=False,
                     registry=TRAITS)
