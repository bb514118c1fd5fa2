"""``@resource``: a pack's static, binary or templated resource, read on demand."""

from __future__ import annotations

import base64
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar, overload
from urllib.parse import unquote

from toolpalette._tools.prompt import Completer, complete_values
from toolpalette.errors import ToolDefinitionError

__all__ = ["PackResource", "get_resource_spec", "resource"]

T = TypeVar("T")
_SPEC_ATTR: Final = "__toolpalette_resource__"
_PARAM: Final = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SCHEME: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
MAX_URI: Final = 2048
"""The longest URI (or template) a resource may have, and a read may ask for."""


@dataclass(frozen=True)
class PackResource:
    """A resource a pack ships: a URI (or a URI template) and the function that reads it.

    With no ``{param}`` in ``uri`` it is one resource (``resources/list``); with some it
    is a template (``resources/templates/list``) whose parameters are the function's.
    """

    uri: str
    function: Callable[..., Any] = field(repr=False)
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    completions: Mapping[str, Completer] = field(default_factory=dict, repr=False)
    read_only: bool = True
    """Whether reading it changes nothing (a read-only thinker lists only these)."""
    pack: str | None = None
    """The pack that shipped it (set when collected)."""
    distribution: str | None = None
    """The distribution of that pack, if installed."""
    params: tuple[str, ...] = ()
    """The template's parameters, in the order they appear (none: a static resource)."""
    _pattern: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    @property
    def templated(self) -> bool:
        """Whether ``uri`` is a template."""
        return bool(self.params)

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's parameters in ``uri`` (empty for the static URI), or None."""
        if len(uri) > MAX_URI:
            return None
        if not self.templated:
            return {} if uri == self.uri else None
        assert self._pattern is not None
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        return {k: unquote(v) for k, v in found.groupdict().items()}

    def read(self, uri: str) -> list[dict[str, Any]]:
        """The contents at ``uri`` (MCP's wire form: ``text`` or base64 ``blob``).

        Raises:
            LookupError: ``uri`` is not this resource's.
            ValueError: the function returned neither text, bytes nor JSON data.
        """
        values = self.match(uri)
        if values is None:
            raise LookupError("not this resource's URI")
        data = self.function(**values)
        entry: dict[str, Any] = {"uri": uri}
        if isinstance(data, bytes | bytearray | memoryview):
            entry["mimeType"] = self.mime_type or "application/octet-stream"
            entry["blob"] = base64.b64encode(bytes(data)).decode("ascii")
        elif isinstance(data, str):
            entry["mimeType"] = self.mime_type or "text/plain"
            entry["text"] = data
        elif isinstance(data, dict | list):
            entry["mimeType"] = self.mime_type or "application/json"
            entry["text"] = json.dumps(data, ensure_ascii=False)
        else:
            raise ValueError("a resource function returns text, bytes, or JSON data")
        return [entry]

    def complete(self, argument: str, prefix: str) -> list[str]:
        """Completions of template parameter ``argument`` for ``prefix``."""
        return complete_values(self.completions.get(argument), prefix)


@overload
def resource(uri: str, /) -> Callable[[T], T]: ...
@overload
def resource(
    uri: str,
    /,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    completions: Mapping[str, Completer] | None = None,
    read_only: bool = True,
) -> Callable[[T], T]: ...
def resource(uri: str, /, **options: Any) -> Any:
    """Declare a function as a resource a pack ships (``toolpalette_register_resources``).

    ``uri`` is the resource's URI (``docs://guide``), or a template whose
    ``{param}`` parts are the function's parameters (``users://{id}/profile``). The
    function returns text, bytes (a binary resource) or JSON data; ``mime_type``
    defaults to ``text/plain``, ``application/octet-stream`` or ``application/json``.
    ``completions`` maps a template parameter to its values or a function of the
    prefix. The function is returned unchanged.

    Raises:
        ToolDefinitionError: a malformed URI, or parameters that do not match the
            template's.
    """

    def decorate(target: Any) -> Any:
        setattr(target, _SPEC_ATTR, build_resource(target, uri, **options))
        return target

    return decorate


def build_resource(
    function: Callable[..., Any],
    uri: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    completions: Mapping[str, Completer] | None = None,
    read_only: bool = True,
) -> PackResource:
    """The `PackResource` of ``function`` at ``uri`` (see `resource()`)."""
    label: str = name or str(getattr(function, "__name__", "<resource>"))
    if not isinstance(uri, str) or not _SCHEME.match(uri) or len(uri) > MAX_URI:
        raise ToolDefinitionError(
            tool_name=label, reason="a resource's URI is scheme://... (at most 2048 characters)"
        )
    if not callable(function) or isinstance(function, type):
        raise ToolDefinitionError(tool_name=label, reason="@resource decorates a function")
    params = tuple(_PARAM.findall(uri))
    if len(set(params)) != len(params):
        raise ToolDefinitionError(tool_name=label, reason="a template parameter is repeated")
    taken = list(inspect.signature(function).parameters)
    if sorted(taken) != sorted(params):
        raise ToolDefinitionError(
            tool_name=label,
            reason="the function's parameters must be the template's: "
            + (", ".join(params) or "none"),
        )
    completions = dict(completions or {})
    if set(completions) - set(params):
        raise ToolDefinitionError(
            tool_name=label, reason="completions name a parameter the template lacks"
        )
    pattern = None
    if params:
        pieces = _PARAM.split(uri)
        regex = "".join(
            re.escape(piece) if i % 2 == 0 else f"(?P<{piece}>[^/]+)"
            for i, piece in enumerate(pieces)
        )
        pattern = re.compile(regex)
    doc = (inspect.getdoc(function) or "").strip()
    return PackResource(
        uri,
        function,
        name=label,
        title=title,
        description=description or doc.split("\n\n")[0] or None,
        mime_type=mime_type,
        completions=completions,
        read_only=bool(read_only),
        params=params,
        _pattern=pattern,
    )


def get_resource_spec(obj: object) -> PackResource | None:
    """The resource ``@resource`` made of ``obj``, or None."""
    if isinstance(obj, PackResource):
        return obj
    found = getattr(obj, _SPEC_ATTR, None)
    return found if isinstance(found, PackResource) else None
