"""Where MCP servers come from: the host's file, a desktop client's JSON, code, packs."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolpalette import ToolHub, hookimpl, tool
from toolpalette.mcp import MCPServerConfig
from toolpalette.testing import plugin_of, run_cli

from .conftest import NOTES_SERVER, SLOW_SERVER


def write_config(folder: Path, desktop: dict[str, Any]) -> Path:
    (folder / "desktop.json").write_text(json.dumps(desktop))
    config = folder / "toolpalette.toml"
    config.write_text(
        f"""
mcp_json = "desktop.json"

[mcp_servers.slow]
command = [{json.dumps(sys.executable)}, {json.dumps(str(SLOW_SERVER))}]
trusted = true
prefix = "slow_"
timeout = 12

[mcp_servers.off]
command = "never-started"
disabled = true
"""
    )
    return config


def test_servers_from_the_file_and_a_desktop_json(make_hub: Callable[..., ToolHub], tmp_path: Path):
    desktop = {
        "mcpServers": {
            "git": {"command": "mcp-server-git", "args": ["--repository", "."], "env": {"A": "1"}},
            "remote": {"type": "http", "url": "https://mcp.example.com/mcp"},
            "legacy": {"type": "sse", "url": "https://old.example.com/sse"},
        }
    }
    hub = make_hub(config=write_config(tmp_path, desktop))
    assert hub.mcp_server_names() == ["git", "remote", "slow"]
    slow = hub.mcp().config("slow")
    assert slow is not None
    assert (slow.command, slow.args) == (sys.executable, (str(SLOW_SERVER),))
    assert (slow.trusted, slow.prefix, slow.timeout) == (True, "slow_", 12)
    git = hub.mcp().config("git")
    assert git is not None
    assert (git.command, git.args, dict(git.env)) == (
        "mcp-server-git",
        ("--repository", "."),
        {"A": "1"},
    )
    remote = hub.mcp().config("remote")
    assert remote is not None
    assert remote.transport == "http"
    (problem,) = hub.problems()
    assert problem.kind == "server"
    assert "'sse' is not supported" in problem.reason


def test_code_wins_over_the_file_name_by_name(make_hub: Callable[..., ToolHub], tmp_path: Path):
    config = write_config(tmp_path, {"mcpServers": {}})
    hub = make_hub(config=config, mcp_servers={"slow": {"url": "http://127.0.0.1:9/mcp"}})
    slow = hub.mcp().config("slow")
    assert slow is not None
    assert slow.url == "http://127.0.0.1:9/mcp"


def test_a_desktop_block_and_a_json_path_in_code(make_hub: Callable[..., ToolHub], tmp_path: Path):
    block = {"mcpServers": {"a": {"command": "a-server"}}}
    assert make_hub(mcp_servers=block).mcp_server_names() == ["a"]
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps(block))
    assert make_hub(mcp_servers=str(path)).mcp_server_names() == ["a"]
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    hub = make_hub(mcp_servers=broken)
    assert hub.mcp_server_names() == []
    assert "not valid JSON" in hub.problems()[0].reason


@pytest.mark.parametrize(
    ("table", "why"),
    [
        ({"command": "x", "url": "http://h/mcp"}, "exactly one of"),
        ({}, "exactly one of"),
        ({"url": "ftp://h"}, "http(s) URL"),
        ({"command": "x", "env": {"A": 1}}, "'env' must map strings"),
        ({"command": "x", "timeout": 0}, "positive number"),
        ({"command": "x", "trusted": "yes"}, "true or false"),
        ({"command": "x", "prefix": "bad prefix"}, "prefix"),
        ({"command": "x", "rename": {"a": "not valid!"}}, "not a valid tool name"),
        ({"command": "x", "colour": "blue"}, "unknown keys 'colour'"),
        ({"command": "x", "max_message": 10}, "'max_message' must be a number of bytes"),
        ({"url": "http://h/mcp", "max_stream": "big"}, "'max_stream' must be a number of bytes"),
        ({"url": "http://h/mcp", "stream_idle": -1}, "'stream_idle' must be a positive number"),
    ],
)
def test_a_bad_table_is_a_problem_and_the_others_stay(
    make_hub: Callable[..., ToolHub], table: dict[str, Any], why: str
):
    hub = make_hub(mcp_servers={"bad": table, "good": {"command": "good-server"}})
    assert hub.mcp_server_names() == ["good"]
    (problem,) = hub.problems()
    assert problem.kind == "server"
    assert why in problem.reason


def test_an_unset_variable_keeps_the_server_from_starting(make_hub: Callable[..., ToolHub]):
    table = {
        "command": sys.executable,
        "args": [str(SLOW_SERVER)],
        "env": {"K": "${NO_SUCH_VAR_X}"},
    }
    hub = make_hub(mcp_servers={"slow": table})
    assert hub.providers_for_server("slow") == []
    (problem,) = hub.problems()
    assert (problem.kind, problem.pack) == ("server", "mcp:slow")
    assert "${NO_SUCH_VAR_X}, which is not set" in problem.reason
    assert hub.mcp().connection("slow").starts == 1


def test_the_environment_rule_in_code() -> None:
    config = MCPServerConfig("s", command="x", env={"TOKEN": "${T}", "MODE": "fast"})
    host = {"PATH": "/bin", "HOME": "/home/h", "T": "secret", "AWS_SECRET_ACCESS_KEY": "no"}
    assert config.process_env(host) == {
        "PATH": "/bin",
        "HOME": "/home/h",
        "TOKEN": "secret",
        "MODE": "fast",
    }
    headers = MCPServerConfig("h", url="https://x/mcp", headers={"Authorization": "Bearer ${T}"})
    assert headers.http_headers(host) == {"Authorization": "Bearer secret"}
    assert "secret" not in headers.describe()


def test_a_packs_server_adjusted_by_the_host(make_hub: Callable[..., ToolHub]):
    class Bridge:
        @hookimpl
        def toolpalette_register_mcp_servers(self) -> list[dict[str, Any]]:
            return [{"name": "slow", "command": [sys.executable, str(SLOW_SERVER)]}]

    hub = make_hub(config={"mcp_servers": {"slow": {"trusted": True, "prefix": "p_"}}})
    hub.add_plugin(Bridge(), name="bridge")
    assert "p_wait" in hub.catalog().tool_names()
    slow = hub.mcp().config("slow")
    assert slow is not None
    assert (slow.trusted, slow.prefix, slow.pack, slow.source) == (
        True,
        "p_",
        "bridge",
        "pack bridge",
    )
    (provider,) = hub.providers_for_server("slow")
    assert provider.origin is not None
    assert (provider.origin.server, provider.origin.pack) == ("slow", "bridge")


# -- nothing in the host's file is ignored silently ----------------------------------


def notes_desktop(folder: Path, toml: str) -> Path:
    """A desktop JSON file defining the ``notes`` server, and a toolpalette.toml using it."""
    notes = {"command": sys.executable, "args": [str(NOTES_SERVER)]}
    (folder / "desktop.json").write_text(json.dumps({"mcpServers": {"notes": notes}}))
    config = folder / "toolpalette.toml"
    config.write_text('mcp_json = "desktop.json"\n' + toml)
    return config


def test_the_hosts_keys_merge_over_a_json_server(make_hub: Callable[..., ToolHub], tmp_path: Path):
    plain = make_hub(config=notes_desktop(tmp_path, ""))
    (untrusted,) = plain.providers_for_server("notes")
    assert (untrusted.name, untrusted.info.read_only) == ("look", False)

    adjusted = notes_desktop(tmp_path, '[mcp_servers.notes]\ntrusted = true\nprefix = "n_"\n')
    hub = make_hub(config=adjusted)
    notes = hub.mcp().config("notes")
    assert notes is not None
    assert (notes.command, notes.args) == (sys.executable, (str(NOTES_SERVER),))
    assert (notes.trusted, notes.prefix) == (True, "n_")
    assert notes.source == "desktop.json, adjusted in toolpalette.toml"
    (provider,) = hub.providers_for_server("notes")
    assert (provider.name, provider.info.read_only) == ("n_look", True)
    assert hub.problems() == []


def test_a_host_table_with_a_command_replaces_the_json_entry(
    make_hub: Callable[..., ToolHub], tmp_path: Path
):
    config = notes_desktop(tmp_path, '[mcp_servers.notes]\ncommand = "other-notes"\n')
    notes = make_hub(config=config).mcp().config("notes")
    assert notes is not None
    assert (notes.command, notes.args, notes.source) == ("other-notes", (), "toolpalette.toml")


def test_a_table_that_adjusts_no_server_is_a_problem_check_reports(
    make_hub: Callable[..., ToolHub], tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    config = notes_desktop(
        tmp_path,
        "[mcp_servers.ghost]\ntrusted = true\n"
        '[mcp_servers.typo]\ncomand = "notes-server"\n'
        '[mcp_servers.note]\nprefix = "n_"\n',
    )
    hub = make_hub(config=config)
    assert run_cli(["check", "--json"], hub=hub) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    problems = {p["pack"]: p for p in report["problems"]}
    assert set(problems) == {"mcp:ghost", "mcp:typo", "mcp:note"}
    assert all(p["kind"] == "server" and p["fatal"] for p in problems.values())
    ghost, typo, note = (problems[f"mcp:{name}"]["reason"] for name in ("ghost", "typo", "note"))
    assert ghost.startswith("[mcp_servers.ghost] in toolpalette.toml has neither 'command' nor")
    assert "unknown keys 'comand' (did you mean 'command'?)" in typo
    assert "no pack or JSON file defines a server named 'note' (did you mean 'notes'?)" in note


def test_a_misspelt_key_of_a_pack_servers_table_suggests_the_right_one(
    make_hub: Callable[..., ToolHub],
):
    class Bridge:
        @hookimpl
        def toolpalette_register_mcp_servers(self) -> list[dict[str, Any]]:
            return [{"name": "slow", "command": [sys.executable, str(SLOW_SERVER)]}]

    hub = make_hub(config={"mcp_servers": {"slow": {"trustd": True}}})
    hub.add_plugin(Bridge(), name="bridge")
    hub.catalog()
    (problem,) = hub.problems()
    assert (problem.kind, problem.pack) == ("server", "mcp:slow")
    assert "unknown keys 'trustd' (did you mean 'trusted'?)" in problem.reason


@tool(read_only=True)
def look(text: str) -> str:
    """Look at a text, locally."""
    return text


def test_a_collision_names_each_servers_source_and_its_own_prefix(
    make_hub: Callable[..., ToolHub], tmp_path: Path
):
    twin = f"[mcp_servers.twin]\ncommand = {json.dumps(sys.executable)}\n"
    twin += f"args = [{json.dumps(str(NOTES_SERVER))}]\n"
    hub = make_hub(config=notes_desktop(tmp_path, twin))
    hub.add_plugin(plugin_of(look), name="local")
    assert "look" not in hub.catalog().tool_names()
    (problem,) = hub.problems()
    assert problem.kind == "collision"
    assert problem.distribution == "(added in code), from desktop.json, from toolpalette.toml"
    assert "MCP tool 'look' of MCP server 'notes' (from desktop.json)" in problem.reason
    assert "MCP tool 'look' of MCP server 'twin' (from toolpalette.toml)" in problem.reason
    assert (
        "give MCP server 'notes' its own prefix or rename: set [mcp_servers.notes] "
        'prefix = "notes_" (or rename = {look = "NEW_NAME"}) in toolpalette.toml (merged over '
        "the JSON file's entry)"
    ) in problem.reason
    assert 'set [mcp_servers.twin] prefix = "twin_"' in problem.reason


def test_the_bounds_on_what_a_server_sends_are_read_from_its_table(
    make_hub: Callable[..., ToolHub],
):
    table = {"url": "http://127.0.0.1:9/mcp", "max_message": 2048, "stream_idle": 5}
    hub = make_hub(mcp_servers={"remote": table})
    assert hub.problems() == []
    found = hub.mcp().config("remote")
    assert found is not None
    assert (found.max_message, found.max_stream, found.stream_idle) == (2048, 64 << 20, 5)
