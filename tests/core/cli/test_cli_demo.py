"""``toolpalette demo`` as a user runs it: a subprocess over the installed first-party packs."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _missing() -> list[str]:
    packs = {ep.name for ep in importlib.metadata.entry_points(group="toolpalette.plugins")}
    jars = {ep.name for ep in importlib.metadata.entry_points(group="toolpalette.skilljars")}
    wanted = [("files", packs), ("sqlite", packs), ("io.toolpalette.sql", jars)]
    return [name for name, found in wanted if name not in found]


pytestmark = pytest.mark.skipif(
    bool(_missing()),
    reason=f"the first-party packs are not installed (missing: {', '.join(_missing())}); "
    "pip install ./plugins/toolpalette-files ./plugins/toolpalette-sqlite and the skilljars",
)


def _command() -> list[str]:
    script = shutil.which("toolpalette", path=str(Path(sys.executable).parent))
    if script is not None:
        return [script, "demo"]
    return [
        sys.executable,
        "-c",
        "import sys; from toolpalette.testing import run_cli; sys.exit(run_cli(sys.argv[1:]))",
        "demo",
    ]


def _run(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPALETTE_")}
    return subprocess.run(
        _command(), cwd=cwd, env=env, capture_output=True, text=True, timeout=90, check=False
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    return _run(tmp_path_factory.mktemp("demo"))


def _answer(output: str, call: str) -> str:
    """The 'model sees' text (unwrapped) for the first step whose call starts with ``call``."""
    for step in output.split("\n[")[1:]:
        calls = re.search(r"model calls  (.*)", step)
        if calls and calls.group(1).startswith(call):
            sees = step.split("model sees   ", 1)[1].split("\n\n", 1)[0]
            return " ".join(line.strip() for line in sees.splitlines())
    raise AssertionError(f"no step calls {call!r}")


def test_the_demo_runs_cleanly(demo: subprocess.CompletedProcess[str]) -> None:
    assert demo.returncode == 0, demo.stderr
    assert demo.stderr == ""
    assert "installed packs: files, sqlite" in demo.stdout
    assert "problems found while loading: 0" in demo.stdout


@pytest.mark.parametrize(
    ("call", "label"),
    [
        ("list_tables({})", "[200 ok]"),
        ('query({"sql": "SELECT name, city', "[200 ok]"),
        ('query({"sql": {"secret"', "[400 invalid_input (error)]"),
        ('query({"sql": "DELETE', "[403 read_only (error)]"),
        ("delete_everything(", "[404 unknown_tool (error)]"),
        ("workspace_stats(", "[403 not_offered (error)]"),
        ("weekly_report(", "[504 timeout (error)]"),
        ("edit_file(", "[200 ok]"),
        ('execute({"sql": "SELECT 1"})', "[404 unknown_tool (error)]"),
        ('request_tools({"names": ["drop_database"]})', "[200 ok]"),
        ("move_path(", "[200 ok]"),
    ],
)
def test_each_step_prints_its_status(
    demo: subprocess.CompletedProcess[str], call: str, label: str
) -> None:
    assert _answer(demo.stdout, call).startswith(label)


def test_the_swapped_in_mutating_tool_is_refused_as_read_only(
    demo: subprocess.CompletedProcess[str],
) -> None:
    answers = [
        " ".join(step.split("model sees   ", 1)[1].split())
        for step in demo.stdout.split("\n[")[1:]
        if "model calls  list_tables({})" in step
    ]
    assert [a.split("]")[0] + "]" for a in answers] == ["[200 ok]", "[403 read_only (error)]"]


def test_invalid_input_does_not_echo_the_value(demo: subprocess.CompletedProcess[str]) -> None:
    answer = _answer(demo.stdout, 'query({"sql": {"secret"')
    assert "sql" in answer
    assert "sk-live-123" not in answer
    assert "secret" not in answer


def test_a_name_off_the_catalog_is_refused_with_what_may_be_requested(
    demo: subprocess.CompletedProcess[str],
) -> None:
    answer = _answer(demo.stdout, 'request_tools({"names": ["drop_database"]})')
    outcome = json.loads(answer.split("] ", 1)[1])
    [refused] = outcome["refused"]
    assert refused["name"] == "drop_database"
    assert refused["reason"].startswith("not requestable here; you may request: ")
    assert "execute" in refused["reason"]
    assert "names[0]: expected string" not in demo.stdout


def test_request_tools_grants_and_the_tools_join_the_next_turn(
    demo: subprocess.CompletedProcess[str],
) -> None:
    answer = _answer(demo.stdout, 'request_tools({"names": ["execute", "query"]})')
    assert answer.startswith("[200 ok]")
    outcome = json.loads(answer.split("] ", 1)[1])
    assert (outcome["granted"], outcome["refused"]) == (["execute", "query"], [])
    editor_turns = re.findall(r"--- editor, turn (\d+) .*\noffered tools: (.*)", demo.stdout)
    assert [n for n, _ in editor_turns] == ["1", "2"]
    assert "execute" not in editor_turns[0][1].split(", ")
    assert {"execute", "query"} <= set(editor_turns[1][1].split(", "))
    assert _answer(demo.stdout, 'execute({"sql": "INSERT').startswith("[200 ok]")


def test_request_skill_grants_and_the_skill_rides_the_next_preamble(
    demo: subprocess.CompletedProcess[str],
) -> None:
    answer = _answer(demo.stdout, "request_skill(")
    outcome = json.loads(answer.split("] ", 1)[1])
    assert outcome["granted"] == ["io.toolpalette.sql/explore-sqlite-schema"]
    assert "explore-sqlite-schema" in demo.stdout.split("--- analyst, turn 2")[1].split("\n[")[0]


def test_the_read_only_analyst_is_offered_no_mutating_tool(
    demo: subprocess.CompletedProcess[str],
) -> None:
    offered = re.search(r"--- analyst, turn 1 .*\noffered tools: (.*)", demo.stdout)
    assert offered is not None
    names = offered.group(1).split(", ")
    assert "request_skill" in names
    for mutating in ("request_tools", "write_file", "edit_file", "execute", "move_path"):
        assert mutating not in names


def test_the_grant_record_is_printed(demo: subprocess.CompletedProcess[str]) -> None:
    record = demo.stdout.split("The grant record\n")[1].split("\n\nproblems")[0]
    rows = [line.split() for line in record.splitlines() if line.startswith("turn ")]
    assert rows == [
        ["turn", "1", "Analyst", "skill", "io.toolpalette.sql/explore-sqlite-schema", "granted"],
        [
            *("turn", "1", "Editor", "tool", "drop_database", "refused", "(not", "requestable"),
            *("here;", "you", "may", "request:", "list_tables,", "describe_table,", "query,"),
            "execute)",
        ],
        ["turn", "1", "Editor", "tool", "execute", "granted"],
        ["turn", "1", "Editor", "tool", "query", "granted"],
        ["turn", "2", "Editor", "call", "move_path", "granted", "(a", "person's", "decision)"],
    ]


def test_the_demo_prints_the_same_thing_every_time(
    demo: subprocess.CompletedProcess[str], tmp_path: Path
) -> None:
    assert _run(tmp_path).stdout == demo.stdout


def test_code_mode_runs_three_calls_in_one_script(demo: subprocess.CompletedProcess[str]) -> None:
    pytest.importorskip("pydantic_monty", reason="code mode needs the `code` extra")
    answer = _answer(demo.stdout, "run_code(")
    assert answer.startswith("[200 ok]")
    outcome = json.loads(answer.split("] ", 1)[1].split(" each call the script made")[0])
    assert outcome["result"] == {"Lyon": 162.5, "Porto": 80.0}
    assert outcome["calls"] == 3
    scene = demo.stdout.split("Code mode: one script, several calls")[1]
    rows = [line.split() for line in scene.splitlines() if line.strip().startswith("script-1.")]
    assert rows == [
        ["script-1.1", "query", "granted"],
        ["script-1.2", "query", "granted"],
        ["script-1.3", "read_file", "granted"],
    ]
