"""Verifying JWT bearer tokens with PyJWT: the SDK's ``TokenVerifier`` for ``_auth.py``.

PyJWT (with its ``crypto`` extra, which brings ``cryptography``) is the ``mcp`` SDK's
own dependency, so the ``mcp`` extra already installs it; it checks the signature
(RS*, PS*, ES*, EdDSA), ``exp``/``nbf``/``iat``, the issuer and the audience, and its
``PyJWKClient`` fetches and caches a JWKS (refetching once, after a cooldown, for a
key id it does not know: key rotation). No token is ever put in a log or a message:
a refusal logs the kind of failure only. This module is imported only when
authorization is on.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any, Final

import anyio.to_thread
import jwt
from mcp.server.auth.provider import AccessToken

__all__ = ["ALGORITHMS", "JWTVerifier"]

ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")
"""The signature algorithms accepted by default (asymmetric only: never ``none`` nor HMAC)."""

_log = logging.getLogger("toolpalette.mcp.auth")


class JWTVerifier:
    """The SDK's ``TokenVerifier`` for JWT access tokens signed by one issuer.

    Args:
        issuer: the ``iss`` every token must carry.
        audience: the ``aud`` every token must name (this server's resource).
        jwks_url: where the issuer publishes its keys (a JWKS document), or
        public_key_file: a PEM public key (or certificate) file, read now.
        algorithms: the signature algorithms accepted.
        leeway: seconds of clock skew tolerated on ``exp`` and ``nbf``.

    Raises:
        ValueError: neither or both of ``jwks_url`` and ``public_key_file``.
        OSError: the key file cannot be read.
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        jwks_url: str | None = None,
        public_key_file: str | os.PathLike[str] | None = None,
        algorithms: Sequence[str] = ALGORITHMS,
        leeway: float = 30.0,
    ) -> None:
        if (jwks_url is None) == (public_key_file is None):
            raise ValueError("give one of jwks_url and public_key_file")
        self._issuer = issuer
        self._audience = audience
        self._algorithms = list(algorithms)
        self._leeway = leeway
        self._jwks = jwt.PyJWKClient(jwks_url, timeout=10) if jwks_url is not None else None
        self._key: Any = None
        if public_key_file is not None:
            with open(public_key_file, "rb") as file:
                self._key = _public_key(file.read())

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access the token gives, or None when it is not valid here."""
        try:
            key = self._key
            if self._jwks is not None:  # may fetch the key set: off the event loop
                key = await anyio.to_thread.run_sync(self._jwks.get_signing_key_from_jwt, token)
            claims = jwt.decode(
                token,
                key,
                algorithms=self._algorithms,
                audience=self._audience,
                issuer=self._issuer,
                leeway=self._leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWKClientConnectionError:
            _log.warning("bearer token refused: the issuer's key set cannot be fetched")
            return None
        except Exception as exc:  # the kind only: a text may quote the token
            _log.info("bearer token refused: %s", type(exc).__name__)
            return None
        return _access(token, claims)


def _public_key(pem: bytes) -> Any:
    """The public key of a PEM file: a public key, or an X.509 certificate's."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    if b"-----BEGIN CERTIFICATE-----" in pem:
        return x509.load_pem_x509_certificate(pem).public_key()
    return load_pem_public_key(pem)


def _access(token: str, claims: dict[str, Any]) -> AccessToken:
    subject = claims.get("sub")
    client = claims.get("client_id") or claims.get("azp") or subject or ""
    exp = claims.get("exp")
    return AccessToken(
        token=token,
        client_id=str(client),
        scopes=_scopes(claims),
        expires_at=int(exp) if isinstance(exp, (int, float)) else None,
        subject=str(subject) if subject is not None else None,
        claims=claims,
    )


def _scopes(claims: dict[str, Any]) -> list[str]:
    """The token's scopes: RFC 9068's space-separated ``scope``, or a ``scp`` list or string.

    Split on the space character only (RFC 6749, section 3.3): ``read\u00a0write`` is
    one scope, not two.
    """
    for key in ("scope", "scp"):
        value = claims.get(key)
        if isinstance(value, str):
            return [part for part in value.split(" ") if part]
        if isinstance(value, list):
            return [str(item) for item in value]
    return []
