"""pytest fixtures for anyone testing toolpalette tools, packs and hosts.

Installed with toolpalette through the ``pytest11`` entry point, so the fixtures are
available in any test suite without an import.
"""

from __future__ import annotations

import pytest

from toolpalette._registry import ToolRegistry


@pytest.fixture
def tool_registry() -> ToolRegistry:
    """A fresh, empty ToolRegistry for each test."""
    return ToolRegistry()
