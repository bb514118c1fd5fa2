"""Shared setup of the MCP server tests: the fixture palette and an in-process hub."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "mcp", reason="the MCP tests need the mcp extra: pip install 'toolpalette[mcp]'"
)

HERE = Path(__file__).parent
if str(HERE) not in sys.path:  # palette_fixture is imported by the tests and by subprocesses
    sys.path.insert(0, str(HERE))
