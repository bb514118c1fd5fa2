"""The host guide's palette mixing an installed pack and an MCP server runs as written."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "host-guide" / "mcp-servers.md"
EXAMPLE = re.compile(r"^```python\n# file: mixed_palette\.py\n(.*?)^```", re.MULTILINE | re.DOTALL)


def test_the_mixed_palette_example_runs(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the example needs the mcp extra")
    pytest.importorskip("toolpalette_files", reason="the example uses the files pack")
    server = os.environ.get("TOOLPALETTE_MCP_TIME")
    if not server:
        pytest.skip("TOOLPALETTE_MCP_TIME is not set: run the tests through `python -m nox`")
    match = EXAMPLE.search(GUIDE.read_text(encoding="utf-8"))
    assert match, "the guide lost its mixed_palette.py example"
    script = tmp_path / "mixed_palette.py"
    script.write_text(match.group(1), encoding="utf-8")
    # The example names the server's command; find it where the test sessions put it.
    path = os.pathsep.join([str(Path(server).parent), os.environ.get("PATH", "")])
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={**os.environ, "PATH": path, "TOOLPALETTE_NO_CACHE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    offered, timezone = done.stdout.strip().splitlines()
    names = ast.literal_eval(offered)  # the printed sorted list of names
    assert {"read_file", "list_directory", "get_current_time", "convert_time"} <= set(names)
    assert "write_file" not in names
    assert timezone == "Europe/Paris"
