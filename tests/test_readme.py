"""The README's quickstart runs as written."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_names_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make demo" in text and "make test" in text


@pytest.mark.slow
def test_quickstart_runs_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _python_blocks()[0]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "DECISION:" in out and "JUDGE OFF" in out
    assert (tmp_path / "runs" / "quick" / "report.html").is_file()
