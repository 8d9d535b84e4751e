"""No import cycle among the package's modules.

The graph has an edge ``A -> B`` when importing ``A`` imports ``B`` (a module of
``delight_gym``): the imports of ``A``'s module body, including those inside ``try``, ``with``
and ``if`` blocks, but not those under ``if TYPE_CHECKING:`` (never run) nor those inside
functions (run when called: a family's cell function imports its runner that way). ``from P
import m`` is an edge to the module ``P.m`` where ``m`` is a module, else to ``P``. A cycle in
this graph makes the result of an import depend on which module was imported first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import delight_gym

PACKAGE_ROOT = Path(delight_gym.__file__).parent


def package_modules(root: Path = PACKAGE_ROOT) -> dict[str, Path]:
    """``{dotted name: file}`` of every module of the package under ``root``."""
    found = {}
    for path in root.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _body_imports(statements: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module body runs."""
    for node in statements:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _body_imports(node.body)
            yield from _body_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _body_imports(block)
        elif isinstance(node, ast.With):
            yield from _body_imports(node.body)


def imported_modules(source: str, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that importing ``module`` (whose source is ``source``) imports
    directly (see the module docstring)."""
    found: set[str] = set()
    for node in _body_imports(ast.parse(source).body):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        found |= {t for t in targets if t in known and t != module}
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """``{module: the package modules it imports at import time}``."""
    known = set(modules)
    return {
        name: imported_modules(path.read_text(), name, path.name == "__init__.py", known)
        for name, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle ``[a, b, ..., a]`` per back edge of a depth-first search (empty: none)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


# ------------------------------------------------------------------ the checker itself
def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, source in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return package_modules(tmp_path / "pkg")


@pytest.mark.parametrize(
    ("b_source", "cyclic"),
    [
        ("from pkg.a import X", True),
        ("from . import a", True),
        ("import pkg.a", True),
        ("try:\n    from .a import X\nexcept ImportError:\n    pass", True),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import X", False),
        ("def f():\n    from pkg.a import X\n", False),
        ("from pkg.c import X", False),
    ],
)
def test_checker_finds_exactly_the_import_time_cycles(tmp_path, b_source, cyclic):
    modules = _tree(
        tmp_path,
        {"__init__.py": "", "a.py": "from pkg.b import Y\n", "b.py": b_source, "c.py": ""},
    )
    found = cycles(import_graph(modules))
    assert bool(found) == cyclic, found
    if cyclic:
        assert found == [["pkg.a", "pkg.b", "pkg.a"]]


def test_a_package_importing_its_submodules_is_no_cycle(tmp_path):
    """A submodule importing a sibling does not import its package again (it is being
    initialised); importing the package itself from a submodule it imports is a cycle."""
    files = {"__init__.py": "from pkg.a import X\n", "a.py": "from pkg.b import X\n", "b.py": ""}
    assert cycles(import_graph(_tree(tmp_path, files))) == []
    files["b.py"] = "from pkg import X\n"
    assert cycles(import_graph(_tree(tmp_path, files))) == [["pkg", "pkg.a", "pkg.b", "pkg"]]


# ---------------------------------------------------------------------- the package
def test_the_package_has_no_import_cycle():
    modules = package_modules()
    assert "delight_gym.experiments.families.base" in modules and len(modules) > 30
    assert cycles(import_graph(modules)) == []


def test_the_families_package_imports_its_family_modules_and_no_runner():
    """The family records import one way: the package imports its family modules, they import
    ``base``; a cell function imports its runner when it runs."""
    graph = import_graph(package_modules())
    families = "delight_gym.experiments.families"
    assert {f"{families}.{m}" for m in ("bernoulli", "linear", "deep_sea")} <= graph[families]
    runners = {f"delight_gym.experiments.{m}" for m in ("bandit", "linear", "deep_sea", "runner")}
    for name, imported in graph.items():
        if name == families or (name.startswith(f"{families}.") and not name.endswith("_run")):
            assert not imported & runners, (name, imported & runners)
