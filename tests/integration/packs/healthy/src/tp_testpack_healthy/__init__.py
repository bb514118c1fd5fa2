"""Test-only toolpalette pack: healthy (function, class and hand-built tools)."""
