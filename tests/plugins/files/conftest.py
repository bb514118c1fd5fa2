"""Fixtures for the files pack: a real workspace directory, a directory outside it, and
a helper that runs a tool through its provider as the hub would."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolpalette import ToolContext
from toolpalette.testing import run_tool


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    other = tmp_path / "outside"
    other.mkdir()
    (other / "secret.txt").write_text("top secret\n")
    return other


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(config={"root": str(workspace)})


@pytest.fixture
def call(ctx: ToolContext) -> Callable[..., Any]:
    """Run a tool through its provider: parse the input, create, invoke."""

    def run(fn: Any, context: ToolContext | None = None, **raw: Any) -> Any:
        return run_tool(fn, raw, context=context or ctx)

    return run
