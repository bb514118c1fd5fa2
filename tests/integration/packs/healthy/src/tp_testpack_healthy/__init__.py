"""Test-only toolpalette pack: a healthy pack: a function tool, a class tool and a hand-built provider."""
