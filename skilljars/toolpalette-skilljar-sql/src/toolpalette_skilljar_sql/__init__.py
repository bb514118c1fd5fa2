"""Skills for SQLite work with toolpalette's SQL tools; the skills are the folders here.

Data only: found through the ``io.toolpalette.sql`` skilljar entry point, never executed.
"""
