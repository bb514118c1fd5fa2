"""``toolpalette.testing`` and the pytest11 fixtures, as plugin authors use them."""

from __future__ import annotations

import asyncio
import pickle
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from toolpalette import (
    InvalidInputError,
    ToolCollisionError,
    ToolContext,
    ToolProvider,
    ToolRegistry,
    tool,
)
from toolpalette.errors import ToolDefinitionError
from toolpalette.testing import (
    FakeTool,
    arun_tool,
    await_until,
    check_tool,
    fake_tool,
    make_registry,
    run_tool,
    wait_until,
)


@tool
def greet(name: str, ctx: ToolContext) -> str:
    """Greet someone."""
    return f"hello {name} from {ctx.parent}"


@tool
async def shout(text: str) -> str:
    """Shout."""
    return text.upper()


def test_fake_tool_is_a_real_provider() -> None:
    fake = fake_tool("fake", read_only=True, metadata={"k": 1}, timeout=2.0, output_cap=10)
    assert isinstance(fake, ToolProvider)
    assert fake.name == "fake"
    assert fake.description == "Fake tool fake."
    assert fake.input_schema == {"type": "object"}
    assert fake.output_schema is None
    assert fake.read_only is True
    assert fake.concurrency_safe is True
    assert fake.metadata == {"k": 1}
    assert (fake.timeout, fake.output_cap) == (2.0, 10)


def test_fake_tool_records_calls_and_parents() -> None:
    fake = fake_tool("echo", result=lambda value: value["x"])
    bound = fake.create("parent-1")
    context = ToolContext(call_id="c")
    assert bound.invoke(fake.parse_input('{"x": 5}'), context) == 5
    assert fake.call_count == 1
    assert fake.parents == ["parent-1"]
    call = fake.calls[0]
    assert (call.input, call.parent, call.context) == ({"x": 5}, "parent-1", context)


def test_fake_tool_result_may_take_the_context() -> None:
    fake = fake_tool("ctx", result=lambda value, ctx: ctx.call_id)
    assert fake.create().invoke({}, ToolContext(call_id="abc")) == "abc"


def test_fake_tool_raises_what_it_is_told() -> None:
    fake = fake_tool("boom", raises=RuntimeError("scripted"))
    with pytest.raises(RuntimeError, match="scripted"):
        fake.create().invoke({})
    assert fake.call_count == 1


async def test_async_fake_tool() -> None:
    fake = fake_tool("later", is_async=True, result="done")
    bound = fake.create()
    assert bound.is_async
    assert await bound.invoke({}) == "done"


def test_fake_tool_validates_against_its_schema() -> None:
    fake = fake_tool(
        "typed",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    )
    with pytest.raises(InvalidInputError, match="at n: expected required field of type integer"):
        fake.parse_input({})


def test_fake_tool_refuses_a_bad_name() -> None:
    with pytest.raises(ToolDefinitionError):
        FakeTool("bad name")


def test_make_registry_takes_names_and_tools() -> None:
    registry = make_registry("a", greet, fake_tool("b"))
    assert [p.name for p in registry.providers()] == ["a", "greet", "b"]
    with pytest.raises(ToolCollisionError):
        make_registry("a", "a")


def test_run_tool_validates_and_runs() -> None:
    assert run_tool(greet, {"name": "Ada"}, parent="P") == "hello Ada from P"
    assert run_tool(shout, '{"text": "hi"}') == "HI"
    with pytest.raises(InvalidInputError):
        run_tool(greet, {"name": 5})


async def test_arun_tool_from_async_code() -> None:
    assert await arun_tool(shout, {"text": "a"}) == "A"
    assert await arun_tool(greet, {"name": "b"}) == "hello b from None"


def test_fixtures(
    tool_registry: ToolRegistry, tool_context: ToolContext, fake_tool_factory: Any
) -> None:
    assert len(tool_registry) == 0
    assert not tool_context.abort.is_set()
    tool_registry.register(fake_tool_factory("x", read_only=True))
    assert tool_registry.concurrent_safe_tools()[0].name == "x"


def test_fixtures_reach_an_outside_suite_through_pytest11(tmp_path: Path) -> None:
    (tmp_path / "test_pack.py").write_text(
        textwrap.dedent(
            """
            import sys

            def test_loading_the_plugin_imported_none_of_the_helpers():
                # pytest loads the plugin in every session: it costs no import until
                # a test asks for a fixture.
                loaded = [m for m in sys.modules if m.startswith("toolpalette.")]
                assert "toolpalette.testing" not in loaded
                assert not [m for m in loaded if m.startswith("toolpalette._tools")]

            def test_uses_fixtures(tool_registry, tool_context, fake_tool_factory, leak_check):
                tool_registry.register(fake_tool_factory("t"))
                assert tool_registry.tool_names() == ["t"]
                assert tool_context.parent is None
                assert leak_check.leaks() == []
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_pack.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_wait_until_returns_once_another_thread_makes_it_true() -> None:
    box: list[str] = []
    threading.Timer(0.05, box.append, args=("done",)).start()
    assert wait_until(lambda: box and box[0]) == "done"


def test_wait_until_fails_naming_what_it_waited_for() -> None:
    with pytest.raises(AssertionError, match=r"not true within 0.05 s: the queue drained"):
        wait_until(lambda: False, timeout=0.05, message="the queue drained")

    def nothing_yet() -> bool:
        return False

    with pytest.raises(AssertionError, match="nothing_yet"):
        wait_until(nothing_yet, timeout=0.01)


async def test_await_until_lets_the_event_loop_run() -> None:
    box: list[int] = []
    asyncio.get_running_loop().call_soon(box.append, 1)
    assert await await_until(lambda: len(box)) == 1
    with pytest.raises(AssertionError, match="never"):
        await await_until(lambda: False, timeout=0.01, message="never")


def test_check_tool_passes_a_good_tool_and_returns_its_provider() -> None:
    provider = check_tool(greet)
    assert provider.name == "greet"


def test_check_tool_lists_every_failed_check() -> None:
    bad = fake_tool("bad", description=" ", input_schema={"type": "array", "items": 3})
    with pytest.raises(AssertionError) as info:
        check_tool(bad)
    message = str(info.value)
    assert message.startswith("tool 'bad': the description is blank; ")
    assert "input schema must have type 'object'" in message
    assert "input schema $.items" in message


# -- run_tool in a running loop, assert_discoverable ---------------------------------


@tool
async def later(n: int) -> int:
    """Answer later."""
    await asyncio.sleep(0)
    return n


async def test_run_tool_in_a_running_loop_points_at_arun_tool() -> None:
    with pytest.raises(RuntimeError, match=r"await toolpalette\.testing\.arun_tool"):
        run_tool(later, {"n": 1})
    assert await arun_tool(later, {"n": 2}) == 2


def test_run_tool_runs_an_async_tool_without_a_loop() -> None:
    assert run_tool(later, {"n": 3}) == 3


def _installed(dist: str) -> bool:
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution(dist)
    except PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(
    not (_installed("toolpalette-files") and _installed("toolpalette-skilljar-sql")),
    reason="the first-party pack and skilljar are not installed in this environment",
)
def test_assert_discoverable_reports_a_packs_tools_and_a_jars_skills() -> None:
    from toolpalette.testing import assert_discoverable

    files = assert_discoverable("toolpalette_files")  # any spelling of the name
    assert (files.distribution, files.packs) == ("toolpalette-files", ("files",))
    assert "read_file" in files.tools
    assert files.skills == ()
    sql = assert_discoverable("toolpalette-skilljar-sql")
    assert sql.bundles == ("io.toolpalette.sql",)
    assert "io.toolpalette.sql/explore-sqlite-schema" in sql.skills
    assert sql.tools == ()


def test_assert_discoverable_names_what_is_installed_when_nothing_matches() -> None:
    from toolpalette.testing import assert_discoverable

    with pytest.raises(AssertionError, match=r"declares a toolpalette\.plugins or") as info:
        assert_discoverable("no-such-distribution-here")
    assert "pip install -e ." in str(info.value)


def test_the_helpers_classes_are_named_where_users_import_them() -> None:
    # toolpalette.testing is a package of private modules; its classes still print and
    # pickle under the public name, so a failing leak check reads
    # ``toolpalette.testing.LeakError``.
    import toolpalette.testing as testing

    own = [
        getattr(testing, name)
        for name in testing.__all__
        if isinstance(getattr(testing, name), type)
        and getattr(testing, name).__module__.startswith("toolpalette.testing")
    ]
    assert {cls.__name__ for cls in own} >= {"FakeTool", "LeakCheck", "LeakError", "Discovered"}
    for cls in own:
        assert cls.__module__ == "toolpalette.testing", cls
    found = testing.Discovered("d", ("p",), ("t",), (), ())
    assert pickle.loads(pickle.dumps(found)) == found
