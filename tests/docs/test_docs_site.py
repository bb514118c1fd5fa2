"""The documentation site (mkdocs.yml) holds every guide and a reference page per public module.

``nox -s docs`` builds the site in strict mode, so broken links and references fail
there; these checks need no MkDocs: a guide added to docs/ but not to the navigation,
or a public module without a reference page, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACKAGE = ROOT / "core" / "src" / "toolpalette"


def _config() -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return config


def _pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in _pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _pages(value)]
    return []


def test_the_navigation_lists_every_page_and_only_pages_that_exist() -> None:
    config = _config()
    assert (config["docs_dir"], config["site_dir"], config["strict"]) == ("docs", "site", True)
    listed = _pages(config["nav"])
    written = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(listed) == written


def _public_modules() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not any(part.startswith("_") for part in parts):
            found.append(".".join(parts))
    return found


def test_every_public_module_has_a_reference_page() -> None:
    directives = set()
    for page in (DOCS / "reference").glob("*.md"):
        directives |= set(re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), re.M))
    public = _public_modules()
    assert {"toolpalette", "toolpalette.testing", "toolpalette.mcp"} <= set(public)
    assert sorted(directives) == public


def test_the_readme_says_how_to_build_the_site_and_its_guide_links_work() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python -m nox -s docs" in readme
    assert "site/index.html" in readme
    assert "site/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme)
    assert links
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_the_reference_lists_every_public_name_once_in_the_order_a_user_meets_them() -> None:
    import toolpalette

    page = (DOCS / "reference" / "toolpalette.md").read_text(encoding="utf-8")
    listed = re.findall(r"^ {8}- (\w+)$", page, re.M)
    assert listed[:5] == ["tool", "ToolHub", "Thinker", "ToolSelector", "SkillSelector"]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(set(toolpalette.__all__) - {"__version__"})


def test_the_readme_says_how_to_serve_the_site_for_its_search() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python -m http.server --bind 127.0.0.1 --directory site" in readme
