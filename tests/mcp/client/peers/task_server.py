"""A stdio MCP server of the 2025-11-25 era whose ``background`` tool must run as a task.

It declares ``execution.taskSupport: "required"`` on ``background`` and the ``tasks``
capability for ``tools/call``, refuses a call made without a task, and answers one made
as a task directly (a server may: the task is its choice); ``plain`` runs at once.
Written on the wire (JSON-RPC lines on stdin and stdout): the SDK has no server side of
2025-11-25's tasks.
"""

from __future__ import annotations

import json
import sys
from typing import Any

VERSION = "2025-11-25"
TOOLS = [
    {
        "name": "background",
        "description": "A long job that runs as a task.",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "required"},
    },
    {
        "name": "plain",
        "description": "A job that runs at once.",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "optional"},
    },
]


def answer(request: dict[str, Any]) -> dict[str, Any]:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "result": {
                "protocolVersion": VERSION,
                "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}},
                "serverInfo": {"name": "tasks", "version": "1"},
            }
        }
    if method == "ping":
        return {"result": {}}
    if method == "tools/list":
        return {"result": {"tools": TOOLS}}
    if method == "tools/call":
        if params.get("name") == "background" and "task" not in params:
            return {"error": {"code": -32600, "message": "background must be called as a task"}}
        return {"result": {"content": [{"type": "text", "text": f"ran {params.get('name')}"}]}}
    return {"error": {"code": -32601, "message": "Method not found"}}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:  # a notification
            continue
        reply = {"jsonrpc": "2.0", "id": request["id"], **answer(request)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
