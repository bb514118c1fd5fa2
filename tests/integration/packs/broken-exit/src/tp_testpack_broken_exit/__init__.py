"""Test-only toolpalette pack: its hooks module calls sys.exit."""
