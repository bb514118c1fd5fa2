"""ToolRegistry under threads: monotonic versions, atomic surfaces, no lost mutation."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator

import pytest
from toolpalette import Surface, SurfaceDiff, ToolRegistry
from toolpalette.testing import fake_tool, make_registry, wait_until

WRITERS = 8
ROUNDS = 150


@pytest.fixture(autouse=True)
def _switch_often() -> Iterator[None]:
    """Make the interpreter switch threads far more often, to provoke interleavings."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def run_threads(targets: list[Callable[[], None]]) -> None:
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as exc:  # reported to the test below
                errors.append(exc)

        return run

    threads = [threading.Thread(target=guarded(t)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
        assert not thread.is_alive()
    if errors:
        raise errors[0]


def test_version_is_monotonic_under_eight_mutating_threads() -> None:
    registry = ToolRegistry()
    start = threading.Barrier(WRITERS + 1)
    lock = threading.Lock()
    seen: list[tuple[int, int]] = []  # (thread ident, version) of each notified mutation

    def record(diff: SurfaceDiff) -> None:
        with lock:
            seen.append((threading.get_ident(), diff.version))

    registry.on_surface_changed(record)
    real = [0] * WRITERS
    stop = threading.Event()
    polled: list[int] = []
    backwards: list[tuple[int, int]] = []

    def writer(index: int) -> Callable[[], None]:
        tools = [fake_tool(f"w{index}_{i}") for i in range(ROUNDS)]

        def run() -> None:
            start.wait()
            for i, fake in enumerate(tools):
                assert registry.register(fake) is fake
                registry.register(fake)  # idempotent: no mutation
                real[index] += 1
                if i % 3 == 0:
                    assert registry.unregister(fake.name) is True
                    assert registry.unregister(fake.name) is False  # idempotent
                    real[index] += 1

        return run

    def poller() -> None:
        start.wait()
        last = 0
        while not stop.is_set():
            current = registry.version
            if current < last:
                backwards.append((last, current))
            last = current
            polled.append(current)
            if len(polled) > 100_000:
                polled.clear()

    poll = threading.Thread(target=poller)
    poll.start()
    try:
        run_threads([writer(i) for i in range(WRITERS)])
    finally:
        stop.set()
        poll.join()

    total = sum(real)
    assert registry.version == total
    assert sorted(v for _, v in seen) == list(range(1, total + 1))
    for ident in {i for i, _ in seen}:
        mine = [v for i, v in seen if i == ident]
        assert mine == sorted(mine)
        assert len(set(mine)) == len(mine), "a thread saw a version twice"
    assert backwards == [], "an observer saw the version go back"
    kept = sum(1 for i in range(ROUNDS) if i % 3 != 0) * WRITERS
    assert len(registry) == kept


def test_versioned_surface_matches_the_registry_at_that_version() -> None:
    registry = ToolRegistry()
    lock = threading.Lock()
    diffs: list[SurfaceDiff] = []

    def record(diff: SurfaceDiff) -> None:
        with lock:
            diffs.append(diff)

    registry.on_surface_changed(record)
    observed: list[Surface] = []
    done = threading.Event()

    def writer(index: int) -> Callable[[], None]:
        def run() -> None:
            for i in range(ROUNDS):
                if i == ROUNDS // 2:  # halfway, a reader has seen a state between writes
                    wait_until(lambda: any(s.version > 0 for s in observed))
                name = f"w{index}_{i % 7}"
                if not registry.has_tool(name):
                    registry.register(fake_tool(name))
                elif i % 2:
                    registry.replace(fake_tool(name))
                else:
                    registry.unregister(name)

        return run

    def reader() -> None:
        last = None
        while not done.is_set():
            surface = registry.versioned_surface()
            if surface is not last:  # one Surface per version: keep each once per reader
                observed.append(surface)
                last = surface

    readers = [threading.Thread(target=reader) for _ in range(4)]
    for thread in readers:
        thread.start()
    try:
        wait_until(lambda: len(observed) >= len(readers))  # every reader looks before writes
        run_threads([writer(i) for i in range(4)])
    finally:
        done.set()
        for thread in readers:
            thread.join()
    observed.append(registry.versioned_surface())

    # Replay the diffs in version order: the state the registry held at each version.
    states: dict[int, tuple[str, ...]] = {0: ()}
    names: list[str] = []
    diffs.sort(key=lambda d: d.version)
    assert [d.version for d in diffs] == list(range(1, registry.version + 1))
    for diff in diffs:
        names.extend(diff.added)
        names[:] = [n for n in names if n not in diff.removed]
        states[diff.version] = tuple(names)

    # The readers saw the registry between writes, not only before and after them.
    assert len({surface.version for surface in observed}) > 2
    for surface in observed:
        assert surface.names == states[surface.version], surface.version
        assert [s["name"] for s in json.loads(surface.serialized())] == list(surface.names)


def test_surface_never_pairs_a_version_with_another_state() -> None:
    # One writer alternates between two complete states; odd versions hold "z".
    registry = make_registry("x")
    z = fake_tool("z")
    done = threading.Event()
    bad: list[Surface] = []

    def writer() -> None:
        try:
            for _ in range(ROUNDS * 4):
                registry.register(z)
                registry.unregister(z)
        finally:
            done.set()

    def reader() -> None:
        while not done.is_set():
            surface = registry.versioned_surface()
            if surface.names != (("x", "z") if surface.version % 2 == 0 else ("x",)):
                bad.append(surface)

    run_threads([writer, reader, reader, reader])
    assert bad == []
    assert registry.version == 1 + ROUNDS * 8


def test_concurrent_collisions_let_exactly_one_provider_win() -> None:
    registry = ToolRegistry()
    start = threading.Barrier(WRITERS)
    wins: list[int] = []
    losses: list[int] = []

    def contender(index: int) -> Callable[[], None]:
        def run() -> None:
            candidate = fake_tool("contested")
            start.wait()
            try:
                registry.register(candidate)
            except ValueError:  # ToolCollisionError is a ValueError
                losses.append(index)
            else:
                wins.append(index)

        return run

    run_threads([contender(i) for i in range(WRITERS)])
    assert len(wins) == 1
    assert len(losses) == WRITERS - 1
    assert registry.version == 1
