"""The typed boundary around hook calls: each implementation on its own, items checked."""

from __future__ import annotations

from typing import Any

import pytest
from toolpalette import BoundTool, Origin, ToolInfo, ToolProvider, hookimpl, tool
from toolpalette._plugins.collect import call_each, items_of, tools
from toolpalette._plugins.manager import ToolpaletteManager
from toolpalette._plugins.problems import describe_exception

ORIGIN = Origin("pack", "dist-name", "1.2", None)


@tool(read_only=True)
def good() -> str:
    """A good tool."""
    return "good"


class Foreign(ToolProvider):
    def __init__(self, name: Any = "foreign", schema: Any = None, description: Any = "Hand-made."):
        schema = schema if schema is not None else {"type": "object"}
        self._record = (name, description, schema)

    @property
    def info(self) -> ToolInfo:
        name, description, schema = self._record
        return ToolInfo(name=name, description=description, input_schema=schema)

    def create(self, parent: Any = None) -> BoundTool:
        return BoundTool(lambda v, c: None, is_async=False, takes_context=False)


class Exploding(Foreign):
    """Its record cannot be built; its name, answered apart, can be read."""

    name = property(lambda self: "foreign")

    @property
    def info(self) -> ToolInfo:
        raise RuntimeError("no schema today")


def collect(*plugins: object) -> Any:
    pm = ToolpaletteManager(trace=False)
    for plugin in plugins:
        pm.register(plugin, name="pack")
    return tools(pm, "pack", ORIGIN)


def returning(value: Any) -> object:
    class Plugin:
        @hookimpl
        def toolpalette_register_tools(self):
            return value

    return Plugin()


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (None, []),
        (good, [good]),
        ([good, 1], [good, 1]),
        ((x for x in [1, 2]), [1, 2]),
        ("text", ["text"]),
        ({"a": 1}, [{"a": 1}]),
        (Foreign, [Foreign]),
    ],
)
def test_items_of_normalises_one_or_many(result: Any, expected: list[Any]):
    assert items_of(result) == (expected, None)


def test_items_of_keeps_what_came_before_an_iteration_error():
    def gen():
        yield 1
        raise ValueError("halfway")

    items, exc = items_of(gen())
    assert items == [1]
    assert isinstance(exc, ValueError)


def test_a_good_tool_gets_its_provenance():
    collected = collect(returning([good, Foreign()]))
    assert collected.problems == []
    by_name = {p.name: p for p in collected.items}
    assert by_name["good"].origin == Origin("pack", "dist-name", "1.2", __name__)
    assert by_name["foreign"].origin == Origin("pack", "dist-name", "1.2", __name__)


def test_each_implementation_is_called_on_its_own():
    class Plugin:
        @hookimpl
        def toolpalette_register_tools(self):
            raise RuntimeError("broken")

        @hookimpl(specname="toolpalette_register_tools")
        def toolpalette_register_good(self):
            return good

    collected = collect(Plugin())
    assert [p.name for p in collected.items] == ["good"]
    (problem,) = collected.problems
    assert (problem.kind, problem.pack, problem.distribution) == ("hook", "pack", "dist-name 1.2")
    assert problem.reason == "toolpalette_register_tools raised RuntimeError: broken"


def test_system_exit_in_a_hook_is_a_problem_not_an_exit():
    class Plugin:
        @hookimpl
        def toolpalette_register_tools(self):
            raise SystemExit(2)

    assert [p.kind for p in collect(Plugin()).problems] == ["hook"]


@pytest.mark.parametrize(
    ("item", "kind", "label"),
    [
        (42, "garbage", None),
        (None, "garbage", None),
        ("read_file", "garbage", None),
        (object(), "garbage", "object"),
        (len, "garbage", "len"),
        (Foreign("bad name"), "invalid-tool", "bad name"),
        (Foreign(123), "invalid-tool", "123"),
        (Foreign(description=""), "invalid-tool", "foreign"),
        (Foreign(schema={"type": "object", "properties": 5}), "invalid-tool", "foreign"),
        (Foreign(schema={"type": "string"}), "invalid-tool", "foreign"),
        (Foreign(schema={"$ref": "http://example.invalid/s.json"}), "invalid-tool", "foreign"),
        (Exploding(), "invalid-tool", "foreign"),
    ],
)
def test_garbage_is_refused_item_by_item(item: Any, kind: str, label: str | None):
    collected = collect(returning([item, good]))
    assert [p.name for p in collected.items] == ["good"]
    (problem,) = collected.problems
    assert (problem.kind, problem.item) == (kind, label)


def test_a_bare_none_means_no_tools():
    collected = collect(returning(None))
    assert (collected.items, collected.problems) == ([], [])


def test_a_raising_iterable_keeps_the_items_before_the_error():
    def gen():
        yield good
        raise KeyError("late")

    collected = collect(returning(gen()))
    assert [p.name for p in collected.items] == ["good"]
    assert "iterating" in collected.problems[0].reason


def test_wrappers_are_refused_on_register_hooks():
    class Plugin:
        @hookimpl(wrapper=True)
        def toolpalette_register_tools(self):
            return (yield)

    collected = collect(Plugin())
    assert [p.kind for p in collected.problems] == ["hook"]
    assert "wrapper" in collected.problems[0].reason


def test_call_each_passes_only_the_arguments_an_implementation_asks_for():
    seen: list[Any] = []

    class Plugin:
        @hookimpl
        def toolpalette_reconcile(self, registry):
            seen.append(registry)

    pm = ToolpaletteManager(trace=False)
    pm.register(Plugin(), name="p")
    results = list(call_each(pm, "toolpalette_reconcile", "p", thinker="T", registry="R"))
    assert seen == ["R"]
    assert [(r, e) for _, r, e in results] == [(None, None)]


def test_describe_exception_is_one_bounded_line():
    text = describe_exception(ValueError("x" * 1000 + "\nsecond line"))
    assert text.startswith("ValueError: xxx")
    assert len(text) < 320
    assert "second line" not in text
    assert describe_exception(KeyError()) == "KeyError"
