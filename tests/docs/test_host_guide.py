"""Every Python example of the host guide's pages runs as written, as a program of its own.

Each ``python`` block is written to a file and run by a fresh interpreter, in a scratch
folder that holds a ``README.md`` and a SQLite database, with the first-party packs'
workspace and database pointed there. A block that hangs fails at its deadline instead
of hanging the suite. The examples use the installed first-party packs and skilljars
(and ``toolpalette.mcp`` its extra), which every test session installs.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "host-guide"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
DEADLINE = 60.0


def examples() -> list[tuple[str, str]]:
    """Each page's ``python`` blocks, as ("page:line", body), the quickstart first."""
    found = []
    pages = sorted(GUIDE.glob("*.md"), key=lambda page: (page.stem != "quickstart", page.name))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            found.append((f"{page.stem}:{text.count(chr(10), 0, m.start()) + 1}", m.group(1)))
    return found


def test_the_quickstart_is_one_short_example_of_a_thinker_a_turn_and_a_call() -> None:
    text = (GUIDE / "quickstart.md").read_text(encoding="utf-8")
    (body,) = BLOCK.findall(text)
    assert len(body.splitlines()) <= 40
    for needed in ("class ", "(Thinker)", "hub.bind(", ".begin_turn(", ".schemas(", ".call("):
        assert needed in body, needed


def _needs(body: str) -> list[str]:
    """The optional parts an example imports: the mcp extra, OpenTelemetry's SDK."""
    needed = []
    if "toolpalette.mcp" in body:
        needed.append("mcp")
    if "opentelemetry.sdk" in body:
        needed.append("opentelemetry.sdk")
    return [name for name in needed if importlib.util.find_spec(name) is None]


@pytest.mark.parametrize(("line", "body"), examples(), ids=[where for where, _ in examples()])
def test_the_example_runs_as_written(tmp_path: Path, line: str, body: str) -> None:
    missing = _needs(body)
    if missing:
        pytest.skip(f"the example at line {line} needs {', '.join(missing)}, not installed here")
    time_server = os.environ.get("TOOLPALETTE_MCP_TIME", "")
    if "mcp-server-time" in body and not time_server:
        pytest.skip(f"the example at line {line} runs mcp-server-time: TOOLPALETTE_MCP_TIME unset")
    (tmp_path / "README.md").write_text("# Scratch\n\nA workspace for the guide.\n")
    # A connection's `with` commits but does not close (Python 3.13 warns): close it too.
    with contextlib.closing(sqlite3.connect(tmp_path / "data.db")) as db, db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes (text) VALUES ('first')")
    script = tmp_path / f"example_{line.replace(':', '_line_')}.py"
    script.write_text(body, encoding="utf-8")
    env = {
        **os.environ,
        "TOOLPALETTE_FILES_ROOT": str(tmp_path),
        "TOOLPALETTE_SQLITE_DATABASE": str(tmp_path / "data.db"),
        "TOOLPALETTE_CACHE_DIR": str(tmp_path / "cache"),
        # The MCP example names its server's command: find it where the test sessions put it.
        "PATH": os.pathsep.join([str(Path(time_server).parent), os.environ.get("PATH", "")])
        if time_server
        else os.environ.get("PATH", ""),
    }
    try:
        result = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the example at line {line} of the host guide ran past {DEADLINE:g} s")
    assert result.returncode == 0, f"line {line}:\n{result.stdout}\n{result.stderr}"


def test_every_example_is_a_whole_program() -> None:
    for line, body in examples():
        assert not re.search(r"^\S.*\bawait ", body, re.MULTILINE), f"top-level await, line {line}"
