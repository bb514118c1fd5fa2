"""Benchmarks of toolpalette beside its anchors; run with ``python -m nox -s bench``."""
