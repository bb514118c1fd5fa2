"""Tool providers: everything needed to present one tool to a model and to run it."""

from __future__ import annotations

import abc
import contextlib
import copy
import functools
import inspect
import re
import warnings
import weakref
from collections.abc import Callable, Hashable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, get_type_hints

import pydantic
from typing_extensions import Self

from toolpalette._schema import bounded as _bounded
from toolpalette._schema import budget as _budget
from toolpalette._schema import checks as _schema
from toolpalette._schema import paths as _paths
from toolpalette._schema import quick_check as _quick_check
from toolpalette._schema import strict_json as _json
from toolpalette._schema.validation import MAX_PROBLEMS, ModelInput
from toolpalette._tools import signature as _signature
from toolpalette._tools.info import INFO_FIELDS, Origin, TaskSupport, ToolInfo, default_display_name
from toolpalette._tools.tool import TOOL_NAME, BoundTool, Tool, ToolContext, ToolSpec, get_spec
from toolpalette.errors import InvalidInputError, InvalidToolSchemaError, ToolDefinitionError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "BoundTool",
    "ClassToolProvider",
    "FunctionToolProvider",
    "Origin",
    "ToolProvider",
    "as_provider",
]

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})

_UNCOMPILED: Final = object()
"""A provider's quick input check before its first call compiles it."""
_BUILT: weakref.WeakKeyDictionary[Any, _SpecProvider] = weakref.WeakKeyDictionary()
"""Providers already built for @tool functions and classes (see ``as_provider``)."""


class ToolProvider(abc.ABC):
    """Everything needed to present and invoke one tool.

    A subclass provides [`info`][toolpalette.ToolProvider.info] (a
    [`ToolInfo`][toolpalette.ToolInfo], the tool's one record) and `create`; every
    descriptive property below reads the record. ``parse_input`` validates model input
    against the published input schema (jsonschema, no reference retrieval); providers
    backed by a pydantic model override it with a faster path that accepts exactly the
    same input.

    A subclass written against the earlier contract, overriding the descriptive
    properties (``name``, ``description``, ``input_schema``, ...) instead of ``info``,
    keeps working: its record is read from those properties once, and defining the class
    warns (`DeprecationWarning`). The record must not change over the provider's life:
    a tool whose description or schema changes is a new provider, registered in the old
    one's place.
    """

    origin: Origin | None = None
    """Where the provider comes from, when known (set by the hub)."""
    _overridden: tuple[str, ...] = ()
    """The record's fields the class overrides as properties (read once, per class)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._overridden = legacy = _legacy_fields(cls)
        if legacy and not _defines_info(cls):
            warnings.warn(
                f"{cls.__module__}.{cls.__qualname__} describes its tool by overriding "
                f"{', '.join(legacy)}; define `info` (a toolpalette.ToolInfo) instead. The "
                "properties are read into the record for now; this path goes in toolpalette 1.0",
                DeprecationWarning,
                stacklevel=3,
            )
            cls.info = property(_info_from_properties, doc=ToolProvider.info.__doc__)  # type: ignore[method-assign,assignment]

    @property
    @abc.abstractmethod
    def info(self) -> ToolInfo:
        """Everything that describes the tool, built once and kept.

        A copy made by [`with_origin()`][toolpalette.ToolProvider.with_origin] shares it.
        """

    @property
    def name(self) -> str:
        """The tool's name as the model sees it."""
        return self.info.name

    @property
    def description(self) -> str:
        """What the model reads about the tool."""
        return self.info.description

    @property
    def input_schema(self) -> dict[str, Any]:
        """The published input JSON Schema (refinements included)."""
        return self.info.input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The output JSON Schema, or None when output ships as text."""
        return self.info.output_schema

    @property
    def read_only(self) -> bool:
        """Whether the tool leaves the world unchanged; mutating unless declared."""
        return self.info.read_only

    @property
    def destructive(self) -> bool:
        """Whether a mutating call may destroy or overwrite; meaningless when read-only."""
        return self.info.destructive

    @property
    def idempotent(self) -> bool:
        """Whether repeating a mutating call with the same input changes nothing more."""
        return self.info.idempotent

    @property
    def open_world(self) -> bool:
        """Whether the tool reaches beyond a closed domain (the web, other services)."""
        return self.info.open_world

    @property
    def display_name(self) -> str:
        """A human-friendly name."""
        return self.info.display_name

    @property
    def action_verb(self) -> str:
        """What a UI says while the tool runs."""
        return self.info.action_verb

    @property
    def weight(self) -> float:
        """Relative cost or priority."""
        return self.info.weight

    @property
    def metadata(self) -> Mapping[str, Any]:
        """An open mapping the core never reads."""
        return self.info.metadata

    @property
    def concurrency_safe(self) -> bool:
        """Whether calls may overlap, when the input does not decide it."""
        return self.info.concurrency_safe

    @property
    def timeout(self) -> float | None:
        """Seconds a call may run; None takes the executor's default."""
        return self.info.timeout

    @property
    def output_cap(self) -> int | None:
        """Largest output in bytes of JSON text; None takes the executor's default."""
        return self.info.output_cap

    @property
    def guidance(self) -> str | None:
        """A short text for the conversation's preamble while the tool is offered, or None."""
        return self.info.guidance

    @property
    def task_support(self) -> TaskSupport:
        """Whether the MCP server may run the tool as a task; ``forbidden`` unless declared."""
        return self.info.task_support

    def is_concurrency_safe(self, value: Any) -> bool:
        """Whether a call with this (validated) input may overlap others."""
        return self.concurrency_safe

    def resource_key(self, value: Any) -> Hashable | None:
        """Calls whose inputs give the same key run one at a time; None: no key."""
        return None

    def grade_for(self, parent: Any) -> str | None:
        """The model grade the tool runs for; None when it does not depend on one."""
        return None

    def parse_input(self, raw: str | bytes | Mapping[str, Any]) -> Any:
        """Validate model input against the published schema.

        Raises:
            InvalidInputError: naming field paths and declared types, never values.
        """
        problem = _budget.container_problem(raw)
        if problem is not None:
            raise InvalidInputError(tool_name=self.name, problems=[problem])
        try:
            data, size = _json.load_sized(raw)
        except _json.InputPolicyError as exc:
            raise InvalidInputError(tool_name=self.name, problems=[exc.problem]) from None
        return self._check_schema(data, size)

    def _check_schema(self, data: dict[str, Any], size: int) -> dict[str, Any]:
        """``data`` (already past the JSON policy, ``size`` bytes) if the schema accepts it.

        Raises:
            InvalidInputError: naming field paths and declared types, never values.
        """
        quick = self._quick_check()
        if quick is not None and quick(data):
            return data  # it says yes only where the validator would
        # The first problems are enough to answer; the rest is never computed.
        errors = _budget.schema_errors(self._validator(), data, MAX_PROBLEMS, size)
        if errors:
            problems = _paths.problems_from_jsonschema(errors, self.input_schema)
            raise InvalidInputError(tool_name=self.name, problems=problems) from _cause(errors)
        return data

    def dump_output(self, value: Any) -> Any:
        """The JSON-able form of a result (the identity unless a type says otherwise)."""
        return value

    @abc.abstractmethod
    def create(self, parent: Any = None) -> BoundTool:
        """Build the runnable tool for ``parent`` (usually the bound thinker)."""

    def with_origin(self, origin: Origin) -> Self:
        """A shallow copy of this provider that knows where it comes from.

        Providers of ``@tool`` objects are shared (see
        [`as_provider()`][toolpalette.testing.as_provider]); the hub stamps each pack's
        copy, so provenance never leaks from one pack to another.
        """
        clone = copy.copy(self)
        clone.origin = origin
        return clone

    def describe(self) -> str:
        """Who provides this tool, for collision reports: class, module, distribution."""
        where = self.origin.describe() if self.origin else self._defined_in()
        return f"{type(self).__name__} {self.name!r} from {where}"

    def _defined_in(self) -> str:
        """Where the tool is defined, when no origin is known."""
        return type(self).__module__

    def _validator(self) -> Validator:
        cached: Validator | None = self.__dict__.get("_cached_validator")
        if cached is None:
            cached = _bounded.compile_validator(self.input_schema)
            self.__dict__["_cached_validator"] = cached
        return cached

    def _quick_check(self) -> Callable[[Any], bool] | None:
        """The input schema's compiled quick check (`quick_check`), or None: it has none.

        A common schema's valid input is accepted without the validator's walk; what
        the check cannot vouch for, refusals included, is the validator's to answer.
        """
        found = self.__dict__.get("_cached_quick", _UNCOMPILED)
        if found is _UNCOMPILED:
            found = self.__dict__["_cached_quick"] = _quick_check.compile_check(self.input_schema)
        return found  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def _cause(errors: list[Any]) -> Exception:
    # The validator's own words quote the value: they survive only as __cause__, for logs.
    return ValueError("; ".join(str(e.message) for e in errors))


def _legacy_fields(cls: type) -> tuple[str, ...]:
    """The record's fields that ``cls`` (or a base below `ToolProvider`) overrides."""
    own = [k for k in cls.__mro__ if k is not ToolProvider and issubclass(k, ToolProvider)]
    return tuple(f for f in INFO_FIELDS if any(f in vars(k) for k in own))


def _defines_info(cls: type) -> bool:
    return any("info" in vars(k) for k in cls.__mro__ if k is not ToolProvider)


def _info_from_properties(self: ToolProvider) -> ToolInfo:
    """The record of a provider that overrides properties: read once, defaults elsewhere.

    A property that reads ``super()`` (the base reads the record) gets the defaults:
    a provisional record stands while the overridden properties are read.
    """
    info: ToolInfo | None = self.__dict__.get("_info")
    if info is not None:
        return info
    fields = type(self)._overridden
    missing = [f for f in ("name", "description", "input_schema") if f not in fields]
    if missing:
        raise ToolDefinitionError(
            tool_name=type(self).__qualname__,
            reason=f"a ToolProvider defines `info`, or else {', '.join(missing)}",
        )
    given: dict[str, Any] = {}
    try:
        for field in fields:
            given[field] = getattr(self, field)
            if field == "input_schema":  # the last required field, in the record's order
                self.__dict__["_info"] = ToolInfo(**given)
        # The base's default for concurrency_safe was read_only.
        given.setdefault("concurrency_safe", given.get("read_only", False))
        info = ToolInfo(**given)
    finally:
        self.__dict__.pop("_info", None)
    self.__dict__["_info"] = info
    return info


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class _SpecProvider(ToolProvider):
    """A provider built from a ``ToolSpec`` and a pydantic input model."""

    def __init__(
        self,
        spec: ToolSpec,
        *,
        default_name: str,
        doc: str | None,
    ) -> None:
        self._spec = spec
        self._name = spec.name or default_name
        if not TOOL_NAME.match(self._name):
            raise ToolDefinitionError(
                tool_name=self._name,
                reason="names are 1-64 characters of letters, digits, '_' and '-'; "
                "pass name=... to @tool",
            )
        self._doc = doc
        self._description = (spec.description or _signature.summary_of(doc)).strip()
        if not self._description:
            raise ToolDefinitionError(
                tool_name=self._name, reason="it needs a description: a docstring or description="
            )
        self._refined = spec.refine_schema is not None

    # The input model, the schemas and the output adapter are built on first use: listing
    # a tool needs only its name, description and flags. ``build()`` forces them, so a
    # definition error surfaces where the core asks for it (the catalog, a selection,
    # ``toolpalette check``), before any call.

    def _make_model(self) -> type[pydantic.BaseModel]:
        raise NotImplementedError

    def _returns(self) -> Any:
        raise NotImplementedError

    @functools.cached_property
    def _model(self) -> type[pydantic.BaseModel]:
        return self._make_model()

    @functools.cached_property
    def _param_docs(self) -> dict[str, str]:
        return _signature.split_docstring(self._doc)[1]  # for the model: a listing needs none

    @functools.cached_property
    def _schema(self) -> dict[str, Any]:
        return self._build_schema()

    @functools.cached_property
    def _output(self) -> tuple[Any, dict[str, Any] | None]:
        return _signature.output_type(self._returns(), self._name)

    def with_origin(self, origin: Origin) -> Self:
        """A shallow copy of this provider that knows where it comes from.

        As `ToolProvider.with_origin()`, copying the attributes directly:
        ``copy.copy`` costs several times as much, paid for every tool a listing collects.
        """
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.origin = origin
        return clone

    def build(self) -> Self:
        """Build the input model, both schemas and the output adapter now; returns self.

        Raises:
            ToolDefinitionError: the input cannot become a model.
            InvalidToolSchemaError: a schema is not usable.
        """
        _ = (self._schema, self._output)
        return self

    def _build_schema(self) -> dict[str, Any]:
        try:
            schema = self._model.model_json_schema()
        except pydantic.PydanticUserError as exc:  # e.g. a Callable field
            first_line = str(exc).splitlines()[0]
            raise InvalidToolSchemaError(
                tool_name=self._name, errors=[f"its input model has no JSON schema: {first_line}"]
            ) from exc
        schema.pop("title", None)
        if self._spec.refine_schema is not None:
            # A refiner's output is checked against the metaschema; what pydantic
            # generates from annotations is valid by construction, and checking it would
            # cost more than building it.
            schema = _schema.refine(schema, self._spec.refine_schema, self._name)
            _schema.check_schema(schema, self._name)
        elif schema.get("type") != "object":
            raise InvalidToolSchemaError(
                tool_name=self._name, errors=["input schema must have type 'object'"]
            )
        return schema

    @property
    def info(self) -> ToolInfo:
        """The record: the spec's declarations, the name and description, both schemas."""
        info: ToolInfo | None = self.__dict__.get("_info")
        if info is None:
            info = self.__dict__["_info"] = self._spec.record(
                self._name, self._description, self._schema, self._output[1]
            )
        return info

    # What a listing and a rename read is known before the schemas are built: answered
    # without them.

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def read_only(self) -> bool:
        return self._spec.read_only

    @property
    def display_name(self) -> str:
        return self._spec.display_name or default_display_name(self._name)

    def is_concurrency_safe(self, value: Any) -> bool:
        return self._spec.is_concurrency_safe(value)

    def resource_key(self, value: Any) -> Hashable | None:
        return self._spec.key_for(value)

    def grade_for(self, parent: Any) -> str | None:
        return self._spec.grade_for(parent)

    def parse_input(self, raw: str | bytes | Mapping[str, Any]) -> Any:
        # pydantic alone decides, with bounded work (see toolpalette._schema.validation);
        # a refinement is then checked by the bounded JSON Schema validator.
        checker: ModelInput | None = self.__dict__.get("_model_input")
        if checker is None:
            checker = self.__dict__["_model_input"] = ModelInput(self._model, self._schema)
        # A fresh model's value holds none of the input's containers: no copy is needed
        # to keep the caller's objects out of the tool's reach.
        shared = checker.fresh and not self._refined
        try:
            data, size = _json.load_sized(raw, copy=not shared)
        except _json.InputPolicyError as exc:
            raise InvalidInputError(tool_name=self._name, problems=[exc.problem]) from None
        value, problems, cause = checker.validate(data, size, shared=shared)
        if problems:
            raise InvalidInputError(tool_name=self._name, problems=problems) from cause
        if self._refined:
            self._check_schema(data, size)
        return value

    @functools.cached_property
    def _dump(self) -> tuple[Callable[..., Any] | None, type | None]:
        """The output serializer (None: values ship as they are), and a type it keeps.

        The type is the return annotation when it is ``int`` or ``bool``: a value of
        exactly that type dumps to itself, so it skips the serializer.
        """
        adapter = self._output[0]
        if adapter is None:
            return None, None
        returns = self._returns()
        # The adapter's own serializer: ``dump_python`` only forwards to it.
        return adapter.serializer.to_python, returns if returns is int or returns is bool else None

    def dump_output(self, value: Any) -> Any:
        serialize, unchanged = self._dump
        if serialize is None or type(value) is unchanged:
            return value
        # A value off its annotation is still dumped by its own type (no warning); what
        # is not JSON then fails as it would without an annotation.
        return serialize(value, mode="json", warnings=False)


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn)


class FunctionToolProvider(_SpecProvider):
    """The provider of an ``@tool`` function; equal to another for the same function."""

    def __init__(
        self, fn: Callable[..., Any], spec: ToolSpec | None = None, *, build: bool = True
    ) -> None:
        spec = spec or get_spec(fn) or ToolSpec()
        self.function = fn
        """The wrapped function."""
        name = spec.name or str(getattr(fn, "__name__", "tool"))
        super().__init__(spec, default_name=name, doc=fn.__doc__)
        if build:  # else on first use (see _SpecProvider.build)
            self.build()

    @functools.cached_property
    def _built(self) -> tuple[type[pydantic.BaseModel], str | None]:
        return _signature.function_input_model(self.function, self._name, self._param_docs)

    def _make_model(self) -> type[pydantic.BaseModel]:
        return self._built[0]

    def _returns(self) -> Any:
        return _return_annotation(self.function)

    def create(self, parent: Any = None) -> BoundTool:
        fn, ctx_param = self.function, self._built[1]
        if ctx_param is None:

            def call(value: pydantic.BaseModel, context: ToolContext) -> Any:
                # The input model forbids extra fields: its __dict__ holds exactly the
                # fields, and ``**`` unpacks them into a dict of the call's own.
                return fn(**value.__dict__)

        else:

            def call(value: pydantic.BaseModel, context: ToolContext) -> Any:
                return fn(**value.__dict__, **{ctx_param: context})

        return BoundTool(call, is_async=_is_async(fn), takes_context=ctx_param is not None)

    def _defined_in(self) -> str:
        fn = self.function
        return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', self.name)}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FunctionToolProvider):
            return NotImplemented
        return self.function is other.function and self.name == other.name

    def __hash__(self) -> int:
        return hash((FunctionToolProvider, id(self.function), self.name))


class ClassToolProvider(_SpecProvider):
    """The provider of an ``@tool`` ``Tool`` subclass; equal to another for the same class."""

    def __init__(
        self, cls: type[Tool], spec: ToolSpec | None = None, *, build: bool = True
    ) -> None:
        spec = spec or get_spec(cls) or ToolSpec()
        self.tool_class = cls
        """The wrapped class."""
        name = spec.name or _snake(cls.__name__)
        run = getattr(cls, "run", None)
        if run is None or run is Tool.run:
            raise ToolDefinitionError(tool_name=name, reason="a Tool subclass must define run()")
        params = list(inspect.signature(run).parameters)
        self._takes_context = len(params) >= 3
        self._run = run
        super().__init__(spec, default_name=name, doc=cls.__doc__)
        if build:  # else on first use (see _SpecProvider.build)
            self.build()

    def _make_model(self) -> type[pydantic.BaseModel]:
        return _input_model(self._run, self._name)

    def _returns(self) -> Any:
        return _return_annotation(self._run)

    def create(self, parent: Any = None) -> BoundTool:
        instance = self.tool_class(parent)
        run = instance.run
        if self._takes_context:
            return BoundTool(run, is_async=_is_async(run), takes_context=True)
        return BoundTool(
            lambda value, _ctx: run(value), is_async=_is_async(run), takes_context=False
        )

    def _defined_in(self) -> str:
        return f"{self.tool_class.__module__}.{self.tool_class.__qualname__}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassToolProvider):
            return NotImplemented
        return self.tool_class is other.tool_class and self.name == other.name

    def __hash__(self) -> int:
        return hash((ClassToolProvider, id(self.tool_class), self.name))


def _return_annotation(fn: Callable[..., Any]) -> Any:
    try:
        return get_type_hints(fn).get("return")
    except Exception:
        return None


def _input_model(run: Callable[..., Any], name: str) -> type[pydantic.BaseModel]:
    params = list(inspect.signature(run).parameters)
    try:
        hints = get_type_hints(run)
    except Exception as exc:
        raise ToolDefinitionError(
            tool_name=name, reason=f"run()'s annotations cannot be resolved ({exc})"
        ) from exc
    annotation = hints.get(params[1]) if len(params) >= 2 else None
    if not (isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel)):
        raise ToolDefinitionError(
            tool_name=name,
            reason="run(self, input) must annotate input with a pydantic BaseModel subclass",
        )
    return annotation


def as_provider(obj: object, *, build: bool = True) -> ToolProvider:
    """Turn what a pack returns (an ``@tool`` function or class, or a provider) into a provider.

    The provider of a function or class is made once and reused while the object lives
    and its ``@tool`` spec is unchanged. With ``build`` (the default) its input model and
    schemas are built now, so a definition error raises here; without, they are built
    on first use (the pack catalog lists tools without them).

    Raises:
        ToolDefinitionError: ``obj`` is none of those, or (with ``build``) its input
            cannot become a model.
        InvalidToolSchemaError: (with ``build``) a schema is not usable.
    """
    provider = _provider_of(obj, build)
    if build and isinstance(provider, _SpecProvider):
        provider.build()  # one made lazily before is built now
    return provider


def _provider_of(obj: object, build: bool) -> ToolProvider:
    if isinstance(obj, ToolProvider):
        return obj
    spec = get_spec(obj)
    cached = _BUILT.get(obj) if spec is not None else None
    if cached is not None and cached._spec is spec:
        return cached
    if isinstance(obj, type) and issubclass(obj, Tool):
        if spec is None:
            raise ToolDefinitionError(
                tool_name=obj.__qualname__, reason="a Tool subclass needs the @tool decorator"
            )
        provider: _SpecProvider = ClassToolProvider(obj, spec, build=build)
        _remember(obj, provider)
        return provider
    if spec is not None and callable(obj):
        provider = FunctionToolProvider(obj, spec, build=build)
        _remember(obj, provider)
        return provider
    label = getattr(obj, "__qualname__", type(obj).__name__)
    raise ToolDefinitionError(
        tool_name=str(label),
        reason="expected an @tool function, an @tool Tool subclass, or a ToolProvider",
    )


def _remember(obj: object, provider: _SpecProvider) -> None:
    # An object that cannot be weakly referenced is simply built again next time.
    with contextlib.suppress(TypeError):
        _BUILT[obj] = provider
