"""Import cost: ``import toolpalette`` against ``from pydantic import BaseModel``.

Each statement runs in a fresh interpreter (``python -c``), round-robin so that drift in
the machine's load hits every case alike; the table gives the median wall time of each,
the time above an empty interpreter, and the ratio to pydantic. Run with
``python -m bench bench_import [--runs N]``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from bench._summary import record

CASES: tuple[tuple[str, str], ...] = (
    ("python -c pass", "pass"),
    ("from pydantic import BaseModel", "from pydantic import BaseModel"),
    ("import toolpalette", "import toolpalette"),
)
RUNS = 30


def _runs(argv: list[str]) -> int:
    if "--runs" in argv:
        return int(argv[argv.index("--runs") + 1])
    return RUNS


def _once(statement: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], check=True)
    return time.perf_counter() - start


def measure(runs: int) -> dict[str, float]:
    """Median wall time in seconds of each case, over ``runs`` fresh interpreters."""
    samples: dict[str, list[float]] = {label: [] for label, _ in CASES}
    for label, statement in CASES:
        _once(statement)  # warm the file system cache and .pyc files
        del label
    for _ in range(runs):
        for label, statement in CASES:
            samples[label].append(_once(statement))
    return {label: statistics.median(times) for label, times in samples.items()}


def table(medians: dict[str, float], runs: int) -> str:
    """The Markdown table of medians, net of the empty interpreter, and ratios."""
    base = medians["python -c pass"]
    anchor = medians["from pydantic import BaseModel"] - base
    lines = [
        f"Median of {runs} fresh interpreters each ({sys.version.split()[0]}).",
        "",
        "| statement | median (ms) | above `pass` (ms) | vs pydantic import |",
        "|---|---:|---:|---:|",
    ]
    for label, _ in CASES:
        total = medians[label]
        net = total - base
        ratio = f"{net / anchor:.2f}x" if anchor > 0 and label != "python -c pass" else "-"
        lines.append(f"| `{label}` | {total * 1000:.1f} | {net * 1000:.1f} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    runs = _runs(argv)
    medians = measure(runs)
    print(table(medians, runs))
    base = medians["python -c pass"]
    record(
        "`import toolpalette`, above `python -c pass`",
        (medians["import toolpalette"] - base) * 1000,
        "`from pydantic import BaseModel`",
        (medians["from pydantic import BaseModel"] - base) * 1000,
        unit="ms",
        goal="<= 0.5",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
