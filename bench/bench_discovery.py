"""Discovery: ToolHub construction, resolving one pack, listing every tool, beside the anchors.

For N = 10, 100 and 1000 installed packs (generated ``*.dist-info`` folders, each with
an ``entry_points.txt`` and a tiny hooks module, in a temporary directory put on
``sys.path``), every measurement runs in a fresh interpreter and times only the work
itself (toolpalette, pluggy, stevedore, jsonschema and packaging are imported before the
clock starts, for every case alike: a one-time cost of any process, not of discovery):

- ``stdlib entry_points``: ``importlib.metadata.entry_points(group=...)``, the floor;
- ``hub construct``: ``ToolHub()``;
- ``hub construct + resolve one``: ``ToolHub()`` then ``providers_for_pack`` of one pack;
- ``pluggy eager load``: ``load_setuptools_entrypoints`` then the register hook;
- ``stevedore ExtensionManager``: loads every entry point;
- ``hub catalog (every tool built)``: ``ToolHub().catalog()``, every pack imported and
  every tool's provider (pydantic model, schema) built;
- ``hub list all, cold cache``: ``ToolHub().listing()`` with an empty listing cache
  (imports and registers every pack, collects its tools without building their
  schemas, reads each pack's metadata once, writes the cache);
- ``hub list all, warm cache``: ``ToolHub().listing()`` answered by the listing cache
  (the packs are exactly those it was built for, so none is imported).

Targets: construct + resolve one at N = 1000 costs at most 1.2x the stdlib
enumeration and imports exactly one pack; listing all is no slower than pluggy's
eager load.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from bench._summary import record

SIZES = (10, 100, 1000)
GROUP = "toolpalette.plugins"

PRELUDE = """
import json, os, sys, tempfile, time
import importlib.metadata
import jsonschema, packaging.requirements, pluggy, stevedore  # one-time imports, off the clock
import toolpalette
from toolpalette import hookspecs
from toolpalette._hub import ToolHub
def bench_modules():
    return sum(1 for m in sys.modules if m.startswith("tpbench_") and m.endswith(".hooks"))
"""

CASES: dict[str, str] = {
    "stdlib entry_points": """
t = time.perf_counter()
found = list(importlib.metadata.entry_points(group="toolpalette.plugins"))
elapsed = time.perf_counter() - t
""",
    "hub construct": """
t = time.perf_counter()
hub = ToolHub(config={})
elapsed = time.perf_counter() - t
""",
    "hub construct + resolve one": """
t = time.perf_counter()
hub = ToolHub(config={})
tools = hub.providers_for_pack("pack@MIDDLE@")
elapsed = time.perf_counter() - t
assert [p.name for p in tools] == ["tool@MIDDLE@"], tools
""",
    "pluggy eager load": """
t = time.perf_counter()
pm = pluggy.PluginManager("toolpalette")
pm.add_hookspecs(hookspecs)
pm.load_setuptools_entrypoints("toolpalette.plugins")
found = pm.hook.toolpalette_register_tools()
elapsed = time.perf_counter() - t
""",
    "stevedore ExtensionManager": """
from stevedore import ExtensionManager
t = time.perf_counter()
manager = ExtensionManager(namespace="toolpalette.plugins", invoke_on_load=False)
found = [ext.plugin for ext in manager]
elapsed = time.perf_counter() - t
""",
    "hub catalog (every tool built)": """
t = time.perf_counter()
catalog = ToolHub(config={}).catalog()
names = catalog.tool_names()
elapsed = time.perf_counter() - t
""",
    "hub list all, cold cache": """
os.environ["TOOLPALETTE_CACHE_DIR"] = tempfile.mkdtemp()
t = time.perf_counter()
listing = ToolHub(config={}).listing()
elapsed = time.perf_counter() - t
assert not listing.cached
""",
    "hub list all, warm cache": """
os.environ["TOOLPALETTE_CACHE_DIR"] = "@CACHE@"
t = time.perf_counter()
listing = ToolHub(config={}).listing()
elapsed = time.perf_counter() - t
assert listing.cached, "the listing cache missed"
assert sum(t.module.startswith("tpbench_") for t in listing.tools) == @COUNT@
""",
}

HOOKS = '''
import toolpalette


@toolpalette.tool(read_only=True)
def tool{i:04d}(text: str, count: int = 1) -> str:
    """Repeat a text.

    Args:
        text: What to repeat.
        count: How many times.
    """
    return text * count


@toolpalette.hookimpl
def toolpalette_register_tools():
    return [tool{i:04d}]
'''


def generate(root: Path, count: int) -> None:
    """``count`` installed packs as dist-info folders plus packages under ``root``."""
    for i in range(count):
        package = root / f"tpbench_pack{i:04d}"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "hooks.py").write_text(HOOKS.format(i=i))
        info = root / f"tpbench_pack{i:04d}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: tpbench-pack{i:04d}\nVersion: 1.0\n"
            "Requires-Dist: toolpalette\n"
        )
        (info / "entry_points.txt").write_text(
            f"[{GROUP}]\npack{i:04d} = tpbench_pack{i:04d}.hooks\n"
        )
        (info / "RECORD").write_text("")


def run_case(root: Path, code: str) -> tuple[float, int]:
    """Seconds the case took in a fresh interpreter, and how many packs it imported."""
    script = PRELUDE + textwrap.dedent(code) + ("\nprint(json.dumps([elapsed, bench_modules()]))\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    for name in (
        "TOOLPALETTE_PLUGINS",
        "TOOLPALETTE_BLOCK_PLUGINS",
        "TOOLPALETTE_DISABLE_PLUGIN_AUTOLOAD",
    ):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"benchmark case failed:\n{done.stderr}")
    elapsed, imported = json.loads(done.stdout.strip().splitlines()[-1])
    return float(elapsed), int(imported)


def measure(count: int, repeats: int) -> dict[str, tuple[float, int]]:
    """Median milliseconds and packs imported, per case, for ``count`` installed packs."""
    results: dict[str, tuple[float, int]] = {}
    with tempfile.TemporaryDirectory(prefix="tpbench-") as tmp:
        root = Path(tmp)
        generate(root, count)
        cache = root / "listing-cache"
        cases = {
            name: code.replace("@MIDDLE@", f"{count // 2:04d}")
            .replace("@CACHE@", str(cache))
            .replace("@COUNT@", str(count))
            for name, code in CASES.items()
        }
        warm_up = cases["hub list all, cold cache"].replace("tempfile.mkdtemp()", repr(str(cache)))
        run_case(root, warm_up)
        runs: dict[str, list[tuple[float, int]]] = {name: [] for name in cases}
        for _ in range(repeats):  # round-robin, so drift in machine load hits every case alike
            for name, case in cases.items():
                runs[name].append(run_case(root, case))
        for name, done in runs.items():
            results[name] = (statistics.median(r[0] for r in done) * 1000, done[-1][1])
    return results


def table(all_results: dict[int, dict[str, tuple[float, int]]]) -> str:
    """The Markdown table: median ms, packs imported, and ratios against the anchors."""
    lines = [
        "| N | case | median ms | packs imported | vs stdlib entry_points | vs pluggy eager |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for count, results in all_results.items():
        floor = results["stdlib entry_points"][0]
        eager = results["pluggy eager load"][0]
        for name, (ms, imported) in results.items():
            ratios = f"{ms / floor:.2f}x | {ms / eager:.2f}x"
            lines.append(f"| {count} | {name} | {ms:.1f} | {imported} | {ratios} |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    """Measure every size and print the table (``--quick``: fewer repeats)."""
    repeats = 3 if "--quick" in argv else 5
    sizes = SIZES
    for arg in argv:
        if arg.startswith("--sizes="):
            sizes = tuple(int(n) for n in arg.removeprefix("--sizes=").split(","))
    all_results = {count: measure(count, repeats) for count in sizes}
    print(table(all_results))
    big = all_results[sizes[-1]]
    ratio = big["hub construct + resolve one"][0] / big["stdlib entry_points"][0]
    warm = big["hub list all, warm cache"][0] / big["pluggy eager load"][0]
    cold = big["hub list all, cold cache"][0] / big["pluggy eager load"][0]
    print(
        f"\nN={sizes[-1]}: construct + resolve one = {ratio:.2f}x stdlib (target <= 1.2x), "
        f"imports {big['hub construct + resolve one'][1]} pack(s) (target 1); "
        f"list all = {warm:.2f}x pluggy eager load with the listing cache warm, "
        f"{cold:.2f}x cold (target <= 1.0x)"
    )
    n = sizes[-1]
    eager = big["pluggy eager load"][0]
    record(
        f"cold list all, {n} packs",
        big["hub list all, cold cache"][0],
        "pluggy eager load",
        eager,
        unit="ms",
        goal="<= 1.0",
    )
    record(
        f"warm list all, {n} packs",
        big["hub list all, warm cache"][0],
        "pluggy eager load",
        eager,
        unit="ms",
        goal="<= 1.0",
    )
    record(
        f"construct + resolve one pack, {n} packs",
        big["hub construct + resolve one"][0],
        "stdlib `entry_points()`",
        big["stdlib entry_points"][0],
        unit="ms",
        goal="<= 1.2",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
