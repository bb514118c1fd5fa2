"""``toolpalette new``: the generated projects' own tests pass before installation.

After installation, exactly as the command prints it, in tests/integration/test_scaffold_dists.py.
"""

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
    return _python(project, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args)


def _python(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    return subprocess.run(
        [sys.executable, *args],
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
    assert "5 passed, 1 deselected" in result.stdout


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
    # pytest-asyncio is installed here (the core's tests use it): its warning about an
    # unset option would show in the scaffold's run; the scaffold does not load it.
    assert "Warning" not in result.stdout + result.stderr
    assert "warnings summary" not in result.stdout


@pytest.mark.parametrize("kind", ["pack", "skilljar"])
def test_the_printed_commands_are_the_readmes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    root = tmp_path / "project"
    name = "weather" if kind == "pack" else "io.example.ops"
    assert run_cli(["new", kind, name, "--dir", str(root)]) == 0
    printed = capsys.readouterr().out.splitlines()[-1]
    assert printed.startswith(f"Next: cd {root} && ")
    commands = printed.removeprefix(f"Next: cd {root} && ").split(" && ")
    assert commands == ['pip install -e ".[test]"', "python -m pytest"]
    readme = (root / "README.md").read_text(encoding="utf-8").splitlines()
    for command in commands:
        assert any(line.split("  #")[0].strip() == command for line in readme), command
    extras = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(r.startswith("pytest>=") for r in extras["optional-dependencies"]["test"])


def test_the_packs_async_tests_run_as_the_guide_writes_them(tmp_path: Path) -> None:
    # The plugin author guide's tests are plain `async def` functions, no marker.
    root = tmp_path / "weather"
    assert run_cli(["new", "pack", "weather", "--dir", str(root)]) == 0
    (root / "tests" / "test_guide_style.py").write_text(
        "import toolpalette\n"
        "from toolpalette.testing import make_registry\n"
        "from toolpalette_weather.tools import greet\n\n\n"
        "async def test_through_the_pipeline() -> None:\n"
        "    registry = make_registry(greet)\n"
        '    ok = await toolpalette.execute(registry, "greet", \'{"name": "Ada"}\')\n'
        '    assert (ok.is_error, ok.text) == (False, "Hello, Ada.")\n',
        encoding="utf-8",
    )
    result = _pytest(root, "tests/test_guide_style.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_the_packs_hooks_module_imports_no_tool(tmp_path: Path) -> None:
    root = tmp_path / "weather"
    assert run_cli(["new", "pack", "weather", "--dir", str(root)]) == 0
    code = "import sys, toolpalette_weather.hooks; print(sorted(sys.modules))"
    listed = _python(root, "-c", code)
    assert listed.returncode == 0, listed.stderr
    assert "toolpalette_weather.hooks" in listed.stdout
    assert "toolpalette_weather.tools" not in listed.stdout


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
