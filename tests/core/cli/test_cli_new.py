"""``toolpalette new``: the generated projects' own tests pass before installation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from toolpalette.testing import run_cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_new_pack_writes_a_ready_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "weather"
    assert run_cli(["new", "pack", "web-search", "--dir", str(root)]) == 0
    assert "Next: cd" in capsys.readouterr().out
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert written == [
        "README.md",
        "pyproject.toml",
        "src/toolpalette_web_search/__init__.py",
        "src/toolpalette_web_search/hooks.py",
        "src/toolpalette_web_search/tools.py",
        "tests/test_tools.py",
    ]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "toolpalette-web-search"
    assert project["entry-points"]["toolpalette.plugins"] == {
        "web_search": "toolpalette_web_search.hooks"
    }
    assert project["dependencies"] == ["toolpalette>=0.1,<1"]
    result = _pytest(root, "-k", "not discoverable")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed, 1 deselected" in result.stdout


def test_new_skilljar_writes_a_ready_project(tmp_path: Path) -> None:
    root = tmp_path / "jar"
    assert run_cli(["new", "skilljar", "io.example.ops", "--dir", str(root)]) == 0
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "toolpalette-skilljar-ops"
    assert project["entry-points"]["toolpalette.skilljars"] == {
        "io.example.ops": "toolpalette_skilljar_ops"
    }
    assert (root / "src/toolpalette_skilljar_ops/getting-started/SKILL.md").is_file()
    result = _pytest(root, "-k", "not discoverable")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 1 deselected" in result.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["new", "pack", "Web Search"], "is not a pack name"),
        (["new", "pack", "-x"], "usage"),
        (["new", "skilljar", "ops"], "is not a bundle id"),
        (["new", "skilljar", "IO.Example"], "is not a bundle id"),
    ],
)
def test_bad_names_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) if message == "usage" else _no_exit():
        assert run_cli([*argv, "--dir", str(tmp_path / "x")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_folder_in_the_way_is_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "README.md").write_text("mine")
    assert run_cli(["new", "pack", "weather", "--dir", str(tmp_path)]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert (tmp_path / "README.md").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]


class _no_exit:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
