"""A stdio server's process: its own session, its messages read under a size cap, its end.

POSIX only; importing this module never imports the ``mcp`` SDK, `open_stdio()` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Final

from toolpalette._mcp_client import signals as _signals
from toolpalette._mcp_client.config import MCPServerConfig

if TYPE_CHECKING:
    from anyio.abc import ByteReceiveStream, Process
    from anyio.streams.memory import MemoryObjectSendStream

__all__ = [
    "EXIT_GRACE",
    "LOG_BYTES",
    "LOOP_PARSE",
    "MAX_MESSAGE",
    "TERM_GRACE",
    "BOUND_PASSED",
    "TOO_LARGE",
    "ServerLog",
    "open_stdio",
    "past_bound",
    "too_large",
]

logger = logging.getLogger("toolpalette.mcp")

MAX_MESSAGE: Final = 4 * 1024 * 1024
"""The longest message (one line of JSON-RPC) a stdio server may send, in bytes."""
LOOP_PARSE: Final = 64 * 1024
"""Lines longer than this (bytes) are parsed in a worker thread, not on the loop."""
EXIT_GRACE: Final = 2.0
"""Seconds a server is given to exit once its stdin is closed."""
TERM_GRACE: Final = 2.0
"""Seconds its process group is given to end after SIGTERM, before SIGKILL."""
TOO_LARGE: Final = "toolpalette:message-too-large"
"""The ``data.reason`` of the JSON-RPC error a request gets for an answer over the cap."""
BOUND_PASSED: Final = "toolpalette:stream-bound"
"""The ``data.reason`` of the JSON-RPC error a request gets for an HTTP answer past another
bound than a message's (a stream's size, a wait, an encoding; `http_bounds`)."""
_CHUNK: Final = 64 * 1024
_POLL: Final = 0.01
_HEAD: Final = 512
_ID: Final = re.compile(
    rb'\s*\{(?:\s*"jsonrpc"\s*:\s*"2\.0"\s*,)?\s*"id"\s*:\s*'
    rb'(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")\s*[,}]'
)


LOG_BYTES: Final = 16 * 1024
"""How much of the end of a server's stderr is kept (only its last line is ever used)."""


class ServerLog:
    """The tail of a stdio server's stderr: its last `LOG_BYTES` bytes, in memory.

    However much a server writes, the log holds at most twice `LOG_BYTES`. Not
    thread-safe: used from the pool's event loop only.
    """

    def __init__(self) -> None:
        self._tail = bytearray()

    def feed(self, data: bytes) -> None:
        """Keep ``data``, dropping what falls out of the tail."""
        self._tail += data
        if len(self._tail) > 2 * LOG_BYTES:
            del self._tail[:-LOG_BYTES]

    def tail(self) -> str:
        """``"; its last output: LINE"``, or ``""`` when the server wrote nothing."""
        text = bytes(self._tail[-LOG_BYTES:]).decode("utf-8", "replace").strip()
        lines = text.splitlines()
        return f"; its last output: {lines[-1][:200]}" if lines else ""

    def close(self) -> None:
        """Forget what was kept."""
        self._tail = bytearray()


def too_large(error: Any) -> int | None:
    """The cap, when a JSON-RPC ``ErrorData`` is this transport's refusal of a long answer."""
    data = getattr(error, "data", None)
    if isinstance(data, dict) and data.get("reason") == TOO_LARGE:
        limit = data.get("limit")
        return limit if isinstance(limit, int) else MAX_MESSAGE
    return None


def past_bound(error: Any) -> bool:
    """Whether a JSON-RPC ``ErrorData`` is an HTTP transport's refusal of an answer past a bound."""
    data = getattr(error, "data", None)
    return isinstance(data, dict) and data.get("reason") == BOUND_PASSED


@contextlib.asynccontextmanager
async def open_stdio(
    config: MCPServerConfig, log: ServerLog, *, max_message: int = MAX_MESSAGE
) -> AsyncIterator[tuple[Any, Any]]:
    """Start ``config``'s server and yield the SDK's read and write streams to it.

    On exit the server's process group is always ended (see the module docstring).

    Raises:
        ValueError: a ``${VAR}`` in the configuration is not set.
        OSError: the command could not be started.
    """
    import anyio
    from mcp.shared.message import SessionMessage

    assert config.command is not None
    env = config.process_env()
    process = await anyio.open_process(
        [config.command, *config.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=config.cwd,
        env=env,
        start_new_session=True,
    )
    _signals.track(process.pid)
    try:
        reads_in, reads_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        writes_in, writes_out = anyio.create_memory_object_stream[SessionMessage](0)
        pipes = _Pipes(process, log, max_message)
        async with anyio.create_task_group() as group:
            group.start_soon(pipes.read_stdout, reads_in)
            group.start_soon(pipes.read_stderr)
            group.start_soon(pipes.write_stdin, writes_out, reads_in)
            try:
                yield reads_out, writes_in
            finally:
                with anyio.CancelScope(shield=True):
                    await reads_out.aclose()
                    await writes_in.aclose()
                    await _end_group(process)
                    with anyio.move_on_after(EXIT_GRACE):  # its last words, for the report
                        await pipes.stderr_read.wait()
                    await _close_pipes(process)
                group.cancel_scope.cancel()
    finally:
        if process.returncode is None or _group_alive(process.pid, process):
            with anyio.CancelScope(shield=True):
                await _end_group(process)
                await _close_pipes(process)
        _signals.untrack(process.pid)


class _Pipes:
    """The tasks that move messages between the server's pipes and the SDK's streams."""

    def __init__(self, process: Process, log: ServerLog, max_message: int) -> None:
        import anyio

        self._process = process
        self._log = log
        self._max = max_message
        self.stderr_read = anyio.Event()
        """Set once the server's stderr has been read to its end."""

    async def read_stdout(self, send: MemoryObjectSendStream[Any]) -> None:
        """Split stdout into lines in one pass, refusing a line over the cap early.

        Once the session stops listening, what the server still writes is read and
        dropped, so that a server flushing its output can exit.
        """
        import anyio

        stdout = self._process.stdout
        assert stdout is not None
        held = bytearray()
        listening, skipping = True, False
        async with send:
            async for chunk in _chunks(stdout):
                if not listening:
                    continue
                start = 0
                while True:
                    end = chunk.find(b"\n", start)
                    piece = chunk[start:] if end < 0 else chunk[start:end]
                    try:
                        if not skipping:
                            held += piece
                            if len(held) > self._max:
                                skipping = True
                                head = bytes(held[:_HEAD])
                                held.clear()
                                if not await self._refuse(head, send):
                                    listening = False
                                    await send.aclose()  # the server hung up, as far as calls go
                                    break
                            elif end >= 0 and not held.isspace() and held:
                                await send.send(await _parsed(bytes(held)))
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        listening = False
                        break
                    if end < 0:
                        break
                    if not skipping:
                        held.clear()
                    skipping = False
                    start = end + 1

    async def _refuse(self, head: bytes, send: MemoryObjectSendStream[Any]) -> bool:
        """Answer the request a too-long message answers; False: it names none."""
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        found = _ID.match(head)
        if found is None:
            logger.warning(
                "an MCP server sent a message over %d bytes that names no request; "
                "its connection ends",
                self._max,
            )
            return False
        request_id = json.loads(found.group(1))
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(
                code=types.INTERNAL_ERROR,
                message=f"the server's answer is over the {self._max}-byte bound on a message",
                data={"reason": TOO_LARGE, "limit": self._max},
            ),
        )
        await send.send(SessionMessage(error))
        return True

    async def read_stderr(self) -> None:
        """Keep the tail of the server's stderr in its log; read until the pipe ends."""
        stderr = self._process.stderr
        assert stderr is not None
        try:
            async for chunk in _chunks(stderr):
                self._log.feed(chunk)
        finally:
            self.stderr_read.set()

    async def write_stdin(self, outgoing: Any, reads: MemoryObjectSendStream[Any]) -> None:
        """Send the session's messages, one line each; a broken pipe ends the reading too."""
        import anyio

        stdin = self._process.stdin
        assert stdin is not None
        try:
            async with outgoing:
                async for message in outgoing:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send(text.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await reads.aclose()  # the server stopped reading: no call may wait for it


async def _chunks(stream: ByteReceiveStream) -> AsyncIterator[bytes]:
    import anyio

    while True:
        try:
            yield await stream.receive(_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return


def _parse(line: bytes) -> Any:
    """One line as the SDK's ``SessionMessage``, or the parse error as a value."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        logger.debug("MCP server sent a line that is not JSON-RPC: %s", type(exc).__name__)
        return exc


async def _parsed(line: bytes) -> Any:
    if len(line) <= LOOP_PARSE:
        return _parse(line)
    return await asyncio.get_running_loop().run_in_executor(None, _parse, line)


async def _end_group(process: Process) -> None:
    """Close stdin, give the server `EXIT_GRACE`, then end its whole process group.

    The group is signalled whether the server exited or not: a server that exits on end
    of input may leave children behind. SIGTERM first, SIGKILL after
    `TERM_GRACE` to whatever is left.
    """
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            await process.stdin.aclose()
    await _until(lambda: process.returncode is not None, EXIT_GRACE)
    group = process.pid  # the leader of a new session: its pid is the group's id
    if _signal_group(group, signal.SIGTERM):
        gone = await _until(lambda: not _group_alive(group, process), TERM_GRACE)
        if not gone:
            _signal_group(group, signal.SIGKILL)
            await _until(lambda: process.returncode is not None, TERM_GRACE)


async def _close_pipes(process: Process) -> None:
    """Close what is left of the process: its output pipes and its asyncio transport."""
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                await stream.aclose()
    _close_transport(process)


async def _until(condition: Callable[[], bool], timeout: float) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` passes; whether it held."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(_POLL)
    return True


def _signal_group(group: int, signum: int) -> bool:
    """Send ``signum`` to the group; False when it is gone already."""
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member we may not signal: the rest were
        return True
    return True


def _group_alive(group: int, process: Process) -> bool:
    _ = process.returncode  # reading it lets the loop reap the leader
    return _signals.group_alive(group)


def _close_transport(process: Process) -> None:
    """Close the asyncio subprocess transport, which would otherwise warn when collected.

    anyio offers no public way to it; a child holding the pipes open keeps it alive.
    """
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()
