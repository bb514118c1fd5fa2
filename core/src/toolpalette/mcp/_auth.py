"""The palette server as an OAuth 2.1 resource server: bearer tokens, 401, 403, RFC 9728."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from pydantic import AnyHttpUrl
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from toolpalette.mcp._principal import REFUSAL

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["JWTAuth", "authorized"]


@dataclass(frozen=True)
class JWTAuth:
    """Authorization by JWT bearer tokens, for `toolpalette.mcp.asgi_app()`.

    Every request must carry a token signed by ``issuer``'s key (from ``jwks_url``, or
    the PEM ``public_key_file``), naming ``audience``, not expired, and granting every
    scope of ``required_scopes``.

    Attributes:
        issuer: the authorization server's issuer URL (the tokens' ``iss``).
        audience: the tokens' ``aud`` this server accepts.
        jwks_url: the issuer's JWKS URL (keys fetched and cached; rotation followed).
        public_key_file: a PEM public key or certificate file, instead of ``jwks_url``.
        required_scopes: scopes every token must grant (else 403).
        resource_url: this endpoint's public URL, as clients reach it: the ``resource``
            of the metadata document. Default: ``audience``, when it is an HTTP(S) URL.
        verifier: any SDK ``TokenVerifier`` to use instead of the JWT one (opaque
            tokens, introspection); ``jwks_url`` and ``public_key_file`` are then unused.
        jwks_timeout: seconds the whole fetch of the key set may take (it is also
            refused past 1 MiB).
        jwks_refresh: seconds a fetched key set is used before it is fetched again,
            in the background (requests keep the last good set meanwhile; a token of
            an unknown key id makes one refetch per 30 seconds at most).
    """

    issuer: str
    audience: str
    jwks_url: str | None = None
    public_key_file: str | os.PathLike[str] | None = None
    required_scopes: Sequence[str] = ()
    resource_url: str | None = None
    verifier: TokenVerifier | None = None
    jwks_timeout: float = 10.0
    jwks_refresh: float = 300.0

    def resource(self) -> str:
        """The endpoint's public URL (``resource_url``, else ``audience``).

        Raises:
            ValueError: neither is an HTTP(S) URL.
        """
        url = self.resource_url or self.audience
        if urlparse(url).scheme not in ("http", "https"):
            raise ValueError(
                "give resource_url (this endpoint's public URL): the audience is not a URL"
            )
        return url

    def token_verifier(self) -> TokenVerifier:
        """The verifier tokens are checked with (made once per app).

        Raises:
            ValueError: no verifier, and not exactly one of ``jwks_url`` and
                ``public_key_file``.
            OSError: the key file cannot be read.
        """
        if self.verifier is not None:
            return self.verifier
        from toolpalette.mcp._jwt import JWTVerifier

        return JWTVerifier(
            issuer=self.issuer,
            audience=self.audience,
            jwks_url=self.jwks_url,
            public_key_file=self.public_key_file,
            jwks_timeout=self.jwks_timeout,
            jwks_refresh=self.jwks_refresh,
        )


def authorized(app: Starlette, auth: JWTAuth) -> None:
    """Serve ``app`` only to authorized requests, and its metadata document to anyone.

    Adds the metadata route to ``app`` and the authorization as its outermost
    middleware: call it last, after every other ``add_middleware``.

    Raises:
        ValueError: the settings cannot be used (see `JWTAuth`).
        OSError: the key file cannot be read.
    """
    resource = AnyHttpUrl(auth.resource())
    issuer = AnyHttpUrl(auth.issuer)
    verifier = auth.token_verifier()
    scopes = list(auth.required_scopes)
    app.router.routes.extend(
        create_protected_resource_routes(
            resource_url=resource,
            authorization_servers=[issuer],
            scopes_supported=scopes or None,
        )
    )
    metadata = build_resource_metadata_url(resource)
    app.add_middleware(
        _Authorization,
        verifier=verifier,
        scopes=scopes,
        metadata_url=metadata,
        metadata_path=urlparse(str(metadata)).path,
    )


class _Authorization:
    """ASGI middleware: the SDK's bearer authentication, in front of every request.

    The metadata document and the lifespan pass untouched; everything else is
    authenticated, then refused (401, 403) or handed on with its verified token.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        verifier: TokenVerifier,
        scopes: list[str],
        metadata_url: AnyHttpUrl,
        metadata_path: str,
    ) -> None:
        self._open = app
        self._metadata_path = metadata_path
        required = _Required(app, scopes, metadata_url)
        self._guarded: Any = AuthenticationMiddleware(
            AuthContextMiddleware(required), backend=BearerAuthBackend(verifier)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] == self._metadata_path:
            await self._open(scope, receive, send)
            return
        told = REFUSAL.set([])
        try:
            await self._guarded(scope, receive, send)
        finally:
            REFUSAL.reset(told)


class _Required(RequireAuthMiddleware):
    """The SDK's 401 and 403, a 401 saying the kind of refusal (RFC 6750).

    ``error="invalid_token"`` with ``error_description`` one of a few fixed words
    (expired, wrong audience, bad signature, ...): never the token nor a claim.
    """

    async def _send_auth_error(
        self, send: Send, status_code: int, error: str, description: str
    ) -> None:
        told = REFUSAL.get()
        if status_code == 401 and told:
            description = f"The token is refused: {told[-1]}."
        await super()._send_auth_error(send, status_code, error, description)
