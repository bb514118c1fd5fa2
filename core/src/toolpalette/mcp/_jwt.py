"""Verifying JWT bearer tokens with PyJWT: the SDK's ``TokenVerifier`` for ``_auth.py``.

No token is ever put in a log or a message: a refusal logs its kind only.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import logging
import os
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import jwt
from mcp.server.auth.provider import AccessToken

from toolpalette.mcp._principal import REFUSAL

__all__ = ["ALGORITHMS", "JWKS_MAX_BYTES", "JWTVerifier", "refusal_kind"]

ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")
"""The signature algorithms accepted by default (asymmetric only: never ``none`` nor HMAC)."""
JWKS_MAX_BYTES: Final = 1 << 20
"""The largest key set document read (1 MiB): a larger one is refused, unread past it."""
KID_COOLDOWN: Final = 30.0
"""Seconds between two refetches forced by unknown key ids (per issuer)."""

_log = logging.getLogger("toolpalette.mcp.auth")

_KINDS: Final = {
    jwt.ExpiredSignatureError: "expired",
    jwt.InvalidAudienceError: "wrong audience",
    jwt.InvalidIssuerError: "wrong issuer",
    jwt.ImmatureSignatureError: "not yet valid",
    jwt.InvalidSignatureError: "bad signature",
    jwt.MissingRequiredClaimError: "a required claim is missing",
    jwt.InvalidAlgorithmError: "an algorithm not accepted",
    jwt.DecodeError: "malformed",
}


def refusal_kind(error: BaseException) -> str:
    """A short, fixed description of why a token was refused (never its text)."""
    for kind, text in _KINDS.items():
        if isinstance(error, kind):
            return text
    if isinstance(error, _UnknownKey):
        return "unknown signing key"
    return "invalid"


class _UnknownKey(Exception):
    """No key of the issuer's set signs this token."""


class JWTVerifier:
    """The SDK's ``TokenVerifier`` for JWT access tokens signed by one issuer.

    Args:
        issuer: the ``iss`` every token must carry.
        audience: the ``aud`` every token must name (this server's resource).
        jwks_url: where the issuer publishes its keys (a JWKS document), or
        public_key_file: a PEM public key (or certificate) file, read now.
        algorithms: the signature algorithms accepted.
        leeway: seconds of clock skew tolerated on ``exp`` and ``nbf``.
        jwks_timeout: seconds the whole fetch of the key set may take.
        jwks_refresh: seconds a key set is used before it is refetched (in the
            background: requests keep the last good set meanwhile).

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
        jwks_timeout: float = 10.0,
        jwks_refresh: float = 300.0,
    ) -> None:
        if (jwks_url is None) == (public_key_file is None):
            raise ValueError("give one of jwks_url and public_key_file")
        self._issuer = issuer
        self._audience = audience
        self._algorithms = list(algorithms)
        self._leeway = leeway
        self._jwks = (
            _KeySet(jwks_url, timeout=jwks_timeout, refresh=jwks_refresh)
            if jwks_url is not None
            else None
        )
        self._key: Any = None
        if public_key_file is not None:
            with open(public_key_file, "rb") as file:
                self._key = _public_key(file.read())

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access the token gives, or None when it is not valid here."""
        try:
            key = self._key
            if self._jwks is not None:
                key = await self._jwks.key_for(token)
            claims = jwt.decode(
                token,
                key,
                algorithms=self._algorithms,
                audience=self._audience,
                issuer=self._issuer,
                leeway=self._leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except _Unreachable:
            _log.warning("bearer token refused: the issuer's key set cannot be fetched")
            _tell("the issuer's keys are unavailable")
            return None
        except Exception as exc:  # the kind only: a text may quote the token
            kind = refusal_kind(exc)
            _log.info("bearer token refused: %s", kind)
            _tell(kind)
            return None
        return _access(token, claims)


def _tell(kind: str) -> None:
    holder = REFUSAL.get()
    if holder is not None:
        holder.append(kind)


class _Unreachable(Exception):
    """The issuer's key set has never been fetched."""


class _KeySet:
    """An issuer's key set: the last good one, refetched in the background.

    One fetch runs at a time. A request waits for a fetch only when no key set was
    ever fetched, or for the refetch its own unknown key id started (at most one per
    `KID_COOLDOWN`); every other request uses the last good set at once.
    """

    def __init__(self, url: str, *, timeout: float, refresh: float) -> None:
        self._url = url
        self._timeout = timeout
        self._refresh = refresh
        self._keys: dict[str | None, Any] | None = None
        self._fetched = 0.0
        self._forced = -KID_COOLDOWN
        self._fetch: asyncio.Task[None] | None = None

    async def key_for(self, token: str) -> Any:
        """The key that signs ``token`` (by its ``kid``).

        Raises:
            _Unreachable: no key set could ever be fetched.
            _UnknownKey: no key of the set has that id.
            jwt.DecodeError: the token's header cannot be read.
        """
        kid = jwt.get_unverified_header(token).get("kid")
        now = time.monotonic()
        if self._keys is None:
            await self._refetch()
        elif now - self._fetched > self._refresh:
            self._start()  # in the background: this request uses the last good set
        keys = self._keys
        if keys is None:
            raise _Unreachable
        if kid not in keys and now - self._forced >= KID_COOLDOWN:
            self._forced = now  # rotation: one refetch per cooldown, whatever the tokens
            await self._refetch()
            keys = self._keys or keys
        found = keys.get(kid) if kid is not None or len(keys) != 1 else next(iter(keys.values()))
        if found is None:
            raise _UnknownKey
        return found

    def _start(self) -> asyncio.Task[None]:
        fetch = self._fetch
        if fetch is None or fetch.done() or fetch.get_loop() is not asyncio.get_running_loop():
            fetch = self._fetch = asyncio.ensure_future(self._run())
        return fetch

    async def _refetch(self) -> None:
        await asyncio.shield(self._start())

    async def _run(self) -> None:
        try:
            keys = await _off_loop(_fetch, self._url, self._timeout)
        except Exception as exc:
            _log.warning("the issuer's key set could not be fetched: %s", exc)
            if self._keys is not None:
                self._fetched = time.monotonic()  # keep the last good set; try later
            return
        self._keys, self._fetched = keys, time.monotonic()


_T = TypeVar("_T")


async def _off_loop(function: Callable[..., _T], *args: Any) -> _T:
    """``function(*args)``, awaited, run in a thread of its own that ends with it.

    The fetch's deadline bounds the thread; no pool keeps it afterwards.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[_T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def run() -> None:
        try:
            result, error = function(*args), None
        except BaseException as exc:  # handed to the awaiting task
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="toolpalette-jwks-fetch", daemon=True).start()
    return await done


def _fetch(url: str, timeout: float) -> dict[str | None, Any]:
    """The signing keys of the JWKS at ``url``, by key id, read whole within ``timeout``.

    Every read waits at most for what is left of the deadline, so a document sent a
    byte at a time ends at the deadline too; no redirect is followed.

    Raises:
        OSError: the fetch failed, took too long, or the document passed
            `JWKS_MAX_BYTES`.
        ValueError: it is not a JWKS with a usable key.
    """
    deadline = time.monotonic() + timeout
    parsed = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parsed.scheme == "https" else http.client.HTTPConnection
    connection = kind(parsed.netloc, timeout=timeout)
    response: http.client.HTTPResponse | None = None
    try:
        path = parsed.path or "/"
        connection.request("GET", f"{path}?{parsed.query}" if parsed.query else path)
        response = connection.getresponse()
        if response.status != 200:
            raise OSError(f"the key set's URL answered {response.status}")
        parts: list[bytes] = []
        size = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the key set took more than {timeout:g} s")
            if connection.sock is not None:
                connection.sock.settimeout(left)
            part = response.read1(65536)
            if not part:
                break
            size += len(part)
            if size > JWKS_MAX_BYTES:
                raise OSError(f"the key set is larger than {JWKS_MAX_BYTES:,} bytes")
            parts.append(part)
    finally:
        if response is not None:
            response.close()  # its file holds the socket open past the connection's close
        connection.close()
    try:
        found = jwt.PyJWKSet.from_dict(json.loads(b"".join(parts)))
    except jwt.PyJWKSetError as exc:
        raise ValueError(str(exc)) from None
    return {key.key_id: key.key for key in found.keys if key.public_key_use in (None, "sig")}


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
