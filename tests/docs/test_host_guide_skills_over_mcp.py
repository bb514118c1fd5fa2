"""The host guide's "Skills over MCP" page: its example runs as written and prints what it says."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "host-guide" / "skills-over-mcp.md"
EXAMPLE = re.compile(r"^```python\n# file: skills_over_mcp\.py\n(.*?)^```", re.M | re.S)
OUTPUT = re.compile(
    r"It prints the two served skills and the first line of one:\n\n```text\n(.*?)^```", re.M | re.S
)


def test_the_example_runs_and_prints_what_the_page_says(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the example needs the mcp extra")
    pytest.importorskip("toolpalette_skilljar_sql", reason="the example serves the SQL skilljar")
    text = PAGE.read_text(encoding="utf-8")
    example, output = EXAMPLE.search(text), OUTPUT.search(text)
    assert example, "the page lost its skills_over_mcp.py example"
    assert output, "the page lost the example's output"
    script = tmp_path / "skills_over_mcp.py"
    script.write_text(example.group(1), encoding="utf-8")
    # The example runs the `toolpalette` command: this interpreter's, on this import path.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "toolpalette"
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    command.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path[:0] = {paths!r}\n"
        "from toolpalette._cli import main\nsys.exit(main())\n"
    )
    command.chmod(command.stat().st_mode | stat.S_IXUSR)
    path = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
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
    assert done.stdout == output.group(1)
