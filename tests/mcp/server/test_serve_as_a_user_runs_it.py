"""``toolpalette serve`` as a user runs it: the installed command, from the user's folder.

The ``toolpalette`` console script (not ``python -c``, which puts the current directory
on ``sys.path`` by itself) serves a thinker from the current directory, a skilljar's
skills, and the README's desktop configuration; without the ``mcp`` extra it says what
to install.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[3]
COMMAND = Path(sys.executable).parent / "toolpalette"
"""The console script pip installed beside this interpreter, as a desktop client runs it."""


def toolpalette(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMMAND), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def stdio(*args: str, cwd: Path, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(COMMAND), args=list(args), cwd=str(cwd), env=env or dict(os.environ)
    )


# -- without the mcp extra ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("blocked", "args"),
    [
        ("anyio", ["serve"]),
        ("mcp", ["serve", "--select", "toolpalette-files"]),
        ("uvicorn", ["serve", "--http", "--port", "0"]),
    ],
)
def test_without_the_mcp_extra_serve_says_what_to_install(
    blocked: str, args: list[str], tmp_path: Path
):
    # An entry of None in sys.modules is how Python says a module cannot be imported.
    code = (
        f"import sys; sys.modules[{blocked!r}] = None; "
        "from toolpalette._cli import main; sys.exit(main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line == (
        f"error: toolpalette serve needs the mcp extra (No module named {blocked!r}); install "
        f"it into this environment: {sys.executable} -m pip install 'toolpalette[mcp]'"
    )


# -- --thinker from the current directory --------------------------------------------------


def write_host(folder: Path) -> None:
    package = folder / "myhost"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "agents.py").write_text(
        "import toolpalette\n\n\n"
        "class Analyst(toolpalette.Thinker):\n"
        "    read_only = True\n\n"
        "    @classmethod\n"
        "    def declare_compatible_tools(cls) -> toolpalette.ToolSelector:\n"
        '        return toolpalette.ToolSelector().distribution("toolpalette-files")\n\n\n'
        "def helper() -> None:\n"
        '    """Not a thinker."""\n'
    )
    (package / "broken.py").write_text("import toolpalette_no_such_dependency\n")
    (package / "raising.py").write_text("raise RuntimeError('the host module failed')\n")


async def test_a_thinker_is_imported_from_the_current_directory(tmp_path: Path):
    write_host(tmp_path)
    params = stdio("serve", "--thinker", "myhost.agents:Analyst", cwd=tmp_path)
    async with Client(params, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert "read_file" in tools
    assert "edit_file" not in tools  # bound read-only, as the class says


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "nohost.agents:Analyst",
            "error: --thinker nohost.agents:Analyst: no module named 'nohost', neither in "
            "the current directory ({here}) nor among the installed packages",
        ),
        (
            "myhost.missing:Analyst",
            "error: --thinker myhost.missing:Analyst: no module named 'myhost.missing', "
            "neither in the current directory ({here})",
        ),
        (
            "myhost.broken:Analyst",
            "error: --thinker myhost.broken:Analyst: importing 'myhost.broken' failed: it "
            "imports 'toolpalette_no_such_dependency', which is not installed",
        ),
        (
            "myhost.raising:Analyst",
            "error: --thinker myhost.raising:Analyst: importing 'myhost.raising' raised "
            "RuntimeError: the host module failed",
        ),
        (
            "myhost.agents:Analist",
            "error: --thinker myhost.agents:Analist: 'myhost.agents' has no attribute "
            "'Analist' (its Thinker subclasses: Analyst)",
        ),
        (
            "myhost.agents:helper",
            "error: --thinker myhost.agents:helper: 'helper' is a function, not a "
            "toolpalette.Thinker subclass",
        ),
    ],
)
def test_a_failed_thinker_import_says_how_it_failed(spec: str, expected: str, tmp_path: Path):
    write_host(tmp_path)
    done = toolpalette("serve", "--thinker", spec, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(expected.format(here=tmp_path))


# -- --select with skilljars -----------------------------------------------------------------


async def test_select_serves_a_skilljars_skills_as_prompts_and_resources(tmp_path: Path):
    params = stdio("serve", "--select", "toolpalette-skilljar-files", cwd=tmp_path)
    async with Client(params, mode="legacy") as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        resources = [str(r.uri) for r in (await client.list_resources()).resources]
        prompt = await client.get_prompt("io.toolpalette.files/safe-bulk-edits")
    assert prompts == ["io.toolpalette.files/safe-bulk-edits"]
    assert all(uri.startswith("skill://io.toolpalette.files/safe-bulk-edits/") for uri in resources)
    assert prompt.messages
    assert "read_file" not in tools  # a skilljar brings no pack's tools


async def test_select_of_a_pack_and_a_skilljar_serves_both(tmp_path: Path):
    params = stdio(
        "serve", "--select", "toolpalette-files", "toolpalette_skilljar_sql", cwd=tmp_path
    )
    async with Client(params, mode="legacy") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert {"read_file", "list_directory"} <= tools
    assert prompts == {
        "io.toolpalette.sql/explore-sqlite-schema",
        "io.toolpalette.sql/write-parameterized-migrations",
    }


# -- the README's desktop configuration ------------------------------------------------------


def readme_desktop_config() -> dict[str, object]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```json\n(.*?)^```", readme, re.MULTILINE | re.DOTALL)
    (block,) = [json.loads(b) for b in blocks if '"mcpServers"' in b]
    server: dict[str, object] = block["mcpServers"]["toolpalette"]
    return server


async def test_the_readmes_desktop_configuration_serves_tools_and_skills(tmp_path: Path):
    server = readme_desktop_config()
    # A placeholder for the virtual environment's absolute path, never a machine's path.
    assert server["command"] == "/path/to/venv/bin/toolpalette"
    env = server["env"]
    assert isinstance(env, dict)
    assert env == {"TOOLPALETTE_FILES_ROOT": "/path/to/your/project"}
    (tmp_path / "notes.txt").write_text("hello\n")
    args = server["args"]
    assert isinstance(args, list)
    # A desktop client starts it with the configured environment only, from anywhere.
    params = StdioServerParameters(
        command=str(COMMAND),
        args=[str(a) for a in args],
        env={"TOOLPALETTE_FILES_ROOT": str(tmp_path)},
        cwd="/",
    )
    async with Client(params, mode="legacy") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        listed = await client.call_tool("list_directory", {"path": "."})
    assert "read_file" in tools
    assert "edit_file" not in tools
    assert "io.toolpalette.files/safe-bulk-edits" in prompts
    assert not listed.is_error
    assert "notes.txt" in listed.content[0].text
