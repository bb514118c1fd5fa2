"""The calls of one turn: admitted in order, then run in batches that respect safety.

Consecutive concurrency-safe calls form one batch and run together, at most
``concurrency`` at a time; inside a batch, calls whose inputs share a resource key form
a chain and run one after another, in call order. A call that is not concurrency-safe
is a batch of its own: it starts after everything before it has ended, and everything
after it waits for it. Refused calls (unknown, invalid, denied) take no slot.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

from toolpalette._tools.result import ToolResult

if TYPE_CHECKING:
    from toolpalette._run.abort import AbortSignal
    from toolpalette._run.executor import Call, Executor, _Ready
    from toolpalette._tools.tool import ToolContext

__all__ = ["run_many"]

logger = logging.getLogger("toolpalette.executor")


class _Slot:
    """One call of the turn: what was asked, and where its result goes."""

    __slots__ = ("call_id", "error", "index", "input", "name", "ready", "result", "started")

    def __init__(self, index: int, call: Sequence[Any]) -> None:
        self.index = index
        self.name: object = call[0] if len(call) > 0 else None
        self.input: Any = call[1] if len(call) > 1 else None
        self.call_id: str | None = call[2] if len(call) > 2 else None
        self.started = time.perf_counter()
        self.ready: _Ready | None = None
        self.result: ToolResult | None = None
        self.error: BaseException | None = None


def _safety(slot: _Slot) -> tuple[bool, Hashable | None]:
    """Whether the call may overlap others, and its resource key (a failing check: unsafe)."""
    assert slot.ready is not None
    provider, value = slot.ready.provider, slot.ready.value
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
        if slot.ready is None:
            continue
        safe, key = _safety(slot)
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
    executor: Executor,
    calls: list[Call],
    context: ToolContext | None,
    abort: AbortSignal | None,
) -> list[ToolResult]:
    """Run ``calls`` for ``executor``; see the module docstring for the order."""
    ctx = context if context is not None else executor.context
    slots = [
        _Slot(i, call if isinstance(call, (tuple, list)) else ()) for i, call in enumerate(calls)
    ]
    for slot in slots:
        await _admit(executor, slot, ctx, abort)
    limit = asyncio.Semaphore(executor.concurrency)
    for batch in _batches(slots):
        if len(batch) == 1 and len(batch[0]) == 1:
            await _run_one(executor, batch[0][0], ctx, abort, None)
        else:
            await asyncio.gather(*(_run_chain(executor, c, ctx, abort, limit) for c in batch))
    return [_finish(executor, slot, ctx) for slot in slots]


async def _admit(
    executor: Executor, slot: _Slot, ctx: ToolContext | None, abort: AbortSignal | None
) -> None:
    from toolpalette._run.executor import _Ready

    admitted, slot.error = executor._admit(slot.name, slot.input)
    if type(admitted) is _Ready and executor.policy is not None:
        admitted, slot.error = await executor._authorize(admitted, ctx, abort)
    if type(admitted) is _Ready:
        slot.ready = admitted
    else:
        assert isinstance(admitted, ToolResult)
        slot.result = admitted


async def _run_chain(
    executor: Executor,
    chain: list[_Slot],
    ctx: ToolContext | None,
    abort: AbortSignal | None,
    limit: asyncio.Semaphore,
) -> None:
    for slot in chain:
        await _run_one(executor, slot, ctx, abort, limit)


async def _run_one(
    executor: Executor,
    slot: _Slot,
    ctx: ToolContext | None,
    abort: AbortSignal | None,
    limit: asyncio.Semaphore | None,
) -> None:
    assert slot.ready is not None
    if limit is None:
        result, slot.error = await executor._perform(slot.ready, ctx, abort, slot.call_id)
    else:
        async with limit:
            result, slot.error = await executor._perform(slot.ready, ctx, abort, slot.call_id)
    assert isinstance(result, ToolResult)
    slot.result = result


def _finish(executor: Executor, slot: _Slot, ctx: ToolContext | None) -> ToolResult:
    assert slot.result is not None
    return executor._finish(
        slot.name, slot.input, slot.result, slot.error, ctx, slot.started, slot.call_id
    )
