"""A fake tool that says when its input was validated off the event loop (the fault tests')."""

from __future__ import annotations

import threading
from typing import Any

from toolpalette.testing import FakeTool


class Watched(FakeTool):
    """A hand-written-schema tool that tells when its input is validated off the loop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loop_thread = threading.current_thread()
        self.apart = threading.Event()
        self.apart_ended = threading.Event()

    def parse_input(self, raw: Any) -> Any:
        if threading.current_thread() is self.loop_thread:
            return super().parse_input(raw)
        self.apart.set()
        try:
            return super().parse_input(raw)
        finally:
            self.apart_ended.set()
