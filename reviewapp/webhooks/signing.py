"""Webhook signatures: how ClaimDesk signs a delivery and how a receiver checks it.

Plain Python (no Django), so a receiver can copy this file. The header is

    ClaimDesk-Signature:
    t=1764451200,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd

where v1 is the hex HMAC-SHA256 of f"{t}.{raw body}" under the endpoint's secret. While a rotated
secret is still in its grace period the header carries one v1 per secret; any one may match.
Signing the timestamp with the body lets a receiver refuse a replay of an old, captured request.
"""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_HEADER = "ClaimDesk-Signature"
EVENT_HEADER = "ClaimDesk-Event"
DELIVERY_HEADER = "ClaimDesk-Delivery"
DEFAULT_TOLERANCE_SECONDS = 300


class SignatureError(ValueError):
    """The request is not a genuine, fresh ClaimDesk delivery; the message says why."""


def sign(secret: str, body: bytes, timestamp: int) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secrets: list[str], body: bytes, timestamp: int) -> str:
    return ",".join(
        [f"t={timestamp}"] + [f"v1={sign(secret, body, timestamp)}" for secret in secrets]
    )


def verify(
    *,
    secret: str,
    body: bytes,
    header: str | None,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> int:
    """Check a delivery's signature header against the raw request body; return its timestamp.

    Raises SignatureError if the header is missing or malformed, no v1 matches (compared in
    constant time), or the timestamp is more than `tolerance` seconds from now (a replay).
    """
    if not header:
        raise SignatureError(f"no {SIGNATURE_HEADER} header")
    timestamp, candidates = None, []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1" and value:
            candidates.append(value)
    if timestamp is None or not candidates:
        raise SignatureError(
            f"malformed {SIGNATURE_HEADER} header: it needs t=<unix time> and v1=<hex>"
        )
    expected = sign(secret, body, timestamp)
    # Check every candidate, so the time taken does not depend on which one matched.
    matched = [hmac.compare_digest(expected, candidate) for candidate in candidates]
    if not any(matched):
        raise SignatureError("signature does not match the body and secret")
    now = time.time() if now is None else now
    if abs(now - timestamp) > tolerance:
        raise SignatureError(
            f"timestamp is {abs(now - timestamp):.0f}s away from now (tolerance {tolerance}s)"
        )
    return timestamp
