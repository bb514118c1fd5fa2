"""Reading skills out of a skilljar package (or any folder) without executing its code."""

from __future__ import annotations

import importlib.resources
import re
from typing import TYPE_CHECKING

from toolpalette._plugins.problems import Problem
from toolpalette._skills.paths import inside, walk_files
from toolpalette._skills.skill import Skill
from toolpalette._tools.info import distribution_label

if TYPE_CHECKING:
    from importlib.abc import Traversable

    from toolpalette._tools.provider import Origin

__all__ = ["SKILL_FILE", "FolderSource", "bundle_id_problem", "load_folder", "open_package"]

SKILL_FILE = "SKILL.md"
"""The file that makes a folder a skill."""
_LOWERCASE_SKILL_FILE = "skill.md"
_BUNDLE_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_BUNDLE_ID = re.compile(rf"{_BUNDLE_LABEL}(?:\.{_BUNDLE_LABEL})+")


def bundle_id_problem(bundle: str) -> str | None:
    """Why ``bundle`` is not a valid bundle id, or None when it is.

    A bundle id is reverse-DNS: at least two dot-separated labels of lowercase ASCII
    letters, digits and inner hyphens (``io.example.sql``).
    """
    if _BUNDLE_ID.fullmatch(bundle) and len(bundle) <= 253:
        return None
    return (
        f"bundle id {bundle!r} is not reverse-DNS: use two or more dot-separated labels of "
        "lowercase letters, digits and inner hyphens, e.g. 'io.example.sql'"
    )


class FolderSource:
    """A skill folder's body and resources, read only when asked for."""

    def __init__(self, folder: Traversable, skill_file: Traversable) -> None:
        self._folder = folder
        self._file = skill_file

    def body(self) -> str:
        from toolpalette._skills.loader import split_body

        with self._file.open("rb") as stream:
            return split_body(stream.read())

    def skill_file(self) -> bytes:
        """The ``SKILL.md`` file's bytes, as written."""
        return self._file.read_bytes()

    def resource(self, relpath: str, limit: int | None = None) -> bytes:
        node = self._folder
        for part in relpath.split("/"):
            node = node.joinpath(part)
        # One answer for a missing file and for a link out of the skill, whether its
        # target exists or not: nothing outside the skill can be probed through it.
        if not inside(self._folder, node) or not node.is_file():
            raise FileNotFoundError(f"skill has no resource {relpath!r}")
        if limit is None:
            return node.read_bytes()
        with node.open("rb") as stream:
            return stream.read(limit + 1)

    def resources(self) -> list[str]:
        return walk_files(self._folder, skip=frozenset({self._file.name}))


def open_package(package: str) -> Traversable:
    """The root folder of a jar's import package (imports the package, nothing else).

    Raises:
        ImportError: The package cannot be imported.
        NotADirectoryError: It is a module, not a package with skill folders.
    """
    if ":" in package:
        raise NotADirectoryError(f"{package!r} names an attribute; name the package only")
    root = importlib.resources.files(package)
    if not root.is_dir():
        raise NotADirectoryError(f"{package!r} is not a package folder")
    return root


def load_folder(
    root: Traversable, *, bundle: str, origin: Origin
) -> tuple[list[Skill], list[Problem]]:
    """Every skill in ``root``'s top-level folders, with the problems met on the way.

    Folders whose names start with ``.`` or ``_`` and folders without a skill file are
    not skills and are passed over silently.
    """
    skills: list[Skill] = []
    problems: list[Problem] = []
    for folder in sorted(root.iterdir(), key=lambda node: node.name):
        if folder.name.startswith((".", "_")) or not folder.is_dir():
            continue
        skill_file, lowercase = _skill_file(folder)
        if skill_file is None:
            continue
        skill, found = _load_skill(root, folder, skill_file, bundle=bundle, origin=origin)
        if lowercase and skill is not None:
            found.insert(0, _warning(skill.id, origin, _LOWERCASE_HINT))
        skills.extend([skill] if skill is not None else [])
        problems.extend(found)
    return skills, problems


_LOWERCASE_HINT = (
    "the skill file is named 'skill.md'; rename it 'SKILL.md' as the specification "
    "asks (tools on case-sensitive file systems look for that name only)"
)


def _skill_file(folder: Traversable) -> tuple[Traversable | None, bool]:
    names = {child.name for child in folder.iterdir()}
    if SKILL_FILE in names:
        return folder.joinpath(SKILL_FILE), False
    if _LOWERCASE_SKILL_FILE in names:
        return folder.joinpath(_LOWERCASE_SKILL_FILE), True
    return None, False


def _load_skill(
    root: Traversable, folder: Traversable, skill_file: Traversable, *, bundle: str, origin: Origin
) -> tuple[Skill | None, list[Problem]]:
    # Imported when a skill is read: yaml and the manifest's pydantic model cost tens of
    # milliseconds, which a process that reads no skill (`serve` of tools) never pays.
    from toolpalette._skills.loader import FrontMatterError, parse_front_matter, read_front_matter
    from toolpalette._skills.manifest import coerce_front_matter, lint_manifest

    where = f"{bundle}/{folder.name}"
    if not inside(root, folder) or not inside(folder, skill_file):
        return None, [_skipped(where, origin, "the skill folder is a symlink out of the jar")]
    try:
        with skill_file.open("rb") as stream:
            text = read_front_matter(stream)
        data, forgiven = parse_front_matter(text)
    except (FrontMatterError, OSError) as exc:
        return None, [_skipped(where, origin, str(exc))]
    check = coerce_front_matter(data, folder.name)
    if check.manifest is not None:
        linted = lint_manifest(check.manifest, folder.name)
        check.manifest, check.error = linted.manifest, linted.error
        check.warnings.extend(linted.warnings)
    if check.manifest is None:
        return None, [_skipped(where, origin, check.error or "unusable front matter")]
    skill = Skill._from_source(
        check.manifest, bundle=bundle, source=FolderSource(folder, skill_file), origin=origin
    )
    return skill, [_warning(skill.id, origin, text) for text in [*forgiven, *check.warnings]]


def _skipped(item: str, origin: Origin, reason: str) -> Problem:
    return Problem("invalid-skill", f"skipped: {reason}", origin.pack, _label(origin), item)


def _warning(item: str, origin: Origin, reason: str) -> Problem:
    return Problem("skill-warning", reason, origin.pack, _label(origin), item)


def _label(origin: Origin) -> str | None:
    return distribution_label(origin.distribution, origin.version)
