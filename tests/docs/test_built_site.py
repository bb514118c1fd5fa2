"""The built documentation site: no raw reStructuredText role, search that works from files.

``nox -s docs`` runs this on the site it built; alone, it checks ``site/`` or skips.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|exc|data|obj|const|ref):(?:<code>|`)")
ROOT = Path(__file__).resolve().parents[2]


def _site() -> Path:
    given = os.environ.get("TOOLPALETTE_SITE")
    site = Path(given) if given else ROOT / "site"
    if not (site / "index.html").is_file():
        if given:
            pytest.fail(f"TOOLPALETTE_SITE={given} holds no built site")
        pytest.skip("no built site: `python -m nox -s docs` builds one and runs this")
    return site


def test_no_page_shows_a_raw_sphinx_role() -> None:
    site = _site()
    found = [
        f"{page.relative_to(site)}: {match.group(0)}"
        for page in sorted(site.rglob("*.html"))
        for match in ROLE.finditer(page.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_reference_is_built_with_its_cross_references() -> None:
    page = (_site() / "reference" / "toolpalette.html").read_text(encoding="utf-8")
    # A docstring's [`Approval`][toolpalette.Approval] became a link to its entry.
    assert re.search(r'<a [^>]*href="#toolpalette\.Approval"', page)


def test_search_has_the_index_a_page_opened_from_files_reads() -> None:
    site = _site()
    assert (site / "search" / "search_index.js").is_file()
    assert "iframe-worker" in (site / "index.html").read_text(encoding="utf-8")
