"""The JSON-Schema engine: checks, bounded validation and strict subsets (imports no layer)."""
