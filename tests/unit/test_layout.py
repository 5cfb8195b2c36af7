"""The house rules of src/vocencebench, checked on every test run: the layer contracts hold,
no import circle, no private name imported from another module, no module over 700 lines
unless docs/architecture.md says why, the architecture page names only modules that exist,
optional imports go through the one guard (``_util.deps.require``), "a number, not a bool"
checks through ``_numbers``, and the tests take their random generators from tests/seeding.py."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "vocencebench"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_LINES = 700


def _modules() -> Iterator[Path]:
    yield from sorted(PACKAGE.rglob("*.py"))


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _target(node: ast.ImportFrom, path: Path) -> str | None:
    """The absolute module an ``ImportFrom`` reads from, or None when it is not ours."""
    if node.level == 0:
        mod = node.module or ""
        return mod if mod == "vocencebench" or mod.startswith("vocencebench.") else None
    package = _dotted(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def test_no_private_name_is_imported_from_another_module() -> None:
    offences = []
    for path in _modules():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or _target(node, path) is None:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    offences.append(f"{path.relative_to(ROOT)}:{node.lineno}: "
                                    f"from {'.' * node.level}{node.module or ''} "
                                    f"import {alias.name}")
    assert not offences, "private names imported across modules:\n" + "\n".join(offences)


def test_the_checker_sees_a_private_import() -> None:
    """The rule above is not vacuous: the same walk flags ``from .x import _y``."""
    tree = ast.parse("from .audio import _resample\nfrom .audio import Clip\n")
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    flagged = [a.name for n in nodes if _target(n, PACKAGE / "pair.py")
               for a in n.names if a.name.startswith("_")]
    assert flagged == ["_resample"]


def _documented_exceptions() -> set[str]:
    """Modules docs/architecture.md allows past MAX_LINES ("... must be one file")."""
    text = ARCHITECTURE.read_text()
    section = text.split("## Modules past 700 lines", 1)
    if len(section) < 2:
        return set()
    body = section[1].split("\n## ", 1)[0]
    return set(re.findall(r"`(src/vocencebench/[\w/]+\.py)`", body))


def test_no_module_is_over_700_lines_unless_the_architecture_says_why() -> None:
    allowed = _documented_exceptions()
    long = [f"{p.relative_to(ROOT)}: {n} lines" for p in _modules()
            if (n := len(p.read_text().splitlines())) > MAX_LINES
            and str(p.relative_to(ROOT)) not in allowed]
    assert not long, "modules over 700 lines (split them, or say why in architecture.md):\n" \
        + "\n".join(long)


def test_there_is_no_import_circle() -> None:
    """Module level, function-level imports included, ``TYPE_CHECKING`` imports left out."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("vocencebench", exclude_type_checking_imports=True,
                              cache_dir=None)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    assert not circles, f"import circles: {circles}"


def test_the_layer_contracts_hold() -> None:
    """pyproject.toml's import-linter contracts: the same check as `make lint`."""
    pytest.importorskip("importlinter")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(PACKAGE.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, "
            "no_logo=True))")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                         capture_output=True, timeout=300)
    tail = (run.stdout + run.stderr)[-3000:]
    assert run.returncode == 0, f"broken layer contracts:\n{tail}"
    kept = re.search(r"Contracts: (\d+) kept, 0 broken", run.stdout)
    assert kept and int(kept.group(1)) >= 8, tail


def test_the_architecture_page_names_only_modules_that_exist() -> None:
    """Every `file.py` and `package/` the page names is in the tree (a bare name anywhere in
    the package, a path relative to the package or to the repository)."""
    text = ARCHITECTURE.read_text()
    files = set(re.findall(r"`((?:[\w]+/)*[\w]+\.py)`", text))
    packages = set(re.findall(r"`([\w]+)/`", text))
    tree = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")]
    dirs = {p.parent.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("__init__.py")}

    def exists(name: str) -> bool:
        rel = name.removeprefix("src/vocencebench/")
        return ((ROOT / name).exists() or (PACKAGE / rel).exists()
                or any(t == rel or t.endswith("/" + rel) for t in tree))

    missing = sorted(n for n in files if not exists(n))
    missing += sorted(f"{d}/" for d in packages
                      if not any(x == d or x.endswith("/" + d) for x in dirs))
    assert len(files) > 40 and packages, "architecture.md names too few modules"
    assert not missing, f"architecture.md names modules that do not exist: {missing}"


def test_every_data_file_of_the_package_is_shipped() -> None:
    """Each tracked file under src/vocencebench that is not Python matches a package-data
    glob of pyproject.toml, so a wheel carries what the code reads (the corpus, the canary
    clips, the listening page's assets, the gender model's weights)."""
    import fnmatch
    import tomllib

    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["vocencebench"]
    tracked = subprocess.run(["git", "ls-files", "src/vocencebench"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    data = [p.removeprefix("src/vocencebench/") for p in tracked if not p.endswith(".py")]
    assert "probes/gender_model.json" in data
    unshipped = [p for p in data if not any(fnmatch.fnmatchcase(p, g) for g in globs)]
    assert not unshipped, f"not in [tool.setuptools.package-data]: {unshipped}"


def _ad_hoc_generators(source: str) -> list[int]:
    """Lines that build a NumPy generator themselves (``default_rng(...)``, ``RandomState``,
    ``np.random.seed``) instead of taking the seeded fixtures of tests/seeding.py."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("default_rng", "RandomState") or (
                    name == "seed" and "random" in ast.unparse(node.func)):
                lines.append(node.lineno)
    return lines


def test_tests_draw_random_numbers_from_the_seeding_module() -> None:
    tests = ROOT / "tests"
    found = {str(p.relative_to(ROOT)): _ad_hoc_generators(p.read_text(encoding="utf-8"))
             for p in sorted(tests.rglob("*.py")) if p.name != "seeding.py"}
    assert {k: v for k, v in found.items() if v} == {}, (
        "take the rng / rng_factory fixtures or seeding.make_rng(seed) instead")


def test_the_generator_scan_sees_an_ad_hoc_generator() -> None:
    src = ("import numpy as np\nrng = np.random.default_rng(5)\nx = make_rng(5)\n"
           "np.random.seed(1)\nr = np.random.RandomState(2)\n")
    assert _ad_hoc_generators(src) == [2, 4, 5]


def _hand_written_guards(source: str) -> list[int]:
    """Lines of ``try: import X`` / ``except ImportError: raise MissingDependencyError``: the
    optional-import guard that ``vocencebench._util.deps.require`` writes once."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Try):
            continue
        for handler in node.handlers:
            caught = ast.unparse(handler.type) if handler.type is not None else ""
            raises = [n for n in ast.walk(handler) if isinstance(n, ast.Raise)
                      and n.exc is not None and "MissingDependencyError" in ast.unparse(n.exc)]
            if ("ImportError" in caught or "ModuleNotFoundError" in caught) and raises:
                lines.append(node.lineno)
    return lines


def test_optional_imports_go_through_the_one_guard() -> None:
    found = {str(p.relative_to(ROOT)): _hand_written_guards(p.read_text(encoding="utf-8"))
             for p in _modules() if p.name != "deps.py"}
    assert {k: v for k, v in found.items() if v} == {}, "use _util.deps.require"


def test_the_guard_scan_sees_a_hand_written_guard() -> None:
    src = ("try:\n    import soxr\nexcept ImportError as exc:\n"
           "    raise MissingDependencyError('x', 'probes') from exc\n"
           "try:\n    import hibari\nexcept ImportError:\n    hibari = None\n")
    assert _hand_written_guards(src) == [1]


def _hand_written_number_checks(source: str) -> list[int]:
    """Lines that test for a number by hand: ``isinstance(v, int ...)`` (a bool passes it:
    ``True`` is an int equal to 1) or ``isinstance(v, bool)`` as one clause of a condition
    (``isinstance(v, bool) or not isinstance(v, int)``). ``vocencebench._numbers`` writes
    that test once. ``if not isinstance(v, bool)`` alone (v must be a bool),
    ``isinstance(v, float)`` and numpy's ``np.integer`` are not such checks."""
    lines = []

    def is_isinstance_of(node: ast.AST, name: str) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance" and len(node.args) == 2
                and name in {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)})

    for node in ast.walk(ast.parse(source)):
        if is_isinstance_of(node, "int"):
            lines.append(node.lineno)
        if isinstance(node, ast.BoolOp):
            for clause in node.values:
                inner = clause.operand if isinstance(clause, ast.UnaryOp) else clause
                if is_isinstance_of(inner, "bool"):
                    lines.append(inner.lineno)
    return sorted(set(lines))


def test_number_checks_go_through_the_one_module() -> None:
    found = {str(p.relative_to(ROOT)): _hand_written_number_checks(p.read_text(encoding="utf-8"))
             for p in _modules() if p.relative_to(PACKAGE).as_posix() != "_numbers.py"}
    assert {k: v for k, v in found.items() if v} == {}, (
        "use vocencebench._numbers (is_whole_number, is_real_number, ...)")


def test_the_number_check_scan_sees_a_hand_written_check() -> None:
    src = ("if isinstance(n, bool) or not isinstance(n, int) or n < 1:\n    pass\n"
           "ok = isinstance(v, float) and not isinstance(v, bool)\n"
           "if not isinstance(flag, bool):\n    pass\n"
           "if x and isinstance(y, (bool, str)):\n    pass\n"
           "n = int(c) if isinstance(c, int | float) else None\n"
           "f = isinstance(v, float) or isinstance(v, np.integer)\n")
    assert _hand_written_number_checks(src) == [1, 3, 6, 8]
