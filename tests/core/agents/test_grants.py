"""The grant record: GrantRecord's fields, and the hub's append-only, thread-safe record.

``hub.record_grant`` keeps each record for ``hub.grants()`` and delivers it to every
``toolpalette_grant`` implementation; one that raises is logged and the others still hear.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time

import pytest
from toolpalette import GrantRecord, ToolHub, hookimpl


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
        "principal",
        "call_id",
        "parent",
    ]
    assert made.reason == ""
    assert (made.call_id, made.parent) == (None, None)  # only a script's calls have them
    assert made.principal is None  # a host's own call is made for no principal
    assert before <= made.time <= time.time()
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.decision = "refused"  # type: ignore[misc]


class Listener:
    """A plugin that hears every grant record, as a host's audit log would."""

    def __init__(self, fail: bool = False) -> None:
        self.heard: list[GrantRecord] = []
        self.fail = fail

    @hookimpl
    def toolpalette_grant(self, record: GrantRecord) -> None:
        if self.fail:
            raise RuntimeError("listener down")
        self.heard.append(record)


def hub() -> ToolHub:
    return ToolHub(autoload=False, config={})


def test_the_hub_keeps_records_in_order_and_hands_out_copies() -> None:
    h = hub()
    first, second = record("a"), record("b", "refused")
    h.record_grant(first)
    h.record_grant(second)
    records = h.grants()
    assert records == [first, second]
    records.clear()
    assert h.grants() == [first, second]


def test_listeners_hear_records_added_after_they_join() -> None:
    h = hub()
    h.record_grant(record("before"))
    listener = Listener()
    h.add_plugin(listener, name="audit")
    h.record_grant(record("after"))
    assert [r.name for r in listener.heard] == ["after"]
    assert [r.name for r in h.grants()] == ["before", "after"]


def test_a_raising_listener_is_logged_and_the_rest_still_hear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    h = hub()
    listener = Listener()
    h.add_plugin(Listener(fail=True), name="broken")
    h.add_plugin(listener, name="audit")
    with caplog.at_level(logging.ERROR, logger="toolpalette.hub"):
        h.record_grant(record())
    assert len(listener.heard) == 1
    assert len(h.grants()) == 1
    assert "toolpalette_grant in broken raised" in caplog.text


def test_concurrent_records_lose_nothing() -> None:
    h = hub()
    listener = Listener()
    h.add_plugin(listener, name="audit")

    def add_many(worker: int) -> None:
        for i in range(200):
            h.record_grant(record(f"{worker}-{i}"))

    threads = [threading.Thread(target=add_many, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    names = [r.name for r in h.grants()]
    assert len(names) == len(set(names)) == 1600
    assert len(listener.heard) == 1600
    for worker in range(8):
        mine = [n for n in names if n.startswith(f"{worker}-")]
        assert mine == [f"{worker}-{i}" for i in range(200)]
