"""``MCPToolProvider``: one tool of an MCP server, offered and run like any other tool."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from toolpalette._mcp_client import inputs as _inputs
from toolpalette._mcp_client import results as _results
from toolpalette._mcp_client.config import MCPServerConfig
from toolpalette._mcp_client.connection import Connection, Progress, ServerGone
from toolpalette._mcp_client.outputs import check_for
from toolpalette._mcp_client.stdio import past_bound, too_large
from toolpalette._schema import checks as _schema
from toolpalette._tools.info import TaskSupport, ToolInfo
from toolpalette._tools.provider import BoundTool, Origin, ToolProvider
from toolpalette._tools.tool import CONTROL_CHARACTERS, TOOL_NAME, ToolContext
from toolpalette.errors import InvalidToolSchemaError, MCPServerError, ToolError

__all__ = [
    "MAX_DESCRIPTION",
    "MAX_TITLE",
    "MAX_TOOL_BYTES",
    "MCPToolProvider",
    "build",
    "text_problem",
    "tool_bytes",
]

MAX_DESCRIPTION: Final = 8192
"""The longest description a server's tool may have, in characters."""
MAX_TITLE: Final = 256
"""The longest title a server's tool may have, in characters."""
MAX_TOOL_BYTES: Final = 256 * 1024
"""The most bytes one tool's description, title and schemas may take, as JSON."""


class MCPToolProvider(ToolProvider):
    """One tool of an MCP server, routed through the hub's client pool.

    Built by `build()` from a tool description the server listed. Two providers are
    equal when they stand for the same tool of the same server under the same name
    with the same description and schemas.
    """

    def __init__(
        self,
        connection: Connection,
        *,
        name: str,
        remote_name: str,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None,
        annotations: Mapping[str, Any],
        title: str | None,
        task_support: TaskSupport = "forbidden",
    ) -> None:
        config = connection.config
        self.connection = connection
        """The pool's connection to the server."""
        self.server = config.name
        """The server's configured name."""
        self.remote_name = remote_name
        """The tool's name on the server (the offered name may be renamed or prefixed)."""
        self._annotations = MappingProxyType(dict(annotations))
        self._title = title
        self._output_check = check_for(output_schema) if output_schema is not None else None
        metadata = {
            "server": config.name,
            "tool": remote_name,
            "trusted": config.trusted,
            "annotations": self._annotations,
        }
        self._record = ToolInfo(
            name=name,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            read_only=self._hint("readOnlyHint", default=False),
            destructive=self._hint("destructiveHint", default=True),
            idempotent=self._hint("idempotentHint", default=False),
            open_world=self._hint("openWorldHint", default=True),
            display_name=title or "",
            metadata=MappingProxyType({"mcp": MappingProxyType(metadata)}),
            timeout=config.timeout,
            task_support=task_support,
        )
        self.origin = Origin(pack=config.pack, server=config.name)
        self.from_disk = False
        """Whether the tool comes from a listing kept on disk (`cached`): its first
        call waits until the server's live listing confirms it (`confirm()`)."""
        self._confirmed = False

    @property
    def info(self) -> ToolInfo:
        """The listed tool's record; its annotations count only from a trusted server."""
        return self._record

    @property
    def annotations(self) -> Mapping[str, Any]:
        """The server's annotations for the tool, as sent (hints, never trusted alone)."""
        return self._annotations

    def _hint(self, key: str, *, default: bool) -> bool:
        value = self._annotations.get(key)
        trusted = self.connection.config.trusted
        return value if trusted and isinstance(value, bool) else default

    @property
    def title(self) -> str | None:
        """The server's title for the tool, as checked (None when it gave none)."""
        return self._title

    def create(self, parent: Any = None) -> BoundTool:
        """The runnable tool: every call goes to the server through the pool."""
        connection, remote, name = self.connection, self.remote_name, self.name
        loop, output = connection.loop, self.output_schema
        check, server = self._output_check, connection.config.name
        task_support, timeout = self.task_support, connection.config.timeout

        async def call(value: dict[str, Any], context: ToolContext) -> Any:
            if self.from_disk and not self._confirmed:
                await self._confirm()
            progress = _relay(context) if context.on_progress is not None else None
            deadline = None if timeout is None else time.monotonic() + timeout
            answer = _inputs.answerer(context.channel) if context.channel is not None else None
            try:
                result = await loop.run_async(
                    connection.call_tool(
                        remote,
                        value,
                        context.abort,
                        progress,
                        task_support=task_support,
                        answer=answer,
                        deadline=deadline,
                    )
                )
            except ServerGone as exc:
                raise ToolError(
                    f"Tool '{name}': its MCP server '{connection.config.name}' stopped during "
                    "the call. It is restarted on the next call.",
                    code="server_stopped",
                    status=502,
                ) from exc
            except MCPServerError as exc:
                raise ToolError(
                    f"Tool '{name}' cannot run now: its MCP server '{connection.config.name}' "
                    "is not available. Try again later.",
                    code="server_unavailable",
                    status=503,
                ) from exc
            except (ToolError, RuntimeError, TimeoutError):
                raise
            except Exception as exc:
                if _is_json_rpc_error(exc):
                    limit = too_large(getattr(exc, "error", None))
                    if limit is not None:
                        raise _too_large(name, limit) from exc
                    if past_bound(getattr(exc, "error", None)):
                        raise _past_bound(name, connection.config.name) from exc
                    raise _results.json_rpc_failure(name, connection.config.name) from exc
                raise
            if check is not None and not result.is_error:
                await check.verify(
                    result.structured_content, name, server, connection.config.timeout
                )
            return _results.value_of(result, output)

        # It takes the context for its abort event: set when the pipeline gives up on a
        # call it cannot cancel (a sync caller's worker), which cancels the request.
        return BoundTool(call, is_async=True, takes_context=True)

    async def _confirm(self) -> None:
        """Run only what the server's live listing still lists as it was kept on disk.

        Raises:
            ToolError: 409 ``tool_changed`` when the live listing differs (the kept
                listing is then forgotten, and a problem says what changed); 503 when the
                server cannot be listed.
        """
        connection = self.connection
        try:
            tools = await connection.loop.run_async(connection.live_tools())
        except MCPServerError as exc:
            raise ToolError(
                f"Tool '{self.name}' cannot run now: its MCP server '{self.server}' "
                "is not available. Try again later.",
                code="server_unavailable",
                status=503,
            ) from exc
        live = next((tool for tool in tools if tool.name == self.remote_name), None)
        reason = await asyncio.to_thread(_difference, self, live)
        if reason is None:
            self._confirmed = True
            return
        connection.mismatch(self.name, reason)
        raise ToolError(
            f"Tool '{self.name}' changed on its MCP server '{self.server}' since its listing "
            "was kept, so it was not run. List the tools again before calling it.",
            code="tool_changed",
            status=409,
        )

    def describe(self) -> str:
        """Who provides this tool, for collision reports: the server and its tool."""
        return f"MCP tool {self.remote_name!r} of {self.origin.describe() if self.origin else ''}"

    def _key(self) -> tuple[Any, ...]:
        return (self.server, self.remote_name, self.name, self.description)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MCPToolProvider):
            return NotImplemented
        return (
            self._key() == other._key()
            and self.input_schema == other.input_schema
            and self.output_schema == other.output_schema
            and self._annotations == other._annotations
            and self._title == other._title
            and self.task_support == other.task_support
        )

    def __hash__(self) -> int:
        return hash((MCPToolProvider, *self._key()))


def _difference(kept: MCPToolProvider, live: Any) -> str | None:
    """How the server's live tool differs from the one kept on disk, or None (a worker's)."""
    if live is None:
        return "the server no longer lists it"
    if tool_bytes(live) > MAX_TOOL_BYTES:
        return "the server now lists it over the bound on one tool's bytes"
    try:
        now = build(kept.connection, live)
    except (InvalidToolSchemaError, ValueError) as exc:
        return f"the server now lists it as a tool that is not offered ({refusal(exc)})"
    if now != kept or now.read_only != kept.read_only:
        changed = [
            label
            for label, before, after in (
                ("description", kept.description, now.description),
                ("input schema", kept.input_schema, now.input_schema),
                ("output schema", kept.output_schema, now.output_schema),
                ("annotations", dict(kept.annotations), dict(now.annotations)),
                ("title", kept.title, now.title),
                ("task support", kept.task_support, now.task_support),
            )
            if before != after
        ]
        return "the server now lists it with another " + (", ".join(changed) or "name")
    return None


def tool_bytes(tool: Any) -> int:
    """The bytes of a tool's texts and schemas, as JSON (a schema that is not JSON: all)."""
    size = 0
    for text in (tool.description, tool.title):
        if isinstance(text, str):
            size += len(text)
    for schema in (tool.input_schema, tool.output_schema):
        if schema is not None:
            try:
                size += len(json.dumps(schema))
            except (TypeError, ValueError, RecursionError):
                return MAX_TOOL_BYTES + 1
    return size


def _relay(context: ToolContext) -> Progress:
    """Progress reports from the pool's loop to ``context``, on the caller's own loop.

    The host's callback runs where a local async tool's reports would run it, never on
    the loop every server's calls share; ``call_soon_threadsafe`` keeps the reports in
    order, and ahead of the result, which comes back the same way. A caller already on
    the pool's loop gets them with ``call_soon``: no wake-up of a loop that is awake.
    """
    caller = asyncio.get_running_loop()
    report = context.report_progress

    def relay(done: float, total: float | None, message: str | None) -> None:
        if asyncio.get_running_loop() is caller:
            caller.call_soon(report, done, total, message)
            return
        with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody waits
            caller.call_soon_threadsafe(report, done, total, message)

    return relay


def _past_bound(tool: str, server: str) -> ToolError:
    return ToolError(
        f"Tool '{tool}' failed: its MCP server '{server}' sent an answer past the bounds "
        "on what a server may send. The details were reported to the host.",
        code="server_bound",
        status=502,
    )


def _too_large(tool: str, limit: int) -> ToolError:
    return ToolError(
        f"Tool '{tool}' answered with more than {limit} bytes, the most one message of its "
        "MCP server may hold.",
        code="output_too_large",
        status=413,
    )


def _is_json_rpc_error(exc: BaseException) -> bool:
    from mcp import MCPError

    return isinstance(exc, MCPError)


def build(connection: Connection, tool: Any) -> MCPToolProvider:
    """Check one tool description a server listed and make its provider.

    Raises:
        InvalidToolSchemaError: a schema is not valid, or refers outside itself.
        ValueError: the name or the description cannot be offered; the message says why.
    """
    config: MCPServerConfig = connection.config
    remote = tool.name
    name = config.name_for(remote)
    if not TOOL_NAME.match(name):
        raise ValueError(
            f"the name {name!r} is not a valid tool name (1-64 letters, digits, '_' and '-'); "
            f"rename it: [mcp_servers.{config.name}.rename]"
        )
    description = tool.description
    if not isinstance(description, str) or not description.strip():
        raise ValueError("it has no description")
    problem = text_problem(description, MAX_DESCRIPTION)
    if problem is not None:
        raise ValueError(f"its description {problem}")
    input_schema = dict(tool.input_schema)
    _schema.check_schema(input_schema, name, what="input")
    output_schema = tool.output_schema
    if output_schema is not None:
        output_schema = dict(output_schema)
        _schema.check_schema(output_schema, name, what="output")
    annotations = (
        tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
        if tool.annotations is not None
        else {}
    )
    title = tool.title or annotations.get("title")
    for label, text in (("title", tool.title), ("annotations' title", annotations.get("title"))):
        if text is not None:
            problem = text_problem(text, MAX_TITLE) if isinstance(text, str) else "is not text"
            if problem is not None:
                raise ValueError(f"its {label} {problem}")
    return MCPToolProvider(
        connection,
        name=name,
        remote_name=remote,
        description=description.strip(),
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=annotations,
        title=title if isinstance(title, str) else None,
        task_support=_task_support(tool),
    )


def _task_support(tool: Any) -> TaskSupport:
    """How the tool may run as an MCP task (``execution.taskSupport``; absent: never)."""
    support = getattr(getattr(tool, "execution", None), "task_support", None)
    return support if support in ("optional", "required") else "forbidden"


def text_problem(text: str, limit: int) -> str | None:
    """Why a description or title cannot be offered (``"is longer than ..."``), or None."""
    if len(text) > limit:
        return f"is longer than {limit} characters"
    if any(c in CONTROL_CHARACTERS for c in text):
        return "holds control characters"
    return None


def refusal(exc: Exception) -> str:
    """Why a tool description was refused, in one line."""
    if isinstance(exc, InvalidToolSchemaError):
        return "; ".join(exc.errors)
    return str(exc)
