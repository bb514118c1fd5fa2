"""Run every benchmark module (or those named on the command line) and print their tables.

Each module in MODULES defines ``main(argv: list[str]) -> None``, prints a Markdown table
of medians and ratios against its anchors (all measured in this one run), and records
its headline figures (``bench._summary.record``); the summary table of them all comes
last. ``--quick`` runs fewer rounds of everything (a smoke run, not for figures to
quote); naming modules (``bench_pipeline bench_scale``) runs only those.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import time

from bench import _summary

MODULES: tuple[str, ...] = (
    "bench_import",
    "bench_cli",
    "bench_discovery",
    "bench_pipeline",
    "bench_before",
    "bench_content",
    "bench_refusal",
    "bench_reconcile",
    "bench_schema",
    "bench_serve",
    "bench_mcp_client",
    "bench_mcp_http_bounds",
    "bench_http",
    "bench_scale",
    "bench_search",
    "bench_deferral",
    "bench_code_mode",
    "bench_ledger",
    "bench_sessions",
)

# Fewer rounds and calls under --quick; the modules read these when first imported.
QUICK_ENV = {"BENCH_ROUNDS": "5", "BENCH_CALLS": "50"}


def main(argv: list[str]) -> None:
    named = [a for a in argv if a.startswith("bench_")]
    unknown = [a for a in named if a not in MODULES]
    if unknown:
        raise SystemExit(f"unknown benchmark module(s): {', '.join(unknown)}; one of {MODULES}")
    if "--quick" in argv:
        for key, value in QUICK_ENV.items():
            os.environ.setdefault(key, value)
        if "--runs" not in argv:
            argv = [*argv, "--runs", "5"]
    chosen = [m for m in MODULES if not named or m in named]
    started = time.perf_counter()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    for name in chosen:
        begun = time.perf_counter()
        print(f"\n## {name}\n", flush=True)
        importlib.import_module(f"bench.{name}").main(argv)
        print(f"\n({name}: {time.perf_counter() - begun:.0f} s)", flush=True)
        # A peer that set up logging (the SDK's servers do, at INFO) would have every
        # later module format log lines as it measures: each starts from the default.
        root.handlers[:] = handlers
        root.setLevel(level)
    print(f"\n## Summary ({time.perf_counter() - started:.0f} s in all)\n")
    print(_summary.table(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
