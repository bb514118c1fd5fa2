"""Test doubles and helpers for people who write tool packs and hosts.

Everything here builds real toolpalette objects, so a test exercises the same code a
host runs::

    from toolpalette.testing import fake_tool, make_registry, run_tool

    def test_my_tool_is_read_only():
        registry = make_registry(my_tool, fake_tool("other"))
        assert registry.get_provider("my_tool").read_only

    def test_my_tool_answers():
        assert run_tool(my_tool, {"path": "README.md"}) == "..."

``wait_until`` (and ``await_until`` in a coroutine) polls a condition with a deadline,
for tests of something that happens on another thread or task: never a fixed sleep
followed by an assert.

An :class:`~toolpalette.Executor` shares one worker pool and one report queue with the
whole process unless given its own: ``Executor(registry, pool=WorkerPool(max_workers=2),
reports=ReportQueue())`` makes its counters (``executor.stats()``, ``pool.abandoned``,
``reports.dropped``) and ``reports.join()`` the test's alone.

The ``pytest11`` plugin that ships with toolpalette exposes the same helpers as fixtures
(``tool_registry``, ``tool_context``, ``fake_tool_factory``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from toolpalette._formats.export import FORMATS as _FORMATS
from toolpalette._formats.export import export as _export
from toolpalette._run.reports import ReportQueue
from toolpalette._run.workers import WorkerPool
from toolpalette._tools.provider import BoundTool, ToolProvider, as_provider
from toolpalette._tools.registry import ToolRegistry
from toolpalette._tools.tool import TOOL_NAME, ToolContext
from toolpalette.errors import ToolDefinitionError

if TYPE_CHECKING:
    from toolpalette._hub import ToolHub

__all__ = [
    "Discovered",
    "FORMATS",
    "FakeCall",
    "FakeTool",
    "LeakCheck",
    "LeakError",
    "ReportQueue",
    "WorkerPool",
    "arun_tool",
    "as_provider",
    "assert_discoverable",
    "await_until",
    "check_tool",
    "fake_tool",
    "leak_check",
    "make_registry",
    "plugin_of",
    "run_cli",
    "run_tool",
    "wait_until",
]

FORMATS: tuple[str, ...] = tuple(_FORMATS)
"""Every schema format a turn exports (``turn.schemas(fmt)``), to test a tool in each."""

T = TypeVar("T")

OPEN_OBJECT: Mapping[str, Any] = MappingProxyType({"type": "object"})
"""The default input schema of a fake tool: any JSON object."""


@dataclass(frozen=True)
class FakeCall:
    """One call a :class:`FakeTool` received."""

    input: Any
    """The validated input (what ``parse_input`` returned)."""
    parent: Any
    """The parent the tool was created for."""
    context: ToolContext
    """The context the call ran with."""


class FakeTool(ToolProvider):
    """A real :class:`~toolpalette.ToolProvider` whose behaviour a test scripts.

    Its input is validated against ``input_schema`` (any object by default) through the
    same code path as every provider with a hand-written schema. Each call is recorded
    in :attr:`calls`. Two FakeTools are equal only if they are the same object, so two
    fakes with one name collide in a registry, as two real tools would.

    Args:
        name: The tool's name (``^[A-Za-z0-9_-]{1,64}$``).
        description: What the model reads; defaults to ``"Fake tool <name>."``.
        input_schema: The input JSON Schema; an object schema.
        output_schema: The output JSON Schema, or None for text output.
        result: What a call returns: a value, or a callable taking the input (and the
            :class:`~toolpalette.ToolContext` if it accepts two arguments).
        raises: An exception each call raises instead of returning.
        read_only: Whether the tool declares itself read-only.
        concurrency_safe: Whether calls may overlap; defaults to ``read_only``.
        is_async: Whether ``invoke`` returns an awaitable.
        timeout: The tool's own timeout in seconds, or None.
        output_cap: The tool's own output cap in bytes, or None.
        metadata: An open mapping, as ``@tool(metadata=...)``.
    """

    def __init__(
        self,
        name: str,
        *,
        description: str | None = None,
        input_schema: Mapping[str, Any] = OPEN_OBJECT,
        output_schema: Mapping[str, Any] | None = None,
        result: Any = None,
        raises: BaseException | None = None,
        read_only: bool = False,
        concurrency_safe: bool | None = None,
        is_async: bool = False,
        timeout: float | None = None,
        output_cap: int | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if not TOOL_NAME.match(name):
            raise ToolDefinitionError(
                tool_name=name, reason="names are 1-64 characters of letters, digits, '_' and '-'"
            )
        self._name = name
        self._description = description or f"Fake tool {name}."
        self._input_schema = dict(input_schema)
        self._output_schema = dict(output_schema) if output_schema is not None else None
        self._result = result
        self._raises = raises
        self._read_only = read_only
        self._concurrency_safe = read_only if concurrency_safe is None else concurrency_safe
        self._is_async = is_async
        self._timeout = timeout
        self._output_cap = output_cap
        self._metadata: Mapping[str, Any] = MappingProxyType(dict(metadata or {}))
        self._lock = threading.Lock()
        self.calls: list[FakeCall] = []
        """Every call received, in order."""
        self.parents: list[Any] = []
        """Every parent ``create`` was called for, in order."""

    @property
    def name(self) -> str:
        """The tool's name."""
        return self._name

    @property
    def description(self) -> str:
        """What the model reads."""
        return self._description

    @property
    def input_schema(self) -> dict[str, Any]:
        """The input JSON Schema."""
        return self._input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The output JSON Schema, or None."""
        return self._output_schema

    @property
    def read_only(self) -> bool:
        """Whether the fake declares itself read-only."""
        return self._read_only

    @property
    def concurrency_safe(self) -> bool:
        """Whether calls may overlap."""
        return self._concurrency_safe

    @property
    def timeout(self) -> float | None:
        """The fake's own timeout."""
        return self._timeout

    @property
    def output_cap(self) -> int | None:
        """The fake's own output cap."""
        return self._output_cap

    @property
    def metadata(self) -> Mapping[str, Any]:
        """The open metadata mapping."""
        return self._metadata

    @property
    def call_count(self) -> int:
        """How many calls ran."""
        with self._lock:
            return len(self.calls)

    def create(self, parent: Any = None) -> BoundTool:
        """Build the runnable tool; records ``parent``."""
        with self._lock:
            self.parents.append(parent)

        def call(value: Any, context: ToolContext) -> Any:
            return self._answer(FakeCall(value, parent, context))

        async def acall(value: Any, context: ToolContext) -> Any:
            answer = self._answer(FakeCall(value, parent, context))
            return await answer if inspect.isawaitable(answer) else answer

        return BoundTool(
            acall if self._is_async else call, is_async=self._is_async, takes_context=True
        )

    def _answer(self, call: FakeCall) -> Any:
        with self._lock:
            self.calls.append(call)
        if self._raises is not None:
            raise self._raises
        if callable(self._result):
            if _arity(self._result) >= 2:
                return self._result(call.input, call.context)
            return self._result(call.input)
        return self._result


def _arity(fn: Callable[..., Any]) -> int:
    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return 1


def fake_tool(name: str, *, read_only: bool = False, **options: Any) -> FakeTool:
    """Build a :class:`FakeTool`; the keyword options are FakeTool's."""
    return FakeTool(name, read_only=read_only, **options)


def make_registry(*tools: object) -> ToolRegistry:
    """A fresh :class:`~toolpalette.ToolRegistry` holding ``tools`` in order.

    Each item is anything ``ToolRegistry.register`` takes (an ``@tool`` function or class,
    a provider), or a string, which becomes ``fake_tool(string)``.
    """
    registry = ToolRegistry()
    for item in tools:
        registry.register(fake_tool(item) if isinstance(item, str) else item)
    return registry


def plugin_of(*tools: object) -> object:
    """A plugin object whose ``toolpalette_register_tools`` returns ``tools``.

    For tests that need a pack without installing one: ``hub.add_plugin(plugin_of(fn))``.
    """
    from toolpalette.hookspecs import hookimpl

    class Plugin:
        @hookimpl
        def toolpalette_register_tools(self) -> list[object]:
            return list(tools)

    return Plugin()


def check_tool(obj: object) -> ToolProvider:
    """Check what every published tool must satisfy; return its provider.

    ``obj`` is an ``@tool`` function or class, or a provider. The checks: the name is
    1-64 letters, digits, ``_`` and ``-``; the description is not blank; the input
    schema (and the output schema, if any) is valid Draft 2020-12 that refers to nothing
    outside itself and is within the validation bounds, the input one an object; the
    tool exports to every format in
    :data:`FORMATS` as plain JSON. ``tests/contract`` runs it over every installed tool.

    Raises:
        AssertionError: listing every check the tool fails.
    """
    from toolpalette._tools.schema import check_schema
    from toolpalette.errors import InvalidToolSchemaError

    provider = as_provider(obj)
    failed: list[str] = []
    if not TOOL_NAME.match(provider.name):
        failed.append(f"name {provider.name!r} is not 1-64 letters, digits, '_' and '-'")
    if not provider.description.strip():
        failed.append("the description is blank")
    schemas = [("input", provider.input_schema), ("output", provider.output_schema)]
    for what, schema in schemas:
        if schema is None and what == "output":
            continue
        try:
            check_schema(schema, provider.name, what=what)
        except InvalidToolSchemaError as error:
            failed.extend(error.errors)
    for fmt in _FORMATS:
        try:
            (exported,) = _export([provider], fmt)  # type: ignore[arg-type]
            if json.loads(json.dumps(exported)) != exported:
                failed.append(f"the {fmt} export does not survive a JSON round trip")
        except Exception as error:
            failed.append(f"the {fmt} export failed: {type(error).__name__}: {error}")
    if failed:
        raise AssertionError(f"tool {provider.name!r}: " + "; ".join(failed))
    return provider


def run_cli(argv: Sequence[str], *, hub: ToolHub | None = None) -> int:
    """Run the ``toolpalette`` command line in this process; return its exit status.

    With ``hub``, the commands that work on a hub (``list``, ``show``, ``plugins``,
    ``check``, ``skills``, ``call``) use that one, built in the test (for example with
    :func:`plugin_of`), instead of the installed packs and ``--config``. Output goes to
    ``sys.stdout`` and ``sys.stderr`` as usual (pytest's ``capsys`` reads it).
    """
    from toolpalette._cli import main
    from toolpalette._cli.list import using_hub

    if hub is None:
        return main(list(argv))
    with using_hub(hub):
        return main(list(argv))


_POLL_INTERVAL = 0.005  # seconds between two looks of wait_until and await_until


def _timed_out(predicate: Callable[[], Any], timeout: float, message: str | None) -> AssertionError:
    what = message or getattr(predicate, "__qualname__", repr(predicate))
    return AssertionError(f"not true within {timeout:g} s: {what}")


def wait_until(
    predicate: Callable[[], Any], *, timeout: float = 5.0, message: str | None = None
) -> Any:
    """Call ``predicate`` until it returns something true, and return that.

    For a condition another thread makes true (a worker that ends, a report that
    arrives); the calling thread sleeps between looks, so inside a coroutine use
    :func:`await_until`, which lets the event loop run. The deadline is a ceiling, not
    a delay: the wait ends as soon as the condition holds.

    Raises:
        AssertionError: the condition still did not hold after ``timeout`` seconds; the
            message is ``message`` or the predicate's name.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _timed_out(predicate, timeout, message)
        time.sleep(_POLL_INTERVAL)


async def await_until(
    predicate: Callable[[], Any], *, timeout: float = 5.0, message: str | None = None
) -> Any:
    """Like :func:`wait_until`, from a coroutine: the event loop runs between looks.

    For a condition a task or a callback on the same loop makes true, such as a call
    pausing for its approval (``await await_until(thinker.pending_approvals)``).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise _timed_out(predicate, timeout, message)
        await asyncio.sleep(_POLL_INTERVAL)


def _prepare(
    obj: object, raw: str | bytes | Mapping[str, Any], parent: Any, context: ToolContext | None
) -> tuple[BoundTool, Any, ToolContext]:
    provider = as_provider(obj)
    value = provider.parse_input(raw)
    return provider.create(parent), value, context or ToolContext(parent=parent)


def run_tool(
    obj: object,
    raw: str | bytes | Mapping[str, Any],
    *,
    parent: Any = None,
    context: ToolContext | None = None,
) -> Any:
    """Validate ``raw`` as a model would send it, run the tool, and return its result.

    ``obj`` is an ``@tool`` function or class, or a provider. An async tool is run to
    completion with :func:`asyncio.run`; inside a running event loop use
    :func:`arun_tool`. Refused input raises :class:`~toolpalette.InvalidInputError`.
    This is the tool on its own: no timeout, output cap or policy applies.
    """
    bound, value, ctx = _prepare(obj, raw, parent, context)
    if bound.is_async and _loop_running():
        raise RuntimeError(
            "run_tool cannot run an async tool inside a running event loop (an async "
            "test, a notebook): use `await toolpalette.testing.arun_tool(...)` there"
        )
    result = bound.invoke(value, ctx)
    if bound.is_async:
        return asyncio.run(_await(result))
    return result


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def arun_tool(
    obj: object,
    raw: str | bytes | Mapping[str, Any],
    *,
    parent: Any = None,
    context: ToolContext | None = None,
) -> Any:
    """Like :func:`run_tool`, from async code; a sync tool runs in the calling thread."""
    bound, value, ctx = _prepare(obj, raw, parent, context)
    result = bound.invoke(value, ctx)
    return await result if bound.is_async else result


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


# -- leak checks -------------------------------------------------------------------------


class LeakError(AssertionError):
    """Something a test started was still there after it: ``leaks`` says what."""

    def __init__(self, leaks: list[str]) -> None:
        self.leaks = leaks
        """One line per thing left behind."""
        super().__init__("left behind:\n  " + "\n  ".join(leaks))


_POLL = 0.005


class LeakCheck:
    """Records what a test has open before it runs and fails it on anything left behind.

    Compared before and after: live threads, open file descriptors, child processes,
    the running event loop's tasks (``async with`` only), and the pending approvals of
    every thinker passed to :meth:`watch`. Threads, descriptors and processes that are
    still ending get until ``deadline`` seconds to go (polled, never a fixed sleep).

    Idle worker threads of toolpalette's pool are not leaks: the pool keeps them for the
    next sync call (they retire after a minute unused). A worker still running a tool
    is one: it is an abandoned call that has not ended.

    Descriptors and child processes are read from ``/proc`` (Linux) or ``/dev/fd``;
    where neither exists those two checks are skipped.

    Use it as ``with leak_check() as check:`` (or ``async with`` in a coroutine, which
    adds the task check); the pytest plugin's ``leak_check`` fixture wraps a whole test.
    """

    def __init__(self, *, deadline: float = 5.0) -> None:
        self.deadline = deadline
        """Seconds to wait for threads, descriptors and processes that are ending."""
        self._watched: list[Any] = []
        self._threads: set[threading.Thread] = set()
        self._fds: dict[int, str] | None = None
        self._children: set[int] | None = None
        self._tasks: set[asyncio.Task[Any]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, thinker: T) -> T:
        """Check ``thinker``'s pending approvals at the end too; returns it, to chain."""
        self._watched.append(thinker)
        return thinker

    # -- the two snapshots ----------------------------------------------------------

    def start(self) -> None:
        """Take the "before" snapshot (``__enter__`` calls this)."""
        # A pool's idle worker that a call takes up is not new, but is busy.
        self._threads = {t for t in threading.enumerate() if not _idle_pool_thread(t)}
        self._fds = _open_fds()
        self._children = _children()

    def leaks(self) -> list[str]:
        """What is left behind now, after waiting up to ``deadline`` for what is ending."""
        end = time.monotonic() + self.deadline
        found: list[str] = []
        while True:
            found = self._look()
            if not found or time.monotonic() >= end:
                return found
            for thread in self._new_threads():
                if not _idle_pool_thread(thread):
                    thread.join(min(_POLL * 10, max(0.0, end - time.monotonic())))
                    break
            else:
                time.sleep(_POLL)  # polling what has no handle to wait on (fds, processes)

    def check(self) -> None:
        """Raise :class:`LeakError` if anything is left behind."""
        found = self.leaks()
        if found:
            raise LeakError(found)

    def _new_threads(self) -> list[threading.Thread]:
        """Threads alive now that were not, or were idle in a pool, at the start."""
        return [t for t in threading.enumerate() if t not in self._threads and t.is_alive()]

    def _look(self) -> list[str]:
        found = [
            f"thread {t.name!r} (daemon={t.daemon}) still running"
            for t in self._new_threads()
            if not _idle_pool_thread(t)
        ]
        if self._fds is not None:
            now = _open_fds() or {}
            found.extend(
                f"file descriptor {fd} open ({target})"
                for fd, target in sorted(now.items())
                if self._fds.get(fd) != target
            )
        if self._children is not None:
            found.extend(
                f"child process {pid} still there" for pid in sorted(_children() - self._children)
            )
        if self._tasks is not None and self._loop is not None:
            current = asyncio.current_task(self._loop)
            found.extend(
                f"asyncio task {task.get_name()!r} still pending"
                for task in asyncio.all_tasks(self._loop)
                if task not in self._tasks and task is not current
            )
        for thinker in self._watched:
            pending = thinker.pending_approvals()
            if pending:
                found.append(f"{len(pending)} pending approval(s) of {type(thinker).__name__}")
        return found

    # -- context managers -----------------------------------------------------------

    def __enter__(self) -> LeakCheck:
        self.start()
        return self

    def __exit__(self, kind: object, error: object, tb: object) -> None:
        found = self.leaks()
        if found and kind is None:  # a failing test's own error says more
            raise LeakError(found)

    async def __aenter__(self) -> LeakCheck:
        self._loop = asyncio.get_running_loop()
        self._tasks = set(asyncio.all_tasks(self._loop))
        self.start()
        return self

    async def __aexit__(self, kind: object, error: object, tb: object) -> None:
        end = time.monotonic() + self.deadline
        found = self._look()
        while found and time.monotonic() < end:
            await asyncio.sleep(_POLL)  # let what is finishing finish, loop running
            found = self._look()
        if found and kind is None:
            raise LeakError(found)


def leak_check(*, deadline: float = 5.0) -> LeakCheck:
    """Build a :class:`LeakCheck`; ``with`` it around code that must leave nothing behind."""
    return LeakCheck(deadline=deadline)


def _idle_pool_thread(thread: threading.Thread) -> bool:
    """A pool's worker waiting for work: its innermost frame is the pool's own code.

    toolpalette's workers and the event loop's default executor keep idle threads for
    the next job; one running a tool (or anything else) is not idle.
    """
    pool_code = _POOL_CODE.get(thread.name.split("_")[0].split("-worker")[0])
    if pool_code is None or thread.ident is None:
        return False
    frame = sys._current_frames().get(thread.ident)
    # Waiting in the standard library's queue (the report thread's ``queue.Queue``)
    # counts as the pool's own code waiting; anything else in between is busy.
    while frame is not None and frame.f_globals.get("__name__") in _WAITING:
        frame = frame.f_back
    if frame is None:  # ended meanwhile
        return True
    module = str(frame.f_globals.get("__name__", ""))
    return module.startswith(pool_code)


_POOL_CODE = {
    "toolpalette": "toolpalette._run",
    "toolpalette-reports": "toolpalette._run.reports",
    "toolpalette-watchdog": "toolpalette._run.watchdog",
    "asyncio": "concurrent.futures",
}
_WAITING = frozenset({"queue", "threading"})


def _open_fds() -> dict[int, str] | None:
    for where in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(where)
        except OSError:
            continue
        fds: dict[int, str] = {}
        for name in names:
            try:
                fds[int(name)] = os.readlink(f"{where}/{name}")
            except (OSError, ValueError):
                continue  # the descriptor listing the directory itself, already closed
        return fds
    return None


def _children() -> set[int]:
    """Processes whose parent is this one (zombies included), from ``/proc``."""
    me = os.getpid()
    found: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == me:
            found.add(int(entry))
    return found


@dataclass(frozen=True)
class Discovered:
    """What :func:`assert_discoverable` found for one installed distribution."""

    distribution: str
    """The distribution's name, as its metadata spells it."""
    packs: tuple[str, ...]
    """The entry point names of its tool packs (``toolpalette.plugins``), sorted."""
    tools: tuple[str, ...]
    """The names of its packs' tools, sorted."""
    bundles: tuple[str, ...]
    """The bundle ids of its skilljars (``toolpalette.skilljars``), sorted."""
    skills: tuple[str, ...]
    """The full ids of its skilljars' skills, sorted."""


def assert_discoverable(dist_name: str) -> Discovered:
    """Check that an installed distribution's packs and skilljars load as a host's would.

    The smoke test of a pack or skilljar project (after ``pip install -e .``): the
    distribution declares at least one ``toolpalette.plugins`` or
    ``toolpalette.skilljars`` entry point; each pack imports and yields its tools, and
    each skilljar opens and yields its skills, all without a problem. Returns what was
    found, for the test to compare with what it expects.

    Raises:
        AssertionError: nothing is declared (naming what is installed), or a problem was
            found (listing each with its reason).
    """
    from toolpalette._hub import ToolHub
    from toolpalette._plugins.discovery import PLUGIN_GROUP, SKILLJAR_GROUP, discover
    from toolpalette._skills import SkillRegistry

    def canonical(name: str | None) -> str:
        return re.sub(r"[-_.]+", "-", name or "").lower()

    wanted = canonical(dist_name)
    packs = [i for i in discover(PLUGIN_GROUP) if canonical(i.distribution) == wanted]
    jars = [i for i in discover(SKILLJAR_GROUP) if canonical(i.distribution) == wanted]
    if not packs and not jars:
        found = sorted(
            {i.distribution or i.name for g in (PLUGIN_GROUP, SKILLJAR_GROUP) for i in discover(g)}
        )
        raise AssertionError(
            f"no installed distribution {dist_name!r} declares a toolpalette.plugins or "
            "toolpalette.skilljars entry point (install it first: pip install -e .); "
            f"installed: {', '.join(found) or 'none'}"
        )
    hub = ToolHub(config={})
    tools = [p.name for info in packs for p in hub.providers_for_pack(info.name)]
    names = {info.name for info in packs}
    problems = [p for p in hub.problems() if p.pack in names]
    registry = SkillRegistry.from_entry_points(jars)
    registry.load_all()
    problems.extend(registry.problems())
    if problems:
        listed = "; ".join(
            f"{p.kind}: {p.pack or '?'} [{p.item or '-'}]: {p.reason}" for p in problems
        )
        raise AssertionError(f"{dist_name!r} loads with {len(problems)} problem(s): {listed}")
    spelled = (packs or jars)[0].distribution or dist_name
    return Discovered(
        distribution=spelled,
        packs=tuple(sorted(names)),
        tools=tuple(sorted(tools)),
        bundles=tuple(sorted(registry.loaded_bundles())),
        skills=tuple(sorted(registry.ids())),
    )
