"""Test-only toolpalette pack: one hooks module behind two entry points."""
