"""Whole-process start of the command line: a warm ``toolpalette list`` and friends.

Each command runs as its own process (as a user types it), round-robin with the
anchors so that drift in the machine's load hits every case alike:

- ``python -c pass``: an empty interpreter, the floor;
- ``python -c "import toolpalette"``: the anchor of the goal;
- ``toolpalette list`` with the listing cache warm (the installed packs are exactly
  those it was built for, so no pack is imported);
- ``toolpalette plugins --no-load`` (entry points only) and ``toolpalette --help``.

Goal: a warm ``toolpalette list`` costs at most 2x ``import toolpalette``. The listing
cache lives in a temporary folder (``TOOLPALETTE_CACHE_DIR``); editable installs make
the listing uncacheable, so run this where the packs are installed normally (as
``nox -s bench`` does). Run with ``python -m bench bench_cli [--runs N]``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._summary import record

RUNS = 20


def _command() -> list[str]:
    script = Path(sys.executable).with_name("toolpalette")
    if script.exists():
        return [str(script)]
    found = shutil.which("toolpalette")
    if found is None:
        raise SystemExit("bench_cli: the toolpalette command is not installed here")
    return [found]


def cases() -> dict[str, list[str]]:
    """Each case's command line."""
    tp = _command()
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import toolpalette": [sys.executable, "-c", "import toolpalette"],
        "toolpalette list (warm cache)": [*tp, "list"],
        "toolpalette plugins --no-load": [*tp, "plugins", "--no-load"],
        "toolpalette --help": [*tp, "--help"],
    }


def _once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def measure(runs: int) -> dict[str, float]:
    """Median wall time in seconds of each case, over ``runs`` processes each."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPALETTE_")}
    env["TOOLPALETTE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tp-bench-cli-")
    chosen = cases()
    for argv in chosen.values():
        _once(argv, env)  # warms the listing cache, the .pyc files and the file system
    samples: dict[str, list[float]] = {label: [] for label in chosen}
    for _ in range(runs):
        for label, argv in chosen.items():
            samples[label].append(_once(argv, env))
    shutil.rmtree(env["TOOLPALETTE_CACHE_DIR"], ignore_errors=True)
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
    warm = medians["toolpalette list (warm cache)"] / anchor
    lines += [
        "",
        f"Summary: warm `toolpalette list` = {warm:.2f}x `import toolpalette` (goal <= 2x).",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else RUNS
    medians = measure(runs)
    print(table(medians, runs))
    record(
        "warm `toolpalette list`, whole process",
        medians["toolpalette list (warm cache)"] * 1000,
        '`python -c "import toolpalette"`',
        medians["import toolpalette"] * 1000,
        unit="ms",
        goal="<= 2",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
