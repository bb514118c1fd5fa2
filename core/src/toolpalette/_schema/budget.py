"""How much work validating against a hand-written schema may do, and where it runs.

jsonschema is imported here lazily, never by ``import toolpalette``.
"""

from __future__ import annotations

import contextvars
import itertools
import re
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, final

from toolpalette._schema.json_values import SCALAR_TYPES
from toolpalette.errors import InputProblem

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "CHECK_EVERY",
    "LOOP_AT_ONCE",
    "LOOP_CHECK_EVERY",
    "LOOP_CONTAINERS",
    "LOOP_SECONDS",
    "LOOP_STEPS",
    "LOOP_TEXT",
    "MAX_CONTAINERS",
    "OVER_BUDGET",
    "STEPS_PER_BYTE",
    "ValidationDeferred",
    "ValidationStopped",
    "container_problem",
    "end_mode",
    "on_loop",
    "out_of_steps",
    "schema_errors",
    "spend",
    "validating_apart",
    "validating_on_loop",
]

STEPS_PER_BYTE: Final = 1
"""Steps the JSON Schema validator may take per byte of input (see `schema_errors()`).

Typed records cost far less (about 0.15: 2,000 rows of an integer, a string and a list
of strings are 16,000 steps for 120 KB), while a megabyte built to cost the most
(``anyOf`` items, 1.5 steps a byte) is refused after about a million steps, a few
seconds of one worker thread.
"""
LOOP_STEPS: Final = 10_000
"""Steps taken on an event loop; input that needs more is validated in a worker.

Also the least budget of any input, however small.
"""
LOOP_SECONDS: Final = 0.01
"""Time the loop's share of validation may take (checked every `CHECK_EVERY` steps).

A step costs a few microseconds, so `LOOP_STEPS` alone could hold the loop for
some 40 ms; past this the rest goes to a worker too (the verdict is the same).
"""
LOOP_CONTAINERS: Final = 10_000
"""Arrays and objects in input validated on an event loop; more go to a worker."""
LOOP_TEXT: Final = 64 * 1024
"""Characters (or bytes) of JSON text parsed and validated on an event loop; more go to a
worker at once. Parsing holds the thread it runs on: a megabyte takes some 20 ms, which
on the loop would come on top of the loop's share of validation."""
MAX_CONTAINERS: Final = 16_384
"""The most arrays and objects in input checked against a hand-written schema.

One per 64 bytes of the largest input the JSON policy admits (1 MiB): thousands of
records, each with a nested array or object, fit. It also bounds what a worker
allocates while it parses (every array and object is an object for the garbage
collector to track; a full collection holds the GIL, stalling the event loop too).
"""


def container_problem(raw: object) -> InputProblem | None:
    """Why ``raw`` holds too many arrays and objects for a hand-written schema, or None.

    At most `MAX_CONTAINERS`: JSON text is counted before it is parsed (brackets,
    with the strings cut out only when the plain count is over), a mapping by a walk
    that stops once over, so a refusal costs no parse and no validation. On an event
    loop (`validating_on_loop()`) the bound is `LOOP_CONTAINERS`, and input
    over it, or text longer than `LOOP_TEXT`, raises `ValidationDeferred`
    instead: it is counted, parsed and validated in a worker.

    Raises:
        ValidationDeferred: on the loop, over `LOOP_CONTAINERS` or `LOOP_TEXT`.
    """
    on_loop = _MODE.get() is _ON_LOOP
    if on_loop and isinstance(raw, (str, bytes)) and len(raw) > LOOP_TEXT:
        raise ValidationDeferred
    bound = LOOP_CONTAINERS if on_loop else MAX_CONTAINERS
    if isinstance(raw, (str, bytes)):
        # On the loop, brackets inside strings are left for the worker to cut out.
        over = _bracket_count(raw, bound, exact=not on_loop) > bound
    elif isinstance(raw, Mapping):
        over = _container_count(raw, bound) > bound
    else:
        return None
    if not over:
        return None
    if on_loop:
        raise ValidationDeferred
    return InputProblem(
        "(input)",
        f"at most {MAX_CONTAINERS} arrays and objects in all "
        "(the bound on input for a hand-written schema)",
    )


# A string runs to its closing quote or to the end of the text, so every match attempt
# succeeds and the scan stays linear (invalid JSON is left to the parser).
_TEXT_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
_BYTES_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)


def _bracket_count(text: str | bytes, bound: int, *, exact: bool = True) -> int:
    """The brackets that open arrays and objects in ``text``.

    Over ``bound`` and ``exact``, brackets inside strings are cut out and the count
    taken again (a scan of the whole text); otherwise they count too.
    """
    if isinstance(text, str):
        count = text.count("[") + text.count("{")
        if count > bound and exact:
            bare = _TEXT_STRING.sub("", text)
            count = bare.count("[") + bare.count("{")
        return count
    count = text.count(b"[") + text.count(b"{")
    if count > bound and exact:
        raw = _BYTES_STRING.sub(b"", text)
        count = raw.count(b"[") + raw.count(b"{")
    return count


def _container_count(value: Mapping[str, Any], bound: int) -> int:
    """The arrays and objects in ``value`` (itself included), or any count over ``bound``.

    Stops once over ``bound``, so a cycle or a huge tree costs little. Only
    dicts and lists count below the top: any other value is refused by the JSON policy.
    """
    count = 1
    stack: list[Iterable[Any]] = [value.values()]
    while stack:
        children = stack.pop()
        if SCALAR_TYPES.issuperset(map(type, children)):
            continue
        nested = [child for child in children if isinstance(child, (dict, list))]
        count += len(nested)
        if count > bound:
            break
        stack.extend(child.values() if isinstance(child, dict) else child for child in nested)
    return count


OVER_BUDGET: Final = "toolpalette:steps"
"""The keyword of the error `schema_errors()` reports for input over the budget."""


def schema_errors(validator: Validator, instance: Any, limit: int, size: int = 0) -> list[Any]:
    """The first ``limit`` errors of ``instance``, found within a budget of steps.

    A step is one keyword checked at one place of the input, or one item or key that a
    keyword goes through (a descent, a pattern searched, an item hashed). An array of
    plain values whose ``items`` schema names only a type, or allows strings by value
    (see `toolpalette._schema.bounded`), costs one step: the items are checked in C. The budget
    is `STEPS_PER_BYTE` per byte of the input's JSON text (``size``), and never
    less than `LOOP_STEPS`. Input that needs more is refused with one error
    (keyword `OVER_BUDGET`) at the place the budget ran out, whatever else was
    found: past that point the validator does no more work, so its other verdicts would
    be wrong.

    The mode this runs in (see `validating_on_loop()`, `validating_apart()`)
    may end it sooner.

    Raises:
        ValidationDeferred: on an event loop, past `LOOP_STEPS` steps or
            `LOOP_SECONDS`.
        ValidationStopped: apart, past the deadline or once stopped.
    """
    mode = _MODE.get()
    on_loop = mode is _ON_LOOP
    watch: _Watch | None
    if on_loop:
        steps, watch = LOOP_STEPS, _Watch(time.monotonic() + LOOP_SECONDS, None, defer=True)
        budget = _Budget(steps, watch, LOOP_CHECK_EVERY)
    else:
        steps = max(LOOP_STEPS, STEPS_PER_BYTE * size)
        watch = mode if isinstance(mode, _Watch) else None
        budget = _Budget(steps, watch)
    token = _BUDGET.set(budget)
    try:
        errors = list(itertools.islice(validator.iter_errors(instance), limit))
    finally:
        _BUDGET.reset(token)
    if not budget.over:
        return errors
    if on_loop:
        raise ValidationDeferred
    if budget.stopped:
        raise ValidationStopped(budget.stopped)
    return [_first_over_budget(errors) or _over_budget(steps)]


def _first_over_budget(errors: list[Any]) -> Any:
    """The over-budget error among ``errors`` or their branches' (``anyOf``), or None.

    Its path is where the budget ran out. The errors are few: past that point every
    keyword yields nothing.
    """
    pending = list(errors)
    while pending:
        error = pending.pop(0)
        if error.validator == OVER_BUDGET:
            return error
        pending.extend(error.context)
    return None


class ValidationDeferred(Exception):
    """On an event loop, validation needs more than the loop's share: finish it apart.

    Raised by `schema_errors()` and `container_problem()` under
    `validating_on_loop()` only; the executor catches it and validates the input
    again in a worker thread. It never reaches a caller of the executor.
    """


class ValidationStopped(Exception):
    """Validation apart passed its deadline, or its caller stopped waiting for it.

    Raised by `schema_errors()` under `validating_apart()`; its text says which.
    """


@final
class _Watch:
    """A validation's deadline (``time.monotonic``), its stop event, and what ends it.

    Past the deadline, a validation on the loop (``defer``) raises
    `ValidationDeferred`; one in a worker raises `ValidationStopped`.
    """

    __slots__ = ("deadline", "defer", "stop")

    def __init__(self, deadline: float, stop: threading.Event | None, *, defer: bool) -> None:
        self.deadline = deadline
        self.stop = stop
        self.defer = defer


_ON_LOOP: Final = object()
_MODE: contextvars.ContextVar[object] = contextvars.ContextVar(
    "toolpalette_schema_mode", default=None
)


def validating_on_loop() -> contextvars.Token[object]:
    """From now on (until `end_mode()`), validate with the loop's share of work.

    At most `LOOP_STEPS` steps, `LOOP_SECONDS`, `LOOP_CONTAINERS`
    arrays and objects and `LOOP_TEXT` of JSON text; input that needs more raises
    `ValidationDeferred`, for the caller to validate it again under
    `validating_apart()`, off the loop.
    """
    return _MODE.set(_ON_LOOP)


def validating_apart(deadline: float, stop: threading.Event) -> contextvars.Token[object]:
    """From now on (until `end_mode()`), validate with the whole budget, watched.

    Every `CHECK_EVERY` steps the validator reads the clock and ``stop``: past
    ``deadline`` (``time.monotonic``), or once ``stop`` is set, it raises
    `ValidationStopped`, so a worker thread never outlives its call by long.
    """
    return _MODE.set(_Watch(deadline, stop, defer=False))


def on_loop() -> bool:
    """Whether validation runs with the loop's share of work (`validating_on_loop()`)."""
    return _MODE.get() is _ON_LOOP


def end_mode(token: contextvars.Token[object]) -> None:
    """Back to the mode before `validating_on_loop()` or `validating_apart()`."""
    _MODE.reset(token)


CHECK_EVERY: Final = 1_000
"""Steps between two looks at the clock and the stop event, validating apart (a few ms)."""

LOOP_CHECK_EVERY: Final = 250
"""Steps between two looks at the clock on an event loop, past the first
`CHECK_EVERY` (a millisecond or so: most input is validated within those)."""

LOOP_AT_ONCE: Final = 1_000
"""The most steps one piece of work may cost on an event loop (a descent through a
schema object's keys, a pattern's search of a string): work that a keyword cannot stop
halfway. A piece that costs more is done in a worker (`ValidationDeferred`)."""


class _Budget:
    """The steps left to one `schema_errors()` call, and whether it ran out.

    Watched (in an executor, on the loop or in a worker), the first
    `CHECK_EVERY` steps are handed out at once and the rest ``every`` at a time,
    the clock and the stop event read between two handouts; otherwise all at once.
    Either way a step costs one subtraction.
    """

    __slots__ = ("every", "left", "over", "reserve", "steps", "stopped", "watch")

    def __init__(self, steps: int, watch: _Watch | None = None, every: int = CHECK_EVERY) -> None:
        self.steps = steps
        self.every = every
        first = steps if watch is None else min(steps, CHECK_EVERY)
        self.left = first
        self.reserve = steps - first
        self.watch = watch
        self.over = False
        self.stopped = ""
        """Why a watched validation stopped ("" while it goes on)."""

    def refill(self) -> bool:
        """Whether work may go on once ``left`` is spent: more steps, and still watched."""
        while self.left < 0 and self.reserve > 0:
            more = min(self.every, self.reserve)
            self.reserve -= more
            self.left += more
        watch = self.watch
        if watch is not None:
            if watch.stop is not None and watch.stop.is_set():
                self.stopped = "its caller stopped waiting"
            elif time.monotonic() > watch.deadline:
                self.stopped = "it passed its deadline"
            if self.stopped:
                return False
        return self.left >= 0


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "toolpalette_schema_budget", default=None
)


def _over_budget(steps: int) -> Any:
    from jsonschema import ValidationError

    return ValidationError(
        f"needs more than {steps} validation steps",
        validator=OVER_BUDGET,
        validator_value=steps,
    )


def spend(steps: int, *, at_once: bool = False) -> list[Any] | None:
    """Charge ``steps``: None to go on, else the errors to yield instead of working.

    The first charge past the budget yields the over-budget error; every later one
    yields nothing. Outside `schema_errors()` nothing is counted. ``at_once``: the
    steps pay for one piece of work the caller does next without charging again (see
    `LOOP_AT_ONCE`).

    Raises:
        ValidationDeferred: on the loop, past its time, or for a piece of work over
            `LOOP_AT_ONCE`.
        ValidationStopped: in a worker, past the deadline or once stopped.
    """
    budget = _BUDGET.get()
    if budget is None:
        return None
    if budget.over:
        return []
    if at_once and steps > LOOP_AT_ONCE and budget.watch is not None and budget.watch.defer:
        raise ValidationDeferred
    budget.left -= steps
    if budget.left >= 0 or budget.refill():
        return None
    budget.over = True
    if budget.stopped:  # nothing is left to answer: unwind at once
        assert budget.watch is not None
        if budget.watch.defer:
            raise ValidationDeferred
        raise ValidationStopped(budget.stopped)
    return [_over_budget(budget.steps)]


def out_of_steps() -> bool:
    """Whether the budget of this `schema_errors()` call ran out (stop going through)."""
    budget = _BUDGET.get()
    return budget is not None and budget.over
