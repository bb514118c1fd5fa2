"""JSON Schemas: generated from signatures, refined, checked, and used to validate input.

jsonschema is imported here lazily, never by ``import toolpalette``. Validators never
retrieve a ``$ref``: only references inside the schema itself resolve. Their work is
bounded whatever the input: linear-time patterns, hashed uniqueness, at most
:data:`STEPS_PER_BYTE` steps per byte of input (:func:`schema_errors`) on input of at
most :data:`MAX_CONTAINERS` arrays and objects (:func:`container_problem`).

On an event loop the executor validates in two parts (:func:`validating_on_loop`): the
first :data:`LOOP_STEPS` steps (within :data:`LOOP_SECONDS`) and :data:`LOOP_CONTAINERS`
arrays and objects on the loop, where most input ends; input that needs more raises
:class:`ValidationDeferred`, and the executor validates it again in a worker thread
(:func:`validating_apart`), under the call's deadline and abort. Called directly,
validation is whole, on the caller's thread.
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import inspect
import itertools
import json
import operator
import re
import reprlib
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from types import GenericAlias
from typing import TYPE_CHECKING, Any, Final, final, get_type_hints

import pydantic
from typing_extensions import is_typeddict

from toolpalette._tools.result import mentions_content
from toolpalette._tools.tool import SchemaRefiner, ToolContext
from toolpalette.errors import InputProblem, InvalidToolSchemaError, ToolDefinitionError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "CHECK_EVERY",
    "LOOP_CONTAINERS",
    "LOOP_SECONDS",
    "LOOP_STEPS",
    "LOOP_TEXT",
    "MAX_CONTAINERS",
    "OVER_BUDGET",
    "STEPS_PER_BYTE",
    "ValidationDeferred",
    "ValidationStopped",
    "all_unique",
    "check_schema",
    "compile_validator",
    "container_problem",
    "end_mode",
    "function_input_model",
    "json_key",
    "linear_pattern",
    "output_schema",
    "output_type",
    "problems_from_jsonschema",
    "refine",
    "resolve",
    "schema_errors",
    "split_docstring",
    "summary_of",
    "validating_apart",
    "validating_on_loop",
]

STEPS_PER_BYTE: Final = 1
"""Steps the JSON Schema validator may take per byte of input (see :func:`schema_errors`).

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
"""Time the loop's share of validation may take (checked every :data:`CHECK_EVERY` steps).

A step costs a few microseconds, so :data:`LOOP_STEPS` alone could hold the loop for
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

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Yields|Raises|Examples?|Notes?):\s*$")
_PARAM_LINE = re.compile(r"^\s{2,}(\*{0,2}\w+)(?:\s*\([^)]*\))?\s*:\s*(.*)$")


def split_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-parameter texts."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    indent: int | None = None  # of the parameter lines; deeper lines continue one
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section, current = header.group(1), None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters"):
            match = _PARAM_LINE.match(line)
            depth = len(line) - len(line.lstrip())
            if match and (indent is None or depth <= indent):
                indent = depth if indent is None else indent
                current = match.group(1).lstrip("*")
                params[current] = match.group(2).strip()
            elif current and line.strip():
                params[current] = f"{params[current]} {line.strip()}"
    return "\n".join(summary).strip(), params


def summary_of(doc: str | None) -> str:
    """The description part of a Google-style docstring, its sections left unread.

    The same text :func:`split_docstring` returns first: all a listing needs.
    """
    if not doc:
        return ""
    summary: list[str] = []
    for line in inspect.cleandoc(doc).splitlines():
        if _SECTION.match(line):
            break
        summary.append(line)
    return "\n".join(summary).strip()


def function_input_model(
    fn: Callable[..., Any], tool_name: str, param_docs: dict[str, str]
) -> tuple[type[pydantic.BaseModel], str | None]:
    """Build the input model of a function tool from its signature.

    Returns the model and the name of the parameter that receives the ToolContext (if
    any). Every other parameter must be annotated and passable by keyword.
    """
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(
            tool_name=tool_name, reason=f"its annotations cannot be resolved ({exc})"
        ) from exc
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, inspect.Parameter.empty)
        if annotation is ToolContext:
            context_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolDefinitionError(
                tool_name=tool_name,
                reason=f"parameter {param.name!r} must be passable by keyword "
                "(no *args, **kwargs or positional-only parameters)",
            )
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                tool_name=tool_name, reason=f"parameter {param.name!r} needs a type annotation"
            )
        if param.name.startswith("_") or (
            param.name.startswith("model_") and hasattr(pydantic.BaseModel, param.name)
        ):
            raise ToolDefinitionError(
                tool_name=tool_name,
                reason=f"parameter {param.name!r} cannot be an input field "
                "(a leading underscore, or a pydantic BaseModel attribute); rename it",
            )
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (
            annotation,
            pydantic.Field(default, description=param_docs.get(param.name)),
        )
    try:
        with warnings.catch_warnings():
            # A parameter named like a BaseModel method (``schema``, ``json``) works: the
            # field shadows the method on the input model, which only the core reads.
            warnings.filterwarnings("ignore", r"Field name .* shadows an attribute", UserWarning)
            model: type[pydantic.BaseModel] = pydantic.create_model(
                f"{tool_name}_input",
                __config__=pydantic.ConfigDict(extra="forbid", protected_namespaces=()),
                **fields,
            )
    except (pydantic.PydanticUserError, TypeError, ValueError) as exc:
        raise ToolDefinitionError(
            tool_name=tool_name, reason=f"its parameters cannot form an input model ({exc})"
        ) from exc
    return model, context_param


def refine(schema: dict[str, Any], refiner: SchemaRefiner, tool_name: str) -> dict[str, Any]:
    """Apply a refiner to a copy of ``schema``; a failing refiner refuses the tool."""
    candidate = copy.deepcopy(schema)
    try:
        returned = refiner(candidate)
    except Exception as exc:
        raise InvalidToolSchemaError(
            tool_name=tool_name, errors=[f"refine_schema failed: {type(exc).__name__}"]
        ) from exc
    refined = candidate if returned is None else returned
    if not isinstance(refined, dict):
        raise InvalidToolSchemaError(
            tool_name=tool_name, errors=["refine_schema must return a dict or None"]
        )
    return refined


def _local_refs_only(schema: Any, path: str = "#") -> Iterable[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                if not value.startswith("#"):
                    yield f"{path}/{key}: only local references ('#...') are allowed"
            elif key == "$id" and isinstance(value, str) and path != "#":
                yield f"{path}/$id: nested $id is not allowed"
            else:
                yield from _local_refs_only(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from _local_refs_only(item, f"{path}/{i}")


def _backtracking_patterns(schema: Any, path: str = "#") -> Iterable[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str) and linear_pattern(value) is None:
                yield (
                    f"{path}/pattern: needs look-around or back-references; input is only "
                    "matched with a linear-time engine"
                )
            elif key == "patternProperties" and isinstance(value, dict):
                for pattern, sub in value.items():
                    if linear_pattern(pattern) is None:
                        yield (
                            f"{path}/patternProperties: a pattern needs look-around or "
                            "back-references; input is only matched with a linear-time engine"
                        )
                    yield from _backtracking_patterns(sub, f"{path}/patternProperties")
            else:
                yield from _backtracking_patterns(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from _backtracking_patterns(item, f"{path}/{i}")


def check_schema(schema: object, tool_name: str, *, what: str = "input") -> None:
    """Refuse a schema that is invalid, reaches outside itself, or needs backtracking.

    Invalid: not Draft 2020-12. Outside itself: a ``$ref`` that is not local. Needs
    backtracking: a pattern that only a backtracking regular expression engine can match.

    Raises:
        InvalidToolSchemaError: naming every problem found.
    """
    from jsonschema import Draft202012Validator

    if not isinstance(schema, dict):
        raise InvalidToolSchemaError(
            tool_name=tool_name, errors=[f"{what} schema is not an object"]
        )
    errors = [
        f"{what} schema {e.json_path}: {e.message}"
        for e in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema)
    ]
    errors.extend(f"{what} schema {p}" for p in _local_refs_only(schema))
    errors.extend(f"{what} schema {p}" for p in _backtracking_patterns(schema))
    if what == "input" and schema.get("type") != "object":
        errors.append("input schema must have type 'object'")
    if errors:
        raise InvalidToolSchemaError(tool_name=tool_name, errors=errors)


def container_problem(raw: object) -> InputProblem | None:
    """Why ``raw`` holds too many arrays and objects for a hand-written schema, or None.

    At most :data:`MAX_CONTAINERS`: JSON text is counted before it is parsed (brackets,
    with the strings cut out only when the plain count is over), a mapping by a walk
    that stops once over, so a refusal costs no parse and no validation. On an event
    loop (:func:`validating_on_loop`) the bound is :data:`LOOP_CONTAINERS`, and input
    over it, or text longer than :data:`LOOP_TEXT`, raises :class:`ValidationDeferred`
    instead: it is counted, parsed and validated in a worker.

    Raises:
        ValidationDeferred: on the loop, over :data:`LOOP_CONTAINERS` or :data:`LOOP_TEXT`.
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
        if _SCALAR_TYPES.issuperset(map(type, children)):
            continue
        nested = [child for child in children if isinstance(child, (dict, list))]
        count += len(nested)
        if count > bound:
            break
        stack.extend(child.values() if isinstance(child, dict) else child for child in nested)
    return count


def _refuse_retrieval(uri: str) -> Any:
    raise LookupError(f"schema references are never retrieved ({len(uri)} characters refused)")


@lru_cache(maxsize=1)
def _empty_registry() -> Any:
    from referencing import Registry

    return Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


def compile_validator(schema: dict[str, Any]) -> Validator:
    """A Draft 2020-12 validator for ``schema`` that never retrieves a reference.

    Its work is bounded by the input's size: ``pattern``, ``patternProperties`` and
    ``additionalProperties`` match with a linear-time regular expression engine (never a
    backtracking one), and ``uniqueItems`` hashes items instead of comparing every pair.
    Its messages quote at most a short prefix of the instance (but for
    ``unevaluatedItems`` and ``unevaluatedProperties``, which name what is left over).
    Run through :func:`schema_errors`, its work is also bounded by a budget of steps.
    """
    validator: Validator = _bounded_class()(schema, registry=_empty_registry())
    return validator


OVER_BUDGET: Final = "toolpalette:steps"
"""The keyword of the error :func:`schema_errors` reports for input over the budget."""


def schema_errors(validator: Validator, instance: Any, limit: int, size: int = 0) -> list[Any]:
    """The first ``limit`` errors of ``instance``, found within a budget of steps.

    A step is one keyword checked at one place of the input, or one item or key that a
    keyword goes through (a descent, a pattern searched, an item hashed). An array of
    plain values whose ``items`` schema names only a type, or allows strings by value
    (see :func:`_simple_items`), costs one step: the items are checked in C. The budget
    is :data:`STEPS_PER_BYTE` per byte of the input's JSON text (``size``), and never
    less than :data:`LOOP_STEPS`. Input that needs more is refused with one error
    (keyword :data:`OVER_BUDGET`) at the place the budget ran out, whatever else was
    found: past that point the validator does no more work, so its other verdicts would
    be wrong.

    The mode this runs in (see :func:`validating_on_loop`, :func:`validating_apart`)
    may end it sooner.

    Raises:
        ValidationDeferred: on an event loop, past :data:`LOOP_STEPS` steps or
            :data:`LOOP_SECONDS`.
        ValidationStopped: apart, past the deadline or once stopped.
    """
    mode = _MODE.get()
    on_loop = mode is _ON_LOOP
    watch: _Watch | None
    if on_loop:
        steps, watch = LOOP_STEPS, _Watch(time.monotonic() + LOOP_SECONDS, None, defer=True)
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

    Raised by :func:`schema_errors` and :func:`container_problem` under
    :func:`validating_on_loop` only; the executor catches it and validates the input
    again in a worker thread. It never reaches a caller of the executor.
    """


class ValidationStopped(Exception):
    """Validation apart passed its deadline, or its caller stopped waiting for it.

    Raised by :func:`schema_errors` under :func:`validating_apart`; its text says which.
    """


@final
class _Watch:
    """A validation's deadline (``time.monotonic``), its stop event, and what ends it.

    Past the deadline, a validation on the loop (``defer``) raises
    :class:`ValidationDeferred`; one in a worker raises :class:`ValidationStopped`.
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
    """From now on (until :func:`end_mode`), validate with the loop's share of work.

    At most :data:`LOOP_STEPS` steps, :data:`LOOP_SECONDS`, :data:`LOOP_CONTAINERS`
    arrays and objects and :data:`LOOP_TEXT` of JSON text; input that needs more raises
    :class:`ValidationDeferred`, for the caller to validate it again under
    :func:`validating_apart`, off the loop.
    """
    return _MODE.set(_ON_LOOP)


def validating_apart(deadline: float, stop: threading.Event) -> contextvars.Token[object]:
    """From now on (until :func:`end_mode`), validate with the whole budget, watched.

    Every :data:`CHECK_EVERY` steps the validator reads the clock and ``stop``: past
    ``deadline`` (``time.monotonic``), or once ``stop`` is set, it raises
    :class:`ValidationStopped`, so a worker thread never outlives its call by long.
    """
    return _MODE.set(_Watch(deadline, stop, defer=False))


def end_mode(token: contextvars.Token[object]) -> None:
    """Back to the mode before :func:`validating_on_loop` or :func:`validating_apart`."""
    _MODE.reset(token)


CHECK_EVERY: Final = 1_000
"""Steps between two looks at the clock and the stop event, validating apart (a few ms)."""


class _Budget:
    """The steps left to one :func:`schema_errors` call, and whether it ran out.

    Watched (in an executor, on the loop or in a worker), the steps are handed out
    :data:`CHECK_EVERY` at a time and the clock and the stop event are read between two
    handouts; otherwise all at once. Either way a step costs one subtraction.
    """

    __slots__ = ("left", "over", "reserve", "steps", "stopped", "watch")

    def __init__(self, steps: int, watch: _Watch | None = None) -> None:
        self.steps = steps
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
            more = min(CHECK_EVERY, self.reserve)
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


def _spend(steps: int) -> list[Any] | None:
    """Charge ``steps``: None to go on, else the errors to yield instead of working.

    The first charge past the budget yields the over-budget error; every later one
    yields nothing. Outside :func:`schema_errors` nothing is counted.

    Raises:
        ValidationDeferred: on the loop, past its time.
        ValidationStopped: in a worker, past the deadline or once stopped.
    """
    budget = _BUDGET.get()
    if budget is None:
        return None
    if budget.over:
        return []
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


def _over() -> bool:
    """Whether the budget of this :func:`schema_errors` call ran out (stop going through)."""
    budget = _BUDGET.get()
    return budget is not None and budget.over


def _counted(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """``keyword``, charged one step a call (and skipped once over budget)."""

    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        stop = _spend(1)
        return keyword(validator, value, instance, schema) if stop is None else stop

    return counted


def _per_item(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """``keyword``, charged one step per item or key of the instance before it runs.

    For the keywords that go through every item (``contains``, ``unevaluatedItems``) or
    key (``propertyNames``, ``unevaluatedProperties``), even under an empty subschema,
    which no keyword of its own would charge.
    """

    def per_item(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if isinstance(instance, (list, dict)):
            stop = _spend(len(instance))
            if stop is not None:
                return stop
        return keyword(validator, value, instance, schema)

    return per_item


@lru_cache(maxsize=1)
def _bounded_class() -> Any:
    from jsonschema import Draft202012Validator, validators

    standard = Draft202012Validator.VALIDATORS
    keywords = {
        **standard,
        "pattern": _pattern_keyword,
        "patternProperties": _pattern_properties_keyword,
        "additionalProperties": _additional_properties_keyword,
        "uniqueItems": _unique_items_keyword,
        "items": _items_keyword,
        "type": _type_keyword,
        "enum": _enum_keyword,
        "const": _const_keyword,
        "anyOf": _any_of_keyword,
        "oneOf": _one_of_keyword,
        "not": _not_keyword,
        "minItems": _size_keyword("array", longest=False),
        "maxItems": _size_keyword("array", longest=True),
        "minLength": _size_keyword("string", longest=False),
        "maxLength": _size_keyword("string", longest=True),
        "minProperties": _size_keyword("object", longest=False),
        "maxProperties": _size_keyword("object", longest=True),
        "contains": _per_item(_contains_keyword),
        **{
            name: _per_item(standard[name])
            for name in ("propertyNames", "unevaluatedItems", "unevaluatedProperties")
        },
    }
    return validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {name: _counted(fn) for name, fn in keywords.items()}
    )


@lru_cache(maxsize=512)
def linear_pattern(pattern: str) -> Any:
    """A matcher of ``pattern`` in a linear-time engine (search semantics), or None.

    None means the pattern needs what such an engine lacks (look-around,
    back-references): a schema that uses one is refused (see :func:`check_schema`).
    """
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        return SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))
    except SchemaError:
        return None


def _search(pattern: str, text: str) -> bool:
    matcher = linear_pattern(pattern)
    return matcher is not None and bool(matcher.isinstance_python(text))


def _pattern_keyword(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError("does not match the pattern")


def _pattern_properties_keyword(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterable[Any]:
    if not validator.is_type(instance, "object"):
        return
    # Each key is searched with each pattern, and a match descends even into an empty
    # subschema (no keyword of its own charges for that).
    stop = _spend(len(patterns) * len(instance))
    if stop is not None:
        yield from stop
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties_keyword(
    validator: Any, extra: Any, instance: Any, schema: Any
) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    stop = _spend(len(patterns) * len(instance))
    if stop is not None:
        yield from stop
        return
    others = [
        key
        for key in instance
        if key not in declared and not any(_search(pattern, key) for pattern in patterns)
    ]
    if validator.is_type(extra, "object"):
        stop = _spend(len(others))  # a descent each, even into an empty subschema
        if stop is not None:
            yield from stop
            return
        for key in others:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and others:
        yield ValidationError("has properties the schema does not allow")


def _unique_items_keyword(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not (unique and validator.is_type(instance, "array")):
        return
    if not _SCALAR_TYPES.issuperset(map(type, instance)):
        # Arrays and objects are hashed through their canonical form, a step each;
        # plain values are hashed in C.
        stop = _spend(len(instance))
        if stop is not None:
            yield from stop
            return
    if not all_unique(instance):
        yield ValidationError("has non-unique elements")


_SCALAR_TYPES: Final[frozenset[type]] = frozenset({str, int, float, bool, type(None)})
_JSON_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),  # an integral float too, but that is checked item by item
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}
_ANNOTATIONS: Final = frozenset(
    {
        "title",
        "description",
        "examples",
        "default",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",  # annotation only: the validator has no format checker
    }
)


def _items_keyword(validator: Any, items: Any, instance: Any, schema: Any) -> Iterable[Any]:
    """``items`` (Draft 2020-12), with the items a type alone decides checked in C.

    An item schema that names only a type (and annotations) accepts an item of one of
    the Python types that JSON type stands for without a descent; so does one of
    strings allowed by value (``enum`` or ``const`` of strings, with or without
    ``type``) and an ``anyOf`` of such schemas (see :func:`_simple_items`). The other
    items (a wrong type, ``1.0`` for ``integer``, the first of each string not allowed)
    descend as usual, a step each.
    """
    from jsonschema import ValidationError

    if not validator.is_type(instance, "array"):
        return
    prefix = len(schema.get("prefixItems", []))
    if len(instance) <= prefix:
        return
    if items is False:
        yield ValidationError(f"expected at most {prefix} items")
        return
    simple = _simple_items(items)
    rest: Sequence[int] = range(prefix, len(instance))
    if simple is not None:
        # Only the odd items descend: found by C-level list and set methods.
        accepted, texts = simple
        if accepted is _ANY_TYPE:
            return
        kinds = list(map(type, itertools.islice(instance, prefix, None)))
        odd_kinds = set(kinds) - accepted
        if not odd_kinds:
            return
        odd: list[int] = []
        for kind in odd_kinds:
            if kind is str and texts:  # a string is accepted by its value
                strings = itertools.compress(
                    itertools.islice(instance, prefix, None),
                    map(operator.is_, kinds, itertools.repeat(str)),
                )
                # The first place of each string not accepted (a string equals no other
                # JSON value, so list.index finds just that string).
                odd.extend(instance.index(text, prefix) - prefix for text in set(strings) - texts)
            else:
                odd.extend(_positions(kinds, kind))
        if not odd:
            return
        stop = _spend(len(odd))
        if stop is not None:
            yield from stop
            return
        rest = sorted(prefix + i for i in odd)
    else:
        stop = _spend(len(rest))
        if stop is not None:
            yield from stop
            return
    for index in rest:
        yield from validator.descend(instance=instance[index], schema=items, path=index)
        if _over():  # every later item would cost a descent and find nothing
            return


def _simple_items(items: Any) -> tuple[frozenset[type], frozenset[str]] | None:
    """What an item schema accepts without a descent, or None to descend always.

    ``(types, texts)``: an item whose Python type is in ``types`` is accepted whatever
    its value, and a string in ``texts`` is accepted too. For an item schema of a type
    alone (:func:`_types_alone`); of ``enum`` or ``const`` of strings, with or without
    a ``type``; or of ``anyOf`` over such schemas (annotations allowed everywhere).
    """
    if not isinstance(items, dict):
        types = _types_alone(items)
        return None if types is None else (types, frozenset())
    keys = items.keys() - _ANNOTATIONS
    if keys <= {"type"}:
        types = _types_alone(items)
        return None if types is None else (types, frozenset())
    if keys == {"anyOf"}:
        branches = items["anyOf"]
        if not isinstance(branches, list) or not branches:
            return None
        accepted: frozenset[type] = frozenset()
        texts: frozenset[str] = frozenset()
        for branch in branches:
            part = _simple_items(branch)
            if part is None:
                return None
            accepted, texts = accepted | part[0], texts | part[1]
        return accepted, texts
    if keys - {"type"} not in ({"enum"}, {"const"}):
        return None
    values = items["enum"] if "enum" in items else [items["const"]]
    if not isinstance(values, list) or not all(type(value) is str for value in values):
        return None
    if "type" in items:
        types = _types_alone({"type": items["type"]})
        if types is None:
            return None
        if str not in types:  # no string is of the type: nothing is accepted
            return frozenset(), frozenset()
    return frozenset(), frozenset(values)


def _positions(kinds: list[type], kind: type) -> Iterable[int]:
    """Where ``kind`` is in ``kinds``, each found by ``list.index``."""
    index = -1
    while True:
        try:
            index = kinds.index(kind, index + 1)
        except ValueError:
            return
        yield index


def _types_alone(items: Any) -> frozenset[type] | None:
    """The Python types an item schema accepts by type alone, or None to descend always.

    ``True`` and an item schema of annotations only accept everything.
    """
    if items is True:
        return _ANY_TYPE
    if not isinstance(items, dict) or not _ANNOTATIONS.issuperset(
        key for key in items if key != "type"
    ):
        return None
    kind = items.get("type")
    if kind is None:
        return _ANY_TYPE
    names = [kind] if isinstance(kind, str) else kind
    if not isinstance(names, list) or not all(name in _JSON_TYPES for name in names):
        return None
    return frozenset(python for name in names for python in _JSON_TYPES[name])


_ANY_TYPE: Final[frozenset[type]] = frozenset({str, int, float, bool, type(None), list, dict})


# -- keywords whose stock messages print the whole instance -----------------------------
# jsonschema writes ``repr(instance)`` into most messages: for a megabyte array that is
# a megabyte of text per error, once per branch of an ``anyOf``. These quote a short
# prefix instead (the messages only ever reach logs, as a refusal's ``__cause__``).

_SHORT: Final = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlist = _SHORT.maxdict = 6
_SHORT.maxlevel = 3


def _short(instance: Any) -> str:
    """The start of ``repr(instance)``, in time bounded whatever its size."""
    return _SHORT.repr(instance)


def _type_keyword(validator: Any, types: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    names = types if isinstance(types, list) else [types]
    if not any(validator.is_type(instance, name) for name in names):
        yield ValidationError(f"{_short(instance)} is not of type {', '.join(map(repr, names))}")


def _enum_keyword(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not any(_json_equal(each, instance) for each in enums):
        yield ValidationError(f"{_short(instance)} is not one of the allowed values")


def _const_keyword(validator: Any, const: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not _json_equal(const, instance):
        yield ValidationError(f"{_short(instance)} is not the expected value")


def _json_equal(one: Any, two: Any) -> bool:
    """Equal as JSON values (``1 == 1.0``, ``1 != true``), in time bounded by the smaller."""
    if one is two:
        return True
    if isinstance(one, list) or isinstance(two, list):
        return (
            isinstance(one, list)
            and isinstance(two, list)
            and len(one) == len(two)
            and all(map(_json_equal, one, two))
        )
    if isinstance(one, dict) or isinstance(two, dict):
        return (
            isinstance(one, dict)
            and isinstance(two, dict)
            and one.keys() == two.keys()
            and all(_json_equal(value, two[key]) for key, value in one.items())
        )
    if isinstance(one, bool) or isinstance(two, bool):
        return type(one) is type(two) and one == two
    if isinstance(one, str) or isinstance(two, str):
        return type(one) is type(two) and one == two
    return bool(one == two)


def _any_of_keyword(validator: Any, options: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    errors: list[Any] = []
    for index, option in enumerate(options):
        found = list(validator.descend(instance, option, schema_path=index))
        if not found:
            return
        errors.extend(found)
    yield ValidationError(
        f"{_short(instance)} is not valid under any of the given schemas", context=errors
    )


def _one_of_keyword(validator: Any, options: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    errors: list[Any] = []
    valid = 0
    for index, option in enumerate(options):
        found = list(validator.descend(instance, option, schema_path=index))
        if found and not valid:
            errors.extend(found)
        valid += not found
        if valid > 1:
            yield ValidationError(
                f"{_short(instance)} is valid under more than one of the given schemas"
            )
            return
    if not valid:
        yield ValidationError(
            f"{_short(instance)} is not valid under any of the given schemas", context=errors
        )


def _not_keyword(validator: Any, refused: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if validator.evolve(schema=refused).is_valid(instance):
        yield ValidationError(f"{_short(instance)} should not be valid under the given schema")


def _contains_keyword(validator: Any, wanted: Any, instance: Any, schema: Any) -> Iterable[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "array"):
        return
    least = schema.get("minContains", 1)
    most = schema.get("maxContains", len(instance))
    checker = validator.evolve(schema=wanted)
    matches = 0
    for item in instance:
        if checker.is_valid(item):
            matches += 1
            if matches > most:
                yield ValidationError(
                    f"has more than {most} matching items",
                    validator="maxContains",
                    validator_value=most,
                )
                return
    if matches < least:
        if matches:
            yield ValidationError(
                f"has fewer than {least} matching items",
                validator="minContains",
                validator_value=least,
            )
        else:
            yield ValidationError(
                f"{_short(instance)} does not contain items matching the given schema"
            )


def _size_keyword(kind: str, longest: bool) -> Callable[..., Iterable[Any]]:
    """``minItems``, ``maxItems``, ``minLength``, ... : a bound on ``len`` of one type."""

    def size(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterable[Any]:
        from jsonschema import ValidationError

        if validator.is_type(instance, kind):
            if longest and len(instance) > bound:
                yield ValidationError(f"{_short(instance)} is longer than {bound}")
            elif not longest and len(instance) < bound:
                yield ValidationError(f"{_short(instance)} is shorter than {bound}")

    return size


_JSON_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_FLOAT: Final = re.compile(r"[0-9][.eE]")


def all_unique(items: list[Any]) -> bool:
    """Whether no two items are equal as JSON values (hashing: linear in the items).

    Lists of strings alone, or of integers alone, are compared as they are (C speed);
    anything else through :func:`json_key`.
    """
    if not items:
        return True
    kind = type(items[0])
    if kind in (str, int) and all(type(item) is kind for item in items):
        return len(set(items)) == len(items)
    # repr() keys, built in C: equal reprs are equal JSON values, so a repeat is a
    # duplicate; and without objects (key order) or floats (1 == 1.0) among the items,
    # different reprs are different values, so no repeat proves uniqueness.
    if len(set(map(repr, items))) < len(items):
        return False
    text = _JSON_STRING.sub("", json.dumps(items))
    if "{" not in text and not _FLOAT.search(text):
        return True
    seen: set[Any] = set()
    for item in items:
        key = json_key(item)
        if key in seen:
            return False
        seen.add(key)
    return True


def json_key(value: Any) -> Any:
    """A hashable key equal for JSON-equal values (``1`` and ``1.0``; not ``1`` and ``true``)."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("a", tuple(json_key(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, json_key(item)) for key, item in value.items()))
    return ("z", None)


def output_schema(annotation: Any) -> dict[str, Any] | None:
    """The output schema of a composite return type, or None when output ships as text.

    Only types whose JSON form is described truthfully get one: pydantic models,
    dataclasses and TypedDicts. See :func:`output_type`, which also checks the rest.
    """
    return output_type(annotation, "<tool>")[1]


def output_type(
    annotation: Any, tool_name: str
) -> tuple[pydantic.TypeAdapter[Any] | None, dict[str, Any] | None]:
    """How a tool's return value becomes JSON: a TypeAdapter of its return annotation.

    Returns the adapter (None when the value ships as it is: no annotation, ``str``,
    rich content, or a type pydantic cannot describe on this Python) and the output
    schema (for pydantic models, dataclasses and TypedDicts, whose JSON form is an
    object; None otherwise). Built once per tool, so a return annotation pydantic
    cannot serialize is refused when the tool is defined, not at its first call.

    Raises:
        ToolDefinitionError: pydantic cannot serialize the annotation to JSON.
    """
    if annotation is None or annotation is inspect.Signature.empty or annotation is str:
        return None, None
    if mentions_content(annotation):
        return None, None
    # On Python 3.10 a generic alias (list[X]) is an instance of type: name it in full.
    plain = isinstance(annotation, type) and not isinstance(annotation, GenericAlias)
    label = annotation.__name__ if plain else repr(annotation)
    try:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(annotation)
        schema = adapter.json_schema(mode="serialization")
    except pydantic.PydanticUserError as exc:
        if exc.code == "typed-dict-version":
            # typing.TypedDict before Python 3.12: not describable, so shipped as it is.
            return None, None
        # pydantic's first sentence says what failed; its advice (arbitrary types,
        # custom core schemas) is for model authors, not for a tool's return value.
        detail = str(exc).splitlines()[0].split(". ", 1)[0].rstrip(".")
        raise ToolDefinitionError(
            tool_name=tool_name,
            reason=f"its return annotation {label} cannot be serialized to JSON "
            f"({detail}); return a pydantic model, a dataclass, a TypedDict, JSON "
            "types, or rich content (Image, Audio, File)",
        ) from exc
    composite = (
        (isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel))
        or (isinstance(annotation, type) and dataclasses.is_dataclass(annotation))
        or is_typeddict(annotation)
    )
    return adapter, (schema if composite and schema.get("type") == "object" else None)


def format_path(parts: Sequence[object]) -> str:
    """``("items", 2, "name")`` as ``items[2].name``; the empty path as ``(input)``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(input)"


def safe_parts(schema: dict[str, Any], parts: Sequence[object]) -> list[object]:
    """``parts`` with every key the schema does not declare replaced by ``*``.

    Keys of free-form objects come from the model; a path must not echo them.
    """
    out: list[object] = []
    node: Any = schema
    for part in parts:
        node = _resolve(schema, node)
        if isinstance(part, int):
            out.append(part)
            node = node.get("items") if isinstance(node, dict) else None
            continue
        props = (node.get("properties") or {}) if isinstance(node, dict) else {}
        if part in props:
            out.append(part)
            node = props[part]
        else:
            out.append("*")
            extra = node.get("additionalProperties") if isinstance(node, dict) else None
            node = extra if isinstance(extra, dict) else None
    return out


def _subschema(schema: dict[str, Any], parts: Sequence[object]) -> dict[str, Any] | None:
    node: Any = schema
    for part in parts:
        node = _resolve(schema, node)
        if not isinstance(node, dict):
            return None
        if isinstance(part, int):
            node = node.get("items") if isinstance(node.get("items"), dict) else None
        else:
            props = node.get("properties") or {}
            extra = node.get("additionalProperties")
            # "*" stands for a key the schema does not declare (see safe_parts).
            node = props.get(part) if part in props or part != "*" else extra
        if not isinstance(node, dict):
            return None
    resolved = _resolve(schema, node)
    return resolved if isinstance(resolved, dict) else None


def resolve(root: dict[str, Any], node: Any) -> Any:
    """``node`` with its local ``$ref`` chain followed (at most 16 steps)."""
    return _resolve(root, node)


def _resolve(root: dict[str, Any], node: Any) -> Any:
    for _ in range(16):
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not (isinstance(ref, str) and ref.startswith("#/")):
            return node
        target: Any = root
        for key in ref[2:].split("/"):
            target = target.get(key) if isinstance(target, dict) else None
        node = target
    return node


def declared_type(schema: dict[str, Any], parts: Sequence[object]) -> str:
    """What the schema declares at ``parts``, for messages: its type, const or enum."""
    node = _subschema(schema, parts)
    if node is None:
        return "a value matching the schema"
    if "type" in node:
        kind = node["type"]
        return " or ".join(kind) if isinstance(kind, list) else str(kind)
    if "enum" in node:
        return "one of the allowed values"
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list) and options and all("const" in o for o in options):
            return "one of the allowed values"
        if isinstance(options, list):
            kinds = sorted({_option_kind(_resolve(schema, o)) for o in options})
            return " or ".join(kinds)
    return "a value matching the schema"


def _option_kind(option: Any) -> str:
    if not isinstance(option, dict):
        return "a value matching the schema"
    if "type" in option:
        kind = option["type"]
        return " or ".join(map(str, kind)) if isinstance(kind, list) else str(kind)
    if "const" in option or "enum" in option:
        return "one of the allowed values"
    return "object"


_CONSTRAINTS = {
    "minimum": "number >= {v}",
    "exclusiveMinimum": "number > {v}",
    "maximum": "number <= {v}",
    "exclusiveMaximum": "number < {v}",
    "minLength": "text of at least {v} characters",
    "maxLength": "text of at most {v} characters",
    "minItems": "at least {v} items",
    "maxItems": "at most {v} items",
    "multipleOf": "a multiple of {v}",
    "pattern": "text matching the pattern {v}",
}


def problems_from_jsonschema(errors: Iterable[Any], schema: dict[str, Any]) -> list[InputProblem]:
    """Turn jsonschema errors into problems that name paths and declared types only."""
    problems: list[InputProblem] = []
    for error in errors:
        parts = safe_parts(schema, list(error.absolute_path))
        keyword = error.validator
        if keyword == "required":
            present = error.instance if isinstance(error.instance, dict) else {}
            for name in error.validator_value:
                if isinstance(name, str) and name not in present:
                    expected = f"required field of type {declared_type(schema, [*parts, name])}"
                    problem = InputProblem(format_path([*parts, name]), expected)
                    # jsonschema reports each missing name separately: report it once.
                    if problem not in problems:
                        problems.append(problem)
            continue
        if keyword in ("additionalProperties", "unevaluatedProperties"):
            allowed = sorted((error.schema.get("properties") or {}).keys())
            expected = "no other fields" + (f" (allowed: {', '.join(allowed)})" if allowed else "")
        elif keyword in _CONSTRAINTS:
            expected = _CONSTRAINTS[keyword].format(v=error.validator_value)
        elif keyword in ("enum", "const"):
            expected = "one of the allowed values"
        elif keyword == "uniqueItems":
            expected = "items without duplicates"
        elif keyword == OVER_BUDGET:
            expected = (
                f"input the schema can check in {error.validator_value} steps "
                f"(the bound on a hand-written schema's work, {STEPS_PER_BYTE} per byte of "
                f"input and at least {LOOP_STEPS}; send fewer items)"
            )
        elif keyword == "items" and error.validator_value is False:
            expected = "no more items than the schema lists"
        else:
            expected = declared_type(schema, parts)
        problems.append(InputProblem(format_path(parts), expected))
    return problems or [InputProblem("(input)", "a value matching the schema")]
