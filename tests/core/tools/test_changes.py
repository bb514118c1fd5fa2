"""`resource_updated`: heard on any thread by live listeners, a failing one contained."""

from __future__ import annotations

import gc
import threading

import pytest
import toolpalette
from toolpalette._tools.changes import hear_resource_updates


class Ear:
    def __init__(self, fail: bool = False) -> None:
        self.heard: list[tuple[str, str]] = []
        self.fail = fail

    def hear(self, uri: str) -> None:
        self.heard.append((uri, threading.current_thread().name))
        if self.fail:
            raise RuntimeError("CANARY")


def test_every_live_listener_hears_on_the_announcing_thread_a_failing_one_logged(
    caplog: pytest.LogCaptureFixture,
):
    first, failing, last = Ear(), Ear(fail=True), Ear()
    stops = [hear_resource_updates(e.hear) for e in (first, failing, last)]
    try:
        worker = threading.Thread(target=toolpalette.resource_updated, args=("a://b",), name="w")
        worker.start()
        worker.join()
    finally:
        for stop in stops:
            stop()
    assert first.heard == failing.heard == last.heard == [("a://b", "w")]
    assert "a resource-update listener raised" in caplog.text
    toolpalette.resource_updated("a://c")  # stopped: nobody hears it
    assert first.heard == [("a://b", "w")]


def test_a_listener_is_held_weakly():
    ear = Ear()
    hear_resource_updates(ear.hear)
    heard = ear.heard
    del ear
    gc.collect()
    toolpalette.resource_updated("a://b")
    assert heard == []


def test_a_uri_must_be_a_string():
    with pytest.raises(TypeError, match="URI, a string"):
        toolpalette.resource_updated(b"a://b")  # type: ignore[arg-type]
