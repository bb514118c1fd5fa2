"""The calls of one turn: prepared in order, then run in batches that respect safety."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, final

from toolpalette._run.call import UNCHECKED, Prepared, Refusal

if TYPE_CHECKING:
    from toolpalette._run.abort import AbortSignal
    from toolpalette._tools.result import ToolResult
    from toolpalette._tools.tool import ToolContext

__all__ = ["Prepare", "Report", "Run", "run_many"]

logger = logging.getLogger("toolpalette.executor")

Prepare = Callable[[object, Any, "ToolContext | None", "AbortSignal | None"], Awaitable[Prepared]]
"""Look up, read-only, validate and authorize one call (raises `Refusal`)."""
Run = Callable[
    [object, Prepared, "ToolContext | None", "AbortSignal | None", "str | None"],
    Awaitable["ToolResult"],
]
"""Run and render a prepared call (raises `Refusal`)."""
Report = Callable[
    [object, Any, Any, Refusal, "ToolContext | None", float, "str | None"], "ToolResult"
]
"""Report a refusal (with the validated input, once there is one) and return its result."""


@final
class _Slot:
    """One call of the turn: what was asked, and where its result goes."""

    __slots__ = ("call", "call_id", "index", "input", "name", "refusal", "result", "started")

    def __init__(self, index: int, call: Sequence[Any]) -> None:
        self.index = index
        self.name: object = call[0] if len(call) > 0 else None
        self.input: Any = call[1] if len(call) > 1 else None
        self.call_id: str | None = call[2] if len(call) > 2 else None
        self.started = time.perf_counter()
        self.call: Prepared | None = None
        self.result: ToolResult | None = None
        self.refusal: Refusal | None = None


def _safety(call: Prepared) -> tuple[bool, Hashable | None]:
    """Whether the call may overlap others, and its resource key (a failing check: unsafe)."""
    provider, value = call
    try:
        safe = bool(provider.is_concurrency_safe(value))
        key = provider.resource_key(value)
        hash(key)
    except Exception:
        logger.exception("concurrency check of %s raised; running the call alone", provider.name)
        return False, None
    return safe, key


def _batches(slots: list[_Slot]) -> list[list[list[_Slot]]]:
    """Batches of chains: every chain of a batch runs at once; a chain runs in order."""
    batches: list[list[list[_Slot]]] = []
    open_batch: dict[Hashable, list[_Slot]] | None = None
    for slot in slots:
        if slot.call is None:
            continue
        safe, key = _safety(slot.call)
        if not safe:
            batches.append([[slot]])
            open_batch = None
            continue
        if open_batch is None:
            open_batch = {}
            batches.append([])
        chain_key: Hashable = key if key is not None else ("\0call", slot.index)
        chain = open_batch.get(chain_key)
        if chain is None:
            chain = open_batch[chain_key] = []
            batches[-1].append(chain)
        chain.append(slot)
    return batches


async def run_many(
    calls: list[Any],
    ctx: ToolContext | None,
    abort: AbortSignal | None,
    concurrency: int,
    *,
    prepare: Prepare,
    run: Run,
    report: Report,
) -> list[ToolResult]:
    """Run a turn's ``calls`` through the given steps; see the module docstring for the order."""
    slots = [
        _Slot(i, call if isinstance(call, (tuple, list)) else ()) for i, call in enumerate(calls)
    ]
    for slot in slots:
        try:
            slot.call = await prepare(slot.name, slot.input, ctx, abort)
        except Refusal as refusal:
            slot.refusal = refusal
    limit = asyncio.Semaphore(concurrency)
    for batch in _batches(slots):
        if len(batch) == 1 and len(batch[0]) == 1:
            await _run_one(run, batch[0][0], ctx, abort, None)
        elif len(batch) <= concurrency and all(len(chain) == 1 for chain in batch):
            await _run_apart([chain[0] for chain in batch], run, ctx, abort)
        else:
            await asyncio.gather(*(_run_chain(run, c, ctx, abort, limit) for c in batch))
    return [_result(report, slot, ctx) for slot in slots]


async def _run_apart(
    slots: list[_Slot], run: Run, ctx: ToolContext | None, abort: AbortSignal | None
) -> None:
    """Run calls that wait for nothing and all fit under the limit: one task each.

    The same ``run`` step as every other call, without the chain's coroutine or the
    semaphore around it (neither could ever wait here): an in-flight call holds less,
    and the loop switches fewer frames per call. A refusal is the call's own answer;
    anything else a call raised (the caller's cancellation) is raised once all ended.
    """
    outcomes = await asyncio.gather(
        *(run(slot.name, _prepared(slot), ctx, abort, slot.call_id) for slot in slots),
        return_exceptions=True,
    )
    for slot, outcome in zip(slots, outcomes, strict=True):
        if isinstance(outcome, Refusal):
            slot.refusal = outcome
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            slot.result = outcome


def _prepared(slot: _Slot) -> Prepared:
    assert slot.call is not None
    return slot.call


async def _run_chain(
    run: Run,
    chain: list[_Slot],
    ctx: ToolContext | None,
    abort: AbortSignal | None,
    limit: asyncio.Semaphore,
) -> None:
    for slot in chain:
        await _run_one(run, slot, ctx, abort, limit)


async def _run_one(
    run: Run,
    slot: _Slot,
    ctx: ToolContext | None,
    abort: AbortSignal | None,
    limit: asyncio.Semaphore | None,
) -> None:
    assert slot.call is not None
    try:
        if limit is None:
            slot.result = await run(slot.name, slot.call, ctx, abort, slot.call_id)
        else:
            async with limit:
                slot.result = await run(slot.name, slot.call, ctx, abort, slot.call_id)
    except Refusal as refusal:
        slot.refusal = refusal


def _result(report: Report, slot: _Slot, ctx: ToolContext | None) -> ToolResult:
    if slot.refusal is not None:
        value = slot.call[1] if slot.call is not None else UNCHECKED
        return report(slot.name, slot.input, value, slot.refusal, ctx, slot.started, slot.call_id)
    assert slot.result is not None
    return slot.result
