"""One tool call, walked module by module, enters no module twice (``bench/call_walk.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "in-a-span"])
def test_one_call_enters_no_module_twice(traced: bool) -> None:
    walked = subprocess.run(
        [sys.executable, "-m", "bench.call_walk", *(["--traced"] if traced else [])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert walked.returncode == 0, walked.stdout + walked.stderr
    assert "modules entered twice: 0" in walked.stdout
    # The call went the whole way: looked up, validated, decided, run and rendered.
    for step in ("registry lookup", "provider parse_input", "policy decide_call", "render_output"):
        assert step in walked.stdout, step
