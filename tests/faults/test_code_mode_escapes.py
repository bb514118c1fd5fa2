"""Code mode's sandbox: every way out a script tries is refused, and nothing is left behind.

Each test runs under the faults' leak check (no thread, task, descriptor or process
may outlive it); the sandbox's runtime is started once beforehand, by the fixture.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from toolpalette import CodeLimits, Thinker, ToolHub, ToolResult, ToolSelector, tool

pytest.importorskip("pydantic_monty", reason="code mode needs the `code` extra")

RAN: list[str] = []


@tool(read_only=True)
def lookup_item(name: str) -> str:
    """Look an item up."""
    RAN.append(name)
    return name.upper()


@tool
def delete_everything() -> str:
    """Delete everything (never offered to the sandboxed thinker below)."""
    RAN.append("deleted")
    return "deleted"


class Sandboxed(Thinker):
    code_mode = True
    code_limits = CodeLimits(wall_time=2.0, memory=16 * 1024 * 1024, output_bytes=4096)

    @classmethod
    def declare_compatible_tools(cls) -> ToolSelector:
        return ToolSelector().tool(lookup_item)


@pytest.fixture(scope="module")
def warmed() -> None:
    """Start the sandbox's runtime (its threads live as long as the process) once."""
    import asyncio

    thinker = ToolHub(autoload=False, config={}).bind(Sandboxed)
    asyncio.run(thinker.call("run_code", {"code": "1"}))


@pytest.fixture
async def run(warmed: None) -> AsyncIterator[object]:
    RAN.clear()
    thinker = ToolHub(autoload=False, config={}).bind(Sandboxed)

    async def run_code(code: str) -> ToolResult:
        return await thinker.call("run_code", {"code": code})

    return run_code


ESCAPES = {
    "import os": ("import os\nos.listdir('/')", "PermissionError"),
    "os.system": ("import os\nos.system('touch /tmp/escaped')", "AttributeError"),
    "subprocess": ("import subprocess", "ModuleNotFoundError"),
    "socket": ("import socket", "ModuleNotFoundError"),
    "open": ("open('/etc/passwd').read()", "PermissionError"),
    "open for writing": ("open('/tmp/escaped', 'w').write('x')", "PermissionError"),
    "__subclasses__": ("().__class__.__base__.__subclasses__()", "AttributeError"),
    "type's subclasses": ("type(1).__subclasses__()", "AttributeError"),
    "__import__": ("__import__('os')", "NameError"),
    "eval": ("eval(\"__import__('os').system('id')\")", "NameError"),
    "exec": ("exec(\"open('/etc/passwd').read()\")", "PermissionError"),
    "compile": ("compile('1', 'x', 'eval')", "NameError"),
    "globals": ("globals()['__builtins__']", "NameError"),
    "recursion": ("def f(n):\n    return f(n + 1)\nf(0)", "RecursionError"),
    "a tool outside the palette": ("delete_everything()", "NameError"),
    "the tool by an odd name": ("delete_everything_()", "NameError"),
    "run_code itself": ("run_code(code='1')", "NameError"),
}


@pytest.mark.parametrize("name", list(ESCAPES))
async def test_an_escape_attempt_is_refused(run: object, name: str) -> None:
    code, raised = ESCAPES[name]
    result: ToolResult = await run(code)  # type: ignore[operator]
    assert result.is_error, name
    assert (result.status, result.code) == (400, "script_error")
    assert raised in result.text
    assert "deleted" not in RAN


async def test_an_infinite_loop_is_ended_at_the_wall_time(run: object) -> None:
    result: ToolResult = await run("while True:\n    pass")  # type: ignore[operator]
    assert (result.status, result.code) == (408, "script_timeout")


async def test_a_memory_bomb_is_ended_at_the_memory_limit(run: object) -> None:
    result: ToolResult = await run("x = [0] * (10 ** 9)")  # type: ignore[operator]
    assert (result.status, result.code) == (413, "memory_limit")
    result = await run("s = 'a' * (10 ** 8)")  # type: ignore[operator]
    assert (result.status, result.code) == (413, "memory_limit")


async def test_a_huge_print_is_ended_at_the_output_bound(run: object) -> None:
    result: ToolResult = await run("while True:\n    print('x' * 1000)")  # type: ignore[operator]
    assert (result.status, result.code) == (413, "output_too_large")
    result = await run("print('y' * 10 ** 6)")  # type: ignore[operator]
    assert (result.status, result.code) == (413, "output_too_large")


async def test_the_sandbox_still_serves_after_the_escapes(run: object) -> None:
    result: ToolResult = await run("lookup_item(name='ok')")  # type: ignore[operator]
    assert result.structured is not None
    assert result.structured["result"] == "OK"
    assert RAN == ["ok"]
