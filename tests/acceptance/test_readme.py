"""The README's quickstart runs as a user runs it: saved as a script, ``python quick.py``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
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


def test_references_main_sees_objects_defined_in_the_script() -> None:
    from vocencebench.probes import default_probes

    assert not references_main(default_probes(), None, len)
    _Local.__module__ = "__main__"
    try:
        assert references_main(_Local())
    finally:
        _Local.__module__ = __name__
    assert references_main(lambda: 0)  # unpicklable: keep the standard start method


@pytest.mark.slow
def test_a_script_with_its_own_transcriber_class_still_runs_under_its_guard(
    tmp_path: Path,
) -> None:
    # A payload defined in __main__ needs the main import in the workers: the standard
    # start method is kept, and the guarded script runs as usual.
    script = tmp_path / "own.py"
    script.write_text(textwrap.dedent("""
        import vocencebench as vb
        from vocencebench.adapters import EspeakSystem
        from vocencebench.transcribe import Transcript

        class Echo:
            engine = "echo@1"
            def __call__(self, wav):
                return Transcript("hello", self.engine)

        if __name__ == "__main__":
            items = vb.load_benchmark("benchmark_v1")[:2]
            h2h = vb.benchmark(items, EspeakSystem("espeak-flat"), EspeakSystem("espeak-follow"),
                               transcriber=Echo(), workers=2, progress=False)
            print("n =", len(h2h.pairs))
    """), encoding="utf-8")
    proc = _run_script(script)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "n = 2" in proc.stdout
