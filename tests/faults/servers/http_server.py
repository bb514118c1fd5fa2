"""A streamable HTTP MCP server written by hand, on 127.0.0.1, that misbehaves as its plan says.

The fault tests of the HTTP client need a server that sends what no SDK server would: a
body of a gigabyte, generated as it is sent; an event that never ends; a stream of
events that never stops; an answer trickled a byte at a time; a compressed answer not
asked for. The plan is one JSON object, in the file the first argument names; it
prints ``PORT`` on stdout once it listens. Keys (all optional):

- ``tools``: the tool descriptions ``tools/list`` answers (one page);
- ``list_bytes``: ``tools/list`` answers a JSON body of that many bytes instead;
- ``calls``: what ``tools/call`` of each tool name does (``{"do": ...}``): ``text``
  answers ``text``; ``json`` answers a JSON body of ``bytes`` bytes (chunked, or with
  its ``Content-Length`` when ``length`` is true); ``event`` answers an SSE stream whose
  one event is ``bytes`` long; ``flood`` answers an SSE stream of progress
  notifications, ``bytes`` of them in all, then the answer; ``trickle`` answers an SSE
  stream whose event gets one byte every ``every`` seconds and never ends; ``gzip``
  answers a small JSON body marked ``Content-Encoding: gzip``.

- ``get_event``: the ``initialize`` answer names a session (``mcp-session-id``), and
  the client's GET stream answers one SSE event of that many bytes, each time it is
  opened; each GET appends a line to the file ``get_log``.

The 2025-era handshake only (``server/discover`` is "method not found"), without a
session unless ``get_event`` says: the bounds are the transport's, whatever the era.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import sys
from pathlib import Path
from typing import Any

PLAN: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text()) if len(sys.argv) > 1 else {}
CHUNK = b"x" * 65536


async def head(writer: asyncio.StreamWriter, kind: str, extra: str = "") -> None:
    writer.write(
        f"HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\n{extra}"
        "transfer-encoding: chunked\r\n\r\n".encode()
    )
    await writer.drain()


async def chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def end(writer: asyncio.StreamWriter) -> None:
    writer.write(b"0\r\n\r\n")
    await writer.drain()


async def whole(writer: asyncio.StreamWriter, body: bytes, extra: str = "") -> None:
    writer.write(
        f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{extra}"
        f"content-length: {len(body)}\r\n\r\n".encode()
        + body
    )
    await writer.drain()


def result(request_id: Any, value: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": value}).encode()


def text_result(request_id: Any, text: str) -> bytes:
    return result(request_id, {"content": [{"type": "text", "text": text}]})


async def flood_json(
    writer: asyncio.StreamWriter, request_id: Any, size: int, length: bool
) -> None:
    start = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1].encode()
    start += b', "result": {"content": [{"type": "text", "text": "'
    if length:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            + f"content-length: {size}\r\n\r\n".encode()
            + start
        )
        sent = len(start)
        while sent < size:
            piece = CHUNK[: size - sent]
            writer.write(piece)
            await writer.drain()
            sent += len(piece)
        return
    await head(writer, "application/json")
    await chunk(writer, start)
    for _ in range(size // len(CHUNK)):
        await chunk(writer, CHUNK)
    await end(writer)


async def on_call(writer: asyncio.StreamWriter, request_id: Any, name: str) -> None:
    plan = PLAN.get("calls", {}).get(name, {"do": "text", "text": "ok"})
    kind = plan["do"]
    if kind == "text":
        await whole(writer, text_result(request_id, plan.get("text", "ok")))
    elif kind == "json":
        await flood_json(writer, request_id, int(plan["bytes"]), bool(plan.get("length")))
    elif kind == "event":
        await head(writer, "text/event-stream")
        start = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1].encode()
        await chunk(writer, b"event: message\ndata: " + start + b', "result": {"text": "')
        for _ in range(int(plan["bytes"]) // len(CHUNK)):
            await chunk(writer, CHUNK)
        await chunk(writer, b'"}}\n\n')
        await end(writer)
    elif kind == "flood":
        await head(writer, "text/event-stream")
        sent, step = 0, 0
        while sent < int(plan["bytes"]):
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "y" * 1000},
            }
            event = b"event: message\ndata: " + json.dumps(note).encode() + b"\n\n"
            await chunk(writer, event * 16)
            sent += 16 * len(event)
            step += 1
        await chunk(writer, b"event: message\ndata: " + text_result(request_id, "done") + b"\n\n")
        await end(writer)
    elif kind == "trickle":
        await head(writer, "text/event-stream")
        await chunk(writer, b"event: message\ndata: {")
        while True:
            await asyncio.sleep(float(plan.get("every", 0.1)))
            await chunk(writer, b" ")
    elif kind == "gzip":
        body = gzip.compress(text_result(request_id, "compressed"))
        await whole(writer, body, "content-encoding: gzip\r\n")


async def answer(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") or {}
    if request_id is None:
        writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()
    elif method == "initialize":
        info = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile-http", "version": "1"},
        }
        session = "mcp-session-id: hostile\r\n" if "get_event" in PLAN else ""
        await whole(writer, result(request_id, info), session)
    elif method == "tools/list":
        if "list_bytes" in PLAN:
            await flood_json(writer, request_id, int(PLAN["list_bytes"]), False)
        else:
            await whole(writer, result(request_id, {"tools": PLAN.get("tools", [])}))
    elif method == "tools/call":
        await on_call(writer, request_id, str(params.get("name")))
    else:
        error = {"code": -32601, "message": "Method not found"}
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
        await whole(writer, body)


async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            headers: dict[str, str] = {}
            while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
                key, _, value = header.decode("latin-1").partition(":")
                headers[key.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            if line.startswith(b"GET") and "get_event" in PLAN:
                with open(PLAN["get_log"], "a") as log:
                    log.write("GET\n")
                await head(writer, "text/event-stream")
                await chunk(writer, b"event: message\ndata: ")
                for _ in range(int(PLAN["get_event"]) // len(CHUNK)):
                    await chunk(writer, CHUNK)
                await chunk(writer, b"\n\n")
                await end(writer)
                continue
            if not line.startswith(b"POST"):
                writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
                continue
            await answer(writer, json.loads(body))
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
