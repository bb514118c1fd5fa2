"""Who an MCP request is made for, and which palette that principal is served."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Union

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken, principal_components

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolpalette import Thinker

__all__ = [
    "PaletteChoice",
    "Principal",
    "ThinkerFor",
    "principal_of",
    "request_principal",
    "scope_principal",
]


@dataclass(frozen=True)
class Principal:
    """The caller a verified bearer token stands for (never the token itself).

    Given to a host's ``thinker_for`` function; equal principals are the same caller.
    """

    subject: str | None
    """The token's ``sub``: the resource owner (unique per issuer), if it says."""
    client_id: str
    """The OAuth client the token was issued to (``client_id``, else ``azp``, else ``sub``)."""
    issuer: str | None
    """The token's ``iss``."""
    scopes: frozenset[str]
    """The scopes the token grants (``scope`` or ``scp``)."""
    claims: Mapping[str, Any]
    """Every claim of the token, read-only (for a host's own mapping rules)."""

    @property
    def kind(self) -> Literal["user", "client"]:
        """Whose token it is: a user's, or an OAuth client's acting for itself.

        ``client`` when the token has no ``sub``, or a ``sub`` that is its own
        ``client_id`` (or ``azp``), as client-credentials tokens carry (RFC 9068,
        section 2.2); ``user`` otherwise.
        """
        claims = self.claims
        explicit = claims.get("client_id") or claims.get("azp")
        if self.subject is None or (explicit is not None and str(explicit) == self.subject):
            return "client"
        return "user"

    @property
    def name(self) -> str:
        """How the grant ledger names this caller, typed by `kind`.

        ``user:SUBJECT`` or ``client:CLIENT_ID``: a user and a client of one id are two.
        """
        if self.kind == "user":
            return f"user:{self.subject}"
        return f"client:{self.client_id}"

    @property
    def identity(self) -> tuple[str, str | None, str | None]:
        """``(client_id, issuer, subject)``: what the SDK compares to keep a session's owner."""
        return (self.client_id, self.issuer, self.subject)


@dataclass(frozen=True)
class PaletteChoice:
    """What a principal is served: a thinker class, read-only or not.

    ``thinker`` None is the app's own thinker (the one given to ``asgi_app``).
    """

    thinker: type[Thinker] | None = None
    read_only: bool = False


ThinkerFor = Callable[[Principal], Union["type[Thinker]", PaletteChoice, None]]
"""A host's mapping: a principal to a thinker class, a `PaletteChoice`, or None
(the app's own thinker)."""


def principal_of(token: AccessToken) -> Principal:
    """The principal a verified token stands for."""
    client_id, issuer, subject = principal_components(token)
    claims = dict(token.claims or {})
    return Principal(
        subject=subject,
        client_id=client_id,
        issuer=issuer,
        scopes=frozenset(token.scopes),
        claims=MappingProxyType(claims),
    )


def scope_principal(scope: Mapping[str, Any]) -> Principal | None:
    """The principal of an ASGI request the authorization middleware let in, or None."""
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        return _cached(user)
    return None


def request_principal(ctx: ServerRequestContext[Any]) -> Principal | None:
    """The principal of the request a handler answers, or None (no authorization).

    Read from the HTTP request the transport hands the handler (its ASGI scope), else
    from the SDK's ``get_access_token()`` context.
    """
    scope = getattr(ctx.request, "scope", None)
    if isinstance(scope, Mapping):
        return scope_principal(scope)
    token = get_access_token()
    return principal_of(token) if token is not None else None


REFUSAL: ContextVar[list[str] | None] = ContextVar("toolpalette_token_refusal", default=None)
"""Where the request being authenticated is told why its token was refused (its kind,
a few fixed words): the verifier writes it, the 401 says it."""

_CACHE_ATTRIBUTE = "_toolpalette_principal"


def _cached(user: AuthenticatedUser) -> Principal:
    """The principal of an authenticated request, made once per request."""
    found = getattr(user, _CACHE_ATTRIBUTE, None)
    if isinstance(found, Principal):
        return found
    made = principal_of(user.access_token)
    setattr(user, _CACHE_ATTRIBUTE, made)
    return made
