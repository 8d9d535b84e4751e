"""mkdocs hook: the API reference pages, generated from the package's public modules.

One page per public top-level module (``delight_gym.de.rule``, ``delight_gym.cli``, ...) and one
per public subpackage (``delight_gym.envs`` with all its public modules), found by walking
``delight_gym/`` on disk (no import), so a module added or removed changes the reference
without editing ``mkdocs.yml``. A name is public unless it, or a package above it, starts
with ``_``. The package page lists ``delight_gym.__all__`` (of the imported package) with
a link to each name's home module.

Used by ``mkdocs.yml`` (``hooks: - docs/_ext/api_pages.py``): ``on_config`` adds the pages
to the "API reference" section of ``nav`` and ``on_files`` adds the generated files.

The Markdown pages link the package's source (``[text](../delight_gym/envs/linear.py)``, or
``...linear.py#LinearBanditEnv`` for one object), which works on GitHub; ``on_page_markdown``
turns each such link into a link to the object's section of the generated API page.
"""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "delight_gym"
SECTION = "API reference"


def public_modules(package_dir: Path, name: str) -> list[str]:
    """Dotted names of the public modules under ``package_dir`` (itself first), sorted."""
    found = [name]
    for child in sorted(package_dir.iterdir()):
        if child.name.startswith(("_", ".")):
            continue
        if child.is_dir() and (child / "__init__.py").exists():
            found += public_modules(child, f"{name}.{child.name}")
        elif child.suffix == ".py":
            found.append(f"{name}.{child.stem}")
    return found


def pages() -> dict[str, str]:
    """``{path under docs/: Markdown}`` for every API page; the package page first."""
    root = ROOT / PACKAGE
    result = {"api/index.md": _package_page(root / "__init__.py")}
    for child in sorted(root.iterdir()):
        if child.name.startswith(("_", ".")):
            continue
        if child.is_dir() and (child / "__init__.py").exists():
            modules = public_modules(child, f"{PACKAGE}.{child.name}")
        elif child.suffix == ".py":
            modules = [f"{PACKAGE}.{child.stem}"]
        else:
            continue
        body = [f"# `{PACKAGE}.{child.stem}`", ""]
        for module in modules:
            body += [f"::: {module}", ""]
            if any(other.startswith(f"{module}.") for other in modules):
                # A (sub)package's __init__ re-exports its modules' names: show its docstring
                # and the names it defines here, and each other name once, on its module's
                # section below.
                defined = _defined_names(root.parent.joinpath(*module.split("."), "__init__.py"))
                members = "[" + ", ".join(defined) + "]" if defined else "false"
                body[-1:] = ["    options:", f"      members: {members}", ""]
        result[f"api/{child.stem}.md"] = "\n".join(body)
    return result


def _defined_names(init: Path) -> list[str]:
    """The public names a package's ``__init__.py`` defines itself (not those it imports)."""
    names = []
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return [name for name in names if not name.startswith("_")]


def _package_page(init: Path) -> str:
    """The package's docstring and a table of ``__all__`` linking each name to its module."""
    import delight_gym  # __all__ is derived from the lazy table: read the imported package

    tree = ast.parse(init.read_text(encoding="utf-8"))
    home: dict[str, str] = dict(delight_gym._LAZY)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                home.setdefault(alias.asname or alias.name, node.module)
    exported = list(delight_gym.__all__)
    lines = [
        f"# `{PACKAGE}`",
        "",
        f"::: {PACKAGE}",
        "    options:",
        "      members: false",
        "      show_root_heading: false",
        "",
        "## Public names",
        "",
        f"Everything below is importable as `from {PACKAGE} import NAME`.",
        "",
        "| name | defined in |",
        "|---|---|",
    ]
    for name in exported:
        module = home.get(name)
        if module is None or any(part.startswith("_") for part in module.split(".")):
            lines.append(f"| `{name}` | `{PACKAGE}` |")
        else:
            lines.append(f"| [`{name}`][{module}.{name}] | [`{module}`][{module}] |")
    lines += ["", "The subpackages and modules each have a page in this section."]
    return "\n".join(lines) + "\n"


def on_config(config: Any, **kwargs: Any) -> Any:
    """Put the generated pages into the nav's API section (created if absent)."""
    entries = [{"Overview": "api/index.md"}]
    entries += [{path[4:-3]: path} for path in pages() if path != "api/index.md"]
    nav = config["nav"]
    for item in nav:
        if isinstance(item, dict) and SECTION in item:
            item[SECTION] = entries
            break
    else:
        nav.append({SECTION: entries})
    return config


def on_files(files: Files, config: Any, **kwargs: Any) -> Files:
    """Add the generated pages (they are not files in ``docs/``)."""
    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    return files


# An inline Markdown link's target: ](path) or ](path#fragment), without a scheme.
SOURCE_LINK = re.compile(r"\]\((?![a-z]+:|#)([^)\s#]+)(?:#([^)\s]+))?\)")


def api_target(source: Path, fragment: str | None) -> str | None:
    """``api/PAGE.md#ANCHOR`` for a path in the package (a module or a package folder)."""
    try:
        parts = source.resolve().relative_to(ROOT).parts
    except ValueError:
        return None
    if not parts or parts[0] != PACKAGE or any(p.startswith(".") for p in parts):
        return None
    if parts[-1] == "__init__.py":
        parts = parts[:-1]
    elif parts[-1].endswith(".py"):
        parts = (*parts[:-1], parts[-1][:-3])
    module = ".".join(parts)
    page = "api/index.md" if len(parts) == 1 else f"api/{parts[1]}.md"
    if len(parts) == 1 and not fragment:
        return page  # the package page shows no heading for the package itself
    anchor = f"{module}.{fragment}" if fragment else module
    return f"{page}#{anchor}"


def rewrite_source_links(markdown: str, page_path: str) -> str:
    """Links to the package's source in the page at ``page_path`` (under ``docs/``) as links
    to the generated API pages; every other link is left as it is."""
    folder = posixpath.dirname(page_path)

    def replace(match: re.Match[str]) -> str:
        target = api_target(ROOT / "docs" / folder / match.group(1), match.group(2))
        if target is None:
            return match.group(0)
        return f"]({posixpath.relpath(target, folder or '.')})"

    return SOURCE_LINK.sub(replace, markdown)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """Point the page's links to package source files at the generated API pages."""
    return rewrite_source_links(markdown, page.file.src_uri)
