"""``serve --tool-search`` and ``--defer`` (and ``[serve]``): a deferred catalog, no Thinker module.

The SDK's client, on both protocol eras, over stdio and over HTTP with two workers.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from toolpalette.testing import wait_until

pytest.importorskip("toolpalette_files", reason="serves the files pack")
pytest.importorskip("toolpalette_sqlite", reason="defers the sqlite pack")

CLI = "import sys; from toolpalette._cli import main; sys.exit(main())"
SQLITE = {"query", "execute", "list_tables", "describe_table"}
SELECT = ["--select", "toolpalette-files", "toolpalette-sqlite"]


def serve(*args: str) -> list[str]:
    return [sys.executable, "-c", CLI, "serve", *args]


def stdio(*args: str, cwd: Path | None = None) -> StdioServerParameters:
    command = serve(*args)
    return StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ), cwd=cwd
    )


def _names_in(schema: Any) -> list[str]:
    """Every name a schema allows by ``enum`` or ``const``, wherever it is nested."""
    if isinstance(schema, list):
        return [name for each in schema for name in _names_in(each)]
    if not isinstance(schema, dict):
        return []
    found = [*schema.get("enum", []), *([schema["const"]] if "const" in schema else [])]
    return found + [
        n for k, v in schema.items() if k not in ("enum", "const") for n in _names_in(v)
    ]


async def names_of(client: Client) -> list[str]:
    names: list[str] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        names.extend(t.name for t in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return names


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_deferred_packs_are_searched_and_called_by_name(mode: str) -> None:
    params = stdio(*SELECT, "--defer", "toolpalette-sqlite", "--tool-search", "search")
    async with Client(params, mode=mode) as client:
        names = await names_of(client)
        found = await client.call_tool("search_tools", {"query": "list the tables of the database"})
    assert "read_file" in names
    assert "search_tools" in names
    assert "request_tools" not in names
    assert not SQLITE & set(names)
    assert found.structured_content is not None
    assert "list_tables" in [t["name"] for t in found.structured_content["tools"]]


async def test_enum_offers_request_tools_with_the_deferred_names() -> None:
    params = stdio(*SELECT, "--defer", "toolpalette_sqlite", "--tool-search", "enum")
    async with Client(params) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert "search_tools" not in tools
    items = tools["request_tools"].input_schema["properties"]["names"]["items"]
    assert set(_names_in(items)) == SQLITE
    assert not SQLITE & set(tools)


async def test_the_serve_table_says_the_same(tmp_path: Path) -> None:
    (tmp_path / "toolpalette.toml").write_text(
        '[serve]\ntool_search = "search"\ndefer = ["toolpalette-sqlite"]\n'
    )
    async with Client(stdio(*SELECT, cwd=tmp_path)) as client:
        names = await names_of(client)
    assert "search_tools" in names
    assert not SQLITE & set(names)


async def test_defer_without_select_defers_from_everything_installed() -> None:
    async with Client(stdio("--defer", "toolpalette-sqlite")) as client:
        names = await names_of(client)
    assert "read_file" in names
    assert not SQLITE & set(names)
    assert {"search_tools", "request_tools"} & set(names)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _accepting(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    sqlite3.connect(tmp_path / "data.db").close()  # an empty database
    env = {**os.environ, "TOOLPALETTE_SQLITE_DATABASE": str(tmp_path / "data.db")}
    args = [*SELECT, "--defer", "toolpalette-sqlite", "--tool-search", "search"]
    process = subprocess.Popen(
        serve(*args, "--http", "--port", str(port), "--workers", "2"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_until(lambda: _accepting(port) or process.poll() is not None, timeout=60)
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
        if process.stderr is not None:
            process.stderr.close()
        wait_until(lambda: not _accepting(port), timeout=15, message="the port is released")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_http_workers_serve_the_deferred_palette(two_workers: str, mode: str) -> None:
    for _ in range(2):  # fresh connections: either worker may answer
        async with Client(two_workers, mode=mode) as client:
            names = await names_of(client)
            called = await client.call_tool("list_tables", {})
        assert "search_tools" in names
        assert not SQLITE & set(names)
        assert not called.is_error, called.content


@pytest.mark.parametrize(
    ("args", "config", "expected"),
    [
        (
            ["--thinker", "toolpalette:Thinker", "--defer", "toolpalette-sqlite"],
            "",
            "with --thinker, set tool_search and deferred=True on the class",
        ),
        (["--defer", "no-such-pack"], "", "--defer no-such-pack: no installed distribution"),
        (["--select", "toolpalette-files"], '[serve]\ntool_search = "native"\n', "tool_search"),
        (["--select", "toolpalette-files"], '[serve]\ndefer = "x"\n', "defer must be a list"),
    ],
)
def test_serve_refuses_a_palette_option_it_cannot_use(
    tmp_path: Path, args: list[str], config: str, expected: str
) -> None:
    (tmp_path / "toolpalette.toml").write_text(config)
    done = subprocess.run(
        serve(*args), cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    assert done.stdout == ""
