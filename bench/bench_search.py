"""Tool search: how well and how fast the ranker behind ``search_tools`` finds tools.

**Quality**, on the Berkeley Function Calling Leaderboard (``bfcl-eval``, Apache-2.0,
see ``bench/_bfcl.py``): every function of the non-live categories ``simple_python``,
``multiple``, ``parallel`` and ``parallel_multiple`` in one catalog, each question (the
user's turn) a query; a question is a hit at k when every function its answer calls is
in the first k results. Recall at 1, 5 and 10, per category and overall, beside
``bm25s`` over the same tools (name, description, parameter names and descriptions
joined as text) with its default tokenizer and parameters, in the same run. Goal:
recall@5 at or above the anchor's. Our figures are the ranking as ``search_tools``
reads it, diversified by name prefix (``toolpalette._search.search.diversified``),
beside the same ranking as is (goal: no drop). Without the data (``bfcl-eval`` not installed, or
its files not where this module reads them), quality is skipped, saying why, and
nothing is recorded for it.

**Diversity**, on a crafted prefix-heavy catalog (``bench/_prefixed.py``: thirty
``github_...`` tools, and four others each the right answer to ten questions worded
mostly in the crowd's words): recall@5 diversified against the same ranking as is.

**check --findable** over 2,000 generated tools (two queries per tool, each searched
as ``search_tools`` searches): its time, for information, beside building the same
tools' index.

**Speed and size** at 10,000 tools (a seeded catalog of realistic definitions,
``bench/_catalog.py``), wall-clock medians:

- building the index, against ``bm25s`` tokenizing and indexing the same tools
  (goal: at most 300 ms). A term's scores are computed by the first search that uses
  it (see ``toolpalette._search.ranking``), so building then scoring every term
  (``warm()``, what an index that computes everything up front would cost) is recorded
  too, for information;
- one search (``limit`` 5) of 500 seeded questions, p50, against ``bm25s`` tokenizing
  and answering the same questions (goal: at most 1 ms): the passes after the first
  (warm) are the headline, the first pass over the questions on a fresh index (cold)
  is recorded for information;
- memory per tool (``tracemalloc``: what the index keeps), right after building and
  once every term is scored (the headline: the most it holds), against the JSON text
  of the tools (goal: at most 2 KiB).

The goals are absolute, so each is recorded as the ratio the anchor measured in this
run allows (300 ms over the anchor's time, and so on). On a busy machine wall-clock
times grow with the load: the module's table also gives the build's and the warm
searches' CPU time (``time.process_time``), which grow less.

``python -m bench bench_search --tune`` also prints recall@5 over a grid of field
weights and ``k1`` (how the defaults were chosen); nothing of it is recorded.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from toolpalette._search.ranking import (
    FieldWeights,
    LexicalIndex,
    LexicalRanker,
    ToolDocument,
    fields_of,
)
from toolpalette._search.search import _SLACK, diversified, name_prefix

from bench import _bfcl, _catalog, _prefixed
from bench._summary import record

TOOLS = 10_000
QUESTIONS = 500
LIMIT = 5
KS = (1, 5, 10)
ROUNDS = max(3, int(os.environ.get("BENCH_ROUNDS", "31")) // 4)
BUILD_GOAL_MS = 300.0
SEARCH_GOAL_US = 1000.0
MEMORY_GOAL_BYTES = 2048.0

Recall = dict[str, dict[int, float]]  # category (and "all") -> k -> share of questions


def _text(doc: ToolDocument) -> str:
    """A tool as one text, as a plain BM25 library indexes it: our four fields, joined."""
    return " ".join(fields_of(doc))


def _recall(cases: Sequence[_bfcl.Case], ranked: Sequence[Sequence[int]]) -> Recall:
    hits: dict[str, dict[int, list[bool]]] = {}
    for case, found in zip(cases, ranked, strict=True):
        for k in KS:
            hit = case.expected <= set(found[:k])
            for key in (case.category, "all"):
                hits.setdefault(key, {}).setdefault(k, []).append(hit)
    return {key: {k: sum(v) / len(v) for k, v in by_k.items()} for key, by_k in hits.items()}


def _ours(docs: Sequence[ToolDocument], cases: Sequence[_bfcl.Case], **kw: Any) -> Recall:
    index = LexicalRanker(**kw).build(docs)
    return _recall(cases, [[p for p, _ in index.search(c.query, max(KS))] for c in cases])


def _diverse(
    docs: Sequence[ToolDocument], cases: Sequence[_bfcl.Case], decay: float | None = None
) -> Recall:
    """Recall with the results diversified by name prefix, as ``search_tools`` reads them.

    For each k, the search reads k and ``_SLACK`` more (as a search whose ``limit`` is
    k), diversifies them, and keeps k.
    """
    index = LexicalRanker().build(docs)
    kw = {} if decay is None else {"decay": decay}

    def group(position: int) -> str:
        return name_prefix(docs[position].name)

    hits: dict[str, dict[int, list[bool]]] = {}
    for case in cases:
        for k in KS:
            found = diversified(index.search(case.query, k + _SLACK), group, **kw)[:k]
            hit = case.expected <= {p for p, _ in found}
            for key in (case.category, "all"):
                hits.setdefault(key, {}).setdefault(k, []).append(hit)
    return {key: {k: sum(v) / len(v) for k, v in by_k.items()} for key, by_k in hits.items()}


def prefixed() -> None:
    """The prefix-heavy catalog: the right tool's recall@5, plain ranking and diversified."""
    docs, crafted = _prefixed.catalog()
    cases = [_bfcl.Case("prefixed", c.query, frozenset({c.expected})) for c in crafted]
    plain = _ours(docs, cases)["all"][5] * 100
    diverse = _diverse(docs, cases)["all"][5] * 100
    print(
        f"\nPrefix-heavy catalog ({len(docs)} tools, {len(cases)} questions whose right tool "
        f"is not a github_ one): recall@5 {plain:.1f}% ranked as is, {diverse:.1f}% "
        "diversified by name prefix."
    )
    record(
        f"search recall@5, prefix-heavy catalog ({len(cases)} questions), diversified",
        diverse,
        "the same ranking, not diversified",
        plain,
        unit="%",
        goal=">= 1",
    )


FINDABLE_TOOLS = 2_000


def findable() -> None:
    """``check --findable`` over 2,000 generated tools: two own queries per tool, searched."""
    from toolpalette._search.findable import unfound

    docs = [ToolDocument(*t) for t in _catalog.catalog(FINDABLE_TOOLS)]
    start = time.perf_counter()
    missed = unfound(docs)
    took = time.perf_counter() - start
    start = time.perf_counter()
    LexicalRanker().build(docs)
    build = time.perf_counter() - start
    print(
        f"\ncheck --findable over {len(docs)} generated tools: {took:.2f} s "
        f"({len({m.tool for m in missed})} tools missed by one of their own queries); "
        f"building their index alone: {build * 1000:.0f} ms."
    )
    record(
        f"check --findable, {len(docs)} tools",
        took * 1000,
        "building the same tools' index",
        build * 1000,
        unit="ms",
    )


def _bm25s(docs: Sequence[ToolDocument], cases: Sequence[_bfcl.Case]) -> Recall | None:
    try:
        import bm25s
    except ImportError:
        return None
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize([_text(d) for d in docs], show_progress=False), show_progress=False
    )
    queries = bm25s.tokenize([c.query for c in cases], show_progress=False)
    found, _ = retriever.retrieve(queries, k=max(KS), show_progress=False)
    return _recall(cases, [list(map(int, row)) for row in found])


def quality(tune: bool) -> None:
    try:
        data = _bfcl.load()
    except _bfcl.Unavailable as why:
        print(f"Quality skipped, nothing recorded: the BFCL data cannot be read ({why}).")
        return
    docs = [ToolDocument(*f) for f in data.functions]
    ours = _diverse(docs, data.cases)
    plain = _ours(docs, data.cases)
    anchor = _bm25s(docs, data.cases)
    weights = FieldWeights()
    ranker = LexicalRanker()
    print(
        f"Recall on BFCL ({_bfcl.DISTRIBUTION} {data.version}): {len(data.cases)} questions, "
        f"one catalog of {len(docs)} functions. Field weights: name {weights.name}, "
        f"description {weights.description}, parameter names {weights.parameter_names}, "
        f"parameter descriptions {weights.parameter_descriptions}; k1 {ranker.k1}, "
        f"b {ranker.b}.\n"
    )
    print(
        "| category | questions | ours @1 | ours @5 | ours @10 | bm25s @1 | bm25s @5 | bm25s @10 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    counts = {c: sum(case.category == c for case in data.cases) for c in _bfcl.CATEGORIES}
    counts["all"] = len(data.cases)
    for category in [*_bfcl.CATEGORIES, "all"]:
        mine = " | ".join(f"{ours[category][k]:.1%}" for k in KS)
        theirs = " | ".join(f"{anchor[category][k]:.1%}" for k in KS) if anchor else "- | - | -"
        print(f"| {category} | {counts[category]} | {mine} | {theirs} |")
    print(
        f"\nThe same ranking not diversified by name prefix: recall@5 {plain['all'][5]:.1%} "
        f"(diversified, as search_tools answers: {ours['all'][5]:.1%})."
    )
    record(
        f"search recall@5, BFCL ({len(data.cases)} questions), diversified",
        ours["all"][5] * 100,
        "the same ranking, not diversified",
        plain["all"][5] * 100,
        unit="%",
        goal=">= 1",
    )
    if anchor is None:
        print("\nbm25s is not installed: recall recorded without its anchor is not recorded.")
    else:
        record(
            f"search recall@5, BFCL ({len(data.cases)} questions)",
            ours["all"][5] * 100,
            "bm25s, default tokenizer",
            anchor["all"][5] * 100,
            unit="%",
            goal=">= 1",
        )
        for category in _bfcl.CATEGORIES:
            record(
                f"search recall@5, BFCL {category}",
                ours[category][5] * 100,
                "bm25s",
                anchor[category][5] * 100,
                unit="%",
            )
    if tune:
        _tune(docs, data.cases)


def _tune(docs: Sequence[ToolDocument], cases: Sequence[_bfcl.Case]) -> None:
    rows = []
    for name, pnames, pdescs, k1 in itertools.product(
        (1.0, 1.5, 2.0, 3.0), (0.1, 0.25, 0.5), (0.3, 0.6, 1.0), (0.9, 1.2, 1.5)
    ):
        weights = FieldWeights(name, 1.0, pnames, pdescs)
        rows.append((_ours(docs, cases, weights=weights, k1=k1)["all"][5], weights, k1))
    rows.sort(key=lambda row: -row[0])
    print("\nRecall@5 over the grid (description weight 1, b 0.75), best first:\n")
    print("| recall@5 | name | parameter names | parameter descriptions | k1 |")
    print("|---:|---:|---:|---:|---:|")
    for recall, w, k1 in rows[:15]:
        print(
            f"| {recall:.1%} | {w.name} | {w.parameter_names} | {w.parameter_descriptions} | {k1} |"
        )


def _median_ms(
    run: Callable[[], Any], rounds: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    samples = []
    for _ in range(rounds):
        gc.collect()
        start = clock()
        run()
        samples.append(clock() - start)
    return statistics.median(samples) * 1000


def _each_us(run: Callable[[str], Any], queries: Sequence[str]) -> list[float]:
    samples = []
    for query in queries:
        start = time.perf_counter()
        run(query)
        samples.append((time.perf_counter() - start) * 1e6)
    return samples


def _memory(docs: Sequence[ToolDocument]) -> tuple[float, float]:
    """Bytes per tool the index holds: right after building, then with every term scored."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index = LexicalRanker().build(docs)
        built = tracemalloc.get_traced_memory()[0] - before
        index.warm()
        gc.collect()
        scored = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return built / len(docs), scored / len(docs)


def speed() -> None:
    docs = [ToolDocument(*t) for t in _catalog.catalog(TOOLS)]
    queries = _catalog.questions(QUESTIONS)
    ranker = LexicalRanker()
    build_ms = _median_ms(lambda: ranker.build(docs), ROUNDS)
    build_cpu_ms = _median_ms(lambda: ranker.build(docs), ROUNDS, time.process_time)
    first_ms = _median_ms(lambda: ranker.build(docs).search(queries[0], LIMIT), ROUNDS)
    warm_ms = _median_ms(lambda: ranker.build(docs).warm(), max(3, ROUNDS // 2))
    index: LexicalIndex = ranker.build(docs)
    cold = _each_us(lambda q: index.search(q, LIMIT), queries)
    warm = [us for _ in range(3) for us in _each_us(lambda q: index.search(q, LIMIT), queries)]
    started = time.process_time()
    for query in queries:
        index.search(query, LIMIT)
    warm_cpu_us = (time.process_time() - started) / len(queries) * 1e6
    per_tool, per_tool_scored = _memory(docs)
    json_bytes = statistics.mean(len(json.dumps(d._asdict()).encode()) for d in docs)
    noop = statistics.median(_each_us(lambda q: None, queries))
    rows = [
        ("build, 10,000 tools", f"{build_ms:,.0f} ms"),
        ("build, 10,000 tools, CPU time", f"{build_cpu_ms:,.0f} ms"),
        ("build, then score every term (`warm()`)", f"{warm_ms:,.0f} ms"),
        ("search p50, warm", f"{statistics.median(warm):,.0f} µs"),
        ("search p90, warm", f"{statistics.quantiles(warm, n=10)[-1]:,.0f} µs"),
        ("search, warm, mean CPU time", f"{warm_cpu_us:,.0f} µs"),
        ("search p50, cold (first pass on a fresh index)", f"{statistics.median(cold):,.0f} µs"),
        ("search p90, cold", f"{statistics.quantiles(cold, n=10)[-1]:,.0f} µs"),
        ("memory per tool, built", f"{per_tool:,.0f} B"),
        ("memory per tool, every term scored", f"{per_tool_scored:,.0f} B"),
        ("JSON text per tool", f"{json_bytes:,.0f} B"),
        ("a no-op call (timer included)", f"{noop:.2f} µs"),
    ]
    peers = _peers(docs, queries)
    anchor = tuple(peers["bm25s"][:2]) if "bm25s" in peers else None
    for name, (p_build, p_search, p_memory) in peers.items():
        rows += [
            (f"{name}: build (FastMCP: build + one answer)", f"{p_build:,.0f} ms"),
            (f"{name}: one search p50, warm", f"{p_search:,.0f} µs"),
            (f"{name}: memory per tool (tracemalloc)", f"{p_memory:,.0f} B"),
        ]
    print(f"\nSpeed and size at {TOOLS:,} tools ({QUESTIONS} questions, limit {LIMIT}).\n")
    print("| case | median |")
    print("|---|---:|")
    for label, value in rows:
        print(f"| {label} | {value} |")
    if anchor is None:
        print("\nbm25s is not installed: build and search times are compared with no anchor.")
        build_anchor, search_anchor = ("the 300 ms goal", BUILD_GOAL_MS), ("the 1 ms goal", 1000.0)
    else:
        build_anchor = ("bm25s tokenize + index", anchor[0])
        search_anchor = ("bm25s tokenize + retrieve", anchor[1])
    record(
        f"search index build, {TOOLS:,} tools (goal: <= {BUILD_GOAL_MS:g} ms)",
        build_ms,
        build_anchor[0],
        build_anchor[1],
        unit="ms",
        goal=f"<= {BUILD_GOAL_MS / build_anchor[1]:.3f}",
        peers={name: v[0] for name, v in peers.items()},
    )
    if "FastMCP" in peers:
        record(
            f"first search (index build + one search), {TOOLS:,} tools (goal: <= 300 ms)",
            first_ms,
            "FastMCP's first search (BM25 build + query)",
            peers["FastMCP"][0],
            unit="ms",
            goal=f"<= {BUILD_GOAL_MS / peers['FastMCP'][0]:.3f}",
            peers={name: v[0] for name, v in peers.items()},
        )
    record(
        f"search index build + warm(), {TOOLS:,} tools",
        warm_ms,
        build_anchor[0],
        build_anchor[1],
        unit="ms",
    )
    record(
        f"one search p50, warm, {TOOLS:,} tools (goal: <= {SEARCH_GOAL_US:g} µs)",
        statistics.median(warm),
        search_anchor[0],
        search_anchor[1],
        unit="µs",
        goal="<= 1" if anchor is not None else f"<= {SEARCH_GOAL_US / search_anchor[1]:.3f}",
        peers={name: v[1] for name, v in peers.items()},
    )
    record(
        f"one search p50, cold, {TOOLS:,} tools",
        statistics.median(cold),
        search_anchor[0],
        search_anchor[1],
        unit="µs",
    )
    record(
        f"search index memory per tool, every term scored (goal: <= {MEMORY_GOAL_BYTES:g} B)",
        per_tool_scored,
        "the tool's JSON text",
        json_bytes,
        unit="B",
        goal=f"<= {MEMORY_GOAL_BYTES / json_bytes:.3f}",
        peers={name: v[2] for name, v in peers.items()},
    )
    if "bm25s" in peers:
        record(
            f"search index memory per tool, every term scored, {TOOLS:,} tools",
            per_tool_scored,
            "bm25s, same documents (tracemalloc)",
            peers["bm25s"][2],
            unit="B",
            goal="<= 1",
            peers={name: v[2] for name, v in peers.items()},
        )


def _traced_per_tool(build: Callable[[], Any], tools: int) -> float:
    """Bytes per tool ``build()``'s result holds, by ``tracemalloc`` (numpy's arrays too)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = build()
        gc.collect()
        size = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    del held
    return size / tools


def _peers(docs: Sequence[ToolDocument], queries: Sequence[str]) -> dict[str, list[float]]:
    """bm25s and FastMCP's BM25 search over the same texts: build ms, warm p50 µs, B/tool.

    FastMCP's first search builds its index (``_BM25Index.build``, what its
    ``BM25SearchTransform`` does when the catalog changed) then answers; its queries
    read every tool per term, so it answers a fifth of the questions.
    """
    texts = [_text(d) for d in docs]
    found: dict[str, list[float]] = {}
    try:
        import bm25s
    except ImportError:
        pass
    else:

        def build_bm25s() -> Any:
            retriever = bm25s.BM25()
            retriever.index(bm25s.tokenize(texts, show_progress=False), show_progress=False)
            return retriever

        retriever = build_bm25s()

        def ask(query: str) -> Any:
            tokens = bm25s.tokenize([query], show_progress=False)
            return retriever.retrieve(tokens, k=LIMIT, show_progress=False)

        _each_us(ask, queries[:20])
        found["bm25s"] = [
            _median_ms(build_bm25s, max(3, ROUNDS // 2)),
            statistics.median(_each_us(ask, queries)),
            _traced_per_tool(build_bm25s, len(docs)),
        ]
    try:
        from fastmcp.server.transforms.search.bm25 import _BM25Index
    except ImportError:
        return found

    def build_fastmcp() -> Any:
        index = _BM25Index()
        index.build(texts)
        return index

    fast = build_fastmcp()
    asked = queries[: max(20, len(queries) // 5)]
    found["FastMCP"] = [
        _median_ms(lambda: build_fastmcp().query(queries[0], LIMIT), 3),
        statistics.median(_each_us(lambda q: fast.query(q, LIMIT), asked)),
        _traced_per_tool(build_fastmcp, len(docs)),
    ]
    return found


def main(argv: list[str]) -> None:
    quality("--tune" in argv)
    prefixed()
    findable()
    speed()
