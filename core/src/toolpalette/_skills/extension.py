"""The MCP Skills extension's shapes, without ``mcp``: digests, limits, front matter as JSON.

Shared by the server (``mcp/_skills_ext.py``) and the client (``_mcp_client/skills.py``).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from toolpalette._skills.loader import (
    FrontMatterError,
    front_matter_loader,
    read_front_matter,
)

if TYPE_CHECKING:
    import yaml

__all__ = [
    "DIRECTORY_MIME",
    "EXTENSION",
    "MAX_FILES",
    "MAX_TOTAL_BYTES",
    "SKILL_NAME",
    "FileEntry",
    "digest",
    "entry_problem",
    "is_digest",
    "served_front_matter",
]

EXTENSION: Final = "io.modelcontextprotocol/skills"
"""The extension's identifier in ``capabilities.extensions``."""
MAX_FILES: Final = 512
"""The most files (``SKILL.md`` included) a skill may have."""
MAX_TOTAL_BYTES: Final = 16 * 1024 * 1024
"""The most bytes a skill's files may add up to."""
DIRECTORY_MIME: Final = "inode/directory"
"""The MIME type of a directory resource (``resources/directory/read``)."""
SKILL_NAME: Final = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
"""The Agent Skills naming rule, as the extension applies it to a URI's last segment."""
_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class FileEntry:
    """One file of a skill entry: its URI, ``sha256:`` digest and size in bytes."""

    uri: str
    digest: str
    size: int

    def wire(self) -> dict[str, Any]:
        """The ``SkillResource`` object."""
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


def digest(data: bytes) -> str:
    """``sha256:{hex}`` of ``data``, as the extension writes digests."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


_CORE_RESOLVERS: Final = [
    ("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), list("~nN")),
    ("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")),
    (
        "tag:yaml.org,2002:int",
        re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
        list("-+0123456789"),
    ),
    (
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"),
        list("-+.0123456789"),
    ),
]


@functools.cache
def _core_loader() -> type[yaml.SafeLoader]:
    """Front matter read as the YAML 1.2 core schema reads it (as JSON clients do).

    Booleans, integers, floats and null are recognized (``true``, ``12``, ``1.5``,
    ``null``); everything else, dates included, stays a string. Anchors, aliases and
    merge keys are refused, as by `front_matter_loader()`. Built on first use, so that
    serving no skill never imports yaml.
    """

    class CoreLoader(front_matter_loader()):  # type: ignore[misc]
        pass

    CoreLoader.yaml_implicit_resolvers = {}
    for tag, regexp, first in _CORE_RESOLVERS:
        CoreLoader.add_implicit_resolver(tag, regexp, first)
    CoreLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^$"), [""])
    CoreLoader.add_constructor("tag:yaml.org,2002:int", _core_int)
    CoreLoader.add_constructor("tag:yaml.org,2002:float", _core_float)
    loader: type[yaml.SafeLoader] = CoreLoader
    return loader


def _core_int(loader: yaml.SafeLoader, node: Any) -> int:
    text = str(loader.construct_scalar(node))
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _core_float(loader: yaml.SafeLoader, node: Any) -> float:
    return float(str(loader.construct_scalar(node)))


def served_front_matter(skill_file: bytes) -> dict[str, Any]:
    """The front matter of a ``SKILL.md`` as a JSON object, every field as written.

    Raises:
        FrontMatterError: there is no closed front matter, or it is not a mapping of
            string keys (or not YAML).
    """
    import io

    import yaml

    text = read_front_matter(io.BytesIO(skill_file))
    try:
        data = yaml.load(text, Loader=_core_loader())
    except (yaml.YAMLError, RecursionError) as exc:
        raise FrontMatterError("front matter is not valid YAML") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict) or not all(isinstance(key, str) for key in data):
        raise FrontMatterError("front matter must be a mapping with string keys")
    return data


def entry_problem(name: str, front_matter: Mapping[str, Any], files: list[FileEntry]) -> str | None:
    """Why a skill cannot be served through the extension, or None when it can.

    The URI's last segment (``name``) must follow the Agent Skills naming rule and
    equal the front matter's ``name``; ``description`` must be a non-empty string;
    the files must stay within `MAX_FILES` and `MAX_TOTAL_BYTES`.
    """
    if not SKILL_NAME.fullmatch(name):
        return f"its name {name!r} does not follow the Agent Skills naming rule"
    if front_matter.get("name") != name:
        return "the name in its front matter is not its folder's name"
    description = front_matter.get("description")
    if not isinstance(description, str) or not description.strip():
        return "its front matter has no description"
    if len(files) > MAX_FILES:
        return f"it has {len(files)} files, more than the extension's {MAX_FILES}"
    total = sum(entry.size for entry in files)
    if total > MAX_TOTAL_BYTES:
        return f"its files add up to {total} bytes, more than the extension's {MAX_TOTAL_BYTES}"
    return None


def is_digest(value: object) -> bool:
    """Whether ``value`` is a digest as the extension writes them (``sha256:`` + 64 hex)."""
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None
