"""Scale: 10,000 tools in one hub, and 1,000 concurrent calls in one ``execute_many``.

So that growth is visible, not guessed, each case runs at a tenth of the scale too:

- **installed tools** (1,000 then 10,000, as 10 or 100 generated packs of 100 tools each,
  cached in the temporary folder so a second run does not write them again), each in a
  fresh interpreter: ``ToolHub()`` then ``providers_for_pack`` of one pack, beside a
  bare ``importlib.metadata.entry_points()`` scan; and ``ToolHub().listing()`` answered
  by a warm listing cache;
- **reconcile after a grant** of a thinker whose palette holds 1,000 then 10,000 tools
  (one deferred tool admitted, then ``begin_turn()``);
- **1,000 concurrent async calls** in one ``Executor.execute_many`` (concurrency 1,000):
  each call's own overhead, its share of the event loop's time outside the tool (see
  :class:`_Stamps`), p50 and p99 over every call of every round, against the same for
  one call at a time (``execute``) and for 1,000 raw coroutines under ``asyncio.gather``;
  and the peak memory per in-flight call (``tracemalloc`` peak / 1,000, all 1,000 calls
  parked on one event), beside the same for the raw coroutines.

What makes the concurrent p99: per round, the first call carries the batch's dispatch
(1,000 tasks made before any runs) and the last the results' collection, as under the
raw ``gather``; and the preparation of 1,000 calls keeps three young objects alive per
call (the validated model, its ``__dict__``, the prepared pair), so the cyclic GC's
youngest generation runs about every 230 calls (and the next one every tenth of
those), each pause charged to the call it lands in: some 8 calls in 1,000, right at
the 99th percentile, which then swings with machine noise. With ``gc.disable()`` those
calls fall back into the bulk; on a loaded machine, preemption adds its own.

Run with ``python -m bench bench_scale`` (``--quick``: fewer rounds).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Annotated, Any

import toolpalette
from pydantic import AfterValidator
from toolpalette import Executor, ToolRegistry

from bench import bench_discovery, bench_reconcile
from bench._summary import record

TOOLS_PER_PACK = 100
SIZES = (1_000, 10_000)
CONCURRENT = 1_000
LAYOUT = "v1"  # bump when the generated packs change, so a stale cache is not reused

HOOKS_HEAD = "import toolpalette\n"
TOOL = '''

@toolpalette.tool(read_only=True)
def t{p:03d}_{i:03d}(text: str, count: int = 1) -> str:
    """Repeat a text.

    Args:
        text: What to repeat.
        count: How many times.
    """
    return text * count
'''
HOOKS_TAIL = """

@toolpalette.hookimpl
def toolpalette_register_tools():
    return [{names}]
"""


def packs_root(tools: int) -> Path:
    """A folder of ``tools // 100`` installed packs of 100 tools, generated once."""
    count = tools // TOOLS_PER_PACK
    root = Path(tempfile.gettempdir()) / f"tpbench-scale-{LAYOUT}-{count}x{TOOLS_PER_PACK}"
    done = root / "complete"
    if done.exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    for p in range(count):
        package = root / f"tpbench_pack{p:04d}"
        package.mkdir(exist_ok=True)
        (package / "__init__.py").write_text("")
        body = "".join(TOOL.format(p=p, i=i) for i in range(TOOLS_PER_PACK))
        names = ", ".join(f"t{p:03d}_{i:03d}" for i in range(TOOLS_PER_PACK))
        (package / "hooks.py").write_text(HOOKS_HEAD + body + HOOKS_TAIL.format(names=names))
        info = root / f"tpbench_pack{p:04d}-1.0.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: tpbench-pack{p:04d}\nVersion: 1.0\n"
            "Requires-Dist: toolpalette\n"
        )
        (info / "entry_points.txt").write_text(
            f"[{bench_discovery.GROUP}]\npack{p:04d} = tpbench_pack{p:04d}.hooks\n"
        )
        (info / "RECORD").write_text("")
    done.write_text("")
    return root


INSTALLED_CASES = {
    "stdlib entry_points": bench_discovery.CASES["stdlib entry_points"],
    "resolve one pack": """
t = time.perf_counter()
hub = ToolHub(config={})
tools = hub.providers_for_pack("pack@MIDDLE@")
elapsed = time.perf_counter() - t
assert len(tools) == @PER_PACK@, len(tools)
""",
    "warm listing": """
os.environ["TOOLPALETTE_CACHE_DIR"] = "@CACHE@"
t = time.perf_counter()
listing = ToolHub(config={}).listing()
elapsed = time.perf_counter() - t
assert listing.cached, "the listing cache missed"
assert sum(t.module.startswith("tpbench_") for t in listing.tools) == @COUNT@
""",
}


def measure_installed(tools: int, repeats: int) -> dict[str, float]:
    """Median milliseconds per case with ``tools`` installed tools."""
    root = packs_root(tools)
    with tempfile.TemporaryDirectory(prefix="tpbench-scale-cache-") as cache:
        cases = {
            name: code.replace("@MIDDLE@", f"{tools // TOOLS_PER_PACK // 2:04d}")
            .replace("@CACHE@", cache)
            .replace("@COUNT@", str(tools))
            .replace("@PER_PACK@", str(TOOLS_PER_PACK))
            for name, code in INSTALLED_CASES.items()
        }
        warm_up = bench_discovery.CASES["hub list all, cold cache"].replace(
            "tempfile.mkdtemp()", repr(cache)
        )
        bench_discovery.run_case(root, warm_up)  # fills the listing cache
        runs: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(repeats):
            for name, code in cases.items():
                runs[name].append(bench_discovery.run_case(root, code)[0])
    return {name: statistics.median(times) * 1000 for name, times in runs.items()}


def measure_grant(tools: int, repeat: int) -> float:
    """Median microseconds of one grant then ``begin_turn()``, ``tools`` in the palette."""
    _, worker, deferred = bench_reconcile._setup(tools)
    names = iter(fn.__name__ for fn in deferred)

    def grant_then_turn() -> None:
        worker.admit("tool", [next(names)])
        worker.begin_turn()

    return bench_reconcile._median_us(grant_then_turn, min(repeat, len(deferred)))


class _Stamps:
    """When each call of a round was validated, entered its tool and left it.

    A call's overhead is its share of the event loop's time outside the tools: the loop
    runs one thing at a time, so sorting every stamp of a round gives a timeline whose
    gaps each belong to the call whose stamp ends them (the gap before a call's
    validation is its admission; the gap before its tool is the end of the previous
    call and its own dispatch; the gap from the last stamp to the round's end, the
    collection of the results, goes to the last call). A call's shares add up to its
    overhead; all calls' add up to the round's time less the tools' own.
    """

    def __init__(self) -> None:
        self.events: list[tuple[float, int]] = []
        self.tool_time: list[float] = []

    def reset(self, n: int) -> None:
        self.events = []
        self.tool_time = [0.0] * n

    def overheads(self, start: float, end: float, n: int) -> list[float]:
        """Each call's overhead in µs over a round that ran from ``start`` to ``end``."""
        per_call = [0.0] * n
        events = sorted(self.events)
        previous = start
        for when, i in events:
            per_call[i] += when - previous
            previous = when
        per_call[events[-1][1]] += end - previous
        return [(t - own) * 1e6 for t, own in zip(per_call, self.tool_time, strict=True)]


STAMPS = _Stamps()
_clock = time.perf_counter


def _admitted(i: int) -> int:
    """Stamp the end of a call's validation (a pydantic after-validator)."""
    STAMPS.events.append((_clock(), i))
    return i


async def _araw(i: int) -> int:
    entered = _clock()
    STAMPS.events.append((entered, i))
    left = _clock()
    STAMPS.tool_time[i] = left - entered
    STAMPS.events.append((left, i))
    return i


@toolpalette.tool(name="echo", read_only=True)
async def echo(i: Annotated[int, AfterValidator(_admitted)]) -> int:
    """Return the number (a trivial async tool, safe to run concurrently)."""
    return await _araw(i)


async def _concurrency(rounds: int) -> dict[str, list[float]]:
    """Each call's overhead (µs, its share of the loop outside the tool), every round."""
    executor = Executor(ToolRegistry([echo]), timeout=60, concurrency=CONCURRENT)
    calls = [("echo", {"i": i}) for i in range(CONCURRENT)]
    out: dict[str, list[float]] = {"execute_many": [], "execute": [], "gather": []}
    STAMPS.reset(CONCURRENT)
    results = await executor.execute_many(calls)  # warm-up, and a check
    assert [r.text for r in results] == [str(i) for i in range(CONCURRENT)], results[:3]
    assert len(STAMPS.events) == 3 * CONCURRENT, "a call was not stamped"
    for _ in range(rounds):
        STAMPS.reset(CONCURRENT)
        start = _clock()
        await asyncio.gather(*(_araw(i) for i in range(CONCURRENT)))
        out["gather"] += STAMPS.overheads(start, _clock(), CONCURRENT)
        STAMPS.reset(CONCURRENT)
        start = _clock()
        await executor.execute_many(calls)
        out["execute_many"] += STAMPS.overheads(start, _clock(), CONCURRENT)
        STAMPS.reset(CONCURRENT)
        for name, args in calls:
            start = _clock()
            await executor.execute(name, args)
            out["execute"].append((_clock() - start - STAMPS.tool_time[args["i"]]) * 1e6)
    return out


async def _peak_per_call(through_toolpalette: bool) -> float:
    """Peak traced bytes per call while all ``CONCURRENT`` calls are in flight at once."""
    gate = asyncio.Event()
    entered = 0

    async def parked(i: int) -> int:
        """Wait at the gate, then return the number."""
        nonlocal entered
        entered += 1
        await gate.wait()
        return i

    wait = toolpalette.tool(name="parked", read_only=True)(parked)
    executor = Executor(ToolRegistry([wait]), timeout=60, concurrency=CONCURRENT)
    calls = [("parked", {"i": i}) for i in range(CONCURRENT)]
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        if through_toolpalette:
            task: Any = asyncio.ensure_future(executor.execute_many(calls))
        else:
            task = asyncio.ensure_future(asyncio.gather(*(parked(i) for i in range(CONCURRENT))))
        deadline = time.monotonic() + 60
        while entered < CONCURRENT:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {entered} of {CONCURRENT} calls started")
            await asyncio.sleep(0.001)
        peak = tracemalloc.get_traced_memory()[1] - base
        gate.set()
        await task
    finally:
        tracemalloc.stop()
    return peak / CONCURRENT


def _pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main(argv: list[str]) -> None:
    """Print the scale tables and record the headline figures."""
    quick = "--quick" in argv
    repeats, grants, rounds = (3, 10, 15) if quick else (3, 20, 41)
    installed = {n: measure_installed(n, repeats) for n in SIZES}
    grant = {n: measure_grant(n, grants) for n in SIZES}
    print(
        f"Installed tools ({TOOLS_PER_PACK} per pack), median ms of {repeats} fresh interpreters.\n"
    )
    print("| case | " + " | ".join(f"{n:,} tools" for n in SIZES) + " | growth |")
    print("|---|" + "---:|" * (len(SIZES) + 1))
    small, big = SIZES[0], SIZES[-1]
    for name in INSTALLED_CASES:
        cells = " | ".join(f"{installed[n][name]:.1f}" for n in SIZES)
        print(f"| {name} | {cells} | {installed[big][name] / installed[small][name]:.2f}x |")
    cells = " | ".join(f"{grant[n] / 1000:.2f}" for n in SIZES)
    print(f"| reconcile after a grant (ms) | {cells} | {grant[big] / grant[small]:.2f}x |")

    overheads = asyncio.run(_concurrency(rounds))
    memory = {where: asyncio.run(_peak_per_call(where)) for where in (False, True)}
    print(
        f"\n{CONCURRENT:,} concurrent async calls, {rounds} rounds: each call's overhead, "
        "its share of the event loop's time outside the tool (µs), over every call of "
        "every round.\n"
    )
    print("| case | p50 µs | p90 µs | p99 µs | max µs |")
    print("|---|---:|---:|---:|---:|")
    labels = {
        "execute_many": f"{CONCURRENT:,} at once, one `execute_many`",
        "execute": "one at a time, `execute`",
        "gather": f"{CONCURRENT:,} raw coroutines, one `asyncio.gather`",
    }
    for key, label in labels.items():
        values = overheads[key]
        cells = " | ".join(f"{_pct(values, q):.2f}" for q in (50, 90, 99))
        print(f"| {label} | {cells} | {max(values):.1f} |")
    print(
        f"\nPeak memory per in-flight call: toolpalette {memory[True] / 1024:.1f} KiB, "
        f"raw coroutine under gather {memory[False] / 1024:.1f} KiB."
    )

    big_i, small_i = installed[big], installed[small]
    record(
        f"resolve one pack of {TOOLS_PER_PACK}, {big:,} tools installed",
        big_i["resolve one pack"],
        f"the same at {small:,} tools",
        small_i["resolve one pack"],
        unit="ms",
        goal="<= 1.5",
    )
    record(
        f"resolve one pack of {TOOLS_PER_PACK}, {big:,} tools installed",
        big_i["resolve one pack"],
        "stdlib `entry_points()`",
        big_i["stdlib entry_points"],
        unit="ms",
    )
    record(
        f"warm listing, {big:,} tools",
        big_i["warm listing"],
        f"the same at {small:,} tools",
        small_i["warm listing"],
        unit="ms",
        goal="<= 10",
    )
    record(
        f"reconcile after a grant, {big:,} tools",
        grant[big] / 1000,
        f"the same at {small:,} tools",
        grant[small] / 1000,
        unit="ms",
        goal="<= 10",
    )
    conc, single = overheads["execute_many"], overheads["execute"]
    record(
        f"{CONCURRENT:,} concurrent calls, overhead per call p50",
        _pct(conc, 50),
        "one call at a time, p50",
        _pct(single, 50),
        unit="µs",
        goal="<= 2",
    )
    record(
        f"{CONCURRENT:,} concurrent calls, overhead per call p99",
        _pct(conc, 99),
        "one call at a time, p99",
        _pct(single, 99),
        unit="µs",
        goal="<= 2",
    )
    # The floor any library on asyncio meets: the same number of bare coroutines, each
    # awaiting the tool's body, under one gather (the same stamps, the same share rule).
    gathered = overheads["gather"]
    for q in (50, 99):
        record(
            f"{CONCURRENT:,} concurrent calls, overhead per call p{q}",
            _pct(conc, q),
            f"{CONCURRENT:,} bare coroutines under one `gather`, p{q}",
            _pct(gathered, q),
            unit="µs",
        )
    record(
        "peak memory per in-flight call",
        memory[True] / 1024,
        "a raw coroutine under `gather`",
        memory[False] / 1024,
        unit="KiB",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
