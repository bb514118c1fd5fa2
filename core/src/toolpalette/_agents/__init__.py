"""Thinkers and their palettes: turns, policies, admission, grants, meta-tools, code mode."""
