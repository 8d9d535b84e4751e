"""No import cycle among the package's modules, counting every import.

The graph has an edge ``A -> B`` when ``A``'s source imports ``B`` (a module of
``delight_gym``) anywhere: in the module body, inside ``try``, ``with`` and ``if`` blocks,
under ``if TYPE_CHECKING:`` and inside functions. A function-local import hides a cycle from
the interpreter but not from a reader, and a ``TYPE_CHECKING`` one from the interpreter but not
from the type checker, so both count. ``from P import m`` is an edge to the module ``P.m``
where ``m`` is a module, else to ``P``. Function-local imports of *other* packages are allowed
only for the optional or heavy dependencies named in :data:`LAZY_DEPENDENCIES`.
"""

from __future__ import annotations

import ast
import sys
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


def _all_imports(statements: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, wherever it stands."""
    for stmt in statements:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node


def imported_modules(source: str, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` (whose source is ``source``) imports anywhere
    (see the module docstring)."""
    found: set[str] = set()
    for node in _all_imports(ast.parse(source).body):
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
    """``{module: the package modules its source imports}``."""
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
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import X", True),
        ("def f():\n    from pkg.a import X\n", True),
        ("class C:\n    def f(self):\n        import pkg.a\n", True),
        ("from pkg.c import X", False),
    ],
)
def test_checker_finds_every_cycle(tmp_path, b_source, cyclic):
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


#: Other packages that a module of ours may import inside a function: optional extras (ray,
#: bsuite, botorch, pink-noise-rl, jax, mkdocs), and dependencies kept out of ``import
#: delight_gym`` for its start-up time (torch, scipy, pandas, matplotlib, SB3, tqdm); numpy and
#: gymnasium, required, are harmless there.
LAZY_DEPENDENCIES = {
    "gymnasium",
    "numpy",
    "botorch",
    "bsuite",
    "gpytorch",
    "jax",
    "matplotlib",
    "mkdocs",
    "pandas",
    "pink",
    "ray",
    "scipy",
    "stable_baselines3",
    "torch",
    "tqdm",
}


def test_function_local_imports_of_other_packages_are_named():
    stdlib = set(sys.stdlib_module_names)
    found: dict[str, set[str]] = {}
    for name, path in package_modules().items():
        for top in ast.parse(path.read_text()).body:
            for fn in ast.walk(top):
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(fn):
                    if isinstance(node, ast.Import):
                        roots = [alias.name.split(".")[0] for alias in node.names]
                    elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                        roots = [node.module.split(".")[0]]
                    else:
                        continue
                    for root in roots:
                        if root not in stdlib and root != "delight_gym":
                            found.setdefault(root, set()).add(name)
    unnamed = {
        root: sorted(where) for root, where in found.items() if root not in LAZY_DEPENDENCIES
    }
    assert not unnamed, unnamed
