"""Test-only toolpalette pack: one hook implementation raises, another works."""
