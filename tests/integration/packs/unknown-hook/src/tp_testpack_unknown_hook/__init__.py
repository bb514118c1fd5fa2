"""Test-only toolpalette pack: implements a hook that does not exist."""
