"""The exit statuses are defined once (vocencebench.constants) and every command returns them
by name: the table in docs/cli.md, the CLI's and the red team's re-exports and the command
modules all agree with that one place."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import vocencebench.cli as cli
from vocencebench import constants, gaming

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ROOT / "src" / "vocencebench" / "commands"
STATUSES = {name: value for name, value in vars(constants).items() if name.startswith("EXIT_")}


def _literal_statuses(source: str) -> list[int]:
    """Line numbers of ``return <int>`` / ``...exit(<int>, ...)`` with a literal status."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Return):
            values = [node.value] if node.value is not None else []
            if isinstance(node.value, ast.IfExp):
                values = [node.value.body, node.value.orelse]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr",
                                                    getattr(node.func, "id", "")) == "exit":
            values = node.args[:1]
        else:
            continue
        if any(isinstance(v, ast.Constant) and type(v.value) is int for v in values):
            lines.append(node.lineno)
    return lines


def test_the_statuses_are_the_documented_table() -> None:
    assert STATUSES == {"EXIT_OK": 0, "EXIT_CHECK_FAILED": 1, "EXIT_USAGE": 2,
                        "EXIT_INCOMPLETE": 3, "EXIT_INTERRUPTED": 130, "EXIT_BROKEN_PIPE": 141}
    # The CLI keeps its own copies of the two it may return before importing anything.
    assert cli._EXIT_BROKEN_PIPE == cli.EXIT_BROKEN_PIPE == constants.EXIT_BROKEN_PIPE
    assert cli._EXIT_INTERRUPTED == constants.EXIT_INTERRUPTED
    statuses = STATUSES
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = page.split("## Exit status", 1)[1].split("\n\n", 2)[1]
    assert {int(m) for m in re.findall(r"^\| (\d+) \|", table, re.M)} == set(statuses.values())
    for name in statuses:
        assert f"`{name}`" in page, name


def test_every_reexport_is_the_one_definition() -> None:
    assert (cli.EXIT_USAGE, cli.EXIT_INCOMPLETE, cli.EXIT_INTERRUPTED) == (
        constants.EXIT_USAGE, constants.EXIT_INCOMPLETE, constants.EXIT_INTERRUPTED)
    assert (gaming.EXIT_OK, gaming.EXIT_VULNERABLE, gaming.EXIT_INCOMPLETE) == (
        constants.EXIT_OK, constants.EXIT_CHECK_FAILED, constants.EXIT_INCOMPLETE)


def test_no_command_returns_a_literal_status() -> None:
    found = {p.name: _literal_statuses(p.read_text(encoding="utf-8"))
             for p in sorted(COMMANDS.glob("*.py"))}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_scan_sees_a_literal_status() -> None:
    src = ("def a():\n    return 1\n"
           "def b(ok):\n    return EXIT_OK if ok else 3\n"
           "def c(p):\n    p.exit(2, 'no')\n"
           "def d():\n    return EXIT_OK\n"
           "def e():\n    return None\n")
    assert _literal_statuses(src) == [2, 4, 6]
