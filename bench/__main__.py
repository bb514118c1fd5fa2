"""Run every benchmark module (or those named on the command line) and print their tables.

Each module in MODULES defines ``main(argv: list[str]) -> None`` and prints a Markdown
table of medians and ratios against the anchors, all measured in this one run.
"""

from __future__ import annotations

import importlib
import sys

MODULES: tuple[str, ...] = (
    "bench_import",
    "bench_cli",
    "bench_discovery",
    "bench_pipeline",
    "bench_refusal",
    "bench_reconcile",
    "bench_serve",
    "bench_mcp_client",
)


def main(argv: list[str]) -> None:
    chosen = [m for m in MODULES if not argv or m in argv]
    for name in chosen:
        print(f"\n## {name}\n", flush=True)
        importlib.import_module(f"bench.{name}").main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
