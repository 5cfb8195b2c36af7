"""The README's quickstart runs as a user runs it: saved as a script, ``python quick.py``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import ROOT
from vocencebench._util.mp import references_main

README = ROOT / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def _quickstart() -> str:
    text = README.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text[text.index("## Quickstart"):], re.S)[0]


def _run_script(path: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, path.name], cwd=path.parent, capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ), check=False)


def test_readme_names_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make demo" in text and "make test" in text


@pytest.mark.slow
def test_quickstart_runs_as_a_script_without_a_main_guard(tmp_path: Path) -> None:
    code = _quickstart()
    assert "__main__" not in code  # the quickstart is a plain top-level script
    script = tmp_path / "quick.py"
    script.write_text(re.sub(r"\[:\d+\]", "[:3]", code, count=1), encoding="utf-8")
    proc = _run_script(script)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "DECISION:" in proc.stdout and "JUDGE OFF" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "runs" / "quick" / "report.html").is_file()


class _Local:
    pass


def test_references_main_sees_objects_defined_in_the_script(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from vocencebench._pipeline.stages import Handle
    from vocencebench.probes import default_probes

    assert not references_main(default_probes(), None, len)
    _Local.__module__ = "__main__"
    monkeypatch.setattr(sys.modules["__main__"], "_Local", _Local, raising=False)
    try:
        assert references_main(_Local())
        # also inside a pickle carried as bytes, as components travel to the workers
        assert references_main(Handle(_Local(), pickled=True))
        assert not references_main(Handle(default_probes(), pickled=True))
    finally:
        _Local.__module__ = __name__
    assert references_main(lambda: 0)  # unpicklable: keep the standard start method


_OWN_COMPONENTS = """
import vocencebench as vb
from vocencebench.adapters import EspeakSystem
from vocencebench.probes.acoustic import PaceProbe
from vocencebench.transcribe import Transcript

class Echo:
    engine = "echo@1"
    def __call__(self, wav):
        return Transcript("hello", self.engine)

class MyPace(PaceProbe):  # the library's pace probe, as a class of the script
    name = "my-pace"

def main():
    items = vb.load_benchmark("benchmark_v1")[:2]
    h2h = vb.benchmark(items, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"),
                       COMPONENT, workers=2, progress=False)
    print("n =", len(h2h.pairs), "winner =", h2h.decision.winner)
"""


@pytest.mark.slow
@pytest.mark.parametrize(("component", "guarded"), [
    ("transcriber=Echo()", True),
    ("probes=vb.ProbeSet([MyPace()])", False),  # docs/traits.md's walkthrough, unguarded
])
def test_a_script_with_its_own_component_class_runs_it_in_one_client_thread(
    tmp_path: Path, component: str, guarded: bool,
) -> None:
    # The local workers do not import the script (so an unguarded script does not run again
    # in each): a class defined in it cannot be unpickled there. Every item's analysis
    # failed with "Can't get attribute 'Constant' on <module '__main__'>" (the run named no
    # winner); now the analysis runs in one client thread, said loudly.
    script = tmp_path / "own.py"
    call = 'if __name__ == "__main__":\n    main()\n' if guarded else "main()\n"
    script.write_text(_OWN_COMPONENTS.replace("COMPONENT", component) + call,
                      encoding="utf-8")
    proc = _run_script(script)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "n = 2 winner = " in proc.stdout
    assert "winner = incomplete" not in proc.stdout, proc.stderr[-2000:]
    assert ("ANALYSIS IN ONE CLIENT THREAD" in proc.stderr
            and "is defined in the calling script (__main__)" in proc.stderr), proc.stderr
