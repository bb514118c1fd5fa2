"""``toolpalette serve``: a thinker's palette as an MCP server, over stdio or HTTP."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import secrets
import shlex
import socket
import sys
from typing import TYPE_CHECKING, Any, Final

from toolpalette._cli import serve_palette, serve_settings
from toolpalette._cli.list import add_config_option, host_problems, problems_note
from toolpalette._hub import ToolHub

if TYPE_CHECKING:
    from toolpalette._agents.thinker import Thinker

__all__ = ["register", "run", "worker_app"]

OPTIONS_ENV = "TOOLPALETTE_SERVE_OPTIONS"
"""Where ``--workers`` passes the command's options to each worker (JSON)."""
LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")
"""The levels ``--log-level`` (and ``[serve] log_level``) takes."""
TASK_STORE_ENV = "TOOLPALETTE_TASK_STORE"
"""The task store when ``--task-store`` is not given (``memory``, ``sqlite:PATH``, ``redis://``)."""
SHARED_KEY_ENV = "TOOLPALETTE_SERVE_STATE_KEY"
"""Where ``--workers`` passes the request-state key it made to each worker."""
_BACKLOG = 2048
"""Connections waiting to be accepted on the HTTP socket (uvicorn's default)."""

_DESCRIPTION = """\
Serve a palette to MCP clients: a thinker's (--thinker package.module:Class, imported
from the current directory first), or the tools and skills of the installed
distributions (packs or skilljars) or packages named (--select), or every installed
tool and skill. Every client is served the palette, its meta-tools (request_tools or
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
        help="serve the tools and skills of these installed distributions (packs or "
        "skilljars) or import packages",
    )
    parser.add_argument("--read-only", action="store_true", help="bind the thinker read-only")
    parser.add_argument(
        "--code-mode",
        action="store_true",
        help="also offer run_code: a Python script over the tools, each call through the "
        "pipeline (needs toolpalette[code])",
    )
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
        "--task-store",
        metavar="STORE",
        help="where MCP tasks (long-running tool calls) are kept: memory, sqlite:PATH or "
        "redis://HOST:PORT/DB (give every worker and instance the same). Default: "
        "TOOLPALETTE_TASK_STORE, else memory for one worker and a SQLite file the "
        "command makes at start for several",
    )
    parser.add_argument(
        "--page-size",
        type=_positive_int,
        default=100,
        help="tools per tools/list page (default: 100)",
    )
    serve_palette.add_options(parser)
    parser.add_argument(
        "--log-level",
        type=str.upper,
        choices=LOG_LEVELS,
        help="what goes to stderr (default: WARNING; also [serve] log_level): INFO adds "
        "an access line per HTTP request and why each refused token was refused",
    )
    parser.add_argument(
        "--max-sessions",
        type=_positive_int,
        help="open stateful HTTP sessions kept at most (default: 1000; also [serve])",
    )
    parser.add_argument(
        "--sessions-per-client",
        type=_positive_int,
        help="open sessions per principal, or per client address without a token "
        "(default: 16; also [serve]); past it a new one is refused with 429",
    )
    serve_settings.add_options(parser)
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
    missing = _missing_extra(http=args.http)
    if missing is not None:
        print(
            f"error: toolpalette serve needs the mcp extra (No module named {missing!r}); "
            "install it into this environment: "
            f"{shlex.quote(sys.executable)} -m pip install 'toolpalette[mcp]'",
            file=sys.stderr,
        )
        return 2
    logging.basicConfig(level=args.log_level or logging.WARNING, stream=sys.stderr)
    workers = args.workers if args.http else 1
    options = {
        "thinker": args.thinker,
        "select": args.select or [],
        "read_only": args.read_only,
        "code_mode": args.code_mode,
        "stateless": args.stateless or workers > 1,
        "page_size": args.page_size,
        "config": args.config,
        "path": args.path,
        "host": args.host,
        "state_key_file": args.state_key_file,
        "auth": serve_settings.from_args(args),
        "palette": serve_palette.from_args(args),
        "http": args.http,
        "log_level": args.log_level,
        "max_sessions": args.max_sessions,
        "sessions_per_client": args.sessions_per_client,
        "task_store": args.task_store or os.environ.get(TASK_STORE_ENV) or None,
    }
    if options["task_store"] is None and args.http and workers > 1:
        import tempfile

        folder = tempfile.mkdtemp(prefix="toolpalette-tasks-")
        options["task_store"] = f"sqlite:{os.path.join(folder, 'tasks.db')}"
    try:
        from toolpalette.mcp._tasks import settings_from_env

        settings_from_env(options["task_store"])  # checked here, before any worker starts
    except ValueError as exc:
        print(f"error: the task store cannot be used: {exc}", file=sys.stderr)
        return 2
    try:
        keys = _state_keys(options)
    except (OSError, ValueError) as exc:  # unreadable, empty, too short or repeated
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
            _app_options(hub, options)  # checked here, before any worker starts
            problems_note(host_problems(hub))
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
                    tasks=settings_from_env(options["task_store"]),
                )
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.http:
        return _serve_stdio(stdio)
    return _serve_http(
        app, options, port=args.port, workers=workers, forced=not args.stateless, made_key=made
    )


def _missing_extra(*, http: bool) -> str | None:
    """The module of the ``mcp`` extra this environment lacks, or None.

    The server module is imported here, at once, so that a missing ``mcp``, ``anyio``
    or ``mcp_types`` (or ``uvicorn``, for HTTP) is one line saying what to install,
    never a traceback from the middle of building the palette.
    """
    for name in ("mcp", "anyio", "toolpalette.mcp._server", *(("uvicorn",) if http else ())):
        try:
            importlib.import_module(name)
        except ImportError as exc:
            return exc.name or name
    return None


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

    hub = ToolHub(config=options["config"])
    spec = options["thinker"]
    given = options.get("palette", {})
    try:
        mode, defer = serve_palette.settings(given, hub.config.serve)
        if spec is None:
            thinker = _selection(hub, options["select"], read_only=options["read_only"])
            if mode is not None or defer:
                thinker = serve_palette.shaped(hub, thinker, mode=mode, defer=defer)
        else:
            if mode is not None or defer:
                raise _UsageError(
                    "--tool-search and --defer (and [serve] tool_search and defer) shape "
                    "the palette of --select or of everything installed; with --thinker, "
                    "set tool_search and deferred=True on the class"
                )
            thinker = _import_thinker(spec, Thinker)
    except serve_palette.PaletteError as exc:
        raise _UsageError(str(exc)) from exc
    if options.get("code_mode") and not thinker.code_mode:
        from toolpalette._agents.sandbox import available

        if not available():
            raise _UsageError("--code-mode needs the sandbox: pip install 'toolpalette[code]'")
        thinker = type(thinker.__name__, (thinker,), {"code_mode": True})
    try:
        hub.resolve_thinker(thinker)
    except ToolpaletteError as exc:
        raise _UsageError(f"the palette cannot be served: {exc}") from exc
    return hub, thinker


def _selection(hub: ToolHub, names: list[str], *, read_only: bool) -> type[Thinker]:
    """The thinker ``--select`` serves: the tools and skills of the names given.

    A name is a pack's distribution or an import package with tools (its tools, and
    the skills a distribution ships), or a skilljar's distribution (its skills, as
    prompts and resources); several names serve all of them.
    """
    from toolpalette import SkillSelector, ToolSelector
    from toolpalette._skills.registry import skills_of_distributions
    from toolpalette.mcp import selection_thinker

    jars: dict[str, list[str]] = {}  # only the jars of the names given are opened
    for skill in skills_of_distributions(hub.skills(), names):
        if skill.distribution:
            jars.setdefault(_canonical(skill.distribution), []).append(skill.id)
    tools: list[str] = []
    skills: list[str] = []
    for name in names:
        if hub.providers_for_distribution(name) or hub.providers_for_package(name):
            tools.append(name)
        elif _canonical(name) in jars:
            skills.extend(jars[_canonical(name)])
        else:
            raise _UsageError(
                f"{name!r} is neither an installed distribution with tools or skills nor an "
                "import package with tools (toolpalette list and toolpalette skills show "
                "what is installed)"
            )
    base = selection_thinker(hub, tools, read_only=read_only)
    if not skills:
        return base

    class Selection(base):  # type: ignore[valid-type,misc]
        """The tools and skills of the distributions and packages chosen to be served."""

        @classmethod
        def declare_compatible_tools(cls) -> ToolSelector:
            # With no tool names the base offers every installed tool: here, none.
            return base.declare_compatible_tools() if tools else ToolSelector()

        @classmethod
        def declare_skills(cls) -> SkillSelector:
            chosen = base.declare_skills() if tools else SkillSelector()
            for skill_id in skills:
                chosen.skill(skill_id)
            return chosen

    return Selection


def _canonical(name: str) -> str:
    """A distribution's name as installers compare them (case, ``-``, ``_`` and ``.``)."""
    return name.lower().replace("_", "-").replace(".", "-")


def _import_thinker(spec: str, base: type[Thinker]) -> type[Thinker]:
    """The class ``package.module:Class`` names, imported as uvicorn imports an app.

    The current directory goes first on ``sys.path`` (and stays there, for what the
    module imports later), so a host's own package is found where the command runs.
    Each way the import can fail says which: no such module, the module raising, no
    such attribute, or something that is not a ``Thinker`` subclass.
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise _UsageError(f"--thinker takes package.module:Class, not {spec!r}")
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise _UsageError(
                f"--thinker {spec}: no module named {exc.name!r}, neither in the current "
                f"directory ({here}) nor among the installed packages; run the command "
                "from the folder that holds it, or install it"
            ) from exc
        raise _UsageError(
            f"--thinker {spec}: importing {module_name!r} failed: it imports {exc.name!r}, "
            "which is not installed"
        ) from exc
    except Exception as exc:  # the module itself raised (a syntax error, a failing import)
        raise _UsageError(
            f"--thinker {spec}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    found: Any = module
    for depth, part in enumerate(attr.split(".")):
        if not hasattr(found, part):
            owner = ".".join([module_name, *attr.split(".")[:depth]])
            thinkers = _thinkers_in(module, base) if depth == 0 else []
            known = f" (its Thinker subclasses: {', '.join(thinkers)})" if thinkers else ""
            raise _UsageError(f"--thinker {spec}: {owner!r} has no attribute {part!r}{known}")
        found = getattr(found, part)
    if not (isinstance(found, type) and issubclass(found, base)):
        what = "a class" if isinstance(found, type) else _kind(found)
        raise _UsageError(
            f"--thinker {spec}: {attr!r} is {what}, not a toolpalette.Thinker subclass"
        )
    return found


def _thinkers_in(module: Any, base: type[Thinker]) -> list[str]:
    """The names of the ``Thinker`` subclasses a module defines, sorted."""
    return sorted(
        name
        for name, value in vars(module).items()
        if isinstance(value, type) and issubclass(value, base) and value is not base
    )


def _kind(value: object) -> str:
    """``a function``, ``a module``, ``an instance of X``: what a value is, for a message."""
    if callable(value) and not isinstance(value, type):
        return "a function" if hasattr(value, "__code__") else "a callable"
    kind = type(value).__name__
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"


def _state_keys(options: dict[str, Any]) -> list[str] | None:
    """The request-state keys: the file's, else the environment's, else None.

    Checked here, before the palette is built, so that a key the SDK would refuse (too
    short, repeated) is one line about the keys, never confused with other errors.
    """
    from toolpalette.mcp._approvals import read_state_keys, state_boundary

    keys = read_state_keys(options["state_key_file"])
    if keys is not None:
        state_boundary(keys, "toolpalette")
    return keys


def _app(
    hub: ToolHub, thinker: type[Thinker], options: dict[str, Any], keys: list[str] | None
) -> Any:
    import toolpalette.mcp
    from toolpalette.mcp._tasks import settings_from_env

    return toolpalette.mcp.asgi_app(
        hub,
        thinker,
        read_only=options["read_only"],
        stateless=options["stateless"],
        page_size=options["page_size"],
        path=options["path"],
        host=options["host"],
        state_keys=keys,
        tasks=settings_from_env(options.get("task_store")),
        **_app_options(hub, options),
    )


def _app_options(hub: ToolHub, options: dict[str, Any]) -> dict[str, Any]:
    """``asgi_app``'s ``auth``, ``thinker_for`` and session limits, from ``[serve]`` too.

    The options win over ``[serve]``, whose ``log_level`` applies unless ``--log-level``
    is given.
    """
    from toolpalette._agents.thinker import Thinker

    try:
        found = serve_settings.app_options(
            hub,
            options["auth"],
            http=options["http"],
            import_thinker=lambda spec: _import_thinker(spec, Thinker),
        )
        if options["http"]:
            found.update(serve_settings.server_options(hub, options))
        return found
    except serve_settings.SettingsError as exc:
        raise _UsageError(str(exc)) from exc


def worker_app() -> Any:
    """The ASGI app of one ``--workers`` process, built from ``TOOLPALETTE_SERVE_OPTIONS``."""
    options = json.loads(os.environ[OPTIONS_ENV])
    logging.basicConfig(level=options.get("log_level") or logging.WARNING, stream=sys.stderr)
    made = os.environ.pop(SHARED_KEY_ENV, None)  # nothing this worker starts inherits it
    keys = [made] if made is not None else _state_keys(options)
    with contextlib.redirect_stdout(sys.stderr):
        hub, thinker = _palette(options)
        return _app(hub, thinker, options, keys)
