"""The command line and the host's configuration: a broken file, and keys nothing reads."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from toolpalette import ToolHub
from toolpalette.testing import run_cli

BROKEN = '[prefix]\nfiles = "f_"\nsqlite = db_\n'
"""Not TOML: a bare word as a value, on line 3 at column 10."""


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["list", "--json"],
        ["show", "read_file"],
        ["plugins"],
        ["check", "--json"],
        ["skills"],
        ["call", "read_file", "--input", "{}"],
        pytest.param(
            ["serve"],
            # Without the mcp extra, serve says to install it before reading anything.
            marks=pytest.mark.skipif(
                importlib.util.find_spec("mcp") is None, reason="needs the mcp extra"
            ),
        ),
    ],
    ids=lambda argv: " ".join(argv),
)
def test_invalid_toml_is_one_line_with_the_place_and_status_2(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    (tmp_path / "toolpalette.toml").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    assert run_cli(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("error: toolpalette.toml, line 3, column 10: not valid TOML: ")


def test_an_explicit_config_file_is_named_as_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = tmp_path / "host.toml"
    path.write_text(BROKEN)
    assert run_cli(["check", "--config", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path}, line 3, column 10: not valid TOML")


def test_a_misspelt_top_level_key_fails_check_with_a_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    config = tmp_path / "toolpalette.toml"
    config.write_text('[mcp_server.time]\ncommand = "mcp-server-time"\n')
    with ToolHub(autoload=False, config=config) as hub:
        assert run_cli(["check", "--json"], hub=hub) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    (problem,) = report["problems"]
    assert (problem["kind"], problem["pack"], problem["item"]) == (
        "config",
        "toolpalette.toml",
        "mcp_server",
    )
    assert problem["reason"] == (
        f"{config}: the key 'mcp_server' is not a toolpalette setting and is ignored "
        "(did you mean 'mcp_servers'?)"
    )
