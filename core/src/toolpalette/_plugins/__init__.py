"""Packs and their hooks: discovery, loading, configuration and the listing cache."""
