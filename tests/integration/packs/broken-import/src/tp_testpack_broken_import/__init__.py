"""Test-only toolpalette pack: its hooks module fails to import."""
