"""The read-only commands answer from a warm listing cache, and print what they print without it.

Each command runs as its own process, as a user types it, on a pack and a skilljar
installed (as real, if minimal, distributions) in a folder put first on the path: once
with ``TOOLPALETTE_NO_CACHE=1`` (the slow way, every time), once on an empty cache (the
slow way, which stores its answer) and once more (from the cache). The three print the
same bytes, and the last imports neither pydantic, asyncio, the hub nor the pack.
The first-party packs installed here are switched off (``TOOLPALETTE_PLUGINS``); the
same comparison over every installed test distribution is in
``tests/integration/test_cli_dists.py``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from toolpalette import ToolHub, tool
from toolpalette.testing import plugin_of, run_cli

PACK = "tp_cli_cache_pack"
JAR = "tp_cli_cache_jar"
HEAVY = frozenset({"pydantic", "asyncio", "toolpalette._hub", PACK})
"""What a warm read-only command never imports."""
MARK = "\nIMPORTED:"
RUN = (
    "import sys\n"
    "from toolpalette._cli import main\n"
    "status = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    f"sys.stderr.write({MARK!r} + ' '.join(sys.modules))\n"
    "sys.exit(status)\n"
)
"""The command line as the console script runs it, telling on stderr what it imported."""

PACK_SOURCE = '''
import toolpalette

@toolpalette.tool(read_only=True)
def shout(text: str) -> str:
    """{description}

    Args:
        text: What to shout.
    """
    return text.upper()

@toolpalette.tool
def forget(key: str) -> None:
    """Forget a key."""

@toolpalette.hookimpl
def toolpalette_register_tools():
    return [shout, forget]

@toolpalette.prompt(completions={{"tone": ["calm", "loud"]}})
def shouting(text: str, tone: str = "loud") -> str:
    """Shout a text."""
    return text

@toolpalette.resource("shouts://{{word}}")
def shouted(word: str) -> str:
    """A word, shouted."""
    return word.upper()

@toolpalette.hookimpl
def toolpalette_register_prompts():
    return [shouting]

@toolpalette.hookimpl
def toolpalette_register_resources():
    return [shouted]
'''

SKILL = """---
name: shout-politely
description: Shout only when asked to. Use when a user wants capitals.
---

# Steps

1. Ask first.
"""


def install_pack(site: Path, *, description: str = "Return the text in capitals.") -> None:
    """The pack ``shouts`` as an installed distribution (its RECORD changes with its source)."""
    source = PACK_SOURCE.format(description=description)
    (site / f"{PACK}.py").write_text(source, encoding="utf-8")
    info = site / "tp_cli_cache_pack-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tp-cli-cache-pack\nVersion: 1.0\n"
        f"Requires-Dist: toolpalette<={_core_version()}\n"
    )
    (info / "entry_points.txt").write_text(f"[toolpalette.plugins]\nshouts = {PACK}\n")
    digest = hashlib.sha256(source.encode()).hexdigest()
    (info / "RECORD").write_text(f"{PACK}.py,sha256={digest},\n")


def install_jar(site: Path) -> None:
    """The skilljar ``io.example.cache`` with one skill, as an installed distribution."""
    skill = site / JAR / "shout-politely"
    skill.mkdir(parents=True)
    (site / JAR / "__init__.py").write_text("")
    (skill / "SKILL.md").write_text(SKILL, encoding="utf-8")
    info = site / "tp_cli_cache_jar-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tp-cli-cache-jar\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[toolpalette.skilljars]\nio.example.cache = {JAR}\n")
    (info / "RECORD").write_text(f"{JAR}/shout-politely/SKILL.md,sha256=1,\n")


def _core_version() -> str:
    return importlib.metadata.version("toolpalette")


@dataclass(frozen=True)
class Run:
    """One process of the command line: what it printed, and what it imported."""

    status: int
    out: str
    err: str
    modules: frozenset[str]

    @property
    def printed(self) -> tuple[int, str, str]:
        return (self.status, self.out, self.err)


@dataclass
class Env:
    """A folder of installed distributions, a cache folder, and the command line on them."""

    site: Path
    cache: Path
    cwd: Path
    env: dict[str, str]

    def run(self, *argv: str, path: tuple[Path, ...] = (), **extra: str) -> Run:
        env = {**self.env, **extra}
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (*path, self.site))
        done = subprocess.run(
            [sys.executable, "-c", RUN, *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.cwd,
            timeout=120,
        )
        err, _, imported = done.stderr.rpartition(MARK)
        assert _ == MARK, done.stderr
        return Run(done.returncode, done.stdout, err, frozenset(imported.split()))

    def three_ways(self, *argv: str, **extra: str) -> tuple[Run, Run, Run]:
        """Without the cache, on an empty cache, and on the cache that run left."""
        slow = self.run(*argv, TOOLPALETTE_NO_CACHE="1", **extra)
        cold = self.run(*argv, **extra)
        warm = self.run(*argv, **extra)
        return slow, cold, warm


@pytest.fixture
def installed(tmp_path: Path) -> Env:
    site = tmp_path / "site"
    site.mkdir()
    install_pack(site)
    install_jar(site)
    cwd = tmp_path / "work"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPALETTE_")}
    env["TOOLPALETTE_CACHE_DIR"] = str(tmp_path / "cache")
    env["TOOLPALETTE_PLUGINS"] = "shouts"  # the packs installed here stay out
    return Env(site, tmp_path / "cache", cwd, env)


PACK_COMMANDS = [
    ("list",),
    ("plugins", "--no-load"),
    ("plugins", "--json"),
    ("show", "shout"),
    ("show", "shout", "--json"),
    ("show", "no_such_tool"),
    ("show", "shouting"),
    ("show", "shouts://hey", "--json"),
    ("show", "shoutin"),
]


@pytest.mark.parametrize("argv", PACK_COMMANDS, ids=" ".join)
def test_a_warm_command_prints_the_same_without_importing_pydantic_asyncio_or_the_hub(
    installed: Env, argv: tuple[str, ...]
) -> None:
    slow, cold, warm = installed.three_ways(*argv)
    assert cold.printed == slow.printed
    assert warm.printed == slow.printed
    assert "pydantic" in cold.modules  # the slow way built tools or a hub
    assert HEAVY & warm.modules == set()


def test_the_commands_print_what_is_installed(installed: Env) -> None:
    shown = installed.run("show", "shout", "--json")
    assert shown.status == 0
    entry = json.loads(shown.out)
    assert entry["description"].startswith("Return the text in capitals.")
    assert entry["input_schema"]["properties"]["text"]["description"] == "What to shout."
    assert (entry["pack"], entry["distribution"], entry["module"]) == (
        "shouts",
        "tp-cli-cache-pack",
        PACK,
    )
    missing = installed.run("show", "no_such_tool")
    assert missing.status == 1
    assert "Available tools: forget, shout" in missing.err
    plugins = json.loads(installed.run("plugins", "--no-load", "--json").out)["plugins"]
    assert [(p["name"], p["status"]) for p in plugins if p["name"] == "shouts"] == [
        ("shouts", "not-loaded")
    ]


def _editable_skilljars() -> list[str]:
    found = []
    for dist in importlib.metadata.distributions():
        if any(ep.group == "toolpalette.skilljars" for ep in dist.entry_points):
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
            if direct.get("dir_info", {}).get("editable"):
                found.append(dist.metadata["Name"])
    return sorted(found)


@pytest.mark.parametrize("argv", [("skills",), ("skills", "--json")], ids=" ".join)
def test_a_warm_skills_listing_prints_the_same_without_importing_pydantic_asyncio_or_the_hub(
    installed: Env, argv: tuple[str, ...]
) -> None:
    editable = _editable_skilljars()
    if editable:
        pytest.skip(
            f"skilljars installed in editable mode here ({', '.join(editable)}) make the "
            "skills listing uncacheable; `nox -s tests` installs them as wheels"
        )
    slow, cold, warm = installed.three_ways(*argv)
    assert cold.printed == slow.printed
    assert warm.printed == slow.printed
    assert "io.example.cache/shout-politely" in warm.out
    assert "pydantic" in cold.modules
    assert HEAVY & warm.modules == set()


def test_a_reinstalled_pack_is_shown_afresh(installed: Env) -> None:
    installed.run("show", "shout")
    assert PACK not in installed.run("show", "shout").modules
    install_pack(installed.site, description="Return the text in capitals, loudly.")
    again = installed.run("show", "shout")
    assert PACK in again.modules
    assert "Return the text in capitals, loudly." in again.out
    assert again.printed == installed.run("show", "shout").printed


def test_other_switches_are_a_miss(installed: Env) -> None:
    row = ["shouts", "not-loaded", "tp-cli-cache-pack", "1.0", "-"]
    assert row in [line.split() for line in installed.run("plugins", "--no-load").out.splitlines()]
    blocked = installed.run("plugins", "--no-load", TOOLPALETTE_BLOCK_PLUGINS="shouts")
    uncached = installed.run(
        "plugins", "--no-load", TOOLPALETTE_BLOCK_PLUGINS="shouts", TOOLPALETTE_NO_CACHE="1"
    )
    assert blocked.printed == uncached.printed
    row[1] = "blocked"
    assert row in [line.split() for line in blocked.out.splitlines()]


def test_a_new_core_version_is_a_miss(installed: Env, tmp_path: Path) -> None:
    installed.run("show", "shout")
    assert installed.run("show", "shout").status == 0
    # Upgrade the core: its metadata, first on the path, now says 99.0, which the pack
    # excludes. The warm cache must not answer for it.
    upgraded = tmp_path / "upgraded"
    (upgraded / "toolpalette-99.0.dist-info").mkdir(parents=True)
    (upgraded / "toolpalette-99.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolpalette\nVersion: 99.0\n"
    )
    after = installed.run("show", "shout", path=(upgraded,))
    assert after.status == 1
    assert "'shout' is not available" in after.err


@pytest.mark.parametrize(
    "damage",
    ["{not json", '{"key": "%s", "answer": ["wrong"]}', '{"key": "%s", "answer": {"shout": {}}}'],
)
def test_a_corrupt_or_misshapen_answer_is_a_miss_and_is_rewritten(
    installed: Env, damage: str
) -> None:
    first = installed.run("show", "shout")
    cached = installed.cache / "show.json"
    key = json.loads(cached.read_text(encoding="utf-8"))["key"]
    cached.write_text(damage.replace("%s", key), encoding="utf-8")
    again = installed.run("show", "shout")
    assert again.printed == first.printed
    assert PACK in again.modules
    rewritten = json.loads(cached.read_text(encoding="utf-8"))
    assert rewritten["key"] == key
    assert sorted(rewritten["answer"]) == [
        "forget",
        "prompt:shouting",
        "resource:shouts://{word}",
        "shout",
    ]


def test_a_configuration_naming_mcp_servers_is_never_cached(installed: Env) -> None:
    (installed.cwd / "toolpalette.toml").write_text(
        '[mcp_servers.nowhere]\ncommand = "no-such-program-anywhere"\n', encoding="utf-8"
    )
    assert installed.run("plugins", "--no-load").status == 0
    assert installed.run("plugins", "--no-load").status == 0
    assert not (installed.cache / "plugins.json").exists()


@tool(read_only=True)
def lookup(key: str) -> str:
    """Look a key up."""
    return key


def test_a_hub_given_in_code_never_touches_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLPALETTE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TOOLPALETTE_NO_CACHE", raising=False)
    hub = ToolHub(autoload=False, config={})
    hub.add_plugin(plugin_of(lookup), name="kv")
    for argv in (["show", "lookup"], ["plugins", "--no-load"], ["plugins"], ["skills"]):
        assert run_cli(argv, hub=hub) == 0
    assert "lookup" in capsys.readouterr().out
    assert not (tmp_path / "cache").exists()
