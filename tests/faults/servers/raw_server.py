"""A stdio MCP server written by hand, line by line, that misbehaves as its plan says.

The fault tests of the MCP client need a server that does what no SDK server would:
answer with half a line, never answer a listing, page forever, flood its stderr, leave
a child behind, ignore the end of its input. The plan is one JSON object, in the file
the first argument names; every key is optional:

- ``tools``: the tool descriptions ``tools/list`` answers (one page);
- ``tools_file``: a file holding those descriptions (a JSON list), read at each
  ``tools/list`` (a server whose tools change while its command and files do not);
- ``ttl_ms``: the ``ttlMs`` hint ``tools/list`` answers with;
- ``endless``: ``tools/list`` answers one tool a page, each with a new ``nextCursor``;
- ``calls``: what ``tools/call`` of each tool name does (a ``{"do": ...}`` object):
  ``text`` answers the text given; ``structured`` answers ``structured`` with a text;
  ``unique`` answers ``{"items": [{"i": 0}, ...]}`` with ``n`` distinct objects, then
  writes the file ``marker``; ``big`` answers a text of ``bytes`` bytes, on one line;
  ``partial`` writes the start of an answer over ``bytes`` long, writes the file
  ``marker``, then never ends the line (and answers nothing more);
  ``change`` sends ``notifications/tools/list_changed`` and answers, and from then
  on every ``tools/list`` goes unanswered;
- ``log``: a file each ``tools/list`` request appends a line to;
- ``calls_log``: a file each ``tools/call`` appends the tool's name to, on a line;
- ``stderr``: bytes of noise written to stderr before serving, then ``last_words``;
- ``exit``: exit with this status before serving (after the noise);
- ``child``: a file to write the pid of a child (``sleep 600``) started at once into;
- ``pid``: a file to write the server's own pid into;
- ``stay``: at the end of its input, keep running (and ignore SIGTERM) instead of exiting.

Any other request is answered "method not found", which makes SDK clients fall back
from ``server/discover`` to the ``initialize`` handshake.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PLAN: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text()) if len(sys.argv) > 1 else {}
OUT = sys.stdout.buffer
CHANGED = False


def send(message: dict[str, Any]) -> None:
    OUT.write(json.dumps(message).encode() + b"\n")
    OUT.flush()


def answer(request_id: Any, result: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def text(request_id: Any, value: str, **extra: Any) -> None:
    answer(request_id, {"content": [{"type": "text", "text": value}], **extra})


def on_list(request_id: Any, params: dict[str, Any]) -> None:
    if PLAN.get("log"):
        with open(PLAN["log"], "a") as log:
            log.write("tools/list\n")
    if CHANGED:
        return  # never answered
    if PLAN.get("endless"):
        page = int(params.get("cursor") or 0)
        tool = {
            "name": f"t{page}",
            "description": "One of many.",
            "inputSchema": {"type": "object"},
        }
        answer(request_id, {"tools": [tool], "nextCursor": str(page + 1)})
        return
    tools = PLAN.get("tools", [])
    if PLAN.get("tools_file"):
        tools = json.loads(Path(PLAN["tools_file"]).read_text())
    page: dict[str, Any] = {"tools": tools}
    if "ttl_ms" in PLAN:
        page["ttlMs"] = PLAN["ttl_ms"]
    answer(request_id, page)


def on_call(request_id: Any, params: dict[str, Any]) -> None:
    global CHANGED
    if PLAN.get("calls_log"):
        with open(PLAN["calls_log"], "a") as log:
            log.write(f"{params.get('name')}\n")
    plan = PLAN.get("calls", {}).get(params.get("name"), {"do": "text", "text": "ok"})
    kind = plan["do"]
    if kind == "text":
        text(request_id, plan.get("text", "ok"))
    elif kind == "structured":
        text(request_id, "see structured", structuredContent=plan["structured"])
    elif kind == "unique":
        items = [{"i": i} for i in range(int(plan["n"]))]
        text(request_id, f"{len(items)} items", structuredContent={"items": items})
        with open(plan["marker"], "w") as marker:
            marker.write("sent")
    elif kind == "big":
        text(request_id, "x" * int(plan["bytes"]))
    elif kind == "partial":
        head = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1]
        OUT.write(f'{head}, "result": {{"content": [{{"type": "text", "text": "'.encode())
        chunk = b"x" * 65536
        for _ in range(int(plan["bytes"]) // len(chunk) + 1):
            OUT.write(chunk)
        OUT.flush()
        with open(plan["marker"], "w") as marker:
            marker.write("sent")
        while True:  # the line never ends
            time.sleep(3600)
    elif kind == "change":
        CHANGED = True
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        text(request_id, "changed")


def serve() -> None:
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            answer(
                request_id,
                {
                    "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "raw", "version": "1"},
                },
            )
        elif method == "tools/list":
            on_list(request_id, params)
        elif method == "tools/call":
            on_call(request_id, params)
        elif method == "ping":
            answer(request_id, {})
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )


def main() -> None:
    if PLAN.get("pid"):
        with open(PLAN["pid"], "w") as out:
            out.write(str(os.getpid()))
    if PLAN.get("child"):
        child = subprocess.Popen(["sleep", "600"])
        with open(PLAN["child"], "w") as out:
            out.write(str(child.pid))
    if PLAN.get("stderr"):
        noise = b"noise " * 10_000 + b"\n"
        for _ in range(int(PLAN["stderr"]) // len(noise) + 1):
            sys.stderr.buffer.write(noise)
        sys.stderr.buffer.write(PLAN.get("last_words", "").encode() + b"\n")
        sys.stderr.buffer.flush()
    if "exit" in PLAN:
        sys.exit(int(PLAN["exit"]))
    serve()
    if PLAN.get("stay"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
