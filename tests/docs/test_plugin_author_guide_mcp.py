"""The plugin author guide's page on prompts, resources and a talking tool runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "plugin-author-guide-mcp.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def test_the_pages_python_blocks_run_in_order_as_one_script() -> None:
    pytest.importorskip("mcp", reason="the page's last example needs the mcp extra")
    blocks = BLOCK.findall(GUIDE.read_text(encoding="utf-8"))
    assert len(blocks) >= 8
    namespace: dict[str, object] = {"__name__": "guide_page"}
    exec(compile("\n".join(blocks), str(GUIDE), "exec", dont_inherit=True), namespace)
    assert callable(namespace["over_mcp"])


def test_the_page_is_linked_from_the_guide_and_the_site() -> None:
    root = GUIDE.parents[1]
    assert "plugin-author-guide-mcp.md" in (root / "docs" / "plugin-author-guide.md").read_text()
    assert "plugin-author-guide-mcp.md" in (root / "mkdocs.yml").read_text()
