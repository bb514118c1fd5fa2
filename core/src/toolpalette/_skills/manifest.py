"""The ``SKILL.md`` front matter as a pydantic model, and the Agent Skills rules.

Checking never raises: a cosmetic problem is a warning, one that leaves nothing usable skips.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "MAX_COMPATIBILITY_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "ManifestCheck",
    "SkillManifest",
    "coerce_front_matter",
    "lint_manifest",
    "manifest_json_schema",
    "suggest_name",
]

MAX_NAME_LENGTH: Final = 64
MAX_DESCRIPTION_LENGTH: Final = 1024
MAX_COMPATIBILITY_LENGTH: Final = 500
KNOWN_KEYS: Final = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)


class SkillManifest(BaseModel):
    """The front matter of one skill, as the Agent Skills specification defines it.

    Built from a ``SKILL.md`` after lenient coercion (see `coerce_front_matter()`),
    or from the arguments of a [`Skill`][toolpalette.Skill] built in code. The model
    checks types only; the specification's length and character rules are checked by
    `lint_manifest()`, so that a cosmetic problem can warn instead of refusing.
    """

    model_config = ConfigDict(
        frozen=True,
        populate_by_name=True,
        extra="forbid",
        use_attribute_docstrings=True,
        title="Agent Skills SKILL.md front matter",
    )

    # The length limits appear in the JSON schema (what authors should write) but are
    # not enforced here: lint_manifest warns about them instead.
    name: str = Field(json_schema_extra={"minLength": 1, "maxLength": MAX_NAME_LENGTH})
    """The skill's name: lowercase letters, digits and single hyphens (no leading,
    trailing or double hyphen), 1-64 characters, the same as its folder's name."""
    description: str = Field(
        json_schema_extra={"minLength": 1, "maxLength": MAX_DESCRIPTION_LENGTH}
    )
    """What the skill does and when to use it (1-1024 characters); what a model sees
    before the skill is admitted."""
    license: str | None = None
    """A licence name or a reference to a bundled licence file."""
    compatibility: str | None = Field(
        default=None, json_schema_extra={"maxLength": MAX_COMPATIBILITY_LENGTH}
    )
    """Environment requirements (product, system packages, network), at most 500 characters."""
    metadata: dict[str, str] = Field(default_factory=dict)
    """An open string-to-string map for anything else; toolpalette never reads it."""
    allowed_tools: str | None = Field(default=None, alias="allowed-tools")
    """Space-delimited tools the skill expects to use (experimental in the specification)."""


def manifest_json_schema() -> dict[str, Any]:
    """The JSON Schema of a conforming front matter (shipped as ``skill-manifest.schema.json``).

    Editors and CI can check a ``SKILL.md`` against it; the loader itself is more lenient.
    """
    schema = SkillManifest.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


@dataclass
class ManifestCheck:
    """What checking one skill's front matter found."""

    manifest: SkillManifest | None = None
    """The manifest, or None when the skill must be skipped."""
    warnings: list[str] = field(default_factory=list)
    """Cosmetic problems: the skill still loads."""
    error: str | None = None
    """Why the skill is skipped, when it is."""


def coerce_front_matter(data: Mapping[Any, Any], folder: str | None) -> ManifestCheck:
    """Turn parsed front matter into a manifest, leniently; called once per ``SKILL.md``.

    Args:
        data: The YAML mapping, as parsed.
        folder: The skill folder's name (the fallback for a missing name), or None.

    Returns:
        The check: a manifest plus warnings, or an error when the skill is unusable.
    """
    check = ManifestCheck()
    fields: dict[str, Any] = {}
    unknown = sorted(str(key) for key in data if key not in KNOWN_KEYS)
    if unknown:
        check.warnings.append(
            f"unknown front-matter keys {', '.join(unknown)} are ignored; the specification "
            "defines name, description, license, compatibility, metadata and allowed-tools "
            "(put anything else under metadata)"
        )
    for key in ("name", "description", "license", "compatibility"):
        value = _text(data.get(key), key, check.warnings)
        if value is not None:
            fields[key] = value
    fields["metadata"] = _metadata(data.get("metadata"), check.warnings)
    fields["allowed-tools"] = _allowed_tools(data.get("allowed-tools"), check.warnings)
    if not str(fields.get("name") or "").strip() and folder:
        check.warnings.append(f"no name: the folder name {folder!r} is used; add name: {folder}")
        fields["name"] = folder
    error = _required(fields)
    if error:
        check.error = error
        return check
    check.manifest = SkillManifest.model_validate(fields)
    return check


def _required(fields: Mapping[str, Any]) -> str | None:
    if not str(fields.get("description") or "").strip():
        return "no description: add a description saying what the skill does and when to use it"
    if not str(fields.get("name") or "").strip():
        return "no name: add a name (lowercase letters, digits and single hyphens)"
    return None


def _text(value: Any, key: str, warnings: list[str]) -> str | None:
    if value is None or isinstance(value, str):
        return value.strip() if isinstance(value, str) else None
    if isinstance(value, (int, float, bool)):
        warnings.append(f"{key} is not a string; it is read as {str(value)!r}: quote it")
        return str(value)
    warnings.append(f"{key} is a {type(value).__name__}, not a string; it is ignored")
    return None


def _metadata(value: Any, warnings: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        warnings.append("metadata is not a mapping of strings to strings; it is ignored")
        return {}
    result: dict[str, str] = {}
    dropped: list[str] = []
    for key, item in value.items():
        if isinstance(item, (str, int, float, bool)):
            result[str(key)] = str(item)
        else:
            dropped.append(str(key))
    if dropped:
        warnings.append(
            f"metadata values for {', '.join(sorted(dropped))} are not strings; they are "
            "ignored (metadata maps strings to strings)"
        )
    return result


def _allowed_tools(value: Any, warnings: list[str]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        warnings.append(
            "allowed-tools is a list; the specification asks for one space-delimited string"
        )
        return " ".join(value)
    warnings.append("allowed-tools is not a space-delimited string; it is ignored")
    return None


def lint_manifest(manifest: SkillManifest, folder: str | None) -> ManifestCheck:
    """Check a manifest against the specification's rules; called for every skill loaded.

    Args:
        manifest: The manifest (from a ``SKILL.md`` or a skill built in code).
        folder: The skill folder's name, or None for a skill built in code.

    Returns:
        The same manifest with its cosmetic warnings, or an error when the name cannot
        be part of a skill id or the description is empty.
    """
    check = ManifestCheck(manifest=manifest)
    name = manifest.name
    if not manifest.description.strip():
        return ManifestCheck(error="empty description: say what the skill does and when to use it")
    if not name or "/" in name or any(c.isspace() or not c.isprintable() for c in name):
        return ManifestCheck(
            error=f"name {name!r} cannot be part of a skill id (no '/', spaces or control "
            f"characters); rename it {suggest_name(name)!r}"
        )
    check.warnings.extend(_name_warnings(name))
    if folder is not None and unicodedata.normalize("NFKC", folder) != name:
        check.warnings.append(
            f"name {name!r} does not match its folder {folder!r}; rename one of them"
        )
    check.warnings.extend(_length_warnings(manifest))
    return check


def _name_warnings(name: str) -> list[str]:
    problems: list[str] = []
    if unicodedata.normalize("NFKC", name) != name:
        problems.append("is not NFKC-normalized")
    if name != name.lower():
        problems.append("has uppercase letters")
    if name.startswith("-") or name.endswith("-"):
        problems.append("starts or ends with a hyphen")
    if "--" in name:
        problems.append("has consecutive hyphens")
    if not all(c.isalnum() or c == "-" for c in name):
        problems.append("has characters other than letters, digits and hyphens")
    if not problems:
        return []
    return [
        f"name {name!r} {', '.join(problems)}; the specification asks for lowercase "
        f"letters, digits and single hyphens (e.g. {suggest_name(name)!r})"
    ]


def _length_warnings(manifest: SkillManifest) -> list[str]:
    limits = (
        ("name", manifest.name, MAX_NAME_LENGTH),
        ("description", manifest.description, MAX_DESCRIPTION_LENGTH),
        ("compatibility", manifest.compatibility or "", MAX_COMPATIBILITY_LENGTH),
    )
    return [
        f"{key} is {len(value)} characters, over the specification's {limit}; shorten it"
        for key, value, limit in limits
        if len(value) > limit
    ]


def suggest_name(name: str) -> str:
    """A name that follows the specification, derived from ``name`` (for fix hints)."""
    lowered = unicodedata.normalize("NFKC", name).lower()
    dashed = re.sub(r"[^\w]+|_", "-", lowered)
    return re.sub(r"-{2,}", "-", dashed).strip("-")[:MAX_NAME_LENGTH] or "skill"
