"""The host guide's cost examples (a long conversation, a native turn) print what it shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "host-guide" / "thinkers.md"


def section() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index("\n## A bound on grants: `max_granted`\n")
    return text[start : text.index("\n## ", start + 1)]


def test_the_table_is_what_the_example_prints(tmp_path: Path) -> None:
    (example,) = re.findall(r"^```python\n(.*?)^```", section(), re.MULTILINE | re.DOTALL)
    script = tmp_path / "grants_cost.py"
    script.write_text(example, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True
    )
    printed = {}
    for line in done.stdout.splitlines():
        bound, turn, tools, tokens = re.fullmatch(
            r"max_granted=(\w+): turn (\d+): (\d+) tools, ~(\d+) tokens", line
        ).groups()  # type: ignore[union-attr]
        printed[(bound, int(turn))] = (int(tools), int(tokens))
    rows = re.findall(
        r"^\| (\d+) \| (\d+) tools?, ~([\d,]+)(?: tokens)? \| (\d+) tools?, ~([\d,]+)",
        section(),
        re.M,
    )
    assert len(rows) == 5
    for turn, tools20, tokens20, tools_all, tokens_all in rows:
        assert printed[("20", int(turn))] == (int(tools20), int(tokens20.replace(",", "")))
        assert printed[("None", int(turn))] == (int(tools_all), int(tokens_all.replace(",", "")))


def test_the_native_cost_example_prints_what_the_guide_says(tmp_path: Path) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index("**What a native turn costs.**")
    example, shown = re.findall(r"^```(?:python)?\n(.*?)^```", text[start:], re.M | re.S)[:2]
    script = tmp_path / "native_cost.py"
    script.write_text(example, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout == shown
