"""Test-only toolpalette pack: requires a toolpalette that does not exist yet."""
