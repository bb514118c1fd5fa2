"""Reading ``SKILL.md``: the front matter alone for listing, the body on demand."""

from __future__ import annotations

import functools
import json
import re
from typing import IO, TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import yaml

__all__ = [
    "MAX_FRONT_MATTER_BYTES",
    "FrontMatterError",
    "front_matter_loader",
    "parse_front_matter",
    "read_front_matter",
    "split_body",
]

MAX_FRONT_MATTER_BYTES: Final = 64 * 1024
"""Front matter is a few lines; anything longer than this is refused, not read on."""

_KEPT_RESOLVERS = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:merge"})
_FENCE = "---"
_COLON_VALUE = re.compile(r"^(?P<key>[A-Za-z][\w-]*):[ \t]+(?P<value>[^'\"|>\[{&*!#].*?)\s*$")


class FrontMatterError(ValueError):
    """A ``SKILL.md`` whose front matter cannot be found or parsed; the skill is skipped."""


@functools.cache
def front_matter_loader() -> type[yaml.SafeLoader]:
    """The YAML loader of front matter, built on first use.

    Built here rather than with the module: yaml costs ~15 ms to import, which a
    process that reads no ``SKILL.md`` (``serve`` of tools) should not pay.
    """
    import yaml

    class FrontMatterLoader(yaml.SafeLoader):
        """A SafeLoader that resolves plain scalars to strings (or null) only.

        Booleans, numbers and timestamps are not recognized, so they stay strings; tags
        that would build Python objects are refused, as by any SafeLoader. Anchors,
        aliases and merge keys (``<<``) are refused where the parser meets them, before
        anything is built: front matter never needs them, and nested aliases expand
        exponentially (a few hundred bytes can take seconds and hundreds of megabytes
        to load).
        """

        def compose_node(self, parent: Any, index: Any) -> Any:
            """Compose one node, refusing an alias or an anchor before it is expanded."""
            event = self.peek_event()  # type: ignore[no-untyped-call]
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise yaml.composer.ComposerError(
                    None, None, _NO_ALIASES, getattr(event, "start_mark", None)
                )
            return super().compose_node(parent, index)

        def flatten_mapping(self, node: Any) -> None:
            """Refuse a merge key (``<<``) instead of merging."""
            for key, _ in node.value:
                if key.tag == "tag:yaml.org,2002:merge":
                    raise yaml.constructor.ConstructorError(
                        None, None, _NO_ALIASES, getattr(key, "start_mark", None)
                    )
            super().flatten_mapping(node)

    FrontMatterLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag in _KEPT_RESOLVERS]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return FrontMatterLoader


_NO_ALIASES: Final = "anchors (&), aliases (*) and merge keys (<<) are not allowed in front matter"


def read_front_matter(stream: IO[bytes]) -> str:
    """The front matter text of a ``SKILL.md``, reading nothing past its closing ``---``.

    Args:
        stream: The file, opened in binary mode at its start.

    Returns:
        The YAML between the fences.

    Raises:
        FrontMatterError: No opening fence, no closing fence, over
            `MAX_FRONT_MATTER_BYTES`, or not UTF-8.
    """
    first = stream.readline(MAX_FRONT_MATTER_BYTES)
    if _decode(first).removeprefix("\ufeff").rstrip() != _FENCE:
        raise FrontMatterError("no front matter: SKILL.md must start with a '---' line")
    lines: list[str] = []
    size = len(first)
    while size <= MAX_FRONT_MATTER_BYTES:
        raw = stream.readline(MAX_FRONT_MATTER_BYTES + 1)
        if not raw:
            raise FrontMatterError("front matter is not closed by a '---' line")
        size += len(raw)
        line = _decode(raw)
        if line.rstrip() == _FENCE:
            return "".join(lines)
        lines.append(line)
    raise FrontMatterError(f"front matter is longer than {MAX_FRONT_MATTER_BYTES} bytes")


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrontMatterError(f"front matter is not UTF-8 ({exc.reason})") from None


def parse_front_matter(text: str) -> tuple[dict[Any, Any], list[str]]:
    """Parse front matter YAML into a mapping, with warnings for what was forgiven.

    A common authoring slip is an unquoted value containing ``": "`` (``description:
    Use when: ...``), which strict YAML refuses. As the specification's client guidance
    suggests, such top-level values are quoted and parsing is retried once; the skill
    then loads with a warning.

    Raises:
        FrontMatterError: The YAML is unparsable, or not a mapping.
    """
    import yaml

    try:
        return _mapping(_load(text)), []
    except yaml.YAMLError as exc:
        quoted, keys = _quote_colon_values(text)
        if not keys:
            raise FrontMatterError(f"front matter is not valid YAML: {_describe(exc)}") from None
        try:
            data = _mapping(_load(quoted))
        except yaml.YAMLError:
            raise FrontMatterError(f"front matter is not valid YAML: {_describe(exc)}") from None
    hint = f"quote the value of {', '.join(keys)} (it contains ': ')"
    return data, [f"front matter parsed only after quoting; {hint}"]


def _load(text: str) -> Any:
    """The YAML document in ``text``; one nested past Python's recursion limit is refused.

    PyYAML composes nested collections recursively, so thousands of nested ``[`` raise
    ``RecursionError``; the skill is then skipped like any unreadable one, and the
    jar's other skills load.

    Raises:
        FrontMatterError: the document nests too deeply to read.
        yaml.YAMLError: it is not valid YAML.
    """
    import yaml

    try:
        return yaml.load(text, Loader=front_matter_loader())
    except RecursionError:
        raise FrontMatterError("front matter nests too deeply to be read") from None


def _mapping(data: Any) -> dict[Any, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a mapping of keys to values")
    return data


def _quote_colon_values(text: str) -> tuple[str, list[str]]:
    keys: list[str] = []
    lines = []
    for line in text.splitlines(keepends=True):
        match = _COLON_VALUE.match(line)
        if match and ": " in match["value"]:
            keys.append(match["key"])
            line = f"{match['key']}: {json.dumps(match['value'], ensure_ascii=False)}\n"
        lines.append(line)
    return "".join(lines), keys


def _describe(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or type(exc).__name__
    if mark is None:
        return str(problem)
    # The mark counts from the line after the opening fence, from zero.
    return f"line {mark.line + 2}, column {mark.column + 1}: {problem}"


def split_body(data: bytes) -> str:
    """The Markdown body of a whole ``SKILL.md`` file: everything after the front matter.

    Raises:
        FrontMatterError: The file has no closed front matter.
        UnicodeDecodeError: The body is not UTF-8.
    """
    text = data.decode("utf-8-sig")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != _FENCE:
        raise FrontMatterError("no front matter: SKILL.md must start with a '---' line")
    for index, line in enumerate(lines[1:], start=1):
        if line.rstrip() == _FENCE:
            return "".join(lines[index + 1 :]).lstrip("\r\n").rstrip()
    raise FrontMatterError("front matter is not closed by a '---' line")
