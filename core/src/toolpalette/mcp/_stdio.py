"""Serving a palette over stdio, each line seen as the client wrote it."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import anyio
from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from toolpalette.mcp._raw import SentLines

__all__ = ["serve_stdio"]


async def serve_stdio(server: Server[Any], seen: SentLines) -> None:
    """Serve ``server`` on stdin and stdout until the client closes stdin.

    Each line is shown to ``seen`` before the SDK parses it.
    """
    with _claimed_stdin() as binary:
        text = io.TextIOWrapper(binary, encoding="utf-8", errors="replace")
        lines = _Lines(anyio.wrap_file(text), seen)
        try:
            async with stdio_server(stdin=cast(Any, lines)) as (read, write):
                await server.run(read, write, server.create_initialization_options())
        finally:
            with contextlib.suppress(ValueError):
                text.detach()  # the descriptor is _claimed_stdin's to close


class _Lines:
    """Stdin's lines, each shown to the server's `SentLines` first."""

    def __init__(self, stdin: anyio.AsyncFile[str], seen: SentLines) -> None:
        self._stdin = stdin
        self._seen = seen

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._stdin:
            self._seen.read(line)
            yield line


@contextlib.contextmanager
def _claimed_stdin() -> Iterator[BinaryIO]:
    """Stdin's bytes, read from a private descriptor while fd 0 reads the null device.

    Where stdin is not descriptor 0 (replaced in-process) or cannot be moved, it is
    read in place. The private descriptor stays open (see below): serving over stdio
    is the process's last work.
    """
    try:
        backed = sys.stdin is not None and sys.stdin.buffer.fileno() == 0
    except (AttributeError, OSError, ValueError):
        backed = False
    if not backed:
        yield sys.stdin.buffer
        return
    private = os.dup(0)  # not inherited by children (Python's default)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
    except OSError:
        os.close(private)
        yield sys.stdin.buffer
        return
    # Never closed: a thread may still be blocked reading it after the server stops,
    # and a closed descriptor could be reused under it (the SDK keeps its own so too).
    stream = os.fdopen(private, "rb", closefd=False)
    try:
        yield cast(BinaryIO, stream)
    finally:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)
