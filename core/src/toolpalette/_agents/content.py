"""``ContentSelector``: which packs' prompts and resources a kind of agent declares."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from typing_extensions import Self

from toolpalette._plugins.content import Content
from toolpalette._tools.prompt import PackPrompt, get_prompt_spec
from toolpalette._tools.resource import PackResource, get_resource_spec

__all__ = ["ContentSelector", "OfferedContent"]

_Item = TypeVar("_Item", PackPrompt, PackResource)


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


@dataclass(frozen=True)
class OfferedContent:
    """The prompts and resources one thinker class offers."""

    prompts: tuple[PackPrompt, ...] = ()
    resources: tuple[PackResource, ...] = ()

    def prompt(self, name: str) -> PackPrompt | None:
        """The offered prompt of that name, or None."""
        return next((p for p in self.prompts if p.name == name), None)

    def resource_for(self, uri: str) -> tuple[PackResource, dict[str, str]] | None:
        """The offered resource ``uri`` names, static ones first, and its parameters."""
        for candidate in sorted(self.resources, key=lambda r: r.templated):
            values = candidate.match(uri)
            if values is not None:
                return candidate, values
        return None


class ContentSelector:
    """The prompts and resources of chosen packs, distributions or names.

    Return one from ``Thinker.declare_content``: ``ContentSelector().pack("docs")``,
    ``.distribution("toolpalette-docs")``, ``.prompt("review")``,
    ``.resource("docs://{page}")``, or ``.all()``. A read-only thinker is offered only
    those declared ``read_only`` (the default).
    """

    def __init__(self) -> None:
        self._all = False
        self._packs: set[str] = set()
        self._distributions: set[str] = set()
        self._names: set[str] = set()
        self._objects: list[PackPrompt | PackResource] = []

    def all(self) -> Self:
        """Every pack's prompts and resources."""
        self._all = True
        return self

    def pack(self, name: str) -> Self:
        """The prompts and resources of the pack of that entry point name."""
        self._packs.add(name)
        return self

    def distribution(self, name: str) -> Self:
        """The prompts and resources of the packs of that distribution."""
        self._distributions.add(_canonical(name))
        return self

    def prompt(self, name_or_function: object) -> Self:
        """The prompt of that name (whichever pack ships it), or a ``@prompt`` function."""
        return self._named(name_or_function, get_prompt_spec, "@prompt")

    def resource(self, uri_or_function: object) -> Self:
        """The resource of that URI or template (any pack's), or a ``@resource`` function."""
        return self._named(uri_or_function, get_resource_spec, "@resource")

    def _named(self, target: object, spec_of: Any, what: str) -> Self:
        if isinstance(target, str):
            self._names.add(target)
            return self
        spec = spec_of(target)
        if spec is None:
            raise TypeError(f"expected a name or a {what} function, got {type(target).__name__}")
        self._objects.append(spec)
        return self

    def __bool__(self) -> bool:
        return self._all or bool(self._packs or self._distributions or self._names or self._objects)

    def _wants(self, item: PackPrompt | PackResource, key: str) -> bool:
        if self._all or key in self._names or item.pack in self._packs:
            return True
        dist = item.distribution
        return dist is not None and _canonical(dist) in self._distributions

    def resolve(self, content: Content, *, read_only: bool = False) -> OfferedContent:
        """What this selection offers of ``content`` (a read-only thinker: read-only ones)."""
        own_prompts = {o.name: o for o in self._objects if isinstance(o, PackPrompt)}
        own_resources = {o.uri: o for o in self._objects if isinstance(o, PackResource)}
        prompts = self._kept(((p, p.name) for p in content.prompts.values()), read_only)
        resources = self._kept(((r, r.uri) for r in content.resources.values()), read_only)
        prompts = [p for p in prompts if p.name not in own_prompts]
        resources = [r for r in resources if r.uri not in own_resources]
        prompts += [p for p in own_prompts.values() if p.read_only or not read_only]
        resources += [r for r in own_resources.values() if r.read_only or not read_only]
        return OfferedContent(tuple(prompts), tuple(resources))

    def _kept(self, items: Iterable[tuple[_Item, str]], read_only: bool) -> list[_Item]:
        return [
            item
            for item, key in items
            if self._wants(item, key) and (item.read_only or not read_only)
        ]

    def __repr__(self) -> str:
        if self._all:
            return "ContentSelector(all)"
        chosen = sorted(self._packs) + sorted(self._distributions) + sorted(self._names)
        return f"ContentSelector({', '.join(chosen)})"
