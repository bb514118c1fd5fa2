"""Hooks module whose import raises an exception that cannot be printed."""

from tp_testpack_hostile import UnprintableError

raise UnprintableError
