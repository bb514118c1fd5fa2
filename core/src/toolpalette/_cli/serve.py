"""``toolpalette serve``: a thinker's palette as an MCP server, over stdio or HTTP.

Over stdio (the default) nothing but protocol goes to stdout: logs and anything a
pack prints go to stderr. ``--http`` serves streamable HTTP with uvicorn (loopback by
default) and says on stderr where and how: the URL, stateful or stateless, and the
workers. ``--workers N`` runs N worker processes on one listening socket, each
building the palette from the same options (passed to them in
``TOOLPALETTE_SERVE_OPTIONS``); with more than one they serve stateless, since the
requests of one session would reach any of them.

The keys that seal a 2026-07-28 approval's request state come from
``--state-key-file`` or ``TOOLPALETTE_STATE_KEYS``. Without either, one worker makes a
key of its own, and several workers share one the command makes at start (handed to
them in ``TOOLPALETTE_SERVE_STATE_KEY``, which each worker takes out of its
environment): an approval answered to another worker than the one that asked is
still verified. Refusing to start instead would break every deployment whose policy
never asks; a key per worker would fail about every other approval.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import secrets
import socket
import sys
from typing import TYPE_CHECKING, Any

from toolpalette._cli.list import add_config_option
from toolpalette._hub import ToolHub

if TYPE_CHECKING:
    from toolpalette._agents.thinker import Thinker

__all__ = ["register", "run", "worker_app"]

OPTIONS_ENV = "TOOLPALETTE_SERVE_OPTIONS"
"""Where ``--workers`` passes the command's options to each worker (JSON)."""
SHARED_KEY_ENV = "TOOLPALETTE_SERVE_STATE_KEY"
"""Where ``--workers`` passes the request-state key it made to each worker."""
_BACKLOG = 2048
"""Connections waiting to be accepted on the HTTP socket (uvicorn's default)."""

_DESCRIPTION = """\
Serve a palette to MCP clients: a thinker's (--thinker package.module:Class), or the
tools of the installed distributions or packages named (--select), or every installed
tool. Every client is served the palette, its meta-tools (request_tools or
search_tools, and the skills' ones) and call_tool, which calls any tool the thinker
may use by name; a deferred tool can also be called by its own name. Each MCP
session (2025-era handshake, without --stateless) gets its own thinker: its grants
show in the session's next tools/list, announced by notifications/tools/list_changed.
With --stateless, and for clients on the 2026-07-28 protocol, requests share one
thinker that keeps nothing: each call of a deferred tool is decided when it is made.
A call the policy asks about is asked of the client's user (elicitation), when the
client can ask one.
"""


def register(subparsers: Any) -> None:
    """Add ``serve`` to the command line."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="serve a palette as an MCP server (stdio or streamable HTTP)",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--thinker", metavar="MODULE:CLASS", help="serve this Thinker subclass's palette"
    )
    what.add_argument(
        "--select",
        metavar="DIST_OR_PACKAGE",
        nargs="+",
        help="serve the tools of these installed distributions or import packages",
    )
    parser.add_argument("--read-only", action="store_true", help="bind the thinker read-only")
    parser.add_argument(
        "--http", action="store_true", help="serve streamable HTTP instead of stdio"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8000,
        help="the port (default: 8000; 0 picks a free one, shown at start)",
    )
    parser.add_argument("--path", default="/mcp", help="the endpoint's path (default: /mcp)")
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="HTTP without sessions: any worker answers any request; nothing is kept "
        "between requests",
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        help="HTTP worker processes (default: 1); more than one serve stateless, as "
        "--stateless does (a session's requests could reach any worker)",
    )
    parser.add_argument(
        "--state-key-file",
        metavar="PATH",
        help="keys sealing the state of approvals asked over the 2026-07-28 protocol, one "
        "a line, each at least 32 bytes (the first seals, all verify; give every worker "
        "and instance the same file). Default: TOOLPALETTE_STATE_KEYS, else a key made "
        "at start",
    )
    parser.add_argument(
        "--page-size",
        type=_positive_int,
        default=100,
        help="tools per tools/list page (default: 100)",
    )
    add_config_option(parser)
    parser.set_defaults(func=run)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("expected at least 1")
    return value


def run(args: argparse.Namespace) -> int:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    try:
        import toolpalette.mcp
    except ImportError:
        print(
            "error: serving needs the mcp extra: pip install 'toolpalette[mcp]'",
            file=sys.stderr,
        )
        return 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    workers = args.workers if args.http else 1
    options = {
        "thinker": args.thinker,
        "select": args.select or [],
        "read_only": args.read_only,
        "stateless": args.stateless or workers > 1,
        "page_size": args.page_size,
        "config": args.config,
        "path": args.path,
        "host": args.host,
        "state_key_file": args.state_key_file,
    }
    try:
        keys = _state_keys(options)
    except (OSError, ValueError) as exc:
        print(f"error: the request-state keys cannot be used: {exc}", file=sys.stderr)
        return 2
    made = False
    if keys is None and args.http and workers > 1:
        keys, made = [secrets.token_hex(32)], True
        os.environ[SHARED_KEY_ENV] = keys[0]  # for the workers only: each takes it out
    try:
        # Importing packs and the thinker's module may print: never onto the protocol.
        with contextlib.redirect_stdout(sys.stderr):
            hub, thinker = _palette(options)
            if args.http and workers > 1:
                app: Any = None
            elif args.http:
                app = _app(hub, thinker, options, keys)
            else:
                import toolpalette.mcp

                stdio = toolpalette.mcp.server(
                    hub,
                    thinker,
                    read_only=args.read_only,
                    page_size=args.page_size,
                    state_keys=keys,
                )
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a key the SDK refuses (too short, repeated)
        print(f"error: the request-state keys cannot be used: {exc}", file=sys.stderr)
        return 2
    if not args.http:
        return _serve_stdio(stdio)
    return _serve_http(
        app, options, port=args.port, workers=workers, forced=not args.stateless, made_key=made
    )


def _serve_http(
    app: Any, options: dict[str, Any], *, port: int, workers: int, forced: bool, made_key: bool
) -> int:
    """Listen, say where and how on stderr, and serve with uvicorn until stopped."""
    import uvicorn

    host = options["host"]
    try:
        listener = _listen(host, port)
    except OSError as exc:
        print(f"error: cannot listen on {host} port {port}: {exc}", file=sys.stderr)
        return 1
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{listener.getsockname()[1]}{options['path']}"
    mode = "stateless" if options["stateless"] else "stateful"
    print(
        f"serving {url} ({mode}, {workers} worker{'s' if workers > 1 else ''})",
        file=sys.stderr,
        flush=True,
    )
    if workers > 1 and forced:
        print(
            f"note: {workers} workers serve stateless, as --stateless does: any worker "
            "answers any request (serve one worker to keep sessions)",
            file=sys.stderr,
            flush=True,
        )
    if made_key:
        print(
            f"note: the {workers} workers share a request-state key made at start; give "
            "--state-key-file to share one with other instances or across restarts",
            file=sys.stderr,
            flush=True,
        )
    with listener, contextlib.suppress(KeyboardInterrupt):
        if workers == 1:
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
            server.run(sockets=[listener])
            return 0 if server.started else 1
        from uvicorn.supervisors import Multiprocess

        os.environ[OPTIONS_ENV] = json.dumps(options)
        config = uvicorn.Config(
            "toolpalette._cli.serve:worker_app",
            factory=True,
            workers=workers,
            log_level="warning",
        )
        Multiprocess(config, sockets=[listener]).run()
    return 0


def _listen(host: str, port: int) -> socket.socket:
    """The socket every worker accepts on, its connections sending without delay.

    asyncio turns Nagle's algorithm off (``TCP_NODELAY``) only on connections accepted
    from a socket created for the TCP protocol, and uvicorn creates its ``--workers``
    socket without naming one: each keep-alive response after the first then waits
    for the client's delayed acknowledgement, about 40 ms. This socket names TCP, and
    sets the option on the listener too (Linux hands it on to what it accepts). It
    listens at once: a client that connects before the workers are up waits in the
    backlog rather than being refused.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(_BACKLOG)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def _serve_stdio(palette: Any) -> int:
    import anyio

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(palette.run_stdio)
    return 0


class _UsageError(Exception):
    """What the command line asked for cannot be served."""


def _palette(options: dict[str, Any]) -> tuple[ToolHub, type[Thinker]]:
    from toolpalette._agents.thinker import Thinker
    from toolpalette.errors import ToolpaletteError
    from toolpalette.mcp import selection_thinker

    hub = ToolHub(config=options["config"])
    spec = options["thinker"]
    if spec is None:
        for name in options["select"]:
            if not (hub.providers_for_distribution(name) or hub.providers_for_package(name)):
                raise _UsageError(
                    f"{name!r} is neither an installed distribution nor an import package "
                    "with tools (toolpalette list shows what is installed)"
                )
        thinker = selection_thinker(hub, options["select"], read_only=options["read_only"])
    else:
        thinker = _import_thinker(spec, Thinker)
    try:
        hub.resolve_thinker(thinker)
    except ToolpaletteError as exc:
        raise _UsageError(f"the palette cannot be served: {exc}") from exc
    return hub, thinker


def _import_thinker(spec: str, base: type[Thinker]) -> type[Thinker]:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise _UsageError(f"--thinker takes package.module:Class, not {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _UsageError(f"cannot import {module_name!r} for --thinker: {exc}") from exc
    found: Any = module
    for part in attr.split("."):
        found = getattr(found, part, None)
    if not (isinstance(found, type) and issubclass(found, base)):
        raise _UsageError(f"{spec!r} is not a toolpalette.Thinker subclass")
    return found


def _state_keys(options: dict[str, Any]) -> list[str] | None:
    """The request-state keys: the file's, else the environment's, else None."""
    from toolpalette.mcp._approvals import read_state_keys

    return read_state_keys(options["state_key_file"])


def _app(
    hub: ToolHub, thinker: type[Thinker], options: dict[str, Any], keys: list[str] | None
) -> Any:
    import toolpalette.mcp

    return toolpalette.mcp.asgi_app(
        hub,
        thinker,
        read_only=options["read_only"],
        stateless=options["stateless"],
        page_size=options["page_size"],
        path=options["path"],
        host=options["host"],
        state_keys=keys,
    )


def worker_app() -> Any:
    """The ASGI app of one ``--workers`` process, built from ``TOOLPALETTE_SERVE_OPTIONS``."""
    options = json.loads(os.environ[OPTIONS_ENV])
    made = os.environ.pop(SHARED_KEY_ENV, None)  # nothing this worker starts inherits it
    keys = [made] if made is not None else _state_keys(options)
    with contextlib.redirect_stdout(sys.stderr):
        hub, thinker = _palette(options)
        return _app(hub, thinker, options, keys)
