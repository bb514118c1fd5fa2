"""execute_many: safe calls together, unsafe and same-key calls serialized, in order."""

from __future__ import annotations

import asyncio
import itertools
import random
import threading
from collections.abc import Callable, Hashable
from typing import Any

import pytest
from toolpalette import AbortSignal, Executor, ToolError, ToolRegistry
from toolpalette.testing import FakeTool, await_until


class Tracked(FakeTool):
    """An async fake that records overlap and, optionally, keys its calls."""

    def __init__(
        self,
        name: str,
        log: list[tuple[str, str, Any]],
        *,
        safe: bool | Callable[[Any], bool],
        key: Callable[[Any], Hashable] | None = None,
        delay: float = 0.03,
    ) -> None:
        self.active = 0
        self.peak = 0
        self._safe, self._key = safe, key

        async def run(value: Any) -> Any:
            self.active += 1
            self.peak = max(self.peak, self.active)
            log.append(("start", name, value.get("i")))
            await asyncio.sleep(value.get("delay", delay))
            log.append(("end", name, value.get("i")))
            self.active -= 1
            return value.get("i")

        super().__init__(name, result=run, is_async=True)

    def is_concurrency_safe(self, value: Any) -> bool:
        return self._safe(value) if callable(self._safe) else self._safe

    def resource_key(self, value: Any) -> Hashable | None:
        return self._key(value) if self._key is not None else None


def _span(log: list[tuple[str, str, Any]], name: str, i: Any) -> tuple[int, int]:
    return log.index(("start", name, i)), log.index(("end", name, i))


async def test_results_match_calls_in_order():
    log: list[Any] = []
    reader = Tracked("read", log, safe=True)
    executor = Executor(ToolRegistry([reader]))
    calls = [("read", {"i": i, "delay": random.random() / 50}) for i in range(20)]
    calls.insert(5, ("nope", {}))
    results = await executor.execute_many(calls)
    texts = [r.text for r in results]
    assert texts[:5] == [str(i) for i in range(5)]
    assert results[5].status == 404
    assert texts[6:] == [str(i) for i in range(5, 20)]


async def test_safe_calls_overlap_and_unsafe_calls_run_alone():
    log: list[Any] = []
    reader = Tracked("read", log, safe=True)
    writer = Tracked("write", log, safe=False)
    executor = Executor(ToolRegistry([reader, writer]))
    calls = [("read", {"i": 0}), ("read", {"i": 1}), ("write", {"i": 2}), ("read", {"i": 3})]
    calls += [("write", {"i": 4}), ("write", {"i": 5})]
    results = await executor.execute_many(calls)
    assert [r.text for r in results] == ["0", "1", "2", "3", "4", "5"]
    assert reader.peak == 2
    assert writer.peak == 1
    w_start, w_end = _span(log, "write", 2)
    assert max(_span(log, "read", 0)[1], _span(log, "read", 1)[1]) < w_start
    assert w_end < _span(log, "read", 3)[0]
    assert _span(log, "write", 4)[1] < _span(log, "write", 5)[0]


async def test_calls_sharing_a_resource_key_are_serialized_in_order():
    log: list[Any] = []
    tool = Tracked("fetch", log, safe=True, key=lambda value: value["key"])
    executor = Executor(ToolRegistry([tool]))
    calls = [("fetch", {"i": i, "key": "a" if i % 2 else "b"}) for i in range(6)]
    await executor.execute_many(calls)
    for key_parity in (0, 1):
        spans = [_span(log, "fetch", i) for i in range(6) if i % 2 == key_parity]
        assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))
    assert tool.peak == 2  # the two keys ran side by side


async def test_a_per_input_check_overrides_the_static_flag():
    log: list[Any] = []
    tool = Tracked("db", log, safe=lambda value: value.get("mode") == "read")
    executor = Executor(ToolRegistry([tool]))
    await executor.execute_many([("db", {"i": i, "mode": "read"}) for i in range(3)])
    assert tool.peak == 3
    tool.peak = 0
    await executor.execute_many([("db", {"i": i, "mode": "write"}) for i in range(3)])
    assert tool.peak == 1


async def test_a_failing_concurrency_check_runs_the_call_alone(caplog: pytest.LogCaptureFixture):
    log: list[Any] = []
    tool = Tracked("odd", log, safe=True, key=lambda value: value["missing"])
    results = await Executor(ToolRegistry([tool])).execute_many([("odd", {"i": 1})] * 3)
    assert [r.text for r in results] == ["1", "1", "1"]
    assert tool.peak == 1
    assert "concurrency check" in caplog.text


async def test_the_concurrency_limit_is_respected():
    log: list[Any] = []
    tool = Tracked("read", log, safe=True, delay=0.01)
    executor = Executor(ToolRegistry([tool]), concurrency=4)
    results = await executor.execute_many([("read", {"i": i}) for i in range(50)])
    assert [r.text for r in results] == [str(i) for i in range(50)]
    assert tool.peak == 4


async def test_malformed_call_entries_are_404s():
    executor = Executor(ToolRegistry([FakeTool("t", result="ok")]))
    results = await executor.execute_many([(), ("t",), "t", ("t", {}, "call-1")])  # type: ignore[list-item]
    assert [r.status for r in results] == [404, 400, 404, 200]


async def test_an_abort_ends_every_pending_call_of_the_turn():
    log: list[Any] = []
    writer = Tracked("write", log, safe=False, delay=5)
    executor = Executor(ToolRegistry([writer]))
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.1, signal.abort, "Turn cancelled.")
    results = await executor.execute_many([("write", {"i": i}) for i in range(3)], abort=signal)
    assert [(r.status, r.text) for r in results] == [(499, "Turn cancelled.")] * 3
    assert len(log) == 1  # the first started; the others never did


@pytest.mark.parametrize("limit", [2, 100], ids=["limit below the batch", "all at once"])
async def test_cancelling_the_turn_raises_to_its_caller_at_once(limit: int):
    log: list[Any] = []
    reader = Tracked("read", log, safe=True, delay=5)
    executor = Executor(ToolRegistry([reader]), concurrency=limit)
    turn = asyncio.ensure_future(executor.execute_many([("read", {"i": i}) for i in range(10)]))
    await await_until(lambda: reader.active == min(limit, 10))
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn  # well before the 5 s the calls would take
    assert turn.cancelled()


def _echo_tool() -> FakeTool:
    async def echo(value: Any) -> Any:
        await asyncio.sleep(random.random() / 100)
        if value["i"] % 7 == 0:
            raise ToolError(f"call {value['i']} failed", code=f"e{value['i']}")
        return {"i": value["i"], "payload": value["payload"]}

    return FakeTool("echo", result=echo, is_async=True, read_only=True)


def _check_own(results: list[Any], n: int) -> None:
    assert len(results) == n
    for i, result in enumerate(results):
        if i % 7 == 0:
            assert (result.code, result.text) == (f"e{i}", f"call {i} failed")
        else:
            assert result.text == f'{{"i":{i},"payload":"p{i}"}}'


async def test_1000_concurrent_calls_without_cross_talk():
    executor = Executor(ToolRegistry([_echo_tool()]))
    calls = [executor.execute("echo", {"i": i, "payload": f"p{i}"}) for i in range(1000)]
    _check_own(await asyncio.gather(*calls), 1000)


@pytest.mark.parametrize("limit", [64, 1000], ids=["limit below the batch", "all at once"])
async def test_1000_calls_in_one_turn_without_cross_talk(limit: int):
    executor = Executor(ToolRegistry([_echo_tool()]), concurrency=limit)
    calls = [("echo", {"i": i, "payload": f"p{i}"}) for i in range(1000)]
    _check_own(await executor.execute_many(calls), 1000)


async def test_sync_tools_run_concurrently_in_the_pool():
    barrier = threading.Barrier(3, timeout=5)

    def meet(value: Any) -> str:
        barrier.wait()  # only returns if three calls run at once
        return "met"

    tool = FakeTool("meet", result=meet, read_only=True)
    results = await Executor(ToolRegistry([tool])).execute_many([("meet", {})] * 3)
    assert [r.text for r in results] == ["met"] * 3


async def test_calls_during_registry_churn_see_one_state_or_the_other():
    stable = FakeTool("stable", result="s", is_async=True)
    flaky = FakeTool("flaky", result="f", is_async=True)
    registry = ToolRegistry([stable, flaky])
    executor = Executor(registry)
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            registry.unregister("flaky")
            registry.register(flaky)

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        results = []
        for _ in range(500):
            results.append(await executor.execute("flaky", {}))
            results.append(await executor.execute("stable", {}))
            await asyncio.sleep(0)
    finally:
        stop.set()
        thread.join()
    assert {(r.status, r.text) for r in results[1::2]} == {(200, "s")}
    assert {r.status for r in results[0::2]} <= {200, 404}
