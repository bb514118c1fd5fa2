"""The workspace root comes from the host's configuration, then the environment."""

from __future__ import annotations

import pytest
from toolpalette import ToolContext, ToolError
from toolpalette_files import tools


@pytest.fixture(autouse=True)
def _no_env_root(monkeypatch):
    monkeypatch.delenv("TOOLPALETTE_FILES_ROOT", raising=False)


def test_root_from_the_pack_configuration(workspace, call):
    (workspace / "a.txt").write_text("hello")
    result = call(tools.read_file, path="a.txt")
    assert result.content == "hello"


def test_root_from_the_environment(workspace, call, monkeypatch):
    (workspace / "a.txt").write_text("from env")
    monkeypatch.setenv("TOOLPALETTE_FILES_ROOT", str(workspace))
    result = call(tools.read_file, ToolContext(), path="a.txt")
    assert result.content == "from env"


def test_configuration_wins_over_the_environment(workspace, tmp_path, call, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.txt").write_text("other")
    (workspace / "a.txt").write_text("configured")
    monkeypatch.setenv("TOOLPALETTE_FILES_ROOT", str(other))
    assert call(tools.read_file, path="a.txt").content == "configured"


def test_unconfigured_is_refused_with_instructions(call, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("cwd must not be guessed")
    with pytest.raises(ToolError) as info:
        call(tools.read_file, ToolContext(), path="a.txt")
    assert info.value.code == "not_configured"
    assert info.value.status == 503
    assert "[tool.toolpalette.packs.files]" in info.value.user_message
    assert "TOOLPALETTE_FILES_ROOT" in info.value.user_message


def test_missing_root_is_refused(tmp_path, call):
    context = ToolContext(config={"root": str(tmp_path / "nope")})
    with pytest.raises(ToolError) as info:
        call(tools.list_directory, context)
    assert info.value.code == "not_configured"
    assert str(tmp_path) not in info.value.user_message
