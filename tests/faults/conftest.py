"""Every fault test runs under a leak check: nothing it starts may outlive it.

The check is :class:`toolpalette.testing.LeakCheck` entered as ``async with`` on the
test's own event loop, so tasks are compared too. A test that binds a thinker passes it
to ``faults_leaks.watch(thinker)`` to have its pending approvals checked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from toolpalette.testing import LeakCheck


@pytest.fixture(autouse=True)
async def faults_leaks() -> AsyncIterator[LeakCheck]:
    """Fail the test if it leaves a thread, task, descriptor, process or approval."""
    async with LeakCheck() as check:
        yield check
