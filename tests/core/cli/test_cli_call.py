"""``toolpalette call`` on a hub built in code (installed packs: tests/integration)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import time
from typing import Any

import pytest
from toolpalette import ToolContext, ToolError, ToolHub, ToolResult, hookimpl, tool
from toolpalette.testing import run_cli


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def remove(path: str) -> str:
    """Remove a file (mutating)."""
    return f"removed {path}"


@tool(read_only=True)
def where(ctx: ToolContext) -> str:
    """Say where the workspace is."""
    return str(ctx.config.get("root"))


@tool(read_only=True)
def refuse() -> str:
    """Always refuse."""
    raise ToolError("Not today.", code="closed", status=409)


@tool(read_only=True)
async def stubborn() -> str:
    """Ignore cancellation for a while."""
    for _ in range(30):
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.1)
    return "late"


class Pack:
    def __init__(self) -> None:
        self.reports: list[Any] = []
        self.hub = ToolHub(autoload=False, config={"packs": {"demo": {"root": "/srv/work"}}})
        self.hub.add_plugin(self, name="demo")

    @hookimpl
    def toolpalette_register_tools(self) -> list[Any]:
        return [add, remove, where, refuse, stubborn]

    @hookimpl
    def toolpalette_tool_error(self, report: Any) -> None:
        self.reports.append(report)


@pytest.fixture
def pack() -> Pack:
    return Pack()


def test_success_prints_the_text(pack: Pack, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["call", "add", "--input", '{"a": 2, "b": 3}'], hub=pack.hub) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("5\n", "")


def test_json_prints_the_result_shape(pack: Pack, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["call", "add", "--input", '{"a": 2, "b": 3}', "--json"], hub=pack.hub) == 0
    data = json.loads(capsys.readouterr().out)
    assert tuple(data) == tuple(ToolResult("").as_dict())
    assert (data["is_error"], data["status"], data["text"]) == (False, 200, "5")


def test_a_failed_call_exits_1_with_the_text_on_stderr(
    pack: Pack, capsys: pytest.CaptureFixture[str]
):
    assert run_cli(["call", "refuse"], hub=pack.hub) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "error 409 closed: Not today.\n"
    assert [r.code for r in pack.reports] == ["closed"]  # the hook got the report


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["call", "nope"], 404),
        (["call", "add", "--input", "{"], 400),
        (["call", "add", "--input", '{"a": "x"}'], 400),
        (["call", "remove", "--input", '{"path": "a"}', "--read-only"], 403),
    ],
)
def test_refusals_exit_1(
    pack: Pack, capsys: pytest.CaptureFixture[str], argv: list[str], status: int
):
    assert run_cli([*argv, "--json"], hub=pack.hub) == 1
    assert json.loads(capsys.readouterr().out)["status"] == status


def test_input_from_stdin(
    pack: Pack, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr("sys.stdin", io.StringIO('{"a": 40, "b": 2}'))
    assert run_cli(["call", "add", "--input", "-"], hub=pack.hub) == 0
    assert capsys.readouterr().out == "42\n"


def test_the_pack_config_reaches_the_tool(pack: Pack, capsys: pytest.CaptureFixture[str]):
    assert run_cli(["call", "where"], hub=pack.hub) == 0
    assert capsys.readouterr().out == "/srv/work\n"


def test_a_stubborn_tool_times_out_and_never_hangs_the_command(
    pack: Pack, capsys: pytest.CaptureFixture[str]
):
    started = time.monotonic()
    assert run_cli(["call", "stubborn", "--timeout", "0.2", "--json"], hub=pack.hub) == 1
    assert time.monotonic() - started < 2.5  # 0.2 s deadline + at most 1 s of cleanup
    assert json.loads(capsys.readouterr().out)["status"] == 504


@pytest.mark.parametrize(
    "argv", [["call"], ["call", "add", "--timeout", "0"], ["call", "add", "--timeout", "x"]]
)
def test_bad_usage_exits_2(pack: Pack, argv: list[str], capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exc:
        run_cli(argv, hub=pack.hub)
    assert exc.value.code == 2
    assert "usage" in capsys.readouterr().err
