"""pytest fixtures for anyone testing toolpalette tools, packs and hosts (``pytest11``).

Loaded in every session where toolpalette is installed, so it imports the core only inside
the fixtures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from toolpalette._tools.registry import ToolRegistry
    from toolpalette._tools.tool import ToolContext
    from toolpalette.testing import FakeTool, LeakCheck


@pytest.fixture
def tool_registry() -> ToolRegistry:
    """A fresh, empty ToolRegistry for each test."""
    from toolpalette._tools.registry import ToolRegistry

    return ToolRegistry()


@pytest.fixture
def tool_context() -> ToolContext:
    """A fresh ToolContext for each test: no parent, empty config, abort not set."""
    from toolpalette._tools.tool import ToolContext

    return ToolContext()


@pytest.fixture
def fake_tool_factory() -> Callable[..., FakeTool]:
    """Build FakeTools: ``fake_tool_factory("name", read_only=True, result=...)``."""
    from toolpalette.testing import fake_tool

    return fake_tool


@pytest.fixture
def leak_check() -> Iterator[LeakCheck]:
    """A started LeakCheck, checked when the test ends; ``leak_check.watch(thinker)``."""
    from toolpalette.testing import LeakCheck

    with LeakCheck() as check:
        yield check
