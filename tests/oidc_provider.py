"""A small OpenID Connect provider for tests, over real HTTP on 127.0.0.1: the authorization code
flow with PKCE, RS256 ID tokens, a JWKS endpoint and userinfo. `sign_in_as(claims)` chooses who
the next person at its sign-in page is."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

CLIENT_ID, CLIENT_SECRET = "claimdesk-test", "test-client-secret"


class OIDCProvider:
    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "test-key-1"
        self.claims: dict = {}
        self.codes: dict[str, dict] = {}
        self.tokens: dict[str, dict] = {}
        self.audience = CLIENT_ID
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def sign_in_as(self, **claims) -> None:
        self.claims = claims

    def settings(self) -> dict:
        return {
            "SSO_ENABLED": True,
            "OIDC_RP_CLIENT_ID": CLIENT_ID,
            "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET,
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{self.base_url}/authorize",
            "OIDC_OP_TOKEN_ENDPOINT": f"{self.base_url}/token",
            "OIDC_OP_USER_ENDPOINT": f"{self.base_url}/userinfo",
            "OIDC_OP_JWKS_ENDPOINT": f"{self.base_url}/jwks",
            "OIDC_RP_SIGN_ALGO": "RS256",
        }

    def __enter__(self) -> OIDCProvider:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _id_token(self, nonce: str, subject: str) -> str:
        now = int(time.time())
        body = {"iss": self.base_url, "aud": self.audience, "sub": subject, "iat": now,
                "exp": now + 300, "nonce": nonce}
        return jwt.encode(body, self.key, algorithm="RS256", headers={"kid": self.kid})

    def _handler(self):
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _json(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/authorize":  # the person is signed in here already: straight back
                    code = secrets.token_urlsafe(16)
                    provider.codes[code] = query | {"claims": dict(provider.claims)}
                    self.send_response(302)
                    self.send_header("Location", query["redirect_uri"] + "?" + urlencode(
                        {"code": code, "state": query["state"]}))
                    self.end_headers()
                elif url.path == "/jwks":
                    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(provider.key.public_key()))
                    self._json(
                        200, {"keys": [jwk | {"kid": provider.kid, "alg": "RS256", "use": "sig"}]}
                    )
                elif url.path == "/userinfo":
                    token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    claims = provider.tokens.get(token)
                    (
                        self._json(200, claims)
                        if claims
                        else self._json(401, {"error": "invalid_token"})
                    )
                else:
                    self._json(404, {"error": "not_found"})

            def do_POST(self):
                form = {
                    k: v[0]
                    for k, v in parse_qs(
                        self.rfile.read(int(self.headers["Content-Length"])).decode()
                    ).items()
                }
                grant = provider.codes.pop(form.get("code", ""), None)  # a code is good once
                challenge = (
                    base64.urlsafe_b64encode(
                        hashlib.sha256(form.get("code_verifier", "").encode()).digest()
                    )
                    .rstrip(b"=")
                    .decode()
                )
                if (self.path != "/token" or grant is None or form.get("client_id") != CLIENT_ID
                        or form.get("client_secret") != CLIENT_SECRET
                        or form.get("redirect_uri") != grant["redirect_uri"]
                        or challenge != grant.get("code_challenge")):
                    self._json(400, {"error": "invalid_grant"})
                    return
                access = secrets.token_urlsafe(16)
                provider.tokens[access] = grant["claims"]
                self._json(
                    200,
                    {
                        "access_token": access,
                        "token_type": "Bearer",
                        "expires_in": 300,
                        "id_token": provider._id_token(grant["nonce"], grant["claims"]["sub"]),
                    },
                )

        return Handler
