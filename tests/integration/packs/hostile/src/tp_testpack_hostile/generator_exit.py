"""Hooks module whose import raises GeneratorExit."""

raise GeneratorExit
