"""``tools/list`` cursors: the palette's digest and a position, readable by any worker."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

__all__ = ["BadCursor", "decode", "encode"]

_SHAPE: Final = re.compile(r"^([0-9a-f]{32})\.(0|[1-9][0-9]{0,8})\Z")
_PREFIX: Final = "tp1."


class BadCursor(ValueError):
    """A cursor that is malformed, or cut from another version of the palette."""


def encode(digest: str, position: int) -> str:
    """The cursor for the tool at ``position`` of the listing with ``digest``."""
    raw = f"{digest}.{position}".encode("ascii")
    return _PREFIX + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode(cursor: str, digest: str, total: int) -> int:
    """The position ``cursor`` points at in the listing with ``digest`` of ``total`` tools.

    Raises:
        BadCursor: the cursor does not decode, names another listing, or points
            outside this one.
    """
    if not cursor.startswith(_PREFIX) or len(cursor) > 80:
        raise BadCursor("Invalid cursor: it was not issued by this server.")
    body = cursor[len(_PREFIX) :]
    try:
        text = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        raise BadCursor("Invalid cursor: it was not issued by this server.") from None
    match = _SHAPE.match(text)
    if match is None:
        raise BadCursor("Invalid cursor: it was not issued by this server.")
    if match.group(1) != digest:
        raise BadCursor(
            "Stale cursor: the tool list changed since it was issued; list again from the start."
        )
    position = int(match.group(2))
    if not 0 < position < total:
        raise BadCursor("Invalid cursor: it points outside the tool list.")
    return position
