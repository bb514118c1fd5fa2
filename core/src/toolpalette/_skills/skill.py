"""``Skill``: one loaded skill, its manifest read, its body and resources on demand."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

from toolpalette._skills.paths import check_relpath
from toolpalette._tools.provider import Origin
from toolpalette.errors import InvalidManifestError

if TYPE_CHECKING:
    from toolpalette._skills.manifest import SkillManifest

__all__ = ["MAX_FILE_BYTES", "REQUIRES_KEY", "Skill", "SkillSource"]

REQUIRES_KEY = "toolpalette.requires"
"""The front matter ``metadata`` key (ours) listing what a skill needs: tool names and
``pack:NAME`` entries, separated by spaces."""

MAX_FILE_BYTES = 256 * 1024
"""The largest skill file served to a model or a client (``read_skill_file``, and
``resources/read`` over MCP): a larger one is refused, and read no further than that."""


class SkillSource(Protocol):
    """Where a skill's body and resources are read from, when they are asked for."""

    def body(self) -> str:
        """The Markdown body."""
        ...

    def resource(self, relpath: str, limit: int | None = None) -> bytes:
        """The bytes of one resource, by a path already checked to stay inside the skill.

        With ``limit``, at most ``limit + 1`` bytes are read.
        """
        ...

    def resources(self) -> list[str]:
        """Every resource's relative path, sorted."""
        ...


class _MemorySource:
    """The body and resources of a skill built in code."""

    def __init__(self, body: str, resources: Mapping[str, bytes | str]) -> None:
        self._body = body
        self._resources = {
            check_relpath(path): data.encode() if isinstance(data, str) else bytes(data)
            for path, data in resources.items()
        }

    def body(self) -> str:
        return self._body

    def resource(self, relpath: str, limit: int | None = None) -> bytes:
        try:
            data = self._resources[relpath]
        except KeyError:
            raise FileNotFoundError(f"skill has no resource {relpath!r}") from None
        return data if limit is None else data[: limit + 1]

    def resources(self) -> list[str]:
        return sorted(self._resources)


class Skill:
    """A skill: a name and description for listing, a body and resources when admitted.

    Skills from skilljars are made by the [`SkillRegistry`][toolpalette.SkillRegistry],
    which reads only their front matter; [`body()`][toolpalette.Skill.body] reads the
    rest of ``SKILL.md`` the first time it is called. A pack's
    ``toolpalette_register_skills()`` hook builds skills in code with this constructor;
    the registry checks them by the same rules.

    Args:
        name: The skill's name (lowercase letters, digits and single hyphens).
        description: What the skill does and when to use it.
        bundle: The bundle id the skill belongs to (reverse-DNS, ``io.example.ops``).
        body: The Markdown instructions.
        license: A licence name, if any.
        compatibility: Environment requirements, if any.
        metadata: An open string-to-string map.
        allowed_tools: The tools the skill expects, as a space-delimited string or an
            iterable of names.
        resources: Extra files by relative path (``references/guide.md``).

    Raises:
        InvalidManifestError: A field has the wrong type.
        ValueError: A resource path is not a plain relative path inside the skill.
    """

    __slots__ = ("_body", "_source", "bundle", "manifest", "origin")

    def __init__(
        self,
        name: str,
        description: str,
        *,
        bundle: str,
        body: str = "",
        license: str | None = None,
        compatibility: str | None = None,
        metadata: Mapping[str, str] | None = None,
        allowed_tools: str | Iterable[str] | None = None,
        resources: Mapping[str, bytes | str] | None = None,
    ) -> None:
        if allowed_tools is not None and not isinstance(allowed_tools, str):
            allowed_tools = " ".join(allowed_tools)
        fields = {
            "name": name,
            "description": description,
            "license": license,
            "compatibility": compatibility,
            "metadata": dict(metadata or {}),
            "allowed-tools": allowed_tools,
        }
        # Imported here, not with the module: building the pydantic model costs tens of
        # milliseconds, and a process that serves or lists no skill never needs it.
        from pydantic import ValidationError

        from toolpalette._skills.manifest import SkillManifest

        try:
            manifest = SkillManifest.model_validate(fields)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"]) or "(skill)"
            raise InvalidManifestError(jar=bundle, field=field, reason=error["msg"]) from exc
        self.manifest = manifest
        self.bundle = bundle
        self.origin = Origin()
        self._source: SkillSource = _MemorySource(body, resources or {})
        self._body: str | None = None

    @classmethod
    def _from_source(
        cls, manifest: SkillManifest, *, bundle: str, source: SkillSource, origin: Origin
    ) -> Skill:
        """A skill read from a skilljar or folder; its body stays unread."""
        skill = cls.__new__(cls)
        skill.manifest = manifest
        skill.bundle = bundle
        skill.origin = origin
        skill._source = source
        skill._body = None
        return skill

    def _with_origin(self, origin: Origin) -> None:
        """Record where a skill built in code came from (the registry calls this)."""
        self.origin = origin

    @property
    def id(self) -> str:
        """The full id, ``<bundle-id>/<name>``."""
        return f"{self.bundle}/{self.manifest.name}"

    @property
    def name(self) -> str:
        """The skill's name."""
        return self.manifest.name

    @property
    def description(self) -> str:
        """What the skill does and when to use it."""
        return self.manifest.description

    @property
    def license(self) -> str | None:
        """The licence, as declared."""
        return self.manifest.license

    @property
    def compatibility(self) -> str | None:
        """Environment requirements, as declared."""
        return self.manifest.compatibility

    @property
    def metadata(self) -> Mapping[str, str]:
        """The open string-to-string map (read-only)."""
        return MappingProxyType(self.manifest.metadata)

    @property
    def requires(self) -> tuple[str, ...]:
        """What the skill needs to be useful: tool names, and ``pack:NAME`` for a pack.

        Read from ``metadata`` under ``toolpalette.requires``, separated by spaces (the
        Agent Skills ``metadata`` map holds strings). A thinker does not offer a skill
        whose requirements it cannot reach; granting it offers the tools it requires.
        """
        return tuple(dict.fromkeys(self.manifest.metadata.get(REQUIRES_KEY, "").split()))

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        """The tools the skill expects to use, split from ``allowed-tools``."""
        return tuple((self.manifest.allowed_tools or "").split())

    @property
    def distribution(self) -> str | None:
        """The distribution that ships the skill, when known."""
        return self.origin.distribution

    @property
    def version(self) -> str | None:
        """That distribution's version."""
        return self.origin.version

    def body(self) -> str:
        """The Markdown instructions, read on the first call and kept.

        Raises:
            OSError: The file could not be read.
            UnicodeDecodeError: The body is not UTF-8.
        """
        if self._body is None:
            self._body = self._source.body()
        return self._body

    def resource(self, relpath: str, *, limit: int | None = None) -> bytes:
        """One file of the skill by relative path, e.g. ``references/guide.md``.

        With ``limit``, at most ``limit + 1`` bytes are read: more than ``limit`` bytes
        back means the file is larger than ``limit``, and a huge file costs no more
        than that to refuse.

        Raises:
            ValueError: The path is absolute or has ``..`` (or an empty or ``.`` part).
            FileNotFoundError: The skill has no such file; a symlink out of the skill
                gets the same answer whether its target exists or not.
        """
        return self._source.resource(check_relpath(relpath), limit)

    def skill_file(self) -> bytes:
        """The ``SKILL.md`` as bytes: the file itself for a skill read from a folder.

        A skill built in code has no file: its front matter and body are written out
        (the same bytes every time), as a client of the MCP Skills extension reads it.

        Raises:
            OSError: The file could not be read.
        """
        read = getattr(self._source, "skill_file", None)
        if callable(read):
            data = read()
            assert isinstance(data, bytes)
            return data
        import yaml

        fields = self.manifest.model_dump(by_alias=True, exclude_none=True)
        if not fields.get("metadata"):
            fields.pop("metadata", None)
        head = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True)
        return f"---\n{head}---\n\n{self.body()}\n".encode()

    def read_text(self, relpath: str, encoding: str = "utf-8") -> str:
        """One file of the skill as text; see [`resource()`][toolpalette.Skill.resource]."""
        return self.resource(relpath).decode(encoding)

    def resources(self) -> list[str]:
        """Every file of the skill but ``SKILL.md``, as sorted relative paths."""
        return self._source.resources()

    def __repr__(self) -> str:
        return f"<Skill {self.id} from {self.origin.describe()}>"
