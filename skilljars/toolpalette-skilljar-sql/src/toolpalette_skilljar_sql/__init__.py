"""Skills for SQLite work with toolpalette's SQL tools; the skills are the folders here.

This package holds data only. toolpalette finds it through the ``toolpalette.skilljars``
entry point ``io.toolpalette.sql`` and reads each folder's ``SKILL.md`` with
``importlib.resources``; nothing in it is executed.
"""
