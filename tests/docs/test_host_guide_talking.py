"""The host guide's page on talking tools, prompts, resources and peers runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
from toolpalette import ToolHub

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "host-guide" / "talking.md"
BLOCK = re.compile(r"^```(python|toml)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def test_the_pages_python_blocks_run_in_order_as_one_script() -> None:
    blocks = [body for lang, body in BLOCK.findall(GUIDE.read_text()) if lang == "python"]
    assert len(blocks) >= 2
    namespace: dict[str, object] = {"__name__": "guide_page"}
    exec(compile("\n".join(blocks), str(GUIDE), "exec", dont_inherit=True), namespace)


def test_the_pages_exclude_table_is_read_as_it_says() -> None:
    pytest.importorskip("mcp", reason="MCP servers need the mcp extra")
    (toml,) = [body for lang, body in BLOCK.findall(GUIDE.read_text()) if lang == "toml"]
    tables = tomllib.loads(toml)["mcp_servers"]
    hub = ToolHub(autoload=False, config={}, mcp_servers=tables)
    config = hub.mcp().connection("github").config
    assert config.exclude == ("delete_repository", "merge_pull_request")


def test_the_page_is_linked_from_the_guide_and_the_site() -> None:
    root = GUIDE.parents[2]
    assert "(talking.md)" in (root / "docs" / "host-guide" / "quickstart.md").read_text()
    assert "host-guide/talking.md" in (root / "mkdocs.yml").read_text()
