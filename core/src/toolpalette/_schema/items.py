"""The bounded validator's ``items``: plain items a type (or a string's value) decides, in C."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Sequence
from typing import Any

from toolpalette._schema.budget import out_of_steps, spend
from toolpalette._schema.prepared import ANY_TYPE, simple_items

__all__ = ["check_items"]


def check_items(validator: Any, items: Any, instance: Any, schema: Any) -> Iterable[Any]:
    """``items`` (Draft 2020-12), with the items a type alone decides checked in C.

    An item schema that names only a type (and annotations) accepts an item of one of
    the Python types that JSON type stands for without a descent; so does one of
    strings allowed by value (``enum`` or ``const`` of strings, with or without
    ``type``) and an ``anyOf`` of such schemas (see
    `simple_items()`). The other items (a wrong type,
    ``1.0`` for ``integer``, the first of each string not allowed) descend as usual, a
    step each.
    """
    from jsonschema import ValidationError

    if not validator.is_type(instance, "array"):
        return
    prefix = len(schema.get("prefixItems", []))
    if len(instance) <= prefix:
        return
    if items is False:
        yield ValidationError(f"expected at most {prefix} items")
        return
    simple = simple_items(items)
    rest: Sequence[int] = range(prefix, len(instance))
    if simple is not None:
        # Only the odd items descend: found by C-level list and set methods.
        accepted, texts = simple
        if accepted is ANY_TYPE:
            return
        kinds = list(map(type, itertools.islice(instance, prefix, None)))
        odd_kinds = set(kinds) - accepted
        if not odd_kinds:
            return
        odd: list[int] = []
        for kind in odd_kinds:
            if kind is str and texts:  # a string is accepted by its value
                strings = itertools.compress(
                    itertools.islice(instance, prefix, None),
                    map(operator.is_, kinds, itertools.repeat(str)),
                )
                # The first place of each string not accepted (a string equals no other
                # JSON value, so list.index finds just that string).
                odd.extend(instance.index(text, prefix) - prefix for text in set(strings) - texts)
            else:
                odd.extend(_positions(kinds, kind))
        if not odd:
            return
        stop = spend(len(odd))
        if stop is not None:
            yield from stop
            return
        rest = sorted(prefix + i for i in odd)
    else:
        stop = spend(len(rest))
        if stop is not None:
            yield from stop
            return
    for index in rest:
        yield from validator.descend(instance=instance[index], schema=items, path=index)
        if out_of_steps():  # every later item would cost a descent and find nothing
            return


def _positions(kinds: list[type], kind: type) -> Iterable[int]:
    """Where ``kind`` is in ``kinds``, each found by ``list.index``."""
    index = -1
    while True:
        try:
            index = kinds.index(kind, index + 1)
        except ValueError:
            return
        yield index
