"""Test doubles and helpers for people who write tool packs and hosts.

Everything here builds real toolpalette objects, so a test exercises the same code a
host runs::

    from toolpalette.testing import fake_tool, make_registry, run_tool

    def test_my_tool_is_read_only():
        registry = make_registry(my_tool, fake_tool("other"))
        assert registry.get_provider("my_tool").read_only

    def test_my_tool_answers():
        assert run_tool(my_tool, {"path": "README.md"}) == "..."

``wait_until`` (and ``await_until`` in a coroutine) polls a condition with a deadline,
for tests of something that happens on another thread or task: never a fixed sleep
followed by an assert.

An [`Executor`][toolpalette.Executor] shares one worker pool and one report queue with the
whole process unless given its own: ``Executor(registry, pool=WorkerPool(max_workers=2),
reports=ReportQueue())`` makes its counters (``executor.stats()``, ``pool.abandoned``,
``reports.dropped``) and ``reports.join()`` the test's alone.

The ``pytest11`` plugin that ships with toolpalette exposes the same helpers as fixtures
(``tool_registry``, ``tool_context``, ``fake_tool_factory``, ``leak_check``).
"""

from __future__ import annotations

from toolpalette._run.reports import ReportQueue
from toolpalette._run.workers import WorkerPool
from toolpalette._tools.provider import as_provider
from toolpalette.testing._checks import FORMATS, Discovered, assert_discoverable, check_tool
from toolpalette.testing._fakes import OPEN_OBJECT as OPEN_OBJECT  # FakeTool's default schema
from toolpalette.testing._fakes import FakeCall, FakeTool, fake_tool, make_registry, plugin_of
from toolpalette.testing._leaks import LeakCheck, LeakError, leak_check
from toolpalette.testing._running import arun_tool, run_cli, run_tool
from toolpalette.testing._waiting import await_until, wait_until

__all__ = [
    "Discovered",
    "FORMATS",
    "FakeCall",
    "FakeTool",
    "LeakCheck",
    "LeakError",
    "ReportQueue",
    "WorkerPool",
    "arun_tool",
    "as_provider",
    "assert_discoverable",
    "await_until",
    "check_tool",
    "fake_tool",
    "leak_check",
    "make_registry",
    "plugin_of",
    "run_cli",
    "run_tool",
    "wait_until",
]

# The classes of this package's private modules print and pickle under the public name,
# as ``toolpalette``'s do (a failing leak check reads ``toolpalette.testing.LeakError``).
for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type) and _value.__module__.startswith(f"{__name__}._"):
        _value.__module__ = __name__
del _name, _value
