"""Hooks of a test pack whose import raises SystemExit."""

from __future__ import annotations

import sys

sys.exit(3)
