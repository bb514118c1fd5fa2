"""toolpalette-files: tools over one workspace root that nothing can escape.

The tools live in `toolpalette_files.tools`; importing this package imports nothing else.
"""

from __future__ import annotations

__all__ = ["ENV_ROOT"]

ENV_ROOT = "TOOLPALETTE_FILES_ROOT"
"""The environment variable read when the host's configuration gives no ``root``."""
