"""Packs whose failures are hard to report still never take the hub or the CLI down.

The test-only distribution ``toolpalette-testpack-hostile`` (tests/integration/packs/hostile)
ships one pack per hard failure: an import that raises an exception whose ``__str__``
raises, a ``BaseException`` subclass or ``GeneratorExit``; hooks that raise all three;
an entry point naming a value instead of a module; and a pack whose name has a comma.
Each is used with ``TOOLPALETTE_PLUGINS=<pack>,files``, as a host would meet it. Run by
``nox -s dists``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from toolpalette import ToolHub

pytestmark = pytest.mark.dists

SWITCHES = (
    "TOOLPALETTE_PLUGINS",
    "TOOLPALETTE_BLOCK_PLUGINS",
    "TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD",
)
HOSTILE_IMPORTS = ("hostile_unprintable", "hostile_base", "hostile_genexit")


@pytest.fixture(autouse=True)
def _clean_switches(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))


def cli(*args: str, only: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env["TOOLPALETTE_PLUGINS"] = only
    env["TOOLPALETTE_FILES_ROOT"] = str(cwd)
    script = Path(sys.executable).with_name("toolpalette")
    return subprocess.run(
        [str(script), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=60,
    )


@pytest.mark.parametrize("pack", HOSTILE_IMPORTS)
def test_an_import_failing_hard_is_a_problem_and_the_rest_loads(
    pack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPALETTE_PLUGINS", f"{pack},files")
    hub = ToolHub(config={})
    catalog = hub.catalog()
    assert catalog.has_tool("read_file")
    (problem,) = [p for p in hub.problems() if p.pack == pack]
    assert problem.kind == "import"
    assert problem.distribution == "toolpalette-testpack-hostile 0.1.0"
    expected = {
        "hostile_unprintable": "raised UnprintableError",
        "hostile_base": "raised Escape: escaping from the import",
        "hostile_genexit": "raised GeneratorExit",
    }[pack]
    assert expected in problem.reason
    assert hub.loaded_packs() == ["files"]


def test_hooks_failing_hard_lose_only_their_own_contribution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLPALETTE_PLUGINS", "hostile_hooks,files")
    hub = ToolHub(config={})
    assert hub.catalog().has_tool("survivor")
    assert hub.catalog().has_tool("read_file")
    reasons = sorted(p.reason for p in hub.problems() if p.pack == "hostile_hooks")
    assert reasons == [
        "iterating what toolpalette_register_tools returned raised UnprintableError",
        "toolpalette_register_tools raised Escape: escaping from a hook",
        "toolpalette_register_tools raised GeneratorExit",
        "toolpalette_register_tools raised UnprintableError",
    ]


def test_an_entry_point_naming_a_value_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPALETTE_PLUGINS", "hostile_value,files")
    hub = ToolHub(config={})
    hub.catalog()
    (problem,) = [p for p in hub.problems() if p.pack == "hostile_value"]
    assert problem.kind == "import"
    assert "'tp_testpack_hostile.values:VALUE'" in problem.reason
    assert "a value of type int" in problem.reason
    statuses = {p.name: p.status for p in hub.plugins()}
    assert statuses["hostile_value"] == "failed"


def test_a_pack_named_with_a_comma_can_be_blocked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPALETTE_BLOCK_PLUGINS", '"hostile,comma", hostile_value')
    hub = ToolHub(config={})
    hub.catalog()  # imports every pack not blocked: the comma pack raises if imported
    statuses = {p.name: p.status for p in hub.plugins()}
    assert statuses["hostile,comma"] == "blocked"
    assert statuses["hostile_value"] == "blocked"
    assert not [p for p in hub.problems() if p.pack == "hostile,comma" and p.kind == "import"]


def test_a_pack_named_with_a_comma_can_be_the_only_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPALETTE_PLUGINS", '"hostile,comma",files')
    hub = ToolHub(config={})
    hub.catalog()
    statuses = {p.name: p.status for p in hub.plugins()}
    assert statuses["hostile,comma"] == "failed"  # used, so imported: its import raises
    assert statuses["files"] == "loaded"
    assert statuses["hostile_hooks"] == "disabled"


@pytest.mark.parametrize("pack", [*HOSTILE_IMPORTS, "hostile_hooks", "hostile_value"])
def test_the_cli_reports_hostile_packs_without_a_traceback(pack: str, tmp_path: Path) -> None:
    listed = cli("list", "--json", only=f"{pack},files", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr
    found = json.loads(listed.stdout)
    assert "read_file" in [t["name"] for t in found["tools"]]
    assert pack in [p["pack"] for p in found["problems"]]

    checked = cli("check", only=f"{pack},files", cwd=tmp_path)
    assert checked.returncode == 1  # a problem was found
    assert "Traceback" not in checked.stderr
    assert pack in checked.stdout

    (tmp_path / "notes.txt").write_text("hello")
    called = cli(
        "call",
        "read_file",
        "--input",
        '{"path": "notes.txt"}',
        "--json",
        only=f"{pack},files",
        cwd=tmp_path,
    )
    assert "Traceback" not in called.stderr
    assert called.returncode == 0, called.stderr
    assert "hello" in json.loads(called.stdout)["text"]
