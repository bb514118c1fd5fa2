"""Deferral at scale: what the meta-tools cost the model, and what a search costs the host.

The deferred tools are a seeded catalog of realistic definitions (``bench/_catalog.py``,
names made valid tool names), built in code as providers: what is measured is the
thinker's work over its catalog, not discovering installed packs (``bench_scale``
measures that).

- **Context cost**: the bytes of the meta-tools' definitions a thinker's turn sends,
  at 10, 100, 1,000 and 10,000 deferred tools, in ``openai_chat`` and ``anthropic``
  (canonical JSON, as ``turn.schemas_json``): ``search_tools`` (``tool_search =
  "search"``) against today's enum ``request_tools`` (``"enum"``) at the same size,
  the anchor. Goal: constant, at most 1.5 KB, from 100 up (recorded at each size
  against the anchor; "constant" as the bytes at 10,000 against those at 100, goal
  1.0). The module also prints how ``ENUM_LIMIT`` follows from these sizes: the
  largest catalog whose enum costs no more than ``search_tools`` plus one search's
  answer at the default limit (five definitions), in both formats.
- **Latency**: one ``search_tools`` call through ``thinker.call`` at 10,000 deferred
  tools (a thinker bound with ``keep_grants=False``, so every call finds the same
  catalog; the index built before), against the same call of a no-op tool with the
  same input schema, p50 over every query, once the queries' terms are scored (as
  ``bench_search``'s warm figure: an index scores a term the first time a query uses
  it, and keeps it). Goal: at most 1 ms added. The first pass, and a thinker that
  keeps its grants (each call then also adds its matches to the palette), are
  recorded for information.
- **Index build** at 10,000 tools: a rebuild after ten tools joined the catalog, with
  the term cache a thinker class keeps (what a catalog change costs), against a cold
  build of the same catalog. Goal: at most 300 ms. CPU times are printed too: on a
  busy machine wall-clock times grow with the load.
- **Memory** per tool: what a class's search keeps (the index, every term scored, and
  its term cache), ``tracemalloc``, against the tools' JSON text. Goal: at most 2 KiB.

Run with ``python -m bench bench_deferral`` (``--quick``: fewer rounds).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from toolpalette import (
    ENUM_LIMIT,
    SKILL_ENUM_LIMIT,
    SearchToolsProvider,
    Skill,
    SkillSelector,
    Thinker,
    ToolHub,
    ToolProvider,
    ToolSelector,
)
from toolpalette._search.ranking import LexicalRanker, TermCache, ToolDocument
from toolpalette._search.search import _SLACK
from toolpalette.testing import FakeTool

from bench import _catalog
from bench._summary import record

SIZES = (10, 100, 1_000, 10_000)
FORMATS = ("openai_chat", "anthropic")
TOOLS = 10_000
QUESTIONS = 200
ROUNDS = max(3, int(os.environ.get("BENCH_ROUNDS", "31")) // 4)
CONTEXT_GOAL_BYTES = 1536
SEARCH_GOAL_US = 1000.0
BUILD_GOAL_MS = 300.0
MEMORY_GOAL_BYTES = 2048.0
META = frozenset({"request_tools", "search_tools", "request_skill", "search_skills"})


def _catalog_tools(size: int, seed: int = 7) -> list[FakeTool]:
    """``size`` deferred tools with realistic definitions (valid names: dots become _)."""
    return [
        FakeTool(
            name.replace(".", "_"),
            description=description,
            input_schema=schema,
            read_only=True,
            result={"ok": True},
        )
        for name, description, schema in _catalog.catalog(size, seed)
    ]


def _thinker_class(
    mode: str, deferred: Sequence[ToolProvider], offered: Sequence[Any] = ()
) -> type[Thinker]:
    class Deferring(Thinker):
        tool_search = mode  # type: ignore[assignment]

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            selector = ToolSelector()
            for provider in offered:
                selector.provider(provider)
            for provider in deferred:
                selector.provider(provider, deferred=True)
            return selector

    return Deferring


def _meta_bytes(thinker: Thinker, fmt: str) -> int:
    turn = thinker.begin_turn()
    entries = turn.schemas(fmt)  # type: ignore[arg-type]
    names = [p.name for p in turn.tools]
    return sum(
        len(json.dumps(entry, sort_keys=True, separators=(",", ":")).encode())
        for name, entry in zip(names, entries, strict=True)
        if name in META
    )


# -- context cost ---------------------------------------------------------------------------


def context_cost() -> dict[tuple[str, str, int], int]:
    """Bytes of the meta-tools' definitions, by mode, format and catalog size."""
    sizes: dict[tuple[str, str, int], int] = {}
    for size in SIZES:
        tools = _catalog_tools(size)
        for mode in ("search", "enum"):
            hub = ToolHub(autoload=False, config={})
            thinker = hub.bind(_thinker_class(mode, tools))
            for fmt in FORMATS:
                sizes[(mode, fmt, size)] = _meta_bytes(thinker, fmt)
    print("Bytes of the meta-tools' definitions per turn (canonical JSON).\n")
    print("| deferred tools | format | search_tools | enum request_tools (anchor) |")
    print("|---:|---|---:|---:|")
    for size in SIZES:
        for fmt in FORMATS:
            print(
                f"| {size:,} | {fmt} | {sizes[('search', fmt, size)]:,} B "
                f"| {sizes[('enum', fmt, size)]:,} B |"
            )
    for fmt in FORMATS:
        for size in SIZES[1:]:
            anchor = sizes[("enum", fmt, size)]
            record(
                f"meta-tools' bytes per turn, {size:,} deferred tools, {fmt} "
                f"(goal: <= {CONTEXT_GOAL_BYTES} B)",
                sizes[("search", fmt, size)],
                "enum request_tools, same size",
                anchor,
                unit="B",
                goal=f"<= {CONTEXT_GOAL_BYTES / anchor:.4f}",
            )
        record(
            f"meta-tools' bytes per turn, 10,000 against 100 deferred tools, {fmt} (constant)",
            sizes[("search", fmt, 10_000)],
            "the same at 100",
            sizes[("search", fmt, 100)],
            unit="B",
            goal="<= 1",
        )
    return sizes


def enum_limit(search_bytes: dict[str, int]) -> None:
    """The largest catalog whose enum costs at most search_tools plus one search's answer."""
    tools = _catalog_tools(64, seed=3)
    answer = {
        "tools": [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools[:5]
        ],
        "note": "You can call these tools now; they are offered from your next turn.",
    }
    answer_bytes = len(json.dumps(answer, separators=(",", ":")).encode())
    limits = {}
    for fmt in FORMATS:
        budget = search_bytes[fmt] + answer_bytes
        limit = 0
        for size in range(1, len(tools) + 1):
            thinker = ToolHub(autoload=False, config={}).bind(_thinker_class("enum", tools[:size]))
            if _meta_bytes(thinker, fmt) > budget:
                break
            limit = size
        limits[fmt] = limit
    print(
        f"\nENUM_LIMIT: one search's answer (five definitions) is {answer_bytes:,} B; the "
        "enum costs no more than search_tools plus that answer up to "
        + ", ".join(f"{limits[f]} tools in {f}" for f in FORMATS)
        + f". ENUM_LIMIT is {ENUM_LIMIT}."
    )
    record(
        "ENUM_LIMIT against the largest enum within search_tools + one answer",
        ENUM_LIMIT,
        "that size (the smaller of the two formats)",
        min(limits.values()),
        unit="tools",
        goal="<= 1",
    )


def _lowered(text: str) -> str:
    return text[:1].lower() + text[1:]


def _skills(count: int) -> list[Skill]:
    """Skills whose descriptions read like real ones: what the skill does, and when."""
    tools = _catalog.catalog(2 * count, seed=5)
    return [
        Skill(
            f"skill-{i:03d}",
            f"{tools[2 * i][1]} Use it when {_lowered(tools[2 * i + 1][1])}",
            bundle="io.bench.skills",
            body="Do it well.",
        )
        for i in range(count)
    ]


def _skill_bytes(count: int, mode: str, fmt: str) -> int:
    hub = ToolHub(autoload=False, config={})
    hub.skills().add_skills(_skills(count), pack="bench", distribution=None)

    class Skilled(Thinker):
        tool_search = mode  # type: ignore[assignment]

        @classmethod
        def declare_skills(cls) -> SkillSelector:
            return SkillSelector().prefix("io.bench")

    return _meta_bytes(hub.bind(Skilled), fmt)


def skill_enum_limit() -> None:
    """SKILL_ENUM_LIMIT as ENUM_LIMIT: search_skills plus one answer of five skills."""
    skills = _skills(5)
    answer = {
        "skills": [{"name": s.id, "description": s.description} for s in skills],
        "note": "These skills are added to your instructions from your next turn.",
    }
    answer_bytes = len(json.dumps(answer, separators=(",", ":")).encode())
    limits = {}
    for fmt in FORMATS:
        budget = _skill_bytes(1, "search", fmt) + answer_bytes
        limits[fmt] = max(
            (n for n in range(1, 41) if _skill_bytes(n, "enum", fmt) <= budget), default=0
        )
    print(
        f"\nSKILL_ENUM_LIMIT: one search_skills answer (five skills) is {answer_bytes:,} B; the "
        "enum costs no more than search_skills plus that answer up to "
        + ", ".join(f"{limits[f]} skills in {f}" for f in FORMATS)
        + f". SKILL_ENUM_LIMIT is {SKILL_ENUM_LIMIT}."
    )
    record(
        "SKILL_ENUM_LIMIT against the largest enum within search_skills + one answer",
        SKILL_ENUM_LIMIT,
        "that size (the smaller of the two formats)",
        min(limits.values()),
        unit="skills",
        goal="<= 1",
    )


# -- latency ------------------------------------------------------------------------------------


def _noop_meta() -> FakeTool:
    schema = SearchToolsProvider().input_schema
    return FakeTool("noop_meta", input_schema=schema, result={"tools": [], "note": ""})


def _p50_us(
    thinker: Thinker, name: str, queries: Sequence[str], loop: asyncio.AbstractEventLoop
) -> float:
    samples = []
    for query in queries:
        arguments = {"query": query, "limit": None}
        start = time.perf_counter()
        result = loop.run_until_complete(thinker.call(name, arguments))
        samples.append((time.perf_counter() - start) * 1e6)
        assert result.status == 200, result.text
    return statistics.median(samples)


def _cpu_us(
    thinker: Thinker, name: str, queries: Sequence[str], loop: asyncio.AbstractEventLoop
) -> float:
    """The process's CPU time per call (the worker thread's included), over every query."""
    start = time.process_time()
    for query in queries:
        loop.run_until_complete(thinker.call(name, {"query": query, "limit": None}))
    return (time.process_time() - start) / len(queries) * 1e6


def latency(tools: list[FakeTool]) -> None:
    queries = _catalog.questions(QUESTIONS)
    noop = _noop_meta()
    cls = _thinker_class("search", tools, offered=[noop])
    hub = ToolHub(autoload=False, config={})
    loop = asyncio.new_event_loop()
    try:
        stateless = hub.bind(cls, keep_grants=False)
        stateless.begin_turn()
        started = time.perf_counter()
        loop.run_until_complete(stateless.call("search_tools", {"query": "warm up", "limit": 5}))
        first_ms = (time.perf_counter() - started) * 1000
        _p50_us(stateless, "noop_meta", queries[:20], loop)  # warm the call path
        cold_us = _p50_us(stateless, "search_tools", queries, loop)  # terms scored now
        noop_us = statistics.median(
            _p50_us(stateless, "noop_meta", queries, loop) for _ in range(2)
        )
        search_us = statistics.median(
            _p50_us(stateless, "search_tools", queries, loop) for _ in range(2)
        )
        noop_cpu = _cpu_us(stateless, "noop_meta", queries, loop)
        search_cpu = _cpu_us(stateless, "search_tools", queries, loop)
        keeping = hub.bind(cls)  # its palette grows by each call's matches
        keeping.begin_turn()
        keep_us = _p50_us(keeping, "search_tools", queries, loop)
    finally:
        loop.close()
    ranker_us = _ranker_us(tools, queries)
    print(f"\nOne call through thinker.call at {TOOLS:,} deferred tools ({QUESTIONS} queries).\n")
    print(f"| the ranker alone (search and count, limit 5 + slack) | {ranker_us:,.0f} µs |")
    print("| case | p50 |")
    print("|---|---:|")
    print(f"| no-op tool, same input schema (anchor) | {noop_us:,.0f} µs |")
    print(f"| search_tools, keep_grants=False | {search_us:,.0f} µs |")
    print(
        f"| search_tools, keep_grants=False, first pass (terms scored then) | {cold_us:,.0f} µs |"
    )
    print(f"| search_tools, grants kept (matches join the palette) | {keep_us:,.0f} µs |")
    print(f"| the class's first search (builds the index) | {first_ms:,.0f} ms |")
    print(
        f"\nCPU time per call (every thread): no-op {noop_cpu:,.0f} µs, search_tools "
        f"{search_cpu:,.0f} µs (added: {search_cpu - noop_cpu:,.0f} µs)."
    )
    record(
        f"one search_tools call p50, {TOOLS:,} deferred tools (goal: <= +{SEARCH_GOAL_US:g} µs)",
        search_us,
        "the same call of a no-op tool",
        noop_us,
        unit="µs",
        goal=f"<= {(noop_us + SEARCH_GOAL_US) / noop_us:.3f}",
    )
    record(
        f"one search_tools call p50 through thinker.call, {TOOLS:,} deferred tools",
        search_us,
        "the ranker alone, same queries",
        ranker_us,
        unit="µs",
        goal="<= 1.3",
    )
    record(
        f"one search_tools call, CPU time, {TOOLS:,} deferred tools",
        search_cpu,
        "the same call of a no-op tool, CPU time",
        noop_cpu,
        unit="µs",
    )
    record(
        f"one search_tools call p50, first pass, {TOOLS:,} deferred tools",
        cold_us,
        "the same call of a no-op tool",
        noop_us,
        unit="µs",
    )
    record(
        f"one search_tools call p50, grants kept, {TOOLS:,} deferred tools",
        keep_us,
        "the same call of a no-op tool",
        noop_us,
        unit="µs",
    )


def _ranker_us(tools: Sequence[FakeTool], queries: Sequence[str]) -> float:
    """p50 of the default index's own search of the same catalog, as a search reads it.

    Warm (each query searched once before), limit 5 plus the slack a search reads, with
    the count an answer gives.
    """
    index = LexicalRanker().build(
        [ToolDocument(t.name, t.description, t.input_schema) for t in tools]
    )
    wanted = 5 + _SLACK
    for query in queries:
        index.search_counted(query, wanted)
    samples = []
    for _ in range(2):
        for query in queries:
            start = time.perf_counter()
            index.search_counted(query, wanted)
            samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


# -- index build and memory -----------------------------------------------------------------


def _timed(run: Callable[[], Any], clock: Callable[[], float]) -> float:
    gc.collect()
    start = clock()
    run()
    return (clock() - start) * 1000


def build(tools: list[FakeTool]) -> None:
    documents = [ToolDocument(t.name, t.description, t.input_schema) for t in tools]
    joined = [
        ToolDocument(t.name, t.description, t.input_schema) for t in _catalog_tools(10, seed=99)
    ]
    changed = documents[: TOOLS // 2] + joined + documents[TOOLS // 2 :]
    ranker = LexicalRanker()
    cold: dict[str, list[float]] = {"wall": [], "cpu": []}
    rebuild: dict[str, list[float]] = {"wall": [], "cpu": []}
    for clock_name, clock in (("wall", time.perf_counter), ("cpu", time.process_time)):
        for _ in range(ROUNDS):
            cold[clock_name].append(_timed(lambda: ranker.build(documents), clock))
            cache = TermCache()
            ranker.build(documents, cache=cache)
            rebuild[clock_name].append(
                _timed(lambda: ranker.build(changed, cache=cache), clock)  # noqa: B023
            )
    cold_ms, cold_cpu = statistics.median(cold["wall"]), statistics.median(cold["cpu"])
    rebuild_ms, rebuild_cpu = statistics.median(rebuild["wall"]), statistics.median(rebuild["cpu"])
    per_tool, cache_per_tool = _memory(documents)
    json_bytes = statistics.mean(len(json.dumps(d._asdict()).encode()) for d in documents)
    print(f"\nThe search index at {TOOLS:,} tools (median of {ROUNDS} rounds).\n")
    print("| case | wall | CPU |")
    print("|---|---:|---:|")
    print(f"| cold build (anchor) | {cold_ms:,.0f} ms | {cold_cpu:,.0f} ms |")
    label = "rebuild after 10 tools joined, term cache kept"
    print(f"| {label} | {rebuild_ms:,.0f} ms | {rebuild_cpu:,.0f} ms |")
    print(
        f"\nMemory per tool: {per_tool:,.0f} B kept by a class's search (index with every term "
        f"scored, and the term cache, of which the cache is {cache_per_tool:,.0f} B); "
        f"the tools' JSON text {json_bytes:,.0f} B."
    )
    record(
        f"search index rebuild after a change, {TOOLS:,} tools (goal: <= {BUILD_GOAL_MS:g} ms)",
        rebuild_ms,
        "a cold build",
        cold_ms,
        unit="ms",
        goal=f"<= {BUILD_GOAL_MS / cold_ms:.3f}",
    )
    record(
        f"search index rebuild after a change, CPU time, {TOOLS:,} tools",
        rebuild_cpu,
        "a cold build, CPU time",
        cold_cpu,
        unit="ms",
    )
    record(
        f"search memory per tool, index and term cache (goal: <= {MEMORY_GOAL_BYTES:g} B)",
        per_tool,
        "the tool's JSON text",
        json_bytes,
        unit="B",
        goal=f"<= {MEMORY_GOAL_BYTES / json_bytes:.3f}",
    )


def _memory(documents: Sequence[ToolDocument]) -> tuple[float, float]:
    """Bytes per tool: the index with every term scored plus the cache; the cache alone."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        cache = TermCache()
        index = LexicalRanker().build(documents, cache=cache)
        index.warm()
        gc.collect()
        both = tracemalloc.get_traced_memory()[0] - before
        del index
        gc.collect()
        alone = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(cache) == len(documents)
    return both / len(documents), alone / len(documents)


def main(argv: list[str]) -> None:
    sizes = context_cost()
    enum_limit({fmt: sizes[("search", fmt, 100)] for fmt in FORMATS})
    skill_enum_limit()
    tools = _catalog_tools(TOOLS)
    latency(tools)
    build(tools)
