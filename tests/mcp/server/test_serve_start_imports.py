"""``serve`` answers ``initialize`` and ``tools/list`` without what only skills or metrics need.

yaml, the skill manifest's pydantic model and OpenTelemetry's metrics API are imported on
first use; a server of tools alone never uses them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

THINKER = '''
import toolpalette
from toolpalette import Thinker, ToolSelector


@toolpalette.tool(read_only=True)
async def aadd(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class One(Thinker):
    @classmethod
    def declare_compatible_tools(cls):
        return ToolSelector().tool(aadd)
'''
SERVE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules))))\n"
    "from toolpalette._cli import main\n"
    "sys.exit(main())\n"
)
REQUESTS = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
]
LAZY = ("yaml", "toolpalette._skills.manifest", "opentelemetry.metrics")


def served_modules(tmp_path: Path, *, before: str = "") -> tuple[list[dict], set[str]]:
    """The answers of a stdio ``serve`` to `REQUESTS`, and every module it had loaded."""
    (tmp_path / "one_thinker.py").write_text(THINKER)
    done = subprocess.run(
        [sys.executable, "-c", before + SERVE, "serve", "--thinker", "one_thinker:One"],
        cwd=tmp_path,
        input="".join(json.dumps(r) + "\n" for r in REQUESTS),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    modules = set(json.loads(done.stderr.rpartition("\nMODULES ")[2]))
    return answers, modules


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], set[str]]:
    return served_modules(tmp_path_factory.mktemp("serve"))


def test_serve_answers_initialize_and_tools_list(served: tuple[list[dict], set[str]]) -> None:
    answers, _ = served
    assert [a["id"] for a in answers] == [1, 2]
    assert "aadd" in [tool["name"] for tool in answers[1]["result"]["tools"]]


@pytest.mark.parametrize("name", LAZY)
def test_serve_of_tools_never_imports(served: tuple[list[dict], set[str]], name: str) -> None:
    assert name not in served[1]


def test_the_check_can_fail(tmp_path: Path) -> None:
    # The same measurement sees each module once something really imports it.
    _, modules = served_modules(tmp_path, before="import yaml, opentelemetry.metrics\n")
    assert {"yaml", "opentelemetry.metrics"} <= modules
