"""The strict JSON policy for model input: size, depth, big integers, NaN, duplicate keys."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from toolpalette.errors import InputProblem

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "MAX_INT_DIGITS",
    "InputPolicyError",
    "load_input",
    "load_sized",
]

MAX_INPUT_BYTES = 1_048_576
"""The largest JSON input accepted, in UTF-8 bytes."""
MAX_DEPTH = 64
"""The deepest nesting of arrays and objects accepted."""
MAX_INT_DIGITS = 4300
"""The most digits of an integer accepted (Python's own limit on converting them)."""
_MAX_INT_BITS: Final = int(MAX_INT_DIGITS * 3.3219280948873626)

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class InputPolicyError(ValueError):
    """Input broke the JSON policy; ``problem`` says how, without quoting the input."""

    def __init__(self, problem: InputProblem) -> None:
        self.problem = problem
        super().__init__(str(problem))


def _refuse(expected: str) -> InputPolicyError:
    return InputPolicyError(InputProblem(path="(input)", expected=expected))


def _reject_constant(_name: str) -> float:
    raise _refuse("finite numbers only (NaN and Infinity are not JSON)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _refuse("an object without duplicate keys")
    return result


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 overflows to infinity
        raise _refuse("finite numbers only (NaN and Infinity are not JSON)")
    return value


_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, object_pairs_hook=_no_duplicates
)


def _too_deep(text: str) -> bool:
    """Whether ``text`` nests arrays and objects deeper than `MAX_DEPTH`.

    Strings are cut out and every other character but brackets dropped (regular
    expressions, in C); then innermost pairs are removed, one level a pass: at most
    ``MAX_DEPTH`` passes, each linear. Text whose brackets do not balance is left to the
    parser, which refuses it.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_PAIRS)
    for _ in range(MAX_DEPTH):
        if not brackets:
            return False
        shorter = brackets.replace("()", "")
        if len(shorter) == len(brackets):
            return False
        brackets = shorter
    return bool(brackets)


# A string runs to its closing quote or to the end of the text (then it is invalid JSON,
# for the parser to refuse): every match attempt succeeds, so the scan stays linear.
_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_PAIRS: Final = str.maketrans("[{]}", "(())")


def _parse_text(text: str | bytes) -> Any:
    if isinstance(text, bytes):
        if len(text) > MAX_INPUT_BYTES:
            raise _refuse(f"at most {MAX_INPUT_BYTES} bytes of JSON")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise _refuse("UTF-8 encoded JSON") from None
    elif len(text) > MAX_INPUT_BYTES // 4 and _utf8_size(text) > MAX_INPUT_BYTES:
        raise _refuse(f"at most {MAX_INPUT_BYTES} bytes of JSON")
    nesting = text.count("[") + text.count("{")
    if nesting > MAX_DEPTH and _too_deep(text):
        raise _refuse(f"at most {MAX_DEPTH} levels of nesting")
    try:
        value = _DECODER.decode(text)
    except InputPolicyError:
        raise
    except ValueError as exc:
        if "digits" in str(exc):  # Python's own limit on converting long integers
            raise _refuse(f"integers of at most {MAX_INT_DIGITS} digits") from None
        raise _refuse("a JSON object (the text is not valid JSON)") from None
    except RecursionError:
        raise _refuse("a JSON object (the text is not valid JSON)") from None
    if _SURROGATE_ESCAPE.search(text) or _has_lone_surrogate(text):
        value = _check_tree(value)[0]
    return value


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_SCALARS: Final = frozenset({str, int, bool, type(None)})


def _check_tree(value: Any) -> tuple[Any, int]:
    """Walk a value (JSON types only, bounded depth and size, no lone surrogates).

    Returns a deep copy and the size of its JSON text (UTF-8 bytes, compact separators;
    an integer's digits are estimated from its bit length, never by printing it). The
    copy keeps the caller's nested containers out of a tool's reach. Problems name no
    path: keys are the model's text, and a policy problem is fixed by resending
    well-formed JSON anyway.
    """
    budget = [MAX_INPUT_BYTES]
    copied = _copy(value, 0, budget)
    return copied, MAX_INPUT_BYTES - budget[0]


def _text_size(text: str) -> int:
    if text.isascii():
        return len(text) + 2
    try:
        return len(text.encode("utf-8")) + 2
    except UnicodeEncodeError:
        raise _refuse("text without lone UTF-16 surrogates") from None


def _spend(budget: list[int], size: int) -> None:
    budget[0] -= size
    if budget[0] < 0:
        raise _refuse(f"at most {MAX_INPUT_BYTES} bytes of JSON")


def _copy(item: Any, depth: int, budget: list[int]) -> Any:
    kind = type(item)
    if kind is str:
        _spend(budget, _text_size(item) + 1)
        return item
    if kind is int:
        bits = item.bit_length()
        if bits > _MAX_INT_BITS:
            raise _refuse(f"integers of at most {MAX_INT_DIGITS} digits")
        _spend(budget, bits * 3 // 10 + 3)
        return item
    if kind in _SCALARS:  # bool, None
        _spend(budget, 6)
        return item
    if kind is float:
        if not math.isfinite(item):
            raise _refuse("finite numbers only (NaN and Infinity are not JSON)")
        _spend(budget, len(repr(item)) + 1)
        return item
    if depth >= MAX_DEPTH:
        raise _refuse(f"at most {MAX_DEPTH} levels of nesting")
    if isinstance(item, dict):
        copied = {}
        spent = 2
        for key, child in item.items():
            if type(key) is not str:
                raise _refuse("an object with string keys of valid text")
            # Short ASCII keys and small integers (the common case) are counted inline.
            spent += len(key) + 3 if key.isascii() else _text_size(key) + 1
            kind = type(child)
            if kind is int and -(10**15) < child < 10**15:
                spent += child.bit_length() * 3 // 10 + 3
                copied[key] = child
            elif kind is str and child.isascii():
                spent += len(child) + 3
                copied[key] = child
            else:
                copied[key] = _copy(child, depth + 1, budget)
            if spent > 4096:
                _spend(budget, spent)
                spent = 0
        _spend(budget, spent)
        return copied
    if isinstance(item, list):
        _spend(budget, 2)
        kinds = set(map(type, item))
        if kinds == {str} and all(map(str.isascii, item)):  # ASCII text only: counted in C
            _spend(budget, sum(map(len, item)) + 3 * len(item))
            return list(item)
        return [_copy(child, depth + 1, budget) for child in item]
    for base in (str, float, int):  # a subclass (an IntEnum, say): its plain value
        if isinstance(item, base):
            return _copy(base(item), depth, budget)
    raise _refuse("JSON values only (objects, arrays, strings, numbers, booleans, null)")


def _flat_size(data: dict[str, Any]) -> int:
    """The JSON size of an object of short plain values, counted as `_copy()` does.

    Most model input is one such object: ASCII keys, and ASCII text, integers of at most
    fifteen digits, finite floats, booleans or null as values. Those values are
    immutable, so a shallow copy is already a deep one and one pass here checks all of
    `_copy()`'s rules. -1 for anything else (a nested value, non-ASCII text, a
    subclass, a huge number, a size over the limit), which the full walk then decides.
    """
    spent = 2
    for key, child in data.items():
        if type(key) is not str or not key.isascii():
            return -1
        kind = type(child)
        if kind is str and child.isascii():
            spent += len(key) + len(child) + 6
        elif kind is int and -(10**15) < child < 10**15:
            spent += len(key) + child.bit_length() * 3 // 10 + 6
        elif child is None or kind is bool:
            spent += len(key) + 9
        elif kind is float and math.isfinite(child):
            spent += len(key) + len(repr(child)) + 4
        else:
            return -1
    return spent if spent <= MAX_INPUT_BYTES else -1


def _nested_size(data: dict[str, Any], copy: bool = True) -> int:
    """`_flat_size()` for an object whose values are plain values or flat objects.

    A model input's field that is itself a small model (``{"p": {"x": 1, ...}}``) is
    the next most common shape: each nested object is checked by `_flat_size()` and,
    with ``copy``, replaced in ``data`` (already the caller's copy) by a shallow copy of
    its own, which is a deep one since its values are immutable. -1 for anything else.
    """
    spent = 2
    nested: list[tuple[str, dict[str, Any]]] = []
    for key, child in data.items():
        if type(child) is dict:
            if type(key) is not str or not key.isascii():
                return -1
            size = _flat_size(child)
            if size < 0:
                return -1
            spent += len(key) + size + 3
            nested.append((key, child))
        else:
            size = _flat_size({key: child})
            if size < 0:
                return -1
            spent += size - 2
    if not nested or spent > MAX_INPUT_BYTES:
        return -1
    if copy:
        for key, child in nested:
            data[key] = dict(child)
    return spent


def load_input(raw: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """Apply the JSON policy to model input and return it as a fresh dict.

    Raises:
        InputPolicyError: the input breaks the policy; its ``problem`` says how.
    """
    return load_sized(raw)[0]


def load_sized(
    raw: str | bytes | Mapping[str, Any], *, copy: bool = True
) -> tuple[dict[str, Any], int]:
    """Like `load_input()`, and also return the input's size.

    The size is the text's length, or for a mapping the size of the JSON text it stands
    for: a mapping has the same size limit as text.

    ``copy=False`` is for a validator that builds every container of its value anew
    (`ModelInput.fresh`): a dict of plain values, or of flat objects of them, is then
    checked and returned as it is, the caller's own, for the validator to read, never
    to change or hand on. Other mappings are still copied by the full walk.

    Raises:
        InputPolicyError: the input breaks the policy; its ``problem`` says how.
    """
    if type(raw) is dict:
        value = dict(raw) if copy else raw  # a fresh dict: a tool never holds the caller's
        size = _flat_size(value)
        if size < 0:
            size = _nested_size(value, copy)
        if size < 0:  # deeper or unusual values: the full walk checks and copies them
            value, size = _check_tree(value)
        return value, size
    if isinstance(raw, (str, bytes)):
        value, size = _parse_text(raw), len(raw)
    elif isinstance(raw, Mapping):
        value, size = _check_tree(dict(raw))
    else:
        raise _refuse("a JSON object (text or mapping)")
    if not isinstance(value, dict):
        raise _refuse("a JSON object at the top level")
    return value, size
