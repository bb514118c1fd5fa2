"""Test doubles and helpers for people who write tool packs and hosts.

Everything here builds real toolpalette objects, so a test exercises the code a host runs.
"""

from __future__ import annotations

from toolpalette._run.reports import ReportQueue
from toolpalette._run.workers import WorkerPool
from toolpalette._tools.provider import as_provider
from toolpalette.testing._checks import FORMATS, Discovered, assert_discoverable, check_tool
from toolpalette.testing._fakes import OPEN_OBJECT as OPEN_OBJECT  # FakeTool's default schema
from toolpalette.testing._fakes import FakeCall, FakeTool, fake_tool, make_registry, plugin_of
from toolpalette.testing._leaks import LeakCheck, LeakError, leak_check
from toolpalette.testing._running import arun_tool, await_until, run_cli, run_tool, wait_until

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
