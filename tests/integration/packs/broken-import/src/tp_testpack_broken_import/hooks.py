"""Hooks of a test pack whose import fails."""

from __future__ import annotations

import tp_testpack_no_such_module  # type: ignore[import-not-found]  # noqa: F401
