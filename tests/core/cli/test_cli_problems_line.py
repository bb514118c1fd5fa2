"""``list``, ``call``, ``show`` and ``serve`` say when the configuration or a server has problems.

One line on stderr counts them and points at ``toolpalette check``; a tool that no one
provides is answered with a close name and every configured server that cannot be used.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from toolpalette import ToolHub, tool
from toolpalette.testing import plugin_of, run_cli

TYPO = '[mcp_servers.time]\ncomand = "mcp-server-time"\n'
"""A server table whose ``command`` is misspelt: it configures nothing."""
LINE = "1 problem(s) found; run `toolpalette check`."
CLI = "import sys; from toolpalette._cli import main; sys.exit(main())"


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a file."""
    return path


def _hub(tmp_path: Path, text: str) -> ToolHub:
    config = tmp_path / "toolpalette.toml"
    config.write_text(text)
    hub = ToolHub(autoload=False, config=config)
    hub.add_plugin(plugin_of(read_file), name="files")
    return hub


def _lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


@pytest.mark.parametrize("argv", [["list"], ["show", "read_file"]], ids=" ".join)
def test_a_command_that_works_names_the_count_of_problems(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _hub(tmp_path, TYPO) as hub:
        assert run_cli(argv, hub=hub) == 0
    out, err = capsys.readouterr()
    assert "read_file" in out
    assert _lines(err) == [LINE]


def test_a_call_that_works_names_the_count_of_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _hub(tmp_path, TYPO) as hub:
        assert run_cli(["call", "read_file", "--input", '{"path": "a"}'], hub=hub) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "a"
    assert _lines(err) == [LINE]


def test_no_line_when_nothing_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _hub(tmp_path, "") as hub:
        assert run_cli(["list"], hub=hub) == 0
        assert run_cli(["call", "read_file", "--input", '{"path": "a"}'], hub=hub) == 0
    assert "problem" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["call", "show"])
def test_an_unknown_tool_names_the_broken_server_and_its_problem(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _hub(tmp_path, TYPO) as hub:
        assert run_cli([command, "get_current_time"], hub=hub) == 1
    err = capsys.readouterr().err
    (note,) = [line for line in err.splitlines() if line.startswith("note:")]
    assert note.startswith("note: MCP server 'time' may provide 'get_current_time', but ")
    assert "[mcp_servers.time]" in note
    assert "'comand' (did you mean 'command'?)" in note
    assert _lines(err)[-1] == LINE


@pytest.mark.parametrize("command", ["call", "show"])
def test_an_unknown_tool_gets_a_did_you_mean(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _hub(tmp_path, "") as hub:
        assert run_cli([command, "read_fil"], hub=hub) == 1
    err = capsys.readouterr().err
    assert "note: no tool is named 'read_fil' (did you mean 'read_file'?)" in err.splitlines()
    assert "problem(s) found" not in err


def test_the_model_facing_text_of_the_404_is_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _hub(tmp_path, TYPO) as hub:
        assert run_cli(["call", "read_fil", "--json"], hub=hub) == 1
    out = capsys.readouterr().out
    assert "did you mean" not in out
    assert "time" not in out


def test_list_from_installed_packs_counts_the_configurations_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "toolpalette.toml").write_text("bogus = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):  # built, then read from the listing cache: the same line
        assert run_cli(["list"]) == 0
        assert _lines(capsys.readouterr().err)[-1] == LINE


def test_list_from_installed_packs_counts_a_misspelt_server_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "toolpalette.toml").write_text(TYPO)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):
        assert run_cli(["list"]) == 0
        assert _lines(capsys.readouterr().err) == [LINE]


@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="serve needs the mcp extra")
def test_serve_names_the_count_of_problems_at_start(tmp_path: Path) -> None:
    pytest.importorskip("toolpalette_files", reason="serves the files pack")
    (tmp_path / "toolpalette.toml").write_text(TYPO)
    done = subprocess.run(
        [sys.executable, "-c", CLI, "serve", "--select", "toolpalette_files"],
        cwd=tmp_path,
        env={**os.environ, "TOOLPALETTE_CACHE_DIR": str(tmp_path / "cache")},
        stdin=subprocess.DEVNULL,  # the client is gone at once: serve starts, then ends
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert LINE in done.stderr.splitlines()
    assert done.stdout == ""


def test_an_unknown_tool_names_a_server_that_does_not_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mcp", reason="starting a server needs the mcp extra")
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    config = '[mcp_servers.time]\ncommand = "no-such-command-for-toolpalette"\n'
    with _hub(tmp_path, config) as hub:
        assert run_cli(["call", "get_current_time"], hub=hub) == 1
    err = capsys.readouterr().err
    (note,) = [line for line in err.splitlines() if line.startswith("note:")]
    assert note.startswith("note: MCP server 'time' may provide 'get_current_time', but ")
    assert "the command was not found" in note
    assert _lines(err)[-1] == LINE
