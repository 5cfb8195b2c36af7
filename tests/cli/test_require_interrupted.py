"""``_util.deps.require``: an import that failed because it was interrupted is the interruption
(``KeyboardInterrupt``), never "needs the optional extra" (the process audit: SIGTERM while
parselmouth's extension started gave exit status 2 and a ``pip install`` to run)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import vocencebench.cli as cli
from vocencebench._util import deps
from vocencebench.errors import MissingDependencyError

_MODULES = {
    # an interrupt inside the module's start-up, passed on as the ImportError's context
    "vb_test_chained": "try:\n    raise KeyboardInterrupt('signal 15')\n"
                       "except KeyboardInterrupt:\n    raise ImportError('init failed')\n",
    # an extension's own report of it (pybind11: no chain, the interrupt in the text)
    "vb_test_pybind": "raise ImportError('KeyboardInterrupt: signal 15\\n\\nAt:\\n  x.py(3): h')\n",
    # an ImportError that says nothing of an interrupt
    "vb_test_plain": "raise ImportError('initialization of vb_test_plain failed')\n",
}


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, source in _MODULES.items():
        (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in _MODULES:
        sys.modules.pop(name, None)


@pytest.mark.parametrize("name", ["vb_test_chained", "vb_test_pybind"])
def test_an_interrupted_import_raises_keyboard_interrupt(modules: None, name: str) -> None:
    with pytest.raises(KeyboardInterrupt) as info:
        deps.require(name, "the test", "probes")
    assert isinstance(info.value.__cause__, ImportError)


def test_a_failed_import_after_a_signal_is_the_interruption(
        modules: None, monkeypatch: pytest.MonkeyPatch) -> None:
    class Received:
        received = True

    # As while main() runs once SIGINT, SIGTERM or SIGHUP has arrived.
    monkeypatch.setattr(cli, "_ACTIVE", [Received()], raising=False)
    with pytest.raises(KeyboardInterrupt):
        deps.require("vb_test_plain", "the test", "probes")
    with pytest.raises(KeyboardInterrupt):
        deps.require("vb_test_not_installed_anywhere", "the test", "probes")
    assert cli.interrupt_received()


def test_a_missing_module_is_still_a_missing_extra(modules: None) -> None:
    for name in ("vb_test_plain", "vb_test_not_installed_anywhere"):
        with pytest.raises(MissingDependencyError, match=r"optional extra 'probes'"):
            deps.require(name, "the test", "probes")


def test_the_chain_is_followed_to_its_end() -> None:
    inner = KeyboardInterrupt("signal 2")
    middle = RuntimeError("while starting")
    middle.__context__ = inner
    outer = ImportError("init failed")
    outer.__cause__ = middle
    assert deps.interrupted_import(outer)
    loop = ImportError("a")
    loop.__context__ = ImportError("b")
    loop.__context__.__context__ = loop  # a cycle ends the walk
    assert not deps.interrupted_import(loop)
