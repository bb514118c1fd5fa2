"""Test-only toolpalette pack: hooks return garbage next to one good tool."""
