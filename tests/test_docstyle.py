"""Every docstring in ``delight_gym`` uses numpy-style sections, the style mkdocs renders, and
module and class docstrings stay short.

``mkdocs.yml`` sets ``docstring_style: numpy``: a numpy section (``Parameters`` over a dash
line) becomes a table on the API page, while a Google section (``Args:``) is left as a
paragraph of plain text. This test fails on any Google-style section header, in any module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "delight_gym"

# Google-style section headers (napoleon's list), alone on their line, ending in a colon.
GOOGLE_HEADER = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Returns|Return|Raises|Raise|Attributes|Yields|"
    r"Yield|Examples?|Notes?|Warnings?|Warns|See Also|Todo|References|Methods|"
    r"Keyword Args|Keyword Arguments|Other Parameters):\s*$"
)
# A numpy section header is its title over a line of dashes as long as the title.
NUMPY_TITLES = (
    "Parameters",
    "Other Parameters",
    "Returns",
    "Yields",
    "Raises",
    "Warns",
    "Attributes",
    "Examples",
    "Notes",
    "Warnings",
    "See Also",
    "References",
    "Methods",
)


def docstrings(source: str) -> list[tuple[int, str]]:
    """``(first line, text)`` of the module's, every class's and every function's docstring."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                found.append((node.body[0].lineno, doc))
    return found


def style_problems(source: str) -> list[str]:
    """Google-style headers, and numpy titles whose dash line is missing or mis-sized."""
    problems = []
    for first, doc in docstrings(source):
        lines = doc.splitlines()
        for i, line in enumerate(lines):
            where = f"line {first + i}"
            if GOOGLE_HEADER.match(line):
                problems.append(f"{where}: Google-style section {line.strip()!r}")
            elif line.strip() in NUMPY_TITLES and i + 1 < len(lines):
                under = lines[i + 1].strip()
                if set(under) == {"-"} and len(under) != len(line.strip()):
                    problems.append(f"{where}: dash line under {line.strip()!r} is mis-sized")
    return problems


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_is_checked():
    """The walk finds the package's modules, subpackages included (a wrong root finds none)."""
    names = {p.relative_to(PACKAGE).as_posix() for p in MODULES}
    assert {"__init__.py", "de/rule.py", "envs/linear.py", "posteriors/beta.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_module_docstrings_are_numpy_style(path):
    problems = style_problems(path.read_text(encoding="utf-8"))
    assert not problems, f"{path.relative_to(PACKAGE.parent)}:\n" + "\n".join(problems)


# Docstrings say what, shapes and units; rationale and history live in docs/ pages.
MODULE_DOCSTRING_LINES = 12
CLASS_DOCSTRING_LINES = 30


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_module_docstrings_are_short(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""
    lines = len(doc.splitlines())
    assert lines <= MODULE_DOCSTRING_LINES, f"{lines} lines: move the rationale to docs/"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_class_docstrings_are_short(path):
    long = [
        f"{node.name}: {len(doc.splitlines())} lines"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
        and (doc := ast.get_docstring(node, clean=False)) is not None
        and len(doc.splitlines()) > CLASS_DOCSTRING_LINES
    ]
    assert not long, "move the rationale to docs/: " + ", ".join(long)


def test_the_checker_flags_google_sections_and_passes_numpy_ones():
    google = '''def f(x):
    """Summary.

    Args:
        x: a value.

    Returns:
        Twice ``x``.
    """
'''
    numpy = '''def f(x):
    """Summary.

    Parameters
    ----------
    x : float
        A value.

    Returns
    -------
    float
        Twice ``x``.
    """
'''
    assert [p.split(": ", 1)[1] for p in style_problems(google)] == [
        "Google-style section 'Args:'",
        "Google-style section 'Returns:'",
    ]
    assert style_problems(numpy) == []
    assert style_problems(numpy.replace("    -------\n", "    ----\n")) == [
        "line 9: dash line under 'Returns' is mis-sized"
    ]


def _doctest_modules() -> list[str]:
    """Dotted names of the modules whose docstrings hold doctest examples."""
    return [
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        for p in MODULES
        if ">>>" in p.read_text(encoding="utf-8")
    ]


@pytest.mark.parametrize("module", _doctest_modules())
def test_docstring_examples_run(module):
    """The ``Examples`` sections are doctests: each prints what its docstring says."""
    import doctest
    import importlib

    result = doctest.testmod(
        importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0
    assert result.failed == 0
