"""The code mode page's thinker runs as written, and its bounds table says what CodeLimits does."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from toolpalette import CodeLimits, ToolHub

PAGE = Path(__file__).resolve().parents[2] / "docs" / "host-guide" / "code-mode.md"
FIRST_EXAMPLE = re.compile(r"^```python\n(from toolpalette import .*?)^```", re.M | re.S)


def test_the_thinker_on_the_page_runs_a_script(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_monty", reason="code mode needs the `code` extra")
    pytest.importorskip("toolpalette_files", reason="the example uses the files pack")
    pytest.importorskip("toolpalette_sqlite", reason="the example uses the sqlite pack")
    match = FIRST_EXAMPLE.search(PAGE.read_text(encoding="utf-8"))
    assert match, "the page lost its Analyst example"
    namespace: dict[str, Any] = {}
    exec(compile(match.group(1), str(PAGE), "exec"), namespace)
    (tmp_path / "a.txt").write_text("alpha")
    config = {"packs": {"files": {"root": str(tmp_path)}}}
    thinker = ToolHub(config=config).bind(namespace["Analyst"])
    import asyncio

    code = 'read_file(path="a.txt")["content"].upper()'
    result = asyncio.run(thinker.call("run_code", {"code": code}))
    assert result.structured is not None, result.text
    assert result.structured["result"] == "ALPHA"


def test_the_bounds_table_gives_the_defaults() -> None:
    text = PAGE.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)`:[^|]*\| ([^|]+) \|", text, re.M))
    defaults = {f.name: f.default for f in dataclasses.fields(CodeLimits)}
    assert set(rows) == set(defaults)
    shown = {
        "wall_time": f"{defaults['wall_time']:g} s",
        "memory": f"{defaults['memory'] // 2**20} MiB",
        "tool_calls": str(defaults["tool_calls"]),
        "output_bytes": f"{defaults['output_bytes'] // 1024} KiB",
        "recursion": str(defaults["recursion"]),
    }
    assert {k: v.strip() for k, v in rows.items()} == shown
