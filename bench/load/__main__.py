"""Load and soak ``toolpalette serve --http`` with Locust, beside the SDK's ``MCPServer``.

``python -m bench.load`` (what ``nox -s load`` runs) starts, each on 127.0.0.1 with a
free port and 2 workers, stateless:

- ``toolpalette serve --select toolpalette-files`` (``TOOLPALETTE_FILES_ROOT`` at a
  scratch folder holding ``sample.txt``) and the anchor serving the same ``file_info``;
- ``toolpalette serve --thinker bench.serve_palette:Bench --page-size 1000`` (``aadd``
  and 999 lookups; one page, as the anchor answers) and the anchor serving those tools;
- the same toolpalette palette with one worker, for the ``TCP_NODELAY`` check.

Then, for each case (``noop``: a call of ``aadd``; ``file_info``; ``list``: the 1,000
tools), each protocol era (2025-11-25 handshake, 2026-07-28 per-request) and each
concurrency (1, 8, 64 Locust users in a closed loop), it runs Locust headless against
one server then the other (the order alternating from one case to the next), each run
warmed up before its measured window: requests per second, p50 and p99 latency,
errors, and the servers' CPU time per request (every process of the server, read at
both ends of the window). The tables come first, the ``bench._summary`` rows last.

``--soak`` runs the soak instead: 10 minutes (``--soak-seconds N``) at concurrency 32
against the files palette, half the users in each era, ``file_info`` and
``tools/list`` in turn; it reports each worker's RSS after the warm-up, every minute,
and at the end, and the errors. Goal: RSS flat within 10 %, no error.

Options: ``--quick`` (short windows: a smoke run, not for figures), ``--seconds N`` and
``--warmup N`` (each run's window and warm-up), ``--concurrency 1,8,64``, ``--cases
noop,file_info,list``, ``--eras 2025-11-25,2026-07-28``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psutil

from bench import _summary
from bench.load.servers import Server, anchor_command, serve_command

HERE = Path(__file__).resolve().parent
LOCUSTFILE = HERE / "locustfile.py"
CASES = ("noop", "file_info", "list")
ERAS = ("2025-11-25", "2026-07-28")
ERA_NAMES = {"2025-11-25": "handshake 2025-11-25", "2026-07-28": "stateless 2026-07-28"}
SAMPLE = "Load test sample.\n" * 64


@dataclass
class Figures:
    """One measured window of one server."""

    requests: int
    errors: int
    seconds: float
    p50_ms: float
    p99_ms: float
    cpu_ms_per_request: float
    error_samples: list[str]

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


@dataclass
class Run:
    """One Locust process, where its figures go and the file holding its output."""

    process: subprocess.Popen[bytes]
    out: Path
    log: IO[bytes]

    def wait(self) -> None:
        self.process.wait()


def locust(
    server: Server,
    case: str,
    era: str,
    users: int,
    *,
    warmup: float,
    seconds: float,
    workdir: Path,
    wait: bool = True,
) -> Run:
    """Start one headless Locust run against ``server`` (waited for unless ``wait=False``)."""
    out = workdir / f"{server.label}-{case}-{era}-{users}.json"
    env = {
        **os.environ,
        "LOAD_CASE": case,
        "LOAD_ERA": era,
        "LOAD_WARMUP": str(warmup),
        "LOAD_SECONDS": str(seconds),
        "LOAD_PIDS": ",".join(map(str, server.pids())),
        "LOAD_OUT": str(out),
    }
    command = [
        sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless",
        "--users", str(users), "--spawn-rate", str(users),
        "--run-time", f"{math.ceil(warmup + seconds + 2)}s", "--stop-timeout", "5",
        "--host", server.url, "--only-summary", "--loglevel", "ERROR",
    ]  # fmt: skip
    log = open(workdir / f"{out.stem}.log", "wb")  # noqa: SIM115 (closed by window_of)
    run = Run(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT), out, log)
    if wait:
        run.wait()
    return run


def window_of(run: Run) -> dict[str, Any]:
    """The measured window a finished Locust run wrote (see ``locustfile``).

    Raises:
        RuntimeError: the run wrote none (its output is in the message).
    """
    run.log.close()
    if not run.out.exists():
        text = Path(run.log.name).read_text(errors="replace")[-2000:]
        code = run.process.returncode
        raise RuntimeError(f"Locust wrote no figures (exit {code}):\n{text}")
    data: dict[str, Any] = json.loads(run.out.read_text())
    return data


def figures_of(windows: list[dict[str, Any]]) -> Figures:
    """One server's figures over its windows (one per round).

    A window whose warm-up never ended (Locust's run time ran out first on a busy
    machine) measured nothing and is left out.
    """
    windows = [w for w in windows if "start" in w and "end" in w]
    latencies = sorted(v for w in windows for v in w["latencies_ms"])
    n = len(latencies)
    seconds = sum(w["end"] - w["start"] for w in windows)
    cpu = sum(w["cpu_end"] - w["cpu_start"] for w in windows) * 1000
    return Figures(
        requests=n,
        errors=sum(w["errors"] for w in windows),
        seconds=seconds,
        p50_ms=statistics.median(latencies) if n else float("nan"),
        p99_ms=latencies[min(n - 1, int(n * 0.99))] if n else float("nan"),
        cpu_ms_per_request=cpu / n if n else float("nan"),
        error_samples=sorted({e for w in windows for e in w["error_samples"]})[:5],
    )


def scratch_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="tpload-"))
    (root / "sample.txt").write_text(SAMPLE)
    return root


def start(servers: dict[str, Server]) -> None:
    for server in servers.values():
        server.wait_ready()
        print(f"- {server.label}: {server.url} ({server.mode}), pids {server.pids()}", flush=True)


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def run_cases(args: argparse.Namespace, env: dict[str, str], workdir: Path) -> None:
    listed = ("--thinker", "bench.serve_palette:Bench", "--page-size", "1000", "--stateless")
    files = ("--select", "toolpalette-files", "--stateless")
    servers = {
        "tp-files": Server("tp-files", serve_command(*files, "--workers", "2"), env),
        "tp-listed": Server("tp-listed", serve_command(*listed, "--workers", "2"), env),
        "tp-listed-1": Server("tp-listed-1", serve_command(*listed), env),
        "an-files": Server("an-files", anchor_command("files", 2), env),
        "an-listed": Server("an-listed", anchor_command("listed", 2), env),
    }
    pairs = {
        "noop": ("tp-listed", "an-listed"),
        "file_info": ("tp-files", "an-files"),
        "list": ("tp-listed", "an-listed"),
    }
    try:
        print("Servers:", flush=True)
        start(servers)
        rows: list[tuple[str, str, int, Figures, Figures]] = []
        turn = 0
        for case in args.cases:
            for era in args.eras:
                for users in args.concurrency:
                    ours, theirs = (servers[label] for label in pairs[case])
                    windows: dict[str, list[dict[str, Any]]] = {ours.label: [], theirs.label: []}
                    for _ in range(args.rounds):  # the order alternates from run to run
                        order = [ours, theirs] if turn % 2 == 0 else [theirs, ours]
                        turn += 1
                        for server in order:
                            run = locust(
                                server, case, era, users, warmup=args.warmup,
                                seconds=args.seconds / args.rounds, workdir=workdir,
                            )  # fmt: skip
                            windows[server.label].append(window_of(run))
                    measured = {label: figures_of(found) for label, found in windows.items()}
                    row = (case, era, users, measured[ours.label], measured[theirs.label])
                    rows.append(row)
                    print(f"  {case} / {era} / {users} users: done", flush=True)
        nodelay = []
        for era in args.eras:
            p50s: dict[str, list[float]] = {}
            for label in ("tp-listed-1", "tp-listed") * 3:
                run = locust(
                    servers[label], "noop", era, 1,
                    warmup=args.warmup, seconds=args.seconds / 2, workdir=workdir,
                )  # fmt: skip
                p50s.setdefault(label, []).append(figures_of([window_of(run)]).p50_ms)
            nodelay.append((era, min(p50s["tp-listed"]), min(p50s["tp-listed-1"])))
    finally:
        for server in servers.values():
            server.stop()
    print_cases(rows, args)
    print_nodelay(nodelay)
    record_cases(rows, nodelay)


def print_cases(
    rows: list[tuple[str, str, int, Figures, Figures]], args: argparse.Namespace
) -> None:
    print(
        f"\nEach server measured {args.seconds:g} s per row, in {args.rounds} runs alternating "
        f"with the other server's, each after {args.warmup:g} s of warm-up; both servers "
        "stateless with 2 workers; latency in ms; CPU: ms of server CPU per request "
        "(every process of the server).\n"
    )
    print(
        "| case | era | users | toolpalette req/s | MCPServer req/s | req/s ratio "
        "| toolpalette p50 / p99 | MCPServer p50 / p99 | p50 ratio "
        "| toolpalette CPU | MCPServer CPU | errors (tp / MCPServer) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case, era, users, ours, theirs in rows:
        print(
            f"| {case} | {ERA_NAMES[era]} | {users} | {ours.rate:,.0f} | {theirs.rate:,.0f} "
            f"| {ours.rate / theirs.rate:.2f}x "
            f"| {_ms(ours.p50_ms)} / {_ms(ours.p99_ms)} "
            f"| {_ms(theirs.p50_ms)} / {_ms(theirs.p99_ms)} "
            f"| {ours.p50_ms / theirs.p50_ms:.2f}x "
            f"| {_ms(ours.cpu_ms_per_request)} | {_ms(theirs.cpu_ms_per_request)} "
            f"| {ours.errors} / {theirs.errors} |"
        )
    for case, era, users, ours, theirs in rows:
        for label, figures in (("toolpalette", ours), ("MCPServer", theirs)):
            if figures.error_samples:
                print(f"\n{label}, {case} / {era} / {users}: {figures.error_samples}")
    print(
        "\nreq/s ratio: toolpalette / MCPServer (higher is better for toolpalette); "
        "p50 ratio: toolpalette / MCPServer (lower is better)."
    )


def print_nodelay(nodelay: list[tuple[str, float, float]]) -> None:
    print("\n`noop` at concurrency 1, toolpalette with 2 workers against 1 (best of 3 runs):\n")
    print("| era | 2 workers p50 ms | 1 worker p50 ms | ratio | goal |")
    print("|---|---:|---:|---:|---:|")
    for era, two, one in nodelay:
        print(f"| {ERA_NAMES[era]} | {_ms(two)} | {_ms(one)} | {two / one:.2f}x | <= 1.2x |")


GOALS: dict[str, tuple[str, str, str]] = {
    "noop": (">= 1.5", "<= 0.67", "<= 1"),
    "file_info": (">= 1.5", "<= 0.67", "<= 1"),
}
"""The goals of the call cases, as ratios to ``MCPServer``: req/s, CPU per request, p99."""


def record_cases(
    rows: list[tuple[str, str, int, Figures, Figures]], nodelay: list[tuple[str, float, float]]
) -> None:
    anchor = "the SDK's `MCPServer`"
    for case, era, users, ours, theirs in rows:
        where = f"{case}, {ERA_NAMES[era]}, {users} user(s)"
        rate, cpu, p99 = GOALS.get(case, ("", "", ""))
        _summary.record(
            f"HTTP load req/s, {where}", ours.rate, anchor, theirs.rate, unit="req/s", goal=rate
        )
        _summary.record(
            f"HTTP load CPU per request, {where}",
            ours.cpu_ms_per_request, anchor, theirs.cpu_ms_per_request, unit="ms", goal=cpu,
        )  # fmt: skip
        _summary.record(
            f"HTTP load p99, {where}", ours.p99_ms, anchor, theirs.p99_ms, unit="ms", goal=p99
        )
    for era, two, one in nodelay:
        _summary.record(
            f"HTTP p50 with 2 workers, noop, {ERA_NAMES[era]}, 1 user",
            two, "toolpalette with 1 worker", one, unit="ms", goal="<= 1.2",
        )  # fmt: skip


def run_soak(args: argparse.Namespace, env: dict[str, str], workdir: Path) -> None:
    files = ("--select", "toolpalette-files", "--stateless", "--workers", "2")
    server = Server("tp-files", serve_command(*files), env)
    warmup = min(10.0, max(2.0, args.soak_seconds / 20))
    try:
        start({"tp-files": server})
        workers = server.workers()
        run = locust(
            server, "soak", "mixed", args.soak_users,
            warmup=warmup, seconds=args.soak_seconds, workdir=workdir, wait=False,
        )  # fmt: skip
        began = time.monotonic()
        samples: list[tuple[float, dict[int, int]]] = []
        marks = [warmup + t for t in range(0, int(args.soak_seconds), 60)]
        marks.append(warmup + args.soak_seconds - 0.5)
        for mark in marks:
            time.sleep(max(0.0, began + mark - time.monotonic()))
            rss = {pid: psutil.Process(pid).memory_info().rss for pid in workers}
            samples.append((mark - warmup, rss))
            print(
                f"  {mark - warmup:5.0f} s: "
                + ", ".join(f"{v / 2**20:.1f} MiB" for v in rss.values()),
                flush=True,
            )
        run.wait()
        figures = figures_of([window_of(run)])
    finally:
        server.stop()
    print(
        f"\nSoak: {args.soak_seconds:g} s at concurrency {args.soak_users} (after {warmup:g} s "
        f"of warm-up), files palette, 2 workers, stateless; half the users in each era, "
        "`file_info` and `tools/list` in turn.\n"
    )
    print(
        f"{figures.requests:,} requests, {figures.rate:,.0f} req/s, p50 {_ms(figures.p50_ms)} ms, "
        f"p99 {_ms(figures.p99_ms)} ms, {figures.errors} errors {figures.error_samples or ''}\n"
    )
    print("| worker | " + " | ".join(f"{t:.0f} s" for t, _ in samples) + " | end / start |")
    print("|---|" + "---:|" * (len(samples) + 1))
    for pid in workers:
        first, last = samples[0][1][pid], samples[-1][1][pid]
        cells = " | ".join(f"{rss[pid] / 2**20:.1f}" for _, rss in samples)
        print(f"| {pid} (RSS MiB) | {cells} | {last / first:.3f}x |")
        _summary.record(
            f"Soak RSS of worker {pid}, end / start", last / 2**20,
            "its RSS after the warm-up", first / 2**20, unit="MiB", goal="<= 1.1",
        )  # fmt: skip
    _summary.record(
        "Soak errors", float(figures.errors), "requests", float(figures.requests), unit="",
        goal="<= 0",
    )  # fmt: skip


def _list(kind: type, allowed: tuple[str, ...] | None = None):  # type: ignore[no-untyped-def]
    def parse(text: str) -> list[object]:
        values = [kind(v) for v in text.split(",") if v]
        if allowed is not None and any(v not in allowed for v in values):
            raise argparse.ArgumentTypeError(f"one or more of {', '.join(allowed)}")
        return values

    return parse


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="short windows: a smoke run")
    parser.add_argument(
        "--seconds", type=float, default=12.0, help="measured seconds per server and case"
    )
    parser.add_argument("--warmup", type=float, default=2.0, help="each run's warm-up (s)")
    parser.add_argument(
        "--rounds", type=int, default=2, help="runs per server and case, in alternation"
    )
    parser.add_argument("--concurrency", type=_list(int), default=[1, 8, 64])
    parser.add_argument("--cases", type=_list(str, CASES), default=list(CASES))
    parser.add_argument("--eras", type=_list(str, ERAS), default=list(ERAS))
    parser.add_argument("--soak", action="store_true", help="run the soak instead of the cases")
    parser.add_argument("--soak-seconds", type=float, default=None, help="the soak's length (600)")
    parser.add_argument("--soak-users", type=int, default=32)
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.warmup = min(args.seconds, 4.0), min(args.warmup, 1.0)
    soak = args.soak or args.soak_seconds is not None
    if args.soak_seconds is None:
        args.soak_seconds = 600.0
    root = scratch_root()
    workdir = Path(tempfile.mkdtemp(prefix="tpload-runs-"))
    env = {"TOOLPALETTE_FILES_ROOT": str(root)}
    started = time.perf_counter()
    print(f"Locust runs' output in {workdir}", flush=True)
    if soak:
        run_soak(args, env, workdir)
    else:
        run_cases(args, env, workdir)
    print(f"\n## Summary ({time.perf_counter() - started:.0f} s in all)\n")
    print(_summary.table(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
