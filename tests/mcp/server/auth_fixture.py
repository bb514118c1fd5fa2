"""Keys and tokens for the authorization tests: an issuer the tests make, and its JWKS.

Keys are generated per test (RSA or EC, with ``cryptography``); tokens are signed with
PyJWT; the JWKS is served on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

ISSUER = "https://issuer.example"
AUDIENCE = "https://mcp.example/mcp"


class Issuer:
    """An authorization server's signing key, and the tokens it would issue."""

    def __init__(self, kind: str = "RSA", kid: str = "k1") -> None:
        if kind == "RSA":
            self.key: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            self.algorithm = "RS256"
        else:
            self.key = ec.generate_private_key(ec.SECP256R1())
            self.algorithm = "ES256"
        self.kid = kid

    def token(self, subject: str, scopes: str = "", **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": subject, "iat": now, "exp": now + 300}
        if scopes:
            body["scope"] = scopes
        body.update(claims)
        return jwt.encode(body, self.key, algorithm=self.algorithm, headers={"kid": self.kid})

    def pem(self, path: Path) -> Path:
        public = self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        path.write_bytes(public)
        return path

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.algorithms.get_default_algorithms()[self.algorithm]
        found: dict[str, Any] = json.loads(algorithm.to_jwk(self.key.public_key()))
        return {**found, "kid": self.kid, "alg": self.algorithm, "use": "sig"}


@contextmanager
def jwks_server(*issuers: Issuer) -> Iterator[str]:
    """A JWKS document served on 127.0.0.1; its URL."""
    body = json.dumps({"keys": [i.jwk() for i in issuers]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
