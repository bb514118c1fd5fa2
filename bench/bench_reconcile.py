"""Per-turn reconcile cost of a thinker with a 1000-tool palette.

Three cases, each the median of many ``begin_turn()`` calls:

- unchanged: nothing moved since the last turn (the common case): a version check;
- grant: one deferred tool admitted since the last turn (the palette changes by one);
- hub changed: a system-wide tool registered, so the class's selectors are resolved
  again and the palette re-synced against 1000 providers.

Then, on a fresh thinker: five per-turn tools (``begin_turn(extra=...)``) given again
(a look-up each), given and dropped turn by turn (what they change), and a grant with
``turn.changes`` and ``turn.overhead`` read (what changed, not the palette).

Beside them, for scale: serializing the 1000 schemas once (what a reconcile must not
do when nothing changed) and pluggy calling a no-op hook once. Run with
``python -m bench bench_reconcile [--tools N]``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import pluggy
import toolpalette
from toolpalette import Thinker, ToolHub, ToolSelector

from bench._summary import record

N_TOOLS = 1000


def _make_tools(n: int) -> list[Any]:
    tools = []
    for i in range(n):

        def fn(a: int, b: int = 0) -> int:
            return a + b

        fn.__name__ = f"tool_{i:04d}"
        fn.__doc__ = f"Add two numbers (tool {i})."
        tools.append(toolpalette.tool(read_only=i % 2 == 0)(fn))
    return tools


def _median_us(run: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def _setup(n: int) -> tuple[ToolHub, Thinker, list[Any]]:
    tools = _make_tools(n)
    deferred = _make_tools(50)
    for i, fn in enumerate(deferred):
        fn.__name__ = f"later_{i:02d}"

    class Plugin:
        @toolpalette.hookimpl
        def toolpalette_register_tools(self) -> list[Any]:
            return tools

    hub = ToolHub(autoload=False)
    hub.add_plugin(Plugin(), name="bench")

    class Worker(Thinker):
        # Every grant is kept, as before the bound: the grant cases measure adding one
        # tool, not an eviction (which reconciles the whole palette at the next turn).
        max_granted = None

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            selector = ToolSelector()
            for fn in tools:
                selector.tool(fn)
            for fn in deferred:
                selector.tool(fn, deferred=True)
            return selector

    worker = hub.bind(Worker)
    worker.begin_turn()
    return hub, worker, deferred


def measure(n: int) -> dict[str, float]:
    """Median microseconds per case."""
    hub, worker, deferred = _setup(n)
    results: dict[str, float] = {}
    before = worker.palette.version
    results["unchanged"] = _median_us(worker.begin_turn, 2000)
    assert worker.palette.version == before, "an unchanged reconcile moved the version"

    names = iter(fn.__name__ for fn in deferred)

    def grant_then_turn() -> None:
        worker.admit("tool", [next(names)])
        worker.begin_turn()

    results["grant"] = _median_us(grant_then_turn, 40)
    counter = iter(range(10_000))

    def hub_change_then_turn() -> None:
        i = next(counter)

        def extra() -> str:
            return "x"

        extra.__name__ = f"system_{i}"
        extra.__doc__ = "A system-wide tool."
        hub.register_system_tool(toolpalette.tool(read_only=True)(extra))
        worker.begin_turn()

    results["hub changed"] = _median_us(hub_change_then_turn, 20)
    results.update(_per_turn(n))
    surface = worker.palette.versioned_surface()
    results["serialize 1000 schemas"] = _median_us(
        lambda: toolpalette.Surface(surface.version, surface.providers).serialized(), 20
    )
    pm = pluggy.PluginManager("bench")
    spec = pluggy.HookspecMarker("bench")
    impl = pluggy.HookimplMarker("bench")

    class Spec:
        @spec
        def noop(self) -> None: ...

    class Impl:
        @impl
        def noop(self) -> None:
            return None

    pm.add_hookspecs(Spec)
    pm.register(Impl())
    results["pluggy: one no-op hook call"] = _median_us(pm.hook.noop, 2000)
    return results


def _per_turn(n: int) -> dict[str, float]:
    """Per-turn tools, and what a host reads of a turn besides its offer, on a fresh thinker."""
    _, worker, deferred = _setup(n)
    extra = _make_tools(5)
    for i, fn in enumerate(extra):
        fn.__name__ = f"request_{i}"
    results: dict[str, float] = {}
    worker.begin_turn(extra=extra)
    before = worker.palette.version
    results["the same 5 per-turn tools again"] = _median_us(
        lambda: worker.begin_turn(extra=extra), 2000
    )
    assert worker.palette.version == before, "the same per-turn tools moved the version"
    given = iter(range(10_000))

    def with_and_without() -> None:
        worker.begin_turn(extra=extra if next(given) % 2 else ())

    results["5 per-turn tools, then none (each turn)"] = _median_us(with_and_without, 200)
    names = iter(fn.__name__ for fn in deferred)

    def grant_then_read() -> None:
        worker.admit("tool", [next(names)])
        turn = worker.begin_turn()
        assert turn.changes.added
        turn.overhead("openai_chat")

    results["grant, then changes and overhead read"] = _median_us(grant_then_read, 40)
    return results


def main(argv: list[str]) -> None:
    n = int(argv[argv.index("--tools") + 1]) if "--tools" in argv else N_TOOLS
    results = measure(n)
    base = results["unchanged"]
    print(f"Per-turn reconcile of a {n}-tool palette (median, microseconds).\n")
    print("| case | median (µs) | vs unchanged |")
    print("|---|---:|---:|")
    for label, value in results.items():
        print(f"| {label} | {value:,.1f} | {value / base:,.1f}x |")
    record(
        f"reconcile after a grant, {n} tools",
        results["grant"],
        f"serializing the {n} schemas once",
        results["serialize 1000 schemas"],
        unit="µs",
    )
