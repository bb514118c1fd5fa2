"""pytest fixtures for anyone testing toolpalette tools, packs and hosts.

Installed with toolpalette through the ``pytest11`` entry point, so the fixtures are
available in any test suite without an import:

- ``tool_registry``: a fresh, empty :class:`~toolpalette.ToolRegistry`;
- ``tool_context``: a fresh :class:`~toolpalette.ToolContext` (no parent, abort unset);
- ``fake_tool_factory``: :func:`toolpalette.testing.fake_tool`, to build scripted tools;
- ``leak_check``: a started :class:`~toolpalette.testing.LeakCheck` that fails the test
  if it leaves a thread, file descriptor, child process or pending approval behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from toolpalette._tools.registry import ToolRegistry
from toolpalette._tools.tool import ToolContext
from toolpalette.testing import FakeTool, LeakCheck, fake_tool


@pytest.fixture
def tool_registry() -> ToolRegistry:
    """A fresh, empty ToolRegistry for each test."""
    return ToolRegistry()


@pytest.fixture
def tool_context() -> ToolContext:
    """A fresh ToolContext for each test: no parent, empty config, abort not set."""
    return ToolContext()


@pytest.fixture
def fake_tool_factory() -> Callable[..., FakeTool]:
    """Build FakeTools: ``fake_tool_factory("name", read_only=True, result=...)``."""
    return fake_tool


@pytest.fixture
def leak_check() -> Iterator[LeakCheck]:
    """A started LeakCheck, checked when the test ends; ``leak_check.watch(thinker)``."""
    with LeakCheck() as check:
        yield check
