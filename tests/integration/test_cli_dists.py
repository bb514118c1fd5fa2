"""``toolpalette list / show / plugins / check`` against installed packs, as a user runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.dists

SWITCHES = (
    "TOOLPALETTE_PLUGINS",
    "TOOLPALETTE_BLOCK_PLUGINS",
    "TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD",
    "TOOLPALETTE_TRACE_PLUGINS",
    "TOOLPALETTE_NO_CACHE",
    "TOOLPALETTE_CACHE_DIR",
)


def toolpalette(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the installed ``toolpalette`` script of this environment."""
    script = shutil.which("toolpalette", path=str(Path(sys.executable).parent))
    assert script is not None, "the toolpalette console script is not installed"
    full_env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    full_env.update(env)
    return subprocess.run(
        [script, *args], capture_output=True, text=True, env=full_env, cwd=cwd, timeout=60
    )


def test_list_shows_every_tool_with_its_origin(tmp_path: Path):
    done = toolpalette("list", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["NAME", "MODE", "PACK", "DESCRIPTION"]
    (echo,) = [line for line in lines if line.startswith("echo ")]
    assert "read-only" in echo
    assert "healthy (toolpalette-testpack-healthy 0.1.0)" in echo
    assert "Return the text unchanged." in echo
    assert "run `toolpalette check`" in done.stderr


def test_list_json_is_stable(tmp_path: Path):
    done = toolpalette("list", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    assert set(listing) == {"tools", "problems"}
    tools = {t["name"]: t for t in listing["tools"]}
    assert tools["counter"] == {
        "name": "counter",
        "description": "Count up by one from a start value.",
        "read_only": False,
        "pack": "healthy",
        "distribution": "toolpalette-testpack-healthy",
        "version": "0.1.0",
    }
    assert [t["name"] for t in listing["tools"]] == sorted(tools)
    assert "search" not in tools
    assert {"kind", "pack", "distribution", "item", "reason", "fatal"} == set(
        listing["problems"][0]
    )


def test_show_prints_the_full_schema(tmp_path: Path):
    done = toolpalette("show", "echo", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["input_schema"]["properties"]["text"]["type"] == "string"
    assert shown["input_schema"]["required"] == ["text"]
    assert shown["module"] == "tp_testpack_healthy.tools"
    assert shown["output_schema"] is None
    text = toolpalette("show", "echo", cwd=tmp_path)
    assert text.returncode == 0
    assert text.stdout.startswith("echo (read-only)")
    assert '"text"' in text.stdout


def test_show_an_unknown_tool_fails_and_lists_the_available_ones(tmp_path: Path):
    done = toolpalette("show", "no_such_tool", cwd=tmp_path)
    assert done.returncode == 1
    assert "'no_such_tool' is not available" in done.stderr
    assert "echo" in done.stderr


def test_plugins_json_lists_packs_with_hooks_and_import_status(tmp_path: Path):
    done = toolpalette("plugins", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plugins = {p["name"]: p for p in json.loads(done.stdout)["plugins"]}
    assert plugins["healthy"] == {
        "name": "healthy",
        "distribution": "toolpalette-testpack-healthy",
        "version": "0.1.0",
        "module": "tp_testpack_healthy.hooks",
        "hooks": ["toolpalette_register_tools"],
        "imported": True,
        "status": "loaded",
    }
    assert plugins["incompatible"]["imported"] is False
    assert plugins["incompatible"]["status"] == "incompatible"
    assert plugins["broken_import"]["status"] == "failed"


def test_plugins_no_load_imports_nothing(tmp_path: Path):
    done = toolpalette("plugins", "--no-load", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plugins = json.loads(done.stdout)["plugins"]
    assert plugins
    assert {p["status"] for p in plugins} == {"not-loaded"}
    text = toolpalette("plugins", cwd=tmp_path)
    assert text.stdout.splitlines()[0].split() == [
        "NAME",
        "STATUS",
        "DISTRIBUTION",
        "VERSION",
        "HOOKS",
    ]


def test_check_reports_every_problem_and_fails(tmp_path: Path):
    done = toolpalette("check", cwd=tmp_path)
    assert done.returncode == 1
    out = done.stdout
    assert "error: collision: alpha, beta" in out
    assert "toolpalette-testpack-alpha 0.1.0" in out
    assert "toolpalette-testpack-beta 0.1.0" in out
    for pack in ("broken_import", "broken_exit", "broken_hook", "garbage", "incompatible"):
        assert f": {pack} (" in out, pack
    assert "unknown-hook: unknown_hook" in out
    assert "bad_args" in out


def test_check_json_counts_fatal_problems(tmp_path: Path):
    done = toolpalette("check", "--json", cwd=tmp_path)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False
    kinds = {p["kind"] for p in report["problems"]}
    assert {"collision", "import", "hook", "garbage", "invalid-tool", "unknown-hook"} <= kinds
    assert "incompatible" in kinds


def test_check_on_healthy_packs_reports_no_pack_problem(tmp_path: Path):
    done = toolpalette("check", "--json", cwd=tmp_path, TOOLPALETTE_PLUGINS="healthy,twice")
    report = json.loads(done.stdout)
    assert report["packs_loaded"] == ["healthy", "twice"]
    assert report["tools"] == 4
    assert [p for p in report["problems"] if p["pack"] in ("healthy", "twice")] == []
    # the test-only skilljars are broken on purpose: the exit status follows the problems
    assert report["ok"] == (not [p for p in report["problems"] if p["fatal"]])
    assert done.returncode == (0 if report["ok"] else 1)


def test_check_includes_skill_problems(tmp_path: Path):
    report = json.loads(toolpalette("check", "--json", cwd=tmp_path).stdout)
    assert "invalid-skill" in {p["kind"] for p in report["problems"]}


def test_a_pack_blocked_on_purpose_is_a_note_not_a_failure(tmp_path: Path):
    env = {"TOOLPALETTE_PLUGINS": "healthy,side_effect", "TOOLPALETTE_BLOCK_PLUGINS": "side_effect"}
    report = json.loads(toolpalette("check", "--json", cwd=tmp_path, **env).stdout)
    (blocked,) = [p for p in report["problems"] if p["pack"] == "side_effect"]
    assert (blocked["kind"], blocked["fatal"]) == ("blocked", False)
    assert "note: blocked: side_effect" in toolpalette("check", cwd=tmp_path, **env).stdout


def test_a_config_file_in_the_working_directory_resolves_the_collision(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "host"\n\n[tool.toolpalette.prefix]\nbeta = "beta_"\n',
        encoding="utf-8",
    )
    listing = json.loads(toolpalette("list", "--json", cwd=tmp_path).stdout)
    names = {t["name"] for t in listing["tools"]}
    assert {"search", "beta_search", "beta_beta_only"} <= names
    assert not [p for p in listing["problems"] if p["kind"] == "collision"]


def test_an_explicit_config_path_is_read(tmp_path: Path):
    config = tmp_path / "host.toml"
    config.write_text('[rename]\n"beta.search" = "find"\n', encoding="utf-8")
    listing = json.loads(
        toolpalette("list", "--json", "--config", str(config), cwd=tmp_path).stdout
    )
    names = {t["name"] for t in listing["tools"]}
    assert {"search", "find"} <= names


READ_ONLY = {
    ("list",): "listing",
    ("list", "--json"): "listing",
    ("plugins", "--no-load"): "plugins",
    ("plugins", "--no-load", "--json"): "plugins",
    ("plugins",): "plugins-loaded",
    ("plugins", "--json"): "plugins-loaded",
    ("skills",): "skills",
    ("skills", "--json"): "skills",
    ("show", "echo"): "show",
    ("show", "counter", "--json"): "show",
    ("show", "search"): "show",  # alpha and beta collide on it: not available
}
"""Each read-only command answered from the listing cache, and the cache file it reads."""


@pytest.mark.parametrize("argv", list(READ_ONLY), ids=" ".join)
def test_a_warm_cache_prints_what_the_command_prints_without_it(
    tmp_path: Path, argv: tuple[str, ...]
):
    cache = tmp_path / "cache"
    slow = toolpalette(*argv, cwd=tmp_path, TOOLPALETTE_NO_CACHE="1")
    cold = toolpalette(*argv, cwd=tmp_path, TOOLPALETTE_CACHE_DIR=str(cache))
    assert (cache / f"{READ_ONLY[argv]}.json").is_file()  # what is installed is cacheable
    warm = toolpalette(*argv, cwd=tmp_path, TOOLPALETTE_CACHE_DIR=str(cache))
    printed = [(r.returncode, r.stdout, r.stderr) for r in (slow, cold, warm)]
    assert printed[1] == printed[0]
    assert printed[2] == printed[0]


TELL_IMPORTS = (
    "import sys\n"
    "from toolpalette._cli import main\n"
    "status = main(sys.argv[1:])\n"
    "sys.stderr.write('\\nIMPORTED: ' + ' '.join(sys.modules))\n"
    "sys.exit(status)\n"
)


def test_a_warm_read_only_command_imports_no_pydantic_asyncio_hub_or_pack(tmp_path: Path):
    cache = str(tmp_path / "cache")
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env["TOOLPALETTE_CACHE_DIR"] = cache
    for argv in READ_ONLY:
        toolpalette(*argv, cwd=tmp_path, TOOLPALETTE_CACHE_DIR=cache)
        done = subprocess.run(
            [sys.executable, "-c", TELL_IMPORTS, *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
        assert done.returncode == (1 if argv[0] == "show" and argv[1] == "search" else 0)
        assert "IMPORTED: " in done.stderr, done.stderr
        imported = set(done.stderr.rpartition("IMPORTED: ")[2].split())
        heavy = {m for m in imported if m.split(".")[0] in ("pydantic", "asyncio")}
        heavy |= {m for m in imported if m.startswith(("tp_test", "toolpalette_"))}
        heavy |= {"toolpalette._hub"} & imported
        assert heavy == set(), argv
