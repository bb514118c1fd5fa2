"""``SkillRegistry``: every skill a host can use, by full id, jars opened lazily."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolpalette._plugins.discovery import EntryPointInfo, check_core_requirement
from toolpalette._plugins.problems import Problem, ProblemKind
from toolpalette._skills.jar import bundle_id_problem, load_folder, open_package
from toolpalette._skills.skill import Skill
from toolpalette._tools.info import distribution_label
from toolpalette._tools.provider import Origin
from toolpalette.errors import SkillNotFoundError

if TYPE_CHECKING:
    from importlib.abc import Traversable

__all__ = ["SkillRegistry", "matches_prefix", "skills_of_distributions"]

logger = logging.getLogger("toolpalette.skills")
# A library logs, the application decides where it goes: without this, Python's
# last-resort handler would print every problem to stderr of an unconfigured program.
logger.addHandler(logging.NullHandler())


@dataclass
class _Jar:
    """One declared bundle: where to read it from, and whether it has been read."""

    bundle: str
    origin: Origin
    info: EntryPointInfo | None = None
    root: Traversable | None = None
    opened: bool = False

    @property
    def dist(self) -> str | None:
        """``distribution version`` for a Problem, when the distribution is known."""
        return _dist_label(self.origin)

    @property
    def label(self) -> str:
        """Who claims the bundle, for messages."""
        if self.dist:
            return self.dist
        return f"folder {self.root}" if self.root is not None else self.bundle


REMOTE_WAIT = 120.0
"""The longest a lookup waits for another caller's listing of a remote origin, in seconds."""
RemoteLoad = Callable[[], "tuple[list[Skill], list[Problem]] | None"]
"""Lists a remote origin's skills (None: not now, ask again later)."""


@dataclass
class _Remote:
    """A remote origin of skills (an MCP server): every bundle under ``prefix``."""

    prefix: str
    load: RemoteLoad
    label: str
    opened: bool = False
    listing: threading.Event | None = None
    """Set while one caller lists it; the others wait for it."""


def matches_prefix(bundle: str, prefix: str) -> bool:
    """Whether ``bundle`` is ``prefix`` itself or lies under it on a dot boundary."""
    prefix = prefix.rstrip(".")
    return bundle == prefix or bundle.startswith(prefix + ".")


def skills_of_distributions(registry: SkillRegistry, names: Iterable[str]) -> list[Skill]:
    """The skills the distributions ``names`` ship, sorted by id, opening only their jars.

    Names compare as installers compare them (case, ``-``, ``_`` and ``.``). A jar of
    another distribution is not opened, so a broken skill there is neither read nor
    reported (``serve --select`` serves what it was asked for, and warns of nothing else).
    """
    wanted = {_canonical(name) for name in names}
    found: dict[str, Skill] = {}
    for bundle in registry.bundles(remote=False):  # never an MCP server's (re-served)
        origin = registry.bundle_origin(bundle)
        if origin is not None and _canonical(origin.distribution or "") not in wanted:
            continue
        for skill in registry.by_prefix(bundle):
            if skill.bundle == bundle and _canonical(skill.distribution or "") in wanted:
                found[skill.id] = skill
    return [found[key] for key in sorted(found)]


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


class SkillRegistry:
    """Skills by full id (``<bundle-id>/<name>``), from skilljars, folders and code.

    Build it with [`from_entry_points()`][toolpalette.SkillRegistry.from_entry_points]
    (the hub passes the ``toolpalette.skilljars`` entry points), or empty and fill it
    with [`add_directory()`][toolpalette.SkillRegistry.add_directory] and
    [`add_skills()`][toolpalette.SkillRegistry.add_skills]. It is thread-safe; lookups
    open only the jars they need.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._jars: dict[str, _Jar] = {}
        self._claims: dict[str, list[_Jar]] = {}
        self._skills: dict[str, Skill] = {}
        self._holders: dict[str, str] = {}
        self._contested: set[str] = set()
        self._code_bundles: set[str] = set()
        self._remotes: dict[str, _Remote] = {}
        self._remote_bundles: set[str] = set()
        self._problems: list[Problem] = []
        self._version = 0

    @property
    def version(self) -> int:
        """A counter that grows whenever a bundle is declared or a skill joins or leaves.

        Caches of resolved selectors key on it (``hub.bind`` does).
        """
        return self._version

    @classmethod
    def from_entry_points(cls, infos: Iterable[EntryPointInfo]) -> SkillRegistry:
        """A registry declaring one jar per entry point, opening none of them yet.

        Args:
            infos: Entry points of the ``toolpalette.skilljars`` group (as
                ``discover(SKILLJAR_GROUP)`` returns them): the name is the bundle id,
                the value the import package holding the skill folders.
        """
        registry = cls()
        for info in infos:
            origin = Origin(info.name, info.distribution, info.version, info.module)
            registry._declare(_Jar(info.name, origin, info=info))
        return registry

    def add_directory(
        self,
        bundle: str,
        path: Traversable | str,
        *,
        distribution: str | None = None,
        version: str | None = None,
    ) -> None:
        """Declare a folder of skill folders as a bundle, e.g. a host's own skills.

        Args:
            bundle: The bundle id to serve them under.
            path: The folder holding the skill folders.
            distribution: The distribution to credit, if any.
            version: Its version.
        """
        root = Path(path) if isinstance(path, str) else path
        origin = Origin(bundle, distribution, version, None)
        self._declare(_Jar(bundle, origin, root=root))

    def add_skills(
        self,
        skills: Iterable[object],
        *,
        pack: str,
        distribution: str | None,
        version: str | None = None,
    ) -> None:
        """Add skills built in code (a pack's ``toolpalette_register_skills()`` result).

        Each skill is checked by the rules a ``SKILL.md`` is checked by; an item that is
        not a [`Skill`][toolpalette.Skill], has an invalid bundle id or an empty
        description is skipped with a problem.

        Args:
            skills: What the hook returned, already flattened to an iterable.
            pack: The pack's entry point name.
            distribution: The distribution that ships the pack, when known.
            version: Its version.
        """
        origin = Origin(pack, distribution, version, None)
        with self._lock:
            for item in skills:
                skill = self._checked(item, origin)
                if skill is not None:
                    self._ensure(skill.bundle)
                    self._code_bundles.add(skill.bundle)
                    self._hold(skill, _origin_label(origin), _dist_label(origin))

    def add_remote(self, prefix: str, load: RemoteLoad, *, label: str) -> None:
        """Declare a remote origin (an MCP server) serving every bundle under ``prefix``.

        Nothing is fetched now: ``load`` is called the first time a skill of a bundle
        under ``prefix`` is asked for (an id, a prefix that overlaps it, or
        everything), and its skills join like a jar's, by the same collision rules.
        ``load`` returns None when it cannot list now (it is asked again later).

        Args:
            prefix: The bundle prefix of the origin's skills (``mcp.docs``).
            load: Lists the skills and the problems met.
            label: Who serves them, for messages (``MCP server 'docs'``).
        """
        with self._lock:
            if prefix in self._remotes:
                return
            self._remotes[prefix] = _Remote(prefix, load, label)
            self._version += 1

    def _open_remotes(self, bundle_or_prefix: str | None) -> None:
        """List the remote origins that may hold ``bundle_or_prefix`` (None: every one).

        Called without the registry's lock: a listing goes over the network, and other
        lookups (jars, listed origins) go on meanwhile. A second caller asking for an
        origin being listed waits for that listing instead of starting another.
        """
        with self._lock:
            pending = [
                remote
                for remote in self._remotes.values()
                if not remote.opened
                and (
                    bundle_or_prefix is None
                    or matches_prefix(bundle_or_prefix, remote.prefix)
                    or matches_prefix(remote.prefix, bundle_or_prefix)
                )
            ]
            mine = [remote for remote in pending if remote.listing is None]
            others = [remote.listing for remote in pending if remote.listing is not None]
            for remote in mine:
                remote.listing = threading.Event()
        for remote in mine:
            loaded: tuple[list[Skill], list[Problem]] | Exception | None
            try:
                loaded = remote.load()
            except Exception as exc:  # a remote origin must never take the registry down
                loaded = exc
            with self._lock:
                self._take(remote, loaded)
                done, remote.listing = remote.listing, None
            assert done is not None
            done.set()
        for listing in others:
            listing.wait(REMOTE_WAIT)

    def _take(
        self, remote: _Remote, loaded: tuple[list[Skill], list[Problem]] | Exception | None
    ) -> None:
        """Hold what listing ``remote`` gave (its skills, its problems, or its failure)."""
        if loaded is None:
            return  # not now: asked again later
        remote.opened = True
        if isinstance(loaded, Exception):
            self._report("server", f"cannot list its skills: {loaded!r}", remote.label, None, None)
            return
        skills, problems = loaded
        for problem in problems:
            self._record(problem)
        for skill in skills:
            if not matches_prefix(skill.bundle, remote.prefix):
                reason = f"skipped: bundle {skill.bundle!r} is outside {remote.prefix!r}"
                self._report("invalid-skill", reason, remote.label, None, skill.id)
                continue
            self._remote_bundles.add(skill.bundle)
            self._hold(skill, remote.label, None)

    def _checked(self, item: object, origin: Origin) -> Skill | None:
        label = _dist_label(origin)
        if not isinstance(item, Skill):
            reason = f"returned a {type(item).__name__}, not a toolpalette.Skill; it is skipped"
            self._report("garbage", reason, origin.pack, label, None)
            return None
        from toolpalette._skills.manifest import lint_manifest

        bundle_error = bundle_id_problem(item.bundle)
        check = lint_manifest(item.manifest, None)
        if bundle_error or check.error:
            reason = f"skipped: {bundle_error or check.error}"
            self._report("invalid-skill", reason, origin.pack, label, item.id)
            return None
        for warning in check.warnings:
            self._report("skill-warning", warning, origin.pack, label, item.id)
        item._with_origin(Origin(origin.pack, origin.distribution, origin.version, None))
        return item

    # -- lookups -------------------------------------------------------------------

    def get(self, skill_id: object) -> Skill | None:
        """The skill with this full id, or None; opens that skill's jar only."""
        if not isinstance(skill_id, str):
            return None
        bundle, sep, _name = skill_id.partition("/")
        if not sep:
            return None
        with self._lock:
            self._ensure(bundle)
        self._open_remotes(bundle)
        with self._lock:
            return self._skills.get(skill_id)

    def skill(self, skill_id: str) -> Skill:
        """The skill with this full id.

        Raises:
            SkillNotFoundError: No such skill; the error lists the ids available.
        """
        found = self.get(skill_id)
        if found is None:
            raise SkillNotFoundError(skill_id=skill_id, available=self.ids())
        return found

    def __contains__(self, skill_id: object) -> bool:
        return self.get(skill_id) is not None

    def ids(self) -> list[str]:
        """Every full skill id, sorted (opens every jar)."""
        return [skill.id for skill in self.skills()]

    def skills(self, *, remote: bool = True) -> list[Skill]:
        """Every skill, sorted by id (opens every jar).

        With ``remote=False``, only the skills of jars, folders and code: no remote
        origin (MCP server) is listed for it, and none of their skills is returned.
        """
        self.load_all(remote=remote)
        with self._lock:
            chosen = sorted(self._skills)
            if not remote:
                chosen = [k for k in chosen if k.partition("/")[0] not in self._remote_bundles]
            return [self._skills[key] for key in chosen]

    def bundles(self, *, remote: bool = True) -> list[str]:
        """Every bundle id that is declared and not contested, sorted (opens nothing).

        A remote origin's bundles are known once it was listed; ``remote=False``
        leaves them out.
        """
        with self._lock:
            local = set(self._jars) | self._code_bundles
            return sorted(local | self._remote_bundles if remote else local)

    def by_prefix(self, prefix: str) -> list[Skill]:
        """The skills of every bundle on the dot boundary of ``prefix``, sorted by id.

        ``io.example`` selects ``io.example`` and ``io.example.sql`` but not
        ``io.examples``. Jars outside the prefix are not opened.
        """
        self._open_remotes(prefix)
        with self._lock:
            bundles = [bundle for bundle in self.bundles() if matches_prefix(bundle, prefix)]
            for bundle in bundles:
                self._ensure(bundle)
            chosen = set(bundles)
            return [
                self._skills[key] for key in sorted(self._skills) if key.partition("/")[0] in chosen
            ]

    def bundle_origin(self, bundle: str) -> Origin | None:
        """Where a declared bundle comes from (its distribution), or None; opens nothing."""
        with self._lock:
            jar = self._jars.get(bundle)
            return jar.origin if jar is not None else None

    def load_all(self, *, remote: bool = True) -> None:
        """Open every declared jar now (``check`` and full listings need this).

        Every remote origin is listed too, unless ``remote`` is False.
        """
        with self._lock:
            for bundle in list(self._jars):
                self._ensure(bundle)
        if remote:
            self._open_remotes(None)

    def loaded_bundles(self) -> list[str]:
        """The bundles whose jars have been opened so far, sorted."""
        with self._lock:
            return sorted(bundle for bundle, jar in self._jars.items() if jar.opened)

    def problems(self) -> list[Problem]:
        """What was skipped or loaded leniently so far, in the order it was found.

        Jars not yet opened have not been checked; call
        [`load_all()`][toolpalette.SkillRegistry.load_all] first for a complete report.
        """
        with self._lock:
            return list(self._problems)

    # -- declaring and opening -----------------------------------------------------

    def _declare(self, jar: _Jar) -> None:
        with self._lock:
            error = bundle_id_problem(jar.bundle)
            if error:
                self._report("invalid-jar", error, jar.bundle, jar.dist, None)
                return
            claims = self._claims.setdefault(jar.bundle, [])
            claims.append(jar)
            self._version += 1
            if len(claims) == 1:
                self._jars[jar.bundle] = jar
                return
            self._jars.pop(jar.bundle, None)
            # The first collision reports both sides; a third claimant reports itself.
            for claimant in claims if len(claims) == 2 else claims[-1:]:
                others = " and ".join(other.label for other in claims if other is not claimant)
                reason = (
                    f"bundle id {jar.bundle!r} is claimed by {claimant.label} and also by "
                    f"{others}; no claimant is served: uninstall one of the distributions "
                    "or change its bundle id"
                )
                self._report("collision", reason, jar.bundle, claimant.dist, None)

    def _ensure(self, bundle: str) -> None:
        jar = self._jars.get(bundle)
        if jar is None or jar.opened:
            return
        jar.opened = True
        root = jar.root if jar.root is not None else self._open(jar)
        if root is None:
            return
        try:
            skills, problems = load_folder(root, bundle=bundle, origin=jar.origin)
        except Exception as exc:  # a jar must never take the registry down
            self._report("invalid-jar", f"cannot list its skills: {exc!r}", bundle, jar.dist, None)
            return
        for problem in problems:
            self._record(problem)
        for skill in skills:
            self._hold(skill, jar.label, jar.dist)

    def _open(self, jar: _Jar) -> Traversable | None:
        assert jar.info is not None
        incompatible = check_core_requirement(jar.info)
        if incompatible is not None:
            self._report("incompatible", str(incompatible), jar.bundle, jar.dist, None)
            return None
        try:
            return open_package(jar.info.value.strip())
        except NotADirectoryError as exc:
            self._report("invalid-jar", str(exc), jar.bundle, jar.dist, None)
        except Exception as exc:  # an import error of any kind, reported not raised
            reason = f"cannot import package {jar.info.module!r}: {exc!r}"
            self._report("import", reason, jar.bundle, jar.dist, None)
        return None

    def _hold(self, skill: Skill, label: str, dist: str | None) -> None:
        """Hold ``skill`` under its id, or report a collision: two claimants hold neither."""
        skill_id = skill.id
        self._version += 1
        if skill_id not in self._skills and skill_id not in self._contested:
            self._skills[skill_id] = skill
            self._holders[skill_id] = label
            return
        first = self._holders.get(skill_id, "an earlier claimant")
        self._skills.pop(skill_id, None)
        self._contested.add(skill_id)
        reason = (
            f"skill id {skill_id!r} is claimed by {first} and by {label}; neither is served: "
            "rename the skill in one of them or uninstall one"
        )
        self._report("collision", reason, skill.bundle, dist, skill_id)

    def _report(
        self, kind: ProblemKind, reason: str, pack: str | None, dist: str | None, item: str | None
    ) -> None:
        self._record(Problem(kind, reason, pack, dist, item))

    def _record(self, problem: Problem) -> None:
        self._problems.append(problem)
        level = logging.INFO if problem.kind == "skill-warning" else logging.WARNING
        logger.log(level, "%s", problem)


def _dist_label(origin: Origin) -> str | None:
    return distribution_label(origin.distribution, origin.version)


def _origin_label(origin: Origin) -> str:
    return _dist_label(origin) or f"pack {origin.pack}"
