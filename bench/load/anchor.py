"""The anchor of the load runs: the SDK's own ``MCPServer``, served as ``serve`` serves.

``python -m bench.load.anchor files|listed --port 0 --workers 2`` serves, stateless over
streamable HTTP, the same tools as the toolpalette server it is compared with:

- ``files``: ``file_info``, doing exactly the files pack's work (its own implementation,
  on the workspace at ``TOOLPALETTE_FILES_ROOT``);
- ``listed``: ``bench.serve_palette``'s 1,000 tools (``aadd`` and 999 lookups).

It runs under the same uvicorn, with the same worker count, on a listening socket made
the way ``toolpalette serve`` makes its own (TCP, ``TCP_NODELAY``), and prints the same
start line (``serving URL (stateless, N workers)``), so the two servers differ only in
what answers the requests.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
from typing import Any

APPS = ("files", "listed")


def file_info(path: str) -> Any:
    """Describe a workspace path without reading it: type, size, modification time.

    Args:
        path: The path, relative to the workspace root.
    """
    from toolpalette_files import _impl
    from toolpalette_files._workspace import Workspace

    workspace = Workspace(os.path.realpath(os.environ["TOOLPALETTE_FILES_ROOT"]))
    return _impl.file_info(workspace, workspace.resolve(path, follow=False))


def _server(which: str) -> Any:
    from mcp.server.mcpserver import MCPServer

    if which == "listed":
        from bench import serve_palette

        server = serve_palette.anchor()
        server.settings.log_level = "WARNING"
        return server
    server = MCPServer("anchor", log_level="WARNING")
    server.add_tool(file_info, name="file_info")
    return server


def app() -> Any:
    """The ASGI app of one worker (``uvicorn --factory``), chosen by ``LOAD_ANCHOR_APP``."""
    server = _server(os.environ["LOAD_ANCHOR_APP"])
    return server.streamable_http_app(stateless_http=True, host="127.0.0.1")


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def main(argv: list[str]) -> None:
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    parser = argparse.ArgumentParser(prog="python -m bench.load.anchor")
    parser.add_argument("app", choices=APPS)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    os.environ["LOAD_ANCHOR_APP"] = args.app
    listener = _listen(args.port)
    plural = "s" if args.workers > 1 else ""
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    print(f"serving {url} (stateless, {args.workers} worker{plural})", file=sys.stderr, flush=True)
    config = uvicorn.Config(
        "bench.load.anchor:app", factory=True, workers=args.workers, log_level="warning"
    )
    with listener, contextlib.suppress(KeyboardInterrupt):
        if args.workers == 1:
            uvicorn.Server(config).run(sockets=[listener])
        else:
            Multiprocess(config, sockets=[listener]).run()


if __name__ == "__main__":
    main(sys.argv[1:])
