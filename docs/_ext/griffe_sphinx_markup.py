"""Griffe extension: the docstrings' Sphinx markup as mkdocstrings Markdown.

The package's numpy-style docstrings cross-reference with Sphinx roles
(``:class:`~delight_gym.de.rule.DelightDecision```, ``:func:`delight_rule```) and write display
maths as ``.. math::`` blocks. mkdocstrings reads Markdown, so this extension rewrites, before
the docstrings are parsed:

- a role whose target is in ``delight_gym`` or unqualified into an autorefs cross-reference,
  ``[`DelightDecision`][delight_gym.de.rule.DelightDecision]`` (``~`` shows the last name only);
  unqualified targets are resolved from the object's scope (``scoped_crossrefs``), and a target
  that resolves nowhere is a warning, so ``mkdocs build --strict`` fails on it;
- a role whose target is a builtin or another package's object (``ValueError``,
  ``stable_baselines3.DQN``) into inline code: there is no page of ours to link to, and the
  build must not fetch other projects' inventories;
- ``.. math::`` blocks into ``$$ ... $$`` display maths (pymdownx.arithmatex);
- names that a package exports lazily (``__all__`` plus a PEP 562 ``__getattr__``) into
  aliases of their definitions, as they are at run time;
- doctest blocks (``>>>`` up to the next blank line) into fenced ``pycon`` code, so that
  Markdown does not read ``info["regret"]`` as a link.

Used by ``mkdocs.yml`` (``extensions: - docs/_ext/griffe_sphinx_markup.py``); the source
files are not changed.
"""

from __future__ import annotations

import builtins
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|obj|exc|const):`([^`]+)`")
OUR_PACKAGE = "delight_gym"


# Roots of names that are not ours: left as inline code (no page of ours to link to).
FOREIGN_ROOTS = frozenset(dir(builtins)) | {
    *("gymnasium", "gym", "numpy", "np", "scipy", "torch", "stable_baselines3", "pandas"),
    *("matplotlib", "ray", "tqdm", "typing", "collections", "pathlib", "bsuite"),
}


def _lookup(path: str, collection: Any) -> str | None:
    """The documented path of ``path`` (import aliases followed, inherited members kept)."""
    first, *rest = path.split(".")
    try:
        obj = collection[first]
    except (KeyError, ValueError):
        return None
    where = obj.path
    for part in rest:
        members = obj.all_members if obj.is_class else obj.members
        if part not in members:
            return None
        member = members[part]
        if member.is_alias and not member.inherited:
            try:
                member = member.final_target
            except griffe.AliasResolutionError:
                return None
            where = member.path
        else:
            where = f"{where}.{part}"
            if member.is_alias:
                try:
                    member = member.final_target
                except griffe.AliasResolutionError:
                    return None
        obj = member
    return where


def _resolve(target: str, scope: griffe.Object) -> str | None:
    """``target`` as written, or relative to ``scope`` and its parents, as a documented path."""
    collection = scope.modules_collection
    found = _lookup(target, collection)
    node: griffe.Object | None = scope
    while found is None and node is not None:
        if node.is_class or node.is_module:
            found = _lookup(f"{node.path}.{target}", collection)
            first = target.split(".")[0]
            imported = node.members.get(first)
            if found is None and isinstance(imported, griffe.Alias):  # a name the module imports
                found = _lookup(target.replace(first, imported.target_path, 1), collection)
        node = node.parent
    return found


def _role_converter(scope: griffe.Object | None) -> Any:
    def convert_role(match: re.Match[str]) -> str:
        text = match.group(1).strip()
        title = None
        explicit = re.fullmatch(r"(.*?)\s*<([^>]+)>", text)
        if explicit:
            title, text = explicit.group(1), explicit.group(2)
        target = text.lstrip("~.").rstrip("()")
        if title is None:
            title = target.rsplit(".", 1)[-1] if text.startswith("~") else target
        if target.split(".")[0] in FOREIGN_ROOTS:
            return f"`{title}`"
        resolved = _resolve(target, scope) if scope is not None else None
        if resolved is None:
            return f"[`{title}`][{target}]"  # unresolved: autorefs reports it (--strict fails)
        if any(part.startswith("_") for part in resolved.split(".")):
            return f"`{title}`"  # private: not on the site
        return f"[`{title}`][{resolved}]"

    return convert_role


MATH = re.compile(
    r"^(?P<indent>[ \t]*)\.\. math::[ \t]*\n(?P<body>(?:(?:(?P=indent)[ \t]+.*)?\n)+)", re.M
)


def _math_to_markdown(match: re.Match[str]) -> str:
    """One ``$$ ... $$`` block per blank-line-separated equation of the directive."""
    indent = match.group("indent")
    equations = [
        " ".join(line.strip() for line in paragraph.splitlines() if line.strip())
        for paragraph in re.split(r"\n[ \t]*\n", match.group("body"))
        if paragraph.strip()
    ]
    return "".join(f"{indent}$$\n{indent}{eq}\n{indent}$$\n\n" for eq in equations)


DOCTEST = re.compile(r"^(?P<indent>[ \t]*)>>> .*\n(?:(?P=indent)\S.*\n)*", re.M)


def _doctest_to_markdown(match: re.Match[str]) -> str:
    """A doctest block (up to the next blank line) as a fenced ``pycon`` block."""
    indent = match.group("indent")
    return f"{indent}```pycon\n{match.group(0)}{indent}```\n"


def convert(text: str, scope: griffe.Object | None = None) -> str:
    """Return ``text`` with Sphinx roles, maths and doctests rewritten as Markdown.

    Role targets are resolved from ``scope`` (the object whose docstring this is) outwards.
    """
    role = _role_converter(scope)
    text = MATH.sub(_math_to_markdown, text if text.endswith("\n") else text + "\n")
    parts: list[str] = []
    last = 0
    for match in DOCTEST.finditer(text):
        parts.append(ROLE.sub(role, text[last : match.start()]))
        parts.append(_doctest_to_markdown(match))  # roles inside code stay as written
        last = match.end()
    parts.append(ROLE.sub(role, text[last:]))
    return "".join(parts).rstrip("\n")


def _definitions(module: griffe.Module) -> dict[str, list[griffe.Object]]:
    """Every non-alias member defined in ``module`` or a module below it, by name."""
    found: dict[str, list[griffe.Object]] = {}
    for member in module.members.values():
        if isinstance(member, griffe.Alias):
            continue
        if isinstance(member, griffe.Module):
            for name, objects in _definitions(member).items():
                found.setdefault(name, []).extend(objects)
        else:
            found.setdefault(member.name, []).append(member)
    return found


def _add_lazy_exports(module: griffe.Module) -> None:
    """Give ``module`` the names its ``__all__`` exports lazily (PEP 562 ``__getattr__``).

    Statically such a name is not a member, so cross-references through the package
    (``delight_gym.posteriors.LinearGaussianPosterior``) would resolve nowhere; it becomes an
    alias of the one object of that name defined below the package.
    """
    for submodule in module.modules.values():
        _add_lazy_exports(submodule)
    exported = [str(name) for name in (module.exports or ())]
    missing = [name for name in exported if name not in module.members]
    if not missing:
        return
    definitions = _definitions(module)
    for name in missing:
        candidates = definitions.get(name, [])
        if len(candidates) == 1:
            module.set_member(name, griffe.Alias(name, candidates[0], parent=module))


def _walk(obj: griffe.Object) -> list[griffe.Object]:
    """``obj`` and every object defined below it (aliases skipped)."""
    found = [obj]
    for member in obj.members.values():
        if not isinstance(member, griffe.Alias):
            found += _walk(member)
    return found


class SphinxMarkup(griffe.Extension):
    """Add lazily exported names as aliases, then rewrite docstrings with :func:`convert`.

    Runs once the whole package is loaded, so that targets in other modules and inherited
    members resolve.
    """

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _add_lazy_exports(pkg)
        for obj in _walk(pkg):
            if obj.docstring is not None:
                obj.docstring.value = convert(obj.docstring.value, obj)
