"""Links in the README and the docs pages work where people read them: on GitHub and on the site.

On GitHub a link must name a file or folder of the repository; the API pages exist only on
the built site. So pages link the package's source (``../delight_gym/rule.py#delight_rule``)
and the site's hook (``docs/_ext/api_pages.py``) points those links at the API pages.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
INLINE_LINK = re.compile(r"\]\(([^)\s]+)\)")
REFERENCE_LINK = re.compile(r"\]\[([A-Za-z_][\w.]*)\]")  # autorefs: [text][dotted.name]
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def _hook():
    spec = importlib.util.spec_from_file_location("api_pages", ROOT / "docs/_ext/api_pages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def broken_links(page: Path) -> list[str]:
    """Links of ``page`` that a reader on GitHub could not follow."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))  # code blocks hold no links
    problems = [
        f"[...][{name}] (a site-only cross-reference)" for name in REFERENCE_LINK.findall(text)
    ]
    for target in INLINE_LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if path and not (page.parent / path).exists():
            problems.append(f"({target}) (no such file in the repository)")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_resolve_in_the_repository(page):
    problems = broken_links(page)
    assert not problems, f"{page.relative_to(ROOT)}: " + "; ".join(problems)


def test_the_checker_flags_site_only_links(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "[a][delight_gym.de.rule.delight_rule] [b](api/rule.md) [c](page.md#x) [d](https://x.org)\n"
        "```python\n[e](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "[...][delight_gym.de.rule.delight_rule] (a site-only cross-reference)",
        "(api/rule.md) (no such file in the repository)",
    ]


def test_source_links_become_api_page_links_on_the_site():
    hook = _hook()
    page = "environments/linear.md"  # a page one folder below docs/
    text = (
        "[A](../../delight_gym/envs/linear.py#LinearBanditEnv), "
        "[B](../../delight_gym/agents/), [C](../../delight_gym/de/rule.py), "
        "[D](../index.md), [E](https://example.org/delight_gym/rule.py)"
    )
    assert hook.rewrite_source_links(text, page) == (
        "[A](../api/envs.md#delight_gym.envs.linear.LinearBanditEnv), "
        "[B](../api/agents.md#delight_gym.agents), [C](../api/de.md#delight_gym.de.rule), "
        "[D](../index.md), [E](https://example.org/delight_gym/rule.py)"
    )
    # The package itself maps to the package page, which has no heading of its own.
    assert hook.rewrite_source_links("[P](../delight_gym/)", "index.md") == "[P](api/index.md)"
