"""Hooks of a test pack that requires toolpalette>=99: it must never be imported."""

from __future__ import annotations

raise RuntimeError("tp_testpack_incompatible must never be imported")
