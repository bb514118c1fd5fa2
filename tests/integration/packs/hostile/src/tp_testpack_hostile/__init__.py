"""Test-only toolpalette packs whose failures are themselves hard to report."""


class UnprintableError(Exception):
    """An exception whose message cannot be read: ``str()`` of it raises."""

    def __str__(self) -> str:
        raise RuntimeError("even describing this error fails")


class Escape(BaseException):
    """A BaseException subclass a careless pack might raise (not Exception, not exit)."""
