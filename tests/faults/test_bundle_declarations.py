"""A pack whose bundle text or skill links raise when read: the host resolves as if absent."""

from __future__ import annotations

from typing import Any

from toolpalette import Thinker, ToolHub, ToolSelector, hookimpl
from toolpalette.testing import FakeTool


class Hostile:
    """A plugin object whose declarations raise when read."""

    @property
    def TOOLPALETTE_BUNDLE(self) -> str:
        raise RuntimeError("secret-token-123")

    @property
    def TOOLPALETTE_SKILLS(self) -> Any:
        class Odd(dict):  # type: ignore[type-arg]
            def items(self) -> Any:
                raise RuntimeError("secret-token-123")

        return Odd()

    @hookimpl
    def toolpalette_register_tools(self) -> list[Any]:
        return [FakeTool("odd_tool", description="An odd tool.", read_only=True, result={})]


class Reaching(Thinker):
    tool_search = "search"

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().package(__name__, deferred="bundle")


def test_raising_declarations_are_not_read_and_leak_nothing():
    hub = ToolHub(autoload=False)
    hub.add_plugin(Hostile(), "hostile")
    thinker = hub.bind(Reaching)
    turn = thinker.begin_turn()
    found = thinker.search("tool", "odd tool", 5)
    [bundle] = found["bundles"]
    assert bundle["description"] == f"Tools of {__name__}: odd_tool."
    assert hub.linked_skills(hub.catalog().get_provider("odd_tool")) == ()
    assert "secret-token-123" not in repr(found) + turn.preamble
