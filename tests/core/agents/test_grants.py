"""The grant record: GrantRecord's fields and GrantLog's append-only, thread-safe list.

GrantLog is internal (the log behind ``hub.grants()`` and the ``toolpalette_grant``
hook): these are its unit tests, so they import it from its module.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time

import pytest
from toolpalette import GrantRecord
from toolpalette._agents.grants import GrantLog


def record(name: str = "send_mail", decision: str = "granted") -> GrantRecord:
    return GrantRecord(
        thinker="app.Assistant",
        conversation="c-1",
        turn=1,
        kind="tool",
        name=name,
        decision=decision,  # type: ignore[arg-type]
    )


def test_a_record_has_every_field_and_is_frozen() -> None:
    before = time.time()
    made = record()
    assert [f.name for f in dataclasses.fields(GrantRecord)] == [
        "thinker",
        "conversation",
        "turn",
        "kind",
        "name",
        "decision",
        "reason",
        "time",
    ]
    assert made.reason == ""
    assert before <= made.time <= time.time()
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.decision = "refused"  # type: ignore[misc]


def test_the_log_keeps_records_in_order_and_hands_out_copies() -> None:
    log = GrantLog()
    first, second = record("a"), record("b", "refused")
    log.add(first)
    log.add(second)
    records = log.records()
    assert records == [first, second]
    records.clear()
    assert log.records() == [first, second]


def test_listeners_hear_records_added_after_they_listen() -> None:
    log = GrantLog()
    log.add(record("before"))
    heard: list[GrantRecord] = []
    log.listen(heard.append)
    log.add(record("after"))
    assert [r.name for r in heard] == ["after"]


def test_a_raising_listener_is_logged_and_the_rest_still_hear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = GrantLog()
    heard: list[GrantRecord] = []

    def broken(_: GrantRecord) -> None:
        raise RuntimeError("listener down")

    log.listen(broken)
    log.listen(heard.append)
    with caplog.at_level(logging.ERROR, logger="toolpalette.grants"):
        log.add(record())
    assert len(heard) == 1
    assert len(log.records()) == 1
    assert "listener" in caplog.text


def test_concurrent_adds_lose_nothing() -> None:
    log = GrantLog()
    heard: list[GrantRecord] = []
    log.listen(heard.append)

    def add_many(worker: int) -> None:
        for i in range(200):
            log.add(record(f"{worker}-{i}"))

    threads = [threading.Thread(target=add_many, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    names = [r.name for r in log.records()]
    assert len(names) == len(set(names)) == 1600
    assert len(heard) == 1600
    for worker in range(8):
        mine = [n for n in names if n.startswith(f"{worker}-")]
        assert mine == [f"{worker}-{i}" for i in range(200)]
