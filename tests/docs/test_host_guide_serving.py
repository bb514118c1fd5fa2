"""The host guide's "Serving a palette over MCP" page: its commands and settings exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import toolpalette

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "host-guide" / "serving.md"
CODE = "import sys; from toolpalette._cli import main; sys.exit(main())"


def blocks(language: str) -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def test_every_serve_option_of_the_page_exists() -> None:
    pytest.importorskip("mcp", reason="serve's options need the mcp extra")
    shown = subprocess.run(
        [sys.executable, "-c", CODE, "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    used = re.findall(r"toolpalette serve[^\n]*", " ".join(blocks("bash")))
    options = {o for line in used for o in re.findall(r"(--[a-z][a-z-]+)", line)}
    assert {"--defer", "--tool-search", "--select"} <= options
    for option in options:
        assert option in shown, option


def test_the_pages_serve_table_is_read_without_a_problem(tmp_path: Path) -> None:
    (config,) = blocks("toml")
    file = tmp_path / "toolpalette.toml"
    file.write_text(config, encoding="utf-8")
    hub = toolpalette.ToolHub(config=file, autoload=False)
    assert [p for p in hub.problems() if p.kind == "config"] == []
    assert dict(hub.config.serve) == {"tool_search": "search", "defer": ["toolpalette-sqlite"]}
