"""Hooks module of a pack named with a comma; the tests block it, so it must never run."""

raise RuntimeError("the pack 'hostile,comma' was imported although it was blocked")
