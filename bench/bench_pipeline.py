"""One tool call through toolpalette's pipeline, beside the anchors, in one run.

A trivial ``add(a, b)`` tool (sync and async) runs through:

- a raw call (the floor);
- pydantic validation of the arguments, then the call;
- langchain-core ``StructuredTool.invoke`` / ``ainvoke``;
- the mcp SDK's ``MCPServer.call_tool`` (``FastMCP`` on mcp 1.x);
- peers doing the same job (the async tool, a no-op, a 3-field model input, an invalid
  input): FastMCP's in-process ``Client(server).call_tool`` and pydantic-ai's
  ``ToolManager.handle_call`` over a ``FunctionToolset`` (prepared for a run step);
- toolpalette: ``Executor.execute`` (validation, deadline, output cap, error shaping),
  and ``Executor.execute_sync`` for a sync caller;
- for sync tools, the bare thread hop: ``ThreadPoolExecutor.submit().result()`` and
  ``loop.run_in_executor``;

plus an invalid-input call on each. Every case runs in interleaved rounds (so machine
noise hits all cases alike); the table shows per-call medians over the rounds and the
ratios the targets are stated in. ``BENCH_ROUNDS`` / ``BENCH_CALLS`` scale the run.

Then what telemetry costs a call (``_run/telemetry.py``, ``_run/spans.py``):

- OpenTelemetry absent (the API as if not installed), against the newest core without
  telemetry, in two worker processes taking turns (``bench_before``'s way);
  goal: no measurable change;
- the API imported with no SDK (its no-op default): the checks a call adds, timed
  alone (goal: at most 1 µs per call), and whole calls against telemetry switched off,
  in interleaved rounds of this process, for information beside the SDK with in-memory
  exporters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pydantic
import toolpalette
from toolpalette import Executor, ToolRegistry

from bench import bench_before
from bench._summary import record

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "31"))
CALLS = int(os.environ.get("BENCH_CALLS", "200"))
GOOD = {"a": 1, "b": 2}
BAD = {"a": "one", "b": 2}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def aadd(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class AddArgs(pydantic.BaseModel):
    a: int
    b: int


Case = tuple[str, Callable[[], Any], bool]  # label, call, is_async


def _swallow(call: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        try:
            return call()
        except Exception as exc:
            return exc

    return run


def _aswallow(call: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    async def run() -> Any:
        try:
            return await call()
        except Exception as exc:
            return exc

    return run


def _toolpalette_cases() -> list[Case]:
    registry = ToolRegistry(
        [toolpalette.tool(name="add")(add), toolpalette.tool(name="aadd")(aadd)]
    )
    executor = Executor(registry, timeout=30)
    return [
        ("toolpalette async tool", lambda: executor.execute("aadd", GOOD), True),
        ("toolpalette sync tool, async caller", lambda: executor.execute("add", GOOD), True),
        ("toolpalette sync tool, execute_sync", lambda: executor.execute_sync("add", GOOD), False),
        ("toolpalette invalid input (async)", lambda: executor.execute("aadd", BAD), True),
        ("toolpalette invalid input (sync)", lambda: executor.execute_sync("add", BAD), False),
    ]


class Point(pydantic.BaseModel):
    x: int
    y: int
    label: str


POINT = {"p": {"x": 1, "y": 2, "label": "a"}}


async def noop() -> None:
    """Do nothing."""


async def place(p: Point) -> int:
    """Place a point (a 3-field model input)."""
    return p.x + p.y


def _thinker_cases() -> list[Case]:
    """The same calls through `thinker.call`, as a host's agent loop makes them."""
    tools = [toolpalette.tool(name=n)(f) for n, f in (("aadd", aadd), ("noop", noop))]
    placing = toolpalette.tool(name="place")(place)

    class Bench(toolpalette.Thinker):
        @classmethod
        def declare_compatible_tools(cls) -> toolpalette.ToolSelector:
            return toolpalette.ToolSelector().tool(tools[0]).tool(tools[1]).tool(placing)

    # The logging default (WARNING): an imported peer's logging setup lets INFO through.
    logging.getLogger("toolpalette.failures").setLevel(logging.WARNING)
    thinker = toolpalette.ToolHub(autoload=False, config={}).bind(Bench)
    thinker.begin_turn()
    executor = Executor(ToolRegistry(tools), timeout=30)
    return [
        ("thinker.call async no-op", lambda: thinker.call("noop", {}), True),
        ("Executor.execute async no-op", lambda: executor.execute("noop", {}), True),
        ("thinker.call invalid input", lambda: thinker.call("aadd", BAD), True),
        ("thinker.call 3-field model input", lambda: thinker.call("place", POINT), True),
    ]


def _baseline_cases(pool: ThreadPoolExecutor) -> list[Case]:
    async def in_executor() -> int:
        return await asyncio.get_running_loop().run_in_executor(pool, add, 1, 2)

    def validated() -> int:
        args = AddArgs.model_validate(GOOD)
        return add(args.a, args.b)

    def validated_point() -> int:
        return add(Point.model_validate(POINT["p"]).x, 2)

    async def bare_await() -> None:
        return await noop()

    async def avalidated() -> int:
        args = AddArgs.model_validate(GOOD)
        return await aadd(args.a, args.b)

    return [
        ("raw sync call", lambda: add(1, 2), False),
        ("raw async call", lambda: aadd(1, 2), True),
        ("pydantic validate + call", validated, False),
        ("pydantic validate 3-field model + call", validated_point, False),
        ("bare await of a no-op", bare_await, True),
        ("pydantic validate + async call", avalidated, True),
        ("pydantic invalid input", _swallow(lambda: AddArgs.model_validate(BAD)), False),
        ("ThreadPoolExecutor.submit().result()", lambda: pool.submit(add, 1, 2).result(), False),
        ("loop.run_in_executor", in_executor, True),
    ]


def _langchain_cases() -> list[Case]:
    try:
        from langchain_core.tools import StructuredTool
    except ImportError:
        return []
    lc_tool = StructuredTool.from_function(func=add, coroutine=aadd, name="add")
    return [
        ("langchain StructuredTool.invoke", lambda: lc_tool.invoke(GOOD), False),
        ("langchain StructuredTool.ainvoke", lambda: lc_tool.ainvoke(GOOD), True),
        ("langchain invalid input", _swallow(lambda: lc_tool.invoke(BAD)), False),
    ]


def _mcp_cases() -> list[Case]:
    try:
        from mcp.server.mcpserver import MCPServer as Server
    except ImportError:
        try:
            from mcp.server.fastmcp import FastMCP as Server
        except ImportError:
            return []
    # WARNING, as every server here logs: the SDK's default (INFO) would set up the
    # root logger for every module after this one, and log each of its calls.
    server = Server("bench", log_level="WARNING")
    server.add_tool(add, name="add")
    server.add_tool(aadd, name="aadd")
    server.add_tool(noop, name="noop")
    server.add_tool(place, name="place")
    return [
        ("mcp call_tool, async tool", lambda: server.call_tool("aadd", GOOD), True),
        ("mcp call_tool, async no-op", lambda: server.call_tool("noop", {}), True),
        ("mcp call_tool, 3-field model input", lambda: server.call_tool("place", POINT), True),
        ("mcp call_tool, sync tool", lambda: server.call_tool("add", GOOD), True),
        ("mcp invalid input", _aswallow(lambda: server.call_tool("aadd", BAD)), True),
    ]


async def _fastmcp_cases(stack: contextlib.AsyncExitStack) -> list[Case]:
    """FastMCP's in-process client (``fastmcp.Client(server)``), the same tools in memory."""
    try:
        import fastmcp
    except ImportError:
        return []
    server = fastmcp.FastMCP("bench")
    for name, fn in (("aadd", aadd), ("noop", noop), ("place", place)):
        server.tool(fn, name=name)
    # FastMCP logs each refused input at WARNING through its own (rich) handler: its
    # output is kept out of the tables; the logging call itself still runs and is timed.
    logging.getLogger("fastmcp").handlers[:] = [logging.NullHandler()]
    client = await stack.enter_async_context(fastmcp.Client(server))
    return [
        ("FastMCP Client.call_tool, async tool", lambda: client.call_tool("aadd", GOOD), True),
        ("FastMCP Client.call_tool, async no-op", lambda: client.call_tool("noop", {}), True),
        (
            "FastMCP Client.call_tool, 3-field model input",
            lambda: client.call_tool("place", POINT),
            True,
        ),
        ("FastMCP invalid input", _aswallow(lambda: client.call_tool("aadd", BAD)), True),
    ]


async def _pydantic_ai_cases() -> list[Case]:
    """pydantic-ai's ``ToolManager.handle_call`` over a ``FunctionToolset`` of the tools.

    The manager is prepared for one run step, as an agent's run prepares it; the retry
    budget is large, so an invalid input takes the path a model's first mistake takes
    (a ``ToolRetryError`` carrying the retry prompt) on every call.
    """
    try:
        from pydantic_ai import RunContext
        from pydantic_ai.exceptions import ToolRetryError
        from pydantic_ai.messages import ToolCallPart
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.tool_manager import ToolManager
        from pydantic_ai.toolsets import FunctionToolset
        from pydantic_ai.usage import RunUsage
    except ImportError:
        return []
    toolset: Any = FunctionToolset([aadd, noop, place], max_retries=1_000_000)
    ctx: Any = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager: Any = await ToolManager(toolset).for_run_step(ctx)

    def handle(name: str, args: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
        return lambda: manager.handle_call(ToolCallPart(tool_name=name, args=args))

    with contextlib.suppress(ToolRetryError):  # the case below measures this path alone
        await handle("aadd", BAD)()
        raise RuntimeError("pydantic-ai accepted an invalid input")
    return [
        ("pydantic-ai ToolManager.handle_call, async tool", handle("aadd", GOOD), True),
        ("pydantic-ai ToolManager.handle_call, async no-op", handle("noop", {}), True),
        ("pydantic-ai ToolManager.handle_call, 3-field model input", handle("place", POINT), True),
        ("pydantic-ai ToolManager invalid input", _aswallow(handle("aadd", BAD)), True),
    ]


async def _measure_with_peers(cases: list[Case]) -> tuple[list[Case], dict[str, list[float]]]:
    """``measure`` over ``cases`` and the peers that need a running loop to be set up."""
    async with contextlib.AsyncExitStack() as stack:
        cases = [*cases, *await _fastmcp_cases(stack), *await _pydantic_ai_cases()]
        return cases, await measure(cases)


async def _time(call: Callable[[], Any], is_async: bool, n: int) -> float:
    """Microseconds per call over ``n`` calls."""
    started = time.perf_counter()
    if is_async:
        for _ in range(n):
            await call()
    else:
        for _ in range(n):
            call()
    return (time.perf_counter() - started) / n * 1e6


async def measure(cases: list[Case]) -> dict[str, list[float]]:
    """Per-call times of every interleaved round (after a discarded warm-up round)."""
    samples: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    for label, call, is_async in cases:
        await _time(call, is_async, max(_calls(label) // 4, 5))
    for _ in range(ROUNDS):
        for label, call, is_async in cases:
            samples[label].append(await _time(call, is_async, _calls(label)))
    return samples


def _calls(label: str) -> int:
    """Calls per round of a case: FastMCP's client takes milliseconds a call, so fewer."""
    return max(CALLS // 20, 5) if label.startswith("FastMCP") else CALLS


def _targets(m: dict[str, float]) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []

    def check(label: str, value: float | None, goal: str, ok: bool | None) -> None:
        shown = "n/a" if value is None else f"{value:.2f}"
        rows.append(
            (label, f"{shown} ({goal})", "n/a" if ok is None else ("met" if ok else "MISSED"))
        )

    tp_async = m["toolpalette async tool"]
    overhead = tp_async - m["raw async call"]
    check("async tool: pipeline overhead, µs", overhead, "≤ 20", overhead <= 20)
    mcp_async = m.get("mcp call_tool, async tool")
    ratio = mcp_async / tp_async if mcp_async else None
    check(
        "async tool: mcp call_tool / toolpalette",
        ratio,
        "≥ 3x",
        None if ratio is None else ratio >= 3,
    )
    lc_async = m.get("langchain StructuredTool.ainvoke")
    ratio = lc_async / tp_async if lc_async else None
    check(
        "async tool: langchain ainvoke / toolpalette",
        ratio,
        "≥ 30x",
        None if ratio is None else ratio >= 30,
    )
    tpe = m["ThreadPoolExecutor.submit().result()"]
    ratio = m["toolpalette sync tool, execute_sync"] / tpe
    check("sync tool: execute_sync / TPE round trip", ratio, "≤ 1.2x", ratio <= 1.2)
    ratio = m["toolpalette sync tool, async caller"] / m["loop.run_in_executor"]
    check("sync tool: async caller / run_in_executor", ratio, "info", None)
    mcp_sync = m.get("mcp call_tool, sync tool")
    ratio = mcp_sync / m["toolpalette sync tool, async caller"] if mcp_sync else None
    check(
        "sync tool: mcp call_tool / toolpalette (async caller)",
        ratio,
        "≥ 5x",
        None if ratio is None else ratio >= 5,
    )
    ratio = mcp_sync / m["toolpalette sync tool, execute_sync"] if mcp_sync else None
    check(
        "sync tool: mcp call_tool / toolpalette execute_sync",
        ratio,
        "≥ 5x",
        None if ratio is None else ratio >= 5,
    )
    tp_bad = m["toolpalette invalid input (async)"]
    mcp_bad = m.get("mcp invalid input")
    ratio = tp_bad / mcp_bad if mcp_bad else None
    check(
        "invalid input (async): toolpalette / mcp call_tool",
        ratio,
        "≤ 0.5x",
        None if ratio is None else ratio <= 0.5,
    )
    ratio = tp_bad / m["pydantic invalid input"]
    check("invalid input (async): toolpalette / pydantic", ratio, "info", None)
    return rows


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    """Print the medians table and the targets table."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        cases = [
            *_baseline_cases(pool),
            *_toolpalette_cases(),
            *_thinker_cases(),
            *_langchain_cases(),
            *_mcp_cases(),
        ]
        cases, samples = asyncio.run(_measure_with_peers(cases))
    medians = {label: statistics.median(values) for label, values in samples.items()}
    floor = {False: medians["raw sync call"], True: medians["raw async call"]}
    tp_async = medians["toolpalette async tool"]
    rows = [
        (
            label,
            f"{medians[label]:.2f}",
            f"{min(samples[label]):.2f}",
            f"{medians[label] - floor[is_async]:.2f}",
            f"{medians[label] / tp_async:.2f}x",
        )
        for label, _, is_async in cases
    ]
    print(
        f"{ROUNDS} rounds x {CALLS} calls per case; per-call medians in microseconds "
        "(best round beside it, to show the machine's noise).\n"
    )
    header = ("case", "median µs", "best round µs", "median over raw µs", "vs toolpalette async")
    print(_table(header, rows))
    print()
    print(_table(("target", "measured", "status"), _targets(medians)))
    summarize(medians)
    print()
    telemetry_absent()
    print()
    asyncio.run(telemetry_modes())
    print()
    telemetry_checks()


# -- telemetry ---------------------------------------------------------------------------

TELEMETRY = "core/src/toolpalette/_run/telemetry.py"


def _before_telemetry() -> str | None:
    """The newest commit reachable from here without the telemetry module.

    Not the parent of the commit that added it: merges brought the rest of the core on
    since, and the comparison is with the core as it is, less telemetry (in a merge of
    the branch that brought telemetry in, the other side's tip).
    """

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-C", str(bench_before.ROOT), *args],
            capture_output=True,
            text=True,
            check=False,
        )

    listed = git("rev-list", "--date-order", "--max-count=500", "HEAD")
    if listed.returncode != 0:
        return None
    for commit in listed.stdout.split():
        if git("cat-file", "-e", f"{commit}:{TELEMETRY}").returncode != 0:
            return commit[:10]
    return None


def telemetry_absent() -> None:
    """The async pipeline's overhead with OpenTelemetry absent, now and before telemetry."""
    before = _before_telemetry()
    source = bench_before._before_source(before) if before is not None else None
    if source is None:
        print("no git history of the telemetry module: no comparison with the core before it.")
        return
    rounds, calls = bench_before.ROUNDS, bench_before.CALLS
    old = bench_before._Worker(source, BENCH_WITHOUT_OTEL="1")
    new = bench_before._Worker(None, BENCH_WITHOUT_OTEL="1")
    samples: dict[str, list[tuple[float, float]]] = {"before": [], "now": []}
    try:
        old.round(calls // 4)
        new.round(calls // 4)
        for index in range(rounds):
            order = ((old, "before"), (new, "now"))
            for worker, key in order if index % 2 == 0 else reversed(order):
                samples[key].append(worker.round(calls))
    finally:
        old.close()
        new.close()
    was, was_best = bench_before._overhead(samples["before"])
    now, now_best = bench_before._overhead(samples["now"])
    turns = zip(samples["before"], samples["now"], strict=True)
    paired = statistics.median((n[0] - n[1]) / (b[0] - b[1]) for b, n in turns)
    print(
        f"OpenTelemetry absent: {rounds} interleaved rounds of {calls} calls of a trivial "
        "async tool, pipeline overhead over a raw call per call:\n"
    )
    print(
        _table(
            ("core", "median µs", "best rounds µs"),
            [
                (f"before telemetry ({before})", f"{was:.2f}", f"{was_best:.2f}"),
                ("now", f"{now:.2f}", f"{now_best:.2f}"),
            ],
        )
    )
    print(
        f"\nratio now / before: {now_best / was_best:.3f}x from the best rounds, "
        f"{now / was:.3f}x from the medians, {paired:.3f}x the median of each turn's ratio"
    )
    record(
        "telemetry: OpenTelemetry absent, async overhead (best rounds)",
        now_best,
        "the same before telemetry",
        was_best,
        unit="µs",
        goal="<= 1.03",
    )


def _sdk() -> tuple[Any, Any, Any] | None:
    """A tracer provider with an in-memory exporter, a meter provider, the exporter."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError:
        return None
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider, MeterProvider(metric_readers=[InMemoryMetricReader()]), exporter


async def telemetry_modes() -> None:
    """Calls with telemetry off, on with the API's no-op default, and on with an SDK."""
    try:
        from opentelemetry import trace
    except ImportError:
        print("opentelemetry-api is not installed: no telemetry figures in this run.")
        return
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        print("a global tracer provider is set in this process: no no-op figures in this run.")
        return
    sdk = _sdk()
    registry = ToolRegistry(
        [toolpalette.tool(name="add")(add), toolpalette.tool(name="aadd")(aadd)]
    )
    executor = Executor(registry, timeout=30)
    cases = [
        ("async tool", lambda: executor.execute("aadd", GOOD)),
        ("sync tool, async caller", lambda: executor.execute("add", GOOD)),
    ]
    modes: dict[str, dict[str, Any]] = {"off": {"enabled": False}, "no-op": {}}
    if sdk is not None:
        modes["SDK, in-memory"] = {"tracer_provider": sdk[0], "meter_provider": sdk[1]}
    samples: dict[tuple[str, str], list[float]] = {
        (label, mode): [] for label, _ in cases for mode in modes
    }
    try:
        for options in modes.values():  # warm-up, discarded
            toolpalette.configure_telemetry(**options)
            for _label, call in cases:
                await _time(call, True, max(CALLS // 4, 10))
        for index in range(ROUNDS):
            order = list(modes.items())
            for mode, options in order if index % 2 == 0 else reversed(order):
                toolpalette.configure_telemetry(**options)
                for label, call in cases:
                    await call()  # the first call after configuring sets things up
                    samples[(label, mode)].append(await _time(call, True, CALLS))
                if sdk is not None:
                    sdk[2].clear()
    finally:
        toolpalette.configure_telemetry()
    medians = {key: statistics.median(values) for key, values in samples.items()}
    rows = []
    for label, _ in cases:
        off = samples[(label, "off")]
        for mode in modes:
            mine = samples[(label, mode)]
            added = statistics.median(m - o for m, o in zip(mine, off, strict=True))
            rows.append((label, mode, f"{medians[(label, mode)]:.2f}", f"{added:+.2f}"))
    print(
        f"Telemetry: {ROUNDS} interleaved rounds x {CALLS} calls per case and mode, "
        "per-call medians, and the median of each round's difference with telemetry off:\n"
    )
    print(_table(("case", "telemetry", "median µs", "added µs"), rows))
    for label, _ in cases:
        off = medians[(label, "off")]
        added = statistics.median(
            m - o for m, o in zip(samples[(label, "no-op")], samples[(label, "off")], strict=True)
        )
        record(
            f"telemetry: no-op tracer (API, no SDK), whole call's difference, {label}",
            added,
            "telemetry off",
            off,
            unit="µs",
        )
        if sdk is not None:
            record(
                f"telemetry: SDK with in-memory exporters, {label}",
                medians[(label, "SDK, in-memory")],
                "telemetry off",
                off,
                unit="µs",
            )


def telemetry_checks() -> None:
    """What a call adds with the API's no-op default, the added code timed alone.

    With the API imported and no provider set, a call differs from one with telemetry
    off only by the checks the executor makes (``spans.wanted``, and ``spans.carried``
    for a sync tool, which both find nothing recording). A whole call's difference is a
    few hundred nanoseconds under a call of 10 to 100 µs whose noise, on a shared
    machine, is larger (``telemetry_modes`` shows it); timed alone, the checks are the
    figure the budget is about. Anchor: an empty function call, in the same run.
    """
    try:
        from opentelemetry import trace
    except ImportError:
        print("opentelemetry-api is not installed: no telemetry figures in this run.")
        return
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        print("a global tracer provider is set in this process: no no-op figures in this run.")
        return
    import timeit
    from functools import partial

    # Private modules: the checks themselves are what is timed (``_run/spans.py``).
    from toolpalette._run import spans, telemetry

    toolpalette.configure_telemetry()
    work = partial(add, 1, 2)

    def async_tool() -> object:
        return telemetry.on and spans.wanted()

    def sync_tool() -> object:
        return (telemetry.on and spans.wanted()) or spans.carried(work)

    def empty() -> None:
        return None

    number = 100_000
    async_tool()  # the first check loads the tracer and instruments
    cases = {"empty function call": empty, "async tool": async_tool, "sync tool": sync_tool}
    best = {label: float("inf") for label in cases}
    for _ in range(max(ROUNDS // 3, 5)):
        for label, fn in cases.items():
            took = timeit.timeit(fn, number=number) / number * 1e6
            best[label] = min(best[label], took)
    print(
        "Telemetry, no-op tracer: what a call adds, the checks timed alone "
        f"(best of {max(ROUNDS // 3, 5)} rounds of {number:,} calls):\n"
    )
    print(_table(("case", "µs per call"), [(k, f"{v:.3f}") for k, v in best.items()]))
    for label in ("async tool", "sync tool"):
        record(
            f"telemetry: no-op tracer (API, no SDK), added per call, {label}",
            best[label],
            "the budget",
            1.0,
            unit="µs",
            goal="<= 1",
        )
    for label in ("async tool", "sync tool"):
        record(
            f"telemetry: no-op checks of a call, {label}",
            best[label],
            "an empty function call",
            best["empty function call"],
            unit="µs",
        )


def summarize(m: dict[str, float]) -> None:
    """Record the headline figures for the summary table of ``python -m bench``."""
    tp_async = m["toolpalette async tool"]
    record(
        "pipeline: async tool overhead over a raw call",
        tp_async - m["raw async call"],
        "raw async call",
        m["raw async call"],
        unit="µs",
    )
    if "mcp call_tool, async tool" in m:
        record(
            "pipeline: async tool, whole call",
            tp_async,
            "mcp `call_tool`",
            m["mcp call_tool, async tool"],
            unit="µs",
            goal="<= 0.33",
            peers=_peers(m, "async tool"),
        )
    if "langchain StructuredTool.ainvoke" in m:
        record(
            "pipeline: async tool, whole call",
            tp_async,
            "langchain `ainvoke`",
            m["langchain StructuredTool.ainvoke"],
            unit="µs",
            goal="<= 0.033",
        )
    bad = m["toolpalette invalid input (async)"]
    if "mcp invalid input" in m:
        record(
            "invalid input, async",
            bad,
            "mcp `call_tool` invalid",
            m["mcp invalid input"],
            unit="µs",
            goal="<= 0.5",
            peers=_peers(m, "invalid input"),
        )
    record("invalid input, async", bad, "pydantic invalid", m["pydantic invalid input"], unit="µs")
    _summarize_thinker(m)
    hop = m["toolpalette sync tool, async caller"]
    record(
        "sync tool, async caller",
        hop,
        "`run_in_executor`",
        m["loop.run_in_executor"],
        unit="µs",
        goal="<= 0.8",
    )
    record(
        "sync tool, async caller",
        hop,
        "bare `submit().result()`",
        m["ThreadPoolExecutor.submit().result()"],
        unit="µs",
    )
    record(
        "sync tool, `execute_sync`",
        m["toolpalette sync tool, execute_sync"],
        "bare `submit().result()`",
        m["ThreadPoolExecutor.submit().result()"],
        unit="µs",
        goal="<= 1.2",
    )


PEERS = {
    "MCPServer": ("mcp call_tool, {}", "mcp invalid input"),
    "FastMCP Client": ("FastMCP Client.call_tool, {}", "FastMCP invalid input"),
    "pydantic-ai ToolManager": (
        "pydantic-ai ToolManager.handle_call, {}",
        "pydantic-ai ToolManager invalid input",
    ),
}
"""Each peer's case labels: a call (``{}``: which call) and an invalid input."""


def _peers(m: dict[str, float], what: str) -> dict[str, float]:
    """The peers' figures for ``what`` (``async tool``, ``invalid input``...) measured."""
    found = {}
    for peer, (call, invalid) in PEERS.items():
        label = invalid if what == "invalid input" else call.format(what)
        if label in m:
            found[peer] = m[label]
    return found


def _summarize_thinker(m: dict[str, float]) -> None:
    """The rows of the calls made through `thinker.call`, with the SDK as their peer."""

    def peers(label: str) -> dict[str, float]:
        return _peers(m, label)

    record(
        "thinker.call: invalid input",
        m["thinker.call invalid input"],
        "mcp `call_tool` invalid",
        m.get("mcp invalid input", float("nan")),
        unit="µs",
        goal="<= 0.5",
        peers=peers("invalid input"),
    )
    record(
        "thinker.call: 3-field model input",
        m["thinker.call 3-field model input"],
        "pydantic validate + call",
        m["pydantic validate 3-field model + call"],
        unit="µs",
        goal="<= 3",
        peers=peers("3-field model input"),
    )
    record(
        "thinker.call: async no-op",
        m["thinker.call async no-op"],
        "the goal's 4 µs",
        4.0,
        unit="µs",
        goal="<= 1",
        peers=peers("async no-op"),
    )
    record(
        "thinker.call: async no-op",
        m["thinker.call async no-op"],
        "`Executor.execute`",
        m["Executor.execute async no-op"],
        unit="µs",
    )


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
