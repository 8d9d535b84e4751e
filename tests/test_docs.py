"""Every code block of the documentation (``docs/**/*.md`` and ``README.md``) works as written.

- ``python`` blocks run, each in a fresh namespace and a temporary working directory. A block
  preceded by ``<!-- continues -->`` runs in the namespace of the block before it on the same
  page (a tutorial in steps); ``<!-- fragment -->`` marks a block that is not a program (it
  is only compiled); ``<!-- slow -->`` marks one that takes more than a few seconds (it runs
  under ``pytest -m slow``).
- ``bash`` blocks: every ``delight-gym ...`` command is parsed by the real command-line parser
  (a wrong figure name or option fails), every ``python path/to/script.py`` names a file of the
  repository, and no other program appears than the ones the docs are allowed to use.
- ``mkdocs build --strict`` builds the site (when mkdocs is installed: ``.[docs]``), so a
  broken link or docstring cross-reference fails here as in CI.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
MARKERS = ("fragment", "continues", "slow")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[ \t]*$")
# The programs a bash block may call (anything else is a typo or an unchecked command).
COMMANDS = {"pip", "delight-gym", "python", "ruff", "mypy", "mkdocs"}


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its marker and its code."""

    page: Path
    line: int
    lang: str
    marker: str | None
    code: str

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def code_blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, with the marker comment right above each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent = opening.group("indent")
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
        above = (lines[j].strip() for j in range(start - 1, -1, -1))
        previous = next((line for line in above if line), "")
        comment = re.fullmatch(r"<!--\s*(\w+)\s*-->", previous)
        marker = comment.group(1) if comment else None
        if marker is not None and marker not in MARKERS:
            raise ValueError(f"{page}:{start + 1}: unknown marker {marker!r}; use one of {MARKERS}")
        blocks.append(Block(page, start + 1, opening.group("lang"), marker, "\n".join(body) + "\n"))
        i += 1
    return blocks


def python_programs(pages: list[Path]) -> list[list[Block]]:
    """Runnable programs: a block plus the ``continues`` blocks that follow it on its page."""
    programs: list[list[Block]] = []
    for page in pages:
        current: list[Block] | None = None
        for block in code_blocks(page):
            if block.lang != "python" or block.marker == "fragment":
                continue
            if block.marker == "continues":
                if current is None:
                    raise ValueError(f"{block.name}: 'continues' with no block before it")
                current.append(block)
            else:
                current = [block]
                programs.append(current)
    return programs


def run_program(program: list[Block]) -> dict:
    """Execute the blocks of one program in one namespace; return the namespace."""
    namespace: dict = {"__name__": "docs_example"}
    for block in program:
        exec(compile(block.code, block.name, "exec"), namespace)
    return namespace


def _params(programs: list[list[Block]]) -> list:
    return [
        pytest.param(
            program,
            id=program[0].name,
            marks=[pytest.mark.slow] if any(b.marker == "slow" for b in program) else [],
        )
        for program in programs
    ]


DOC_PAGES = [p for p in PAGES if p.name != "README.md"]  # README: tests/test_readme.py


@pytest.mark.parametrize("program", _params(python_programs(DOC_PAGES)))
def test_docs_python_block_runs(program, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = run_program(program)  # an example that raises (or fails its own asserts) fails
    # ... and it ran code: a block that defines nothing is not an example.
    assert set(namespace) - {"__name__", "__builtins__"}, f"{program[0].name} defined nothing"


def test_fragments_compile():
    fragments = [b for p in PAGES for b in code_blocks(p) if b.marker == "fragment"]
    assert fragments, "no fragment marker left: drop this test or the marker's support"
    for block in fragments:
        if block.lang == "python":
            code = compile(block.code, block.name, "exec")  # a SyntaxError fails the test
            assert code.co_names, f"{block.name}: a fragment that names nothing"


def _commands(block: Block) -> list[list[str]]:
    """The simple commands of a bash block (continuations joined, comments dropped)."""
    text = block.code.replace("\\\n", " ")
    commands = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in [*words, "&&"]:
            if word in ("&&", "||", ";"):
                if command:
                    commands.append(command)
                command = []
            else:
                command.append(word)
    return commands


BASH_BLOCKS = [b for p in PAGES for b in code_blocks(p) if b.lang in ("bash", "sh", "shell")]


@pytest.mark.parametrize("block", BASH_BLOCKS, ids=[b.name for b in BASH_BLOCKS])
def test_docs_commands_are_valid(block):
    from delight_gym.cli import build_parser

    parser = build_parser()
    for command in _commands(block):
        while "=" in command[0] and command[0].split("=")[0].isidentifier():
            command = command[1:]  # an environment assignment before the program
            if not command:
                break
        if not command:
            continue
        program = command[0]
        assert program in COMMANDS, f"{block.name}: unexpected program {program!r}"
        if program == "delight-gym":
            try:
                parser.parse_args(command[1:])
            except SystemExit as error:
                pytest.fail(f"{block.name}: {' '.join(command)!r} does not parse ({error})")
        elif program == "python" and command[1:2] != ["-m"]:
            script = ROOT / command[1]
            assert script.is_file(), f"{block.name}: {command[1]} is not a file of the repository"


def test_every_page_is_in_the_site_nav():
    """A page missing from mkdocs.yml's nav would not be reachable (mkdocs only warns)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOC_PAGES:
        relative = page.relative_to(ROOT / "docs").as_posix()
        assert relative in config, f"{relative} is not in mkdocs.yml's nav"


def test_site_builds_strict(tmp_path):
    # Skips without the docs extra (pip install -e ".[docs]"), with importorskip's reason
    # "could not import 'mkdocs'", which tests/conftest.py can turn into a failure in CI.
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "index.html").exists()
    rule_page = (tmp_path / "api" / "de" / "index.html").read_text(encoding="utf-8")  # de.rule
    # numpy-style sections render as tables (a Google "Args:" would be a plain paragraph).
    assert 'doc-section-title">Parameters:' in rule_page and "<table>" in rule_page
    assert "Args:" not in rule_page


def test_getting_started_states_the_ci_command():
    """docs/getting-started.md gives the same test command as the README: .ci/run's."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1].strip()
    commands = [b.code.strip() for b in code_blocks(ROOT / "docs" / "getting-started.md")]
    assert ci in commands, "docs/getting-started.md must state .ci/run's test command"
