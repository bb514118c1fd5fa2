"""Skills for workspace file work with toolpalette's file tools; the skills are the folders here.

Data only: found through the ``io.toolpalette.files`` skilljar entry point, never executed.
"""
