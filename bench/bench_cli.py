"""Whole-process start of the command line: the read-only commands on a warm cache.

Each command runs as its own process (as a user types it), round-robin with the
anchors so that drift in the machine's load hits every case alike:

- ``python -c pass``: an empty interpreter, the floor;
- ``python -c "import toolpalette"``: the anchor of the goals;
- ``toolpalette list``, ``plugins --no-load``, ``plugins``, ``skills`` and ``show TOOL``
  with the listing cache warm (the installed packs and skilljars are exactly those it
  was built for, so no pack is imported, and neither pydantic, asyncio nor the hub);
- ``toolpalette --help``;
- ``toolpalette call read_file`` (a local pack tool) with no MCP server configured, the
  anchor of the next case, and with four stdio MCP servers configured (each
  ``bench/mcp_add_server.py``, prefixed apart), whose tools the call does not need.

Then the cold listing: ``toolpalette list`` at 300 generated installed packs (the
``bench_discovery`` fake packs, a temporary folder put on ``PYTHONPATH``), each process
with an empty listing cache of its own, against a script that loads the same packs with
pluggy, eagerly (``load_setuptools_entrypoints``, then every pack's register hook, each
tool's name printed), whole process both (goal: at most 1.1x).

Goal: each warm read-only command costs at most 2x ``import toolpalette``, and the call
of a local tool beside four servers at most 1.2x the same call without them (a server
starts only when its tools are listed without a fresh cached listing, or called). The listing
cache lives in a temporary folder (``TOOLPALETTE_CACHE_DIR``), warmed by one run of
each command before the rounds; editable installs make the listing uncacheable, so run
this where the packs are installed normally (as ``nox -s bench`` does). Run with
``python -m bench bench_cli [--runs N]``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import bench_discovery
from bench._summary import record

RUNS = 20
COLD_PACKS = 300
"""Generated packs installed for the cold listing."""
EAGER = (
    "import pluggy\n"
    "from toolpalette import hookspecs\n"
    "pm = pluggy.PluginManager('toolpalette')\n"
    "pm.add_hookspecs(hookspecs)\n"
    "pm.load_setuptools_entrypoints('toolpalette.plugins')\n"
    "for tools in pm.hook.toolpalette_register_tools():\n"
    "    for each in tools:\n"
    "        print(getattr(each, 'name', each))\n"
)
"""The cold listing's anchor: every pack loaded with pluggy, eagerly, its tools named."""
COLD_LIST = f"toolpalette list, cold cache, {COLD_PACKS} packs"
COLD_EAGER = f"pluggy eager load, {COLD_PACKS} packs"

WARM = {
    "list": ["list"],
    "plugins --no-load": ["plugins", "--no-load"],
    "plugins": ["plugins"],
    "skills": ["skills"],
    "show": ["show"],  # the first tool of the listing is appended
}
"""The read-only commands answered from the warm cache, each with a summary row."""


SERVERS = 4
"""MCP servers configured beside the local tool of the ``call`` case."""
SERVER_SCRIPT = Path(__file__).with_name("mcp_add_server.py")
CALL_NONE = "toolpalette call read_file (no MCP server)"
CALL_SERVERS = f"toolpalette call read_file ({SERVERS} MCP servers configured)"


def _command() -> list[str]:
    script = Path(sys.executable).with_name("toolpalette")
    if script.exists():
        return [str(script)]
    found = shutil.which("toolpalette")
    if found is None:
        raise SystemExit("bench_cli: the toolpalette command is not installed here")
    return [found]


def _label(argv: list[str]) -> str:
    return f"toolpalette {' '.join(argv)} (warm cache)"


def cases(env: dict[str, str]) -> dict[str, list[str]]:
    """Each case's command line (``show`` shows the first installed tool)."""
    tp = _command()
    listed = subprocess.run(
        [*tp, "list", "--json"], env=env, capture_output=True, text=True, check=True
    )
    tools = json.loads(listed.stdout)["tools"]
    if not tools:
        raise SystemExit("bench_cli: no tool is installed here; install the first-party packs")
    chosen = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import toolpalette": [sys.executable, "-c", "import toolpalette"],
    }
    for name, args in WARM.items():
        argv = [*args, tools[0]["name"]] if name == "show" else args
        chosen[_label(argv)] = [*tp, *argv]
    chosen["toolpalette --help"] = [*tp, "--help"]
    chosen.update(_call_cases(tp, Path(env["TOOLPALETTE_CACHE_DIR"])))
    return chosen


def _call_cases(tp: list[str], folder: Path) -> dict[str, list[str]]:
    """``call read_file`` without and with :data:`SERVERS` MCP servers configured."""
    workspace = folder / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "notes.txt").write_text("hello\n")
    files = f"[packs.files]\nroot = {json.dumps(str(workspace))}\n"
    servers = "".join(
        f"[mcp_servers.s{i}]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(SERVER_SCRIPT))}]\nprefix = "s{i}_"\n'
        for i in range(SERVERS)
    )
    bare, configured = folder / "none.toml", folder / "servers.toml"
    bare.write_text(files)
    configured.write_text(files + servers)
    call = [*tp, "call", "read_file", "--input", '{"path": "notes.txt"}']
    return {
        CALL_NONE: [*call, "--config", str(bare)],
        CALL_SERVERS: [*call, "--config", str(configured)],
    }


def _once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def measure(runs: int) -> dict[str, float]:
    """Median wall time in seconds of each case, over ``runs`` processes each."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPALETTE_")}
    env["TOOLPALETTE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tp-bench-cli-")
    try:
        chosen = cases(env)
        for argv in chosen.values():
            _once(argv, env)  # warms the listing cache, the .pyc files and the file system
        samples: dict[str, list[float]] = {label: [] for label in chosen}
        for _ in range(runs):
            for label, argv in chosen.items():
                samples[label].append(_once(argv, env))
    finally:
        shutil.rmtree(env["TOOLPALETTE_CACHE_DIR"], ignore_errors=True)
    return {label: statistics.median(times) for label, times in samples.items()}


def measure_cold(runs: int) -> dict[str, float]:
    """Median wall seconds of the cold listing and its anchor, at `COLD_PACKS` packs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPALETTE_")}
    root = Path(tempfile.mkdtemp(prefix="tp-bench-cold-"))
    try:
        bench_discovery.generate(root, COLD_PACKS)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
        chosen = {COLD_LIST: [*_command(), "list"], COLD_EAGER: [sys.executable, "-c", EAGER]}
        caches = root / "caches"
        caches.mkdir()
        samples: dict[str, list[float]] = {label: [] for label in chosen}
        for round_ in range(runs + 1):  # the first round warms the .pyc files, not kept
            for label, argv in chosen.items():
                # A cache folder of its own each time: every listing is a cold one.
                env["TOOLPALETTE_CACHE_DIR"] = tempfile.mkdtemp(dir=caches)
                elapsed = _once(argv, env)
                if round_:
                    samples[label].append(elapsed)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {label: statistics.median(times) for label, times in samples.items()}


def table(medians: dict[str, float], runs: int) -> str:
    """The Markdown table: medians, and ratios to ``import toolpalette``."""
    anchor = medians["import toolpalette"]
    lines = [
        f"Median of {runs} processes each ({sys.version.split()[0]}).",
        "",
        "| command | median (ms) | vs `import toolpalette` |",
        "|---|---:|---:|",
    ]
    for label, value in medians.items():
        lines.append(f"| `{label}` | {value * 1000:.1f} | {value / anchor:.2f}x |")
    lines.append("")
    for label, value in medians.items():
        if label.endswith("(warm cache)"):
            command = label.removesuffix(" (warm cache)")
            lines.append(
                f"Summary: warm `{command}` = {value / anchor:.2f}x `import toolpalette` "
                "(goal <= 2x)."
            )
    lines.append(
        f"Summary: `call` of a local tool beside {SERVERS} MCP servers = "
        f"{medians[CALL_SERVERS] / medians[CALL_NONE]:.2f}x the same call without them "
        "(goal <= 1.2x)."
    )
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else RUNS
    medians = measure(runs)
    print(table(medians, runs))
    cold = measure_cold(runs)
    ratio = cold[COLD_LIST] / cold[COLD_EAGER]
    print(
        f"\nCold `toolpalette list` at {COLD_PACKS} packs: {cold[COLD_LIST] * 1000:.1f} ms, "
        f"pluggy eager load {cold[COLD_EAGER] * 1000:.1f} ms: {ratio:.2f}x (goal <= 1.1x)."
    )
    record(
        f"cold `toolpalette list`, {COLD_PACKS} packs, whole process",
        cold[COLD_LIST] * 1000,
        "a script loading the same packs with pluggy, eagerly",
        cold[COLD_EAGER] * 1000,
        unit="ms",
        goal="<= 1.1",
    )
    for label, value in medians.items():
        if label.endswith("(warm cache)"):
            command = label.removeprefix("toolpalette ").removesuffix(" (warm cache)")
            record(
                f"warm `toolpalette {command}`, whole process",
                value * 1000,
                '`python -c "import toolpalette"`',
                medians["import toolpalette"] * 1000,
                unit="ms",
                goal="<= 2",
            )
    record(
        f"`toolpalette call` of a local tool, {SERVERS} MCP servers configured, whole process",
        medians[CALL_SERVERS] * 1000,
        "the same call, no MCP server",
        medians[CALL_NONE] * 1000,
        unit="ms",
        goal="<= 1.2",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
