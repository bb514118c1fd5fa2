"""Test-only toolpalette pack: collides with beta on 'search'."""
