"""``toolpalette new``: each generated project installs and passes its tests as printed.

A fresh virtual environment gets this checkout's core (a user has it from PyPI), then
each project is written by that environment's ``toolpalette new`` and the ``Next:``
line the command printed runs there as it is, through the shell: it installs the
project with its ``test`` extra and runs its own tests, the entry point smoke test and
the pack's ``async def`` test included. The skilljar goes first, so its line alone must
bring pytest; the pack's must bring the async test support.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.dists

CORE = Path(__file__).resolve().parents[2] / "core"
BIN = "Scripts" if sys.platform == "win32" else "bin"


def _run(
    *argv: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scaffold")
    made = _run(sys.executable, "-m", "venv", root / "venv", cwd=root)
    assert made.returncode == 0, made.stderr
    python = root / "venv" / BIN / "python"
    installed = _run(python, "-m", "pip", "install", "-q", CORE, cwd=root)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return root / "venv"


def _activated(venv: Path) -> dict[str, str]:
    """The environment of a shell where ``venv`` is activated."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = os.pathsep.join([str(venv / BIN), env.get("PATH", "")])
    return env


def _new_and_next(venv: Path, *argv: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Write a project with ``toolpalette new ARGV``, then run the line it printed."""
    where = venv.parent
    written = _run(venv / BIN / "toolpalette", "new", *argv, cwd=where, env=_activated(venv))
    assert written.returncode == 0, written.stderr
    line = written.stdout.splitlines()[-1]
    assert line.startswith("Next: cd "), written.stdout
    command = line.removeprefix("Next: ")
    ran = subprocess.run(
        command,
        shell=True,
        cwd=where,
        env=_activated(venv),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    project = where / command.removeprefix("cd ").split(" && ")[0]
    return project, ran


@pytest.fixture(scope="module")
def jar(venv: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    return _new_and_next(venv, "skilljar", "io.example.ops")


@pytest.fixture(scope="module")
def pack(
    venv: Path, jar: tuple[Path, subprocess.CompletedProcess[str]]
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    # After the jar: the jar's line must have installed pytest on its own.
    return _new_and_next(venv, "pack", "weather")


def _summary(ran: subprocess.CompletedProcess[str]) -> str:
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-4000:]
    return ran.stdout.strip().splitlines()[-1]


def test_the_skilljar_passes_its_own_tests_as_printed(
    jar: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    summary = _summary(jar[1])
    assert re.match(r"=* ?2 passed in ", summary), summary


def test_the_pack_passes_its_own_tests_as_printed_async_included(
    pack: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    summary = _summary(pack[1])
    # 6: greet, validation, the async pipeline test, the contract (one tool), the cheap
    # hooks module, and discovery through the entry point; none skipped.
    assert re.match(r"=* ?6 passed in ", summary), summary


def test_the_installed_pack_answers_from_the_command_line(
    venv: Path, pack: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    project, _ = pack
    toolpalette = venv / BIN / "toolpalette"
    called = _run(toolpalette, "call", "greet", "--input", '{"name": "Ada"}', cwd=project)
    assert (called.returncode, called.stdout) == (0, "Hello, Ada.\n"), called.stderr
    checked = _run(toolpalette, "check", cwd=project)
    assert checked.returncode == 0, checked.stdout
    assert re.search(
        r"\b1 pack\(s\) loaded, \d+ tool\(s\) available, 1 skilljar\(s\)", checked.stdout
    )


def test_a_tool_added_to_the_pack_is_tested_without_touching_the_tests(
    venv: Path, pack: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    project, _ = pack
    tools = project / "src" / "toolpalette_weather" / "tools.py"
    text = tools.read_text(encoding="utf-8")
    tools.write_text(
        text.replace("TOOLS = [greet]", "") + "\n\n@toolpalette.tool(read_only=True)\n"
        "def shout(text: str) -> str:\n"
        '    """Say a text loudly.\n\n    Args:\n        text: What to say.\n    """\n'
        "    return text.upper()\n\n\n"
        "TOOLS = [greet, shout]\n",
        encoding="utf-8",
    )
    ran = _run(venv / BIN / "python", "-m", "pytest", cwd=project, env=_activated(venv))
    summary = _summary(ran)
    assert re.match(r"=* ?7 passed in ", summary), summary  # the contract runs once more
