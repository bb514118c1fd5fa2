"""The pipeline: one door for every tool call (uses ``_tools``)."""
