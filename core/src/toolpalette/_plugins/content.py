"""The prompts and resources packs ship (``toolpalette_register_prompts``/``_resources``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from toolpalette._plugins import collect as _collect
from toolpalette._plugins.problems import Problem, describe_exception, describe_type
from toolpalette._tools.info import distribution_label
from toolpalette._tools.prompt import PackPrompt, get_prompt_spec
from toolpalette._tools.resource import PackResource, get_resource_spec

if TYPE_CHECKING:
    from toolpalette._plugins.catalog import PackCatalog

__all__ = ["Content", "PackContent"]

PROMPTS_HOOK = "toolpalette_register_prompts"
RESOURCES_HOOK = "toolpalette_register_resources"


@dataclass
class Content:
    """Every prompt and resource collected so far, and the problems met."""

    prompts: dict[str, PackPrompt] = field(default_factory=dict)
    """By name; two packs shipping one name offer neither (a collision problem)."""
    resources: dict[str, PackResource] = field(default_factory=dict)
    """By URI (or template)."""
    problems: list[Problem] = field(default_factory=list)


class PackContent:
    """Collects the loaded packs' prompts and resources, once per pack.

    Args:
        catalog: the pack catalog whose loaded packs are asked.
    """

    def __init__(self, catalog: PackCatalog) -> None:
        self._catalog = catalog
        self._done: set[str] = set()
        self._content = Content()
        self._clashes: set[str] = set()
        self._lock = threading.Lock()

    def content(self) -> Content:
        """What every pack ships (imports every pack first)."""
        self._catalog.load_all()
        with self._lock:
            for pack in self._catalog.loaded_packs():
                if pack not in self._done:
                    self._done.add(pack)
                    self._collect(pack)
            found = self._content
            return Content(dict(found.prompts), dict(found.resources), list(found.problems))

    def _collect(self, pack: str) -> None:
        origin = self._catalog.origin_of(pack)
        label = distribution_label(origin.distribution, origin.version)
        dist = origin.distribution
        problems = self._content.problems

        def problem(kind: Any, reason: str, item: str | None = None) -> None:
            problems.append(Problem(kind, reason, pack=pack, distribution=label, item=item))

        pm = self._catalog.pm
        for hook, read in ((PROMPTS_HOOK, get_prompt_spec), (RESOURCES_HOOK, get_resource_spec)):
            for _impl, result, exc in _collect.call_each(pm, hook, pack):
                if exc is not None:
                    problem("hook", f"{hook} raised {describe_exception(exc)}")
                    continue
                items, exc = _collect.items_of(result)
                if exc is not None:
                    problem(
                        "hook", f"iterating what {hook} returned raised {describe_exception(exc)}"
                    )
                for item in items:
                    spec: Any = read(item)
                    if spec is None:
                        kind = "prompt" if hook == PROMPTS_HOOK else "resource"
                        problem(
                            "garbage",
                            f"{hook} returned {describe_type(item)}, not a @{kind} function",
                        )
                        continue
                    spec = replace(spec, pack=pack, distribution=dist)
                    if isinstance(spec, PackPrompt):
                        self._add(self._content.prompts, spec.name, spec, problem)
                    else:
                        self._add(self._content.resources, spec.uri, spec, problem)

    def _add(self, into: dict[str, Any], key: str, spec: Any, problem: Any) -> None:
        if key in self._clashes:
            problem("collision", "another pack ships the same name; neither is offered", key)
            return
        other = into.pop(key, None)
        if other is not None:
            self._clashes.add(key)
            problem(
                "collision",
                f"pack {other.pack!r} ships the same name; neither is offered",
                key,
            )
            return
        into[key] = spec
