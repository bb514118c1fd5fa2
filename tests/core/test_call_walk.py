"""One tool call, walked module by module, enters no module twice (``bench/call_walk.py``)."""

from __future__ import annotations

import pytest

from bench.call_walk import walk_one_call


@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "in-a-span"])
def test_one_call_enters_no_module_twice(traced: bool) -> None:
    walk = walk_one_call(traced=traced)
    assert walk.entered_twice == []
    entered = {into.split()[0] for _, into in walk.crossings}
    # The call went the whole way: looked up, validated, decided, run and rendered.
    assert {
        "toolpalette._run.executor",
        "toolpalette._tools.registry",
        "toolpalette._tools.provider",
        "toolpalette._agents.policy",
        "toolpalette._run.shaping",
    } <= entered
