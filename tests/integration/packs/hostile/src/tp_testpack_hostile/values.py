"""A module whose VALUE an entry point names instead of the module."""

VALUE = 42
