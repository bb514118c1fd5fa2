"""Every fault test runs under a leak check: nothing it starts may outlive it.

The check is :class:`toolpalette.testing.LeakCheck` entered as ``async with`` on the
test's own event loop, so tasks are compared too. A test that binds a thinker passes it
to ``faults_leaks.watch(thinker)`` to have its pending approvals checked.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from toolpalette.testing import LeakCheck

HERE = Path(__file__).parent
if str(HERE) not in sys.path:  # watched_fixture is shared by the schema bounds tests
    sys.path.insert(0, str(HERE))
SERVER_TESTS = HERE.parent / "mcp" / "server"  # the MCP server tests' palettes and issuer
if str(SERVER_TESTS) not in sys.path:
    sys.path.append(str(SERVER_TESTS))


@pytest.fixture(autouse=True)
async def faults_leaks() -> AsyncIterator[LeakCheck]:
    """Fail the test if it leaves a thread, task, descriptor, process or approval."""
    async with LeakCheck() as check:
        yield check
