"""Hooks module whose import raises a BaseException subclass."""

from tp_testpack_hostile import Escape

raise Escape("escaping from the import")
