"""Test-only toolpalette pack: a hook implementation asks for an argument the hook does not have."""
