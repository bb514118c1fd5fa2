"""``toolpalette new``: each generated project builds, installs into a fresh venv, and passes.

The venv gets this checkout's core and the generated project, built from their
sources by pip (the generated ``pyproject.toml`` is the one a user would publish),
then the project's own tests run there, its entry point smoke test included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from toolpalette.testing import run_cli

pytestmark = pytest.mark.dists

CORE = Path(__file__).resolve().parents[2] / "core"


def _run(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("scaffold")
    pack, jar = root / "pack", root / "jar"
    assert run_cli(["new", "pack", "weather", "--dir", str(pack)]) == 0
    assert run_cli(["new", "skilljar", "io.example.ops", "--dir", str(jar)]) == 0
    venv = root / "venv"
    made = _run(sys.executable, "-m", "venv", venv, cwd=root)
    assert made.returncode == 0, made.stderr
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    installed = _run(python, "-m", "pip", "install", "-q", CORE, pack, jar, "pytest", cwd=root)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return python, pack, jar


@pytest.mark.parametrize(("which", "passed"), [("pack", 5), ("jar", 2)])
def test_the_installed_project_passes_its_own_tests(
    projects: tuple[Path, Path, Path], which: str, passed: int
) -> None:
    python, pack, jar = projects
    project = pack if which == "pack" else jar
    result = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{passed} passed" in result.stdout


def test_the_installed_pack_answers_from_the_command_line(
    projects: tuple[Path, Path, Path],
) -> None:
    python, pack, _ = projects
    toolpalette = python.with_name("toolpalette.exe" if sys.platform == "win32" else "toolpalette")
    called = _run(toolpalette, "call", "greet", "--input", '{"name": "Ada"}', cwd=pack)
    assert (called.returncode, called.stdout) == (0, "Hello, Ada.\n"), called.stderr
    checked = _run(toolpalette, "check", cwd=pack)
    assert checked.returncode == 0, checked.stdout
    assert "1 pack(s) loaded, 1 tool(s) available, 1 skilljar(s) loaded" in checked.stdout
