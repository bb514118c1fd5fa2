"""The one result shape every tool call returns, and the rich content a tool may return.

`block_text()` is the one way a content block becomes text, for every format.
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any, Final, final, get_args

__all__ = [
    "CONTENT_TYPES",
    "RESULT_KEYS",
    "FASTMCP_WRAPPED",
    "WRAPPED",
    "Audio",
    "File",
    "Image",
    "ResourceLink",
    "RichContent",
    "ToolResult",
    "block_text",
    "file_name",
    "is_wrapped",
    "mentions_content",
    "rich_content",
]

RESULT_KEYS: Final = ("is_error", "status", "code", "text", "content", "structured")
"""The keys of `ToolResult.as_dict()`, in order: a public contract."""

WRAPPED: Final = "x-toolpalette-wrapped"
"""The top-level key (``true``) of an output schema whose results are ``{"result": VALUE}``.

Set on the output schema of every return type whose JSON is not an object (MCP wants
an object as structured content): the structured result is the value wrapped in an
object, and a client that knows the key (toolpalette's own MCP client) unwraps it.
The text a model reads is the bare value.
"""


FASTMCP_WRAPPED: Final = "x-fastmcp-wrap-result"
"""FastMCP's key for the same wrapping: written beside `WRAPPED`, and read, so
that a scalar crosses between toolpalette and FastMCP, either way, as itself."""


def is_wrapped(schema: Mapping[str, Any] | None) -> bool:
    """Whether an output schema wraps its results in ``{"result": VALUE}``.

    Marked by `WRAPPED` or FastMCP's `FASTMCP_WRAPPED`.
    """
    return schema is not None and (
        schema.get(WRAPPED) is True or schema.get(FASTMCP_WRAPPED) is True
    )


@final
class ToolResult:
    """What a tool call gives back to the model and the host: one shape for every tool.

    A success has ``is_error`` false, ``status`` 200 and ``code`` ``"ok"``; a failure has
    an HTTP-like ``status`` (4xx the model can correct, 5xx it cannot), a short ``code``
    and a ``text`` written for the model that never quotes a raw exception or an input
    value. Results are immutable; ``content`` returns a fresh list on every access.
    """

    # Read-only properties over private slots: building one (every call does) is then a
    # few plain slot stores, and the public fields cannot be reassigned.
    __slots__ = ("_code", "_content", "_is_error", "_status", "_structured", "_text")

    def __init__(
        self,
        text: str,
        *,
        is_error: bool = False,
        status: int = 200,
        code: str = "ok",
        structured: dict[str, Any] | None = None,
        content: list[dict[str, Any]] | None = None,
    ) -> None:
        self._text = text
        self._is_error = is_error
        self._status = status
        self._code = code
        self._structured = structured
        self._content = tuple(content) if content is not None else None

    @property
    def is_error(self) -> bool:
        """Whether the call failed."""
        return self._is_error

    @property
    def status(self) -> int:
        """200 on success; on failure the HTTP-like status (400, 403, 404, 413, 504, ...)."""
        return self._status

    @property
    def code(self) -> str:
        """``"ok"`` on success; on failure a short machine-readable code (``timeout``, ...)."""
        return self._code

    @property
    def text(self) -> str:
        """The model-readable text: the output as text, or what went wrong."""
        return self._text

    @property
    def structured(self) -> dict[str, Any] | None:
        """The output as a JSON object when the tool publishes an output schema, else None.

        A value whose JSON is not an object (a list, a number, a date) is wrapped,
        ``{"result": VALUE}``, as the tool's output schema says (``x-toolpalette-wrapped``).
        """
        return self._structured

    @classmethod
    def failure(cls, status: int, code: str, text: str) -> ToolResult:
        """A failed call's result: use it when a host answers a call without running it."""
        return cls(text, is_error=True, status=status, code=code)

    @property
    def content(self) -> list[dict[str, Any]]:
        """The content blocks (MCP-style); one text block unless given otherwise."""
        if self._content is None:
            return [{"type": "text", "text": self.text}]
        return [dict(block) for block in self._content]

    def as_dict(self) -> dict[str, Any]:
        """The JSON-able form, with exactly the keys of `RESULT_KEYS`."""
        return {
            "is_error": self.is_error,
            "status": self.status,
            "code": self.code,
            "text": self.text,
            "content": self.content,
            "structured": self.structured,
        }

    def to_json(self) -> str:
        """`as_dict()` as JSON text (what ``toolpalette call --json`` prints)."""
        return json.dumps(self.as_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResult:
        """Rebuild a result from `as_dict()` output (e.g. read back from a log)."""
        return cls(
            str(data["text"]),
            is_error=bool(data["is_error"]),
            status=int(data["status"]),
            code=str(data["code"]),
            structured=data.get("structured"),
            content=list(data["content"]) if data.get("content") is not None else None,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolResult):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    def __hash__(self) -> int:
        return hash((self.is_error, self.status, self.code, self.text))

    def __reduce__(self) -> tuple[Any, ...]:
        return (ToolResult.from_dict, (self.as_dict(),))

    def __repr__(self) -> str:
        if self.is_error:
            return f"<ToolResult error {self.status} {self.code}: {self.text[:60]!r}>"
        return f"<ToolResult ok: {self.text[:60]!r}>"


_MIME: Final = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
)


def _check_mime(kind: str, mime_type: object, family: str | None) -> str:
    if not isinstance(mime_type, str) or not _MIME.match(mime_type):
        raise ValueError(f"{kind} mime_type must look like 'type/subtype'")
    if family is not None and not mime_type.lower().startswith(family + "/"):
        raise ValueError(f"{kind} mime_type must be {family}/..., not {mime_type!r}")
    return mime_type


def _check_bytes(kind: str, data: object) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{kind} data must be bytes, not {type(data).__name__}")
    return bytes(data)


@final
@dataclass(frozen=True, slots=True)
class Image:
    """An image a tool returns: raw bytes and their MIME type (``image/png``, ...).

    It reaches the result as an MCP ``image`` block (base64 data) and the provider
    formats as their own image parts; its bytes count against the output cap. A
    frozen dataclass: equal when bytes and MIME type are, hashable, read-only.

    Raises:
        TypeError: ``data`` is not bytes.
        ValueError: ``mime_type`` is not ``image/...``.
    """

    data: bytes
    """The image's bytes (a bytearray or memoryview given is copied to bytes)."""
    mime_type: str = "image/png"
    """The image's MIME type."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _check_bytes("Image", self.data))
        _check_mime("Image", self.mime_type, "image")

    def block(self) -> dict[str, Any]:
        """The MCP-style content block: ``{"type": "image", "data": ..., "mimeType": ...}``."""
        return {"type": "image", "data": _b64(self.data), "mimeType": self.mime_type}

    def summary(self) -> str:
        """What a text-only reader sees in its place (see `block_text()`)."""
        return _binary_line("image", self.mime_type, len(self.data))

    def __repr__(self) -> str:
        return f"Image({self.mime_type}, {len(self.data)} bytes)"


@final
@dataclass(frozen=True, slots=True)
class Audio:
    """An audio clip a tool returns: raw bytes and their MIME type (``audio/wav``, ...).

    It reaches the result as an MCP ``audio`` block; its bytes count against the cap.
    A frozen dataclass: equal when bytes and MIME type are, hashable, read-only.

    Raises:
        TypeError: ``data`` is not bytes.
        ValueError: ``mime_type`` is not ``audio/...``.
    """

    data: bytes
    """The clip's bytes (a bytearray or memoryview given is copied to bytes)."""
    mime_type: str = "audio/wav"
    """The clip's MIME type."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _check_bytes("Audio", self.data))
        _check_mime("Audio", self.mime_type, "audio")

    def block(self) -> dict[str, Any]:
        """The MCP-style content block: ``{"type": "audio", "data": ..., "mimeType": ...}``."""
        return {"type": "audio", "data": _b64(self.data), "mimeType": self.mime_type}

    def summary(self) -> str:
        """What a text-only reader sees in its place (see `block_text()`)."""
        return _binary_line("audio", self.mime_type, len(self.data))

    def __repr__(self) -> str:
        return f"Audio({self.mime_type}, {len(self.data)} bytes)"


@final
@dataclass(frozen=True, slots=True, init=False)
class File:
    """A file a tool returns: its name, its contents (bytes, or text) and MIME type.

    It reaches the result as an MCP embedded ``resource`` block whose ``uri`` is
    ``file:///NAME`` (the name, percent-encoded; nothing on disk is implied), or the
    ``uri`` given (an embedded resource the pack serves, ``docs://guide``), with the
    contents as ``blob`` (base64) for bytes or ``text`` for text. Its bytes (UTF-8 for
    text) count against the output cap. A frozen dataclass, equal when contents, name,
    MIME type and ``uri`` are (an omitted ``uri`` is ``file:///NAME``).

    Raises:
        TypeError: ``data`` is neither bytes nor text.
        ValueError: ``name`` is empty, holds a slash, or ``mime_type`` is malformed.
    """

    data: bytes | str
    """The file's contents."""
    name: str
    """The file's name, as the user would save it."""
    mime_type: str
    """The file's MIME type."""
    uri: str
    """The ``uri`` given, else ``file:///NAME``: how MCP names the embedded resource."""

    # Its own __init__: ``uri`` is optional to give but always set, so that a File
    # given ``file:///NAME`` and one given nothing are the same value.
    def __init__(
        self,
        data: bytes | str,
        name: str,
        mime_type: str = "application/octet-stream",
        *,
        uri: str | None = None,
    ) -> None:
        if uri is not None and (not isinstance(uri, str) or "://" not in uri or len(uri) > 2048):
            raise ValueError("File uri must be an absolute URI (scheme://...)")
        if not isinstance(data, str):
            data = _check_bytes("File", data)
        if not isinstance(name, str) or not name or "/" in name or "\\" in name or len(name) > 255:
            raise ValueError("File name must be a plain file name (1-255 characters, no '/')")
        _check_mime("File", mime_type, None)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "mime_type", mime_type)
        object.__setattr__(self, "uri", uri or "file:///" + urllib.parse.quote(name))

    @property
    def size(self) -> int:
        """The contents' size in bytes (UTF-8 for text)."""
        return len(self.data.encode("utf-8")) if isinstance(self.data, str) else len(self.data)

    def block(self) -> dict[str, Any]:
        """The MCP-style embedded resource block."""
        resource: dict[str, Any] = {"uri": self.uri, "mimeType": self.mime_type}
        if isinstance(self.data, str):
            resource["text"] = self.data
        else:
            resource["blob"] = _b64(self.data)
        return {"type": "resource", "resource": resource}

    def summary(self) -> str:
        """What a text-only reader sees in its place (see `block_text()`).

        A line naming the file, and for a file of text, its text after that line.
        """
        return _file_text(self.name, self.mime_type, self.size, self.data)

    def __repr__(self) -> str:
        return f"File({self.name!r}, {self.mime_type}, {self.size} bytes)"


@final
@dataclass(frozen=True, slots=True)
class ResourceLink:
    """A link to a resource a tool names without carrying it: a URI and a name.

    It reaches the result as an MCP ``resource_link`` block, and text-only readers as
    ``[resource link: NAME <URI>]`` (the title, when given, in place of the name). Its
    text counts against the output cap. A frozen dataclass: equal when every field is
    (an empty title or description counts as None).

    Raises:
        TypeError: ``uri`` or ``name`` is not text.
        ValueError: ``uri`` or ``name`` is empty, or ``mime_type`` is malformed.
    """

    uri: str
    """The resource's URI."""
    name: str
    """The resource's name."""
    _: KW_ONLY
    title: str | None = None
    """A title for people, or None."""
    description: str | None = None
    """What the resource holds, or None."""
    mime_type: str | None = None
    """The resource's MIME type, when known."""

    def __post_init__(self) -> None:
        for label, text in (("uri", self.uri), ("name", self.name)):
            if not isinstance(text, str):
                raise TypeError(f"ResourceLink {label} must be text, not {type(text).__name__}")
            if not text:
                raise ValueError(f"ResourceLink {label} must not be empty")
        for label in ("title", "description"):
            text = getattr(self, label)
            if not (isinstance(text, str) and text):
                object.__setattr__(self, label, None)
        if self.mime_type is not None:
            _check_mime("ResourceLink", self.mime_type, None)

    def block(self) -> dict[str, Any]:
        """The MCP ``resource_link`` block (optional fields only when given)."""
        block: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.title is not None:
            block["title"] = self.title
        if self.description is not None:
            block["description"] = self.description
        if self.mime_type is not None:
            block["mimeType"] = self.mime_type
        return block

    def summary(self) -> str:
        """What a text-only reader sees in its place (see `block_text()`)."""
        return _link_text(self.title or self.name, self.uri)

    def __repr__(self) -> str:
        return f"ResourceLink({self.uri!r}, {self.name!r})"


CONTENT_TYPES: Final = (Image, Audio, File, ResourceLink)
"""The rich content types a tool may return, alone or in a list with text."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def block_text(block: Mapping[str, Any]) -> str:
    """One MCP-style content block as text: the one rendering every format shares.

    ``text``: its text. ``image`` and ``audio``: ``[image: MIME, N bytes]``. An embedded
    ``resource``: ``[file NAME: MIME, N bytes]`` (NAME the last segment of its URI),
    followed on the next lines by its text when it holds text. ``resource_link``:
    ``[resource link: NAME <URI>]``. Any other type: ``[TYPE content, not shown]``. Sizes
    are in bytes: of the data a base64 text stands for, of a text in UTF-8.
    """
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return _binary_line(str(kind), _mime_of(block), _b64_size(block.get("data")))
    if kind == "resource":
        resource = block.get("resource")
        resource = resource if isinstance(resource, Mapping) else {}
        name = file_name(str(resource.get("uri", "")))
        text = resource.get("text")
        if isinstance(text, str):
            return _file_text(name, _mime_of(resource), len(text.encode("utf-8")), text)
        return _file_text(name, _mime_of(resource), _b64_size(resource.get("blob")), b"")
    if kind == "resource_link":
        label = block.get("title") or block.get("name") or ""
        return _link_text(str(label), str(block.get("uri", "")))
    return f"[{kind} content, not shown]"


def _binary_line(kind: str, mime_type: str, size: int) -> str:
    return f"[{kind}: {mime_type}, {size} bytes]"


def _file_text(name: str, mime_type: str, size: int, data: bytes | str) -> str:
    line = f"[file {name}: {mime_type}, {size} bytes]"
    return f"{line}\n{data}" if isinstance(data, str) else line


def _link_text(label: str, uri: str) -> str:
    return f"[resource link: {label} <{uri}>]" if label else f"[resource link: <{uri}>]"


def _mime_of(block: Mapping[str, Any]) -> str:
    mime = block.get("mimeType")
    return mime if isinstance(mime, str) and mime else "unknown"


def _b64_size(data: object) -> int:
    """The bytes a base64 text stands for (without decoding it)."""
    if not isinstance(data, str):
        return 0
    padding = 2 if data.endswith("==") else 1 if data.endswith("=") else 0
    return max(0, len(data) * 3 // 4 - padding)


def file_name(uri: str) -> str:
    """A plain file name for a resource: its URI's last path segment, or ``resource``."""
    name = posixpath.basename(urllib.parse.unquote(urllib.parse.urlsplit(uri).path))
    name = name.replace("\\", "_")[:255]
    return name or "resource"


@final
class RichContent:
    """A tool's rich output as the result will carry it: blocks, their text, their size."""

    __slots__ = ("blocks", "size", "text")

    def __init__(self, blocks: list[dict[str, Any]], text: str, size: int) -> None:
        self.blocks = blocks
        """The MCP-style content blocks, in the order the tool returned them."""
        self.text = text
        """Each block's `block_text()`, one per line."""
        self.size = size
        """Bytes counted against the output cap: UTF-8 text plus raw binary bytes."""


def rich_content(value: object) -> RichContent | None:
    """``value`` as content blocks when it is rich content, else None.

    Rich content is one `CONTENT_TYPES` instance, or a list or tuple holding at
    least one, whose other items are text. Anything else (plain text, JSON data) is
    not rich content, so a tool returning ``list[str]`` still ships JSON. The text is
    each item's `block_text()`, one per line.

    Raises:
        TypeError: a list mixes rich content with something other than text.
    """
    if isinstance(value, CONTENT_TYPES):
        items: tuple[object, ...] | list[object] = (value,)
    elif isinstance(value, (list, tuple)) and any(
        # Per distinct type, not per item: a long list of data is looked at in C.
        issubclass(kind, CONTENT_TYPES)
        for kind in set(map(type, value))
    ):
        items = value
    else:
        return None
    blocks: list[dict[str, Any]] = []
    texts: list[str] = []
    size = 0
    for item in items:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
            texts.append(item)
            size += len(item.encode("utf-8"))
        elif isinstance(item, (Image, Audio, File)):
            blocks.append(item.block())
            texts.append(item.summary())
            size += item.size if isinstance(item, File) else len(item.data)
        elif isinstance(item, ResourceLink):
            blocks.append(item.block())
            text = item.summary()
            texts.append(text)
            size += len(text.encode("utf-8"))
        else:
            raise TypeError(
                "content lists hold text, Image, Audio, File and ResourceLink, "
                f"not {type(item).__name__}"
            )
    return RichContent(blocks, "\n".join(texts), size)


def mentions_content(annotation: object) -> bool:
    """Whether a return annotation names a content type anywhere (``list[str | Image]``)."""
    if annotation in CONTENT_TYPES:
        return True
    return any(mentions_content(arg) for arg in get_args(annotation) if arg is not Ellipsis)
