"""Test-only toolpalette pack: collides with alpha on 'search'."""
