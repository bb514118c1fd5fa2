"""Test-only toolpalette pack: writes a sentinel file when imported."""
