"""Checking a ClaimDesk webhook delivery, as the server signs it (docs/webhooks.md).

    ClaimDesk-Signature: t=<unix time>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>

While a rotated secret is in its grace period the header carries one v1 per secret; any may match.
Pass the raw body bytes as received: a re-encoded JSON body no longer matches its signature.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any

from claimdesk_client.errors import ClaimDeskError
from claimdesk_client.models import Answer

SIGNATURE_HEADER = "ClaimDesk-Signature"
EVENT_HEADER = "ClaimDesk-Event"
DELIVERY_HEADER = "ClaimDesk-Delivery"  # the event id, the same on every attempt: dedupe on it
DEFAULT_TOLERANCE_SECONDS = 300


class SignatureError(ClaimDeskError, ValueError):
    """The request is not a genuine, fresh ClaimDesk delivery; the message says why."""


def verify(*, secret: str, body: bytes, header: str | None, tolerance: float = DEFAULT_TOLERANCE_SECONDS,
           now: float | None = None) -> int:
    """Check the signature header against the raw body; return the signed timestamp.

    Raises SignatureError when the header is missing or malformed, no v1 matches (compared in
    constant time), or the timestamp is more than `tolerance` seconds from now (a replay)."""
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
        raise SignatureError(f"malformed {SIGNATURE_HEADER} header: it needs t=<unix time> and v1=<hex>")
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    # Every candidate is compared, so the time taken does not tell which one matched.
    if not any([hmac.compare_digest(expected, candidate) for candidate in candidates]):
        raise SignatureError("signature does not match the body and secret")
    now = time.time() if now is None else now
    if abs(now - timestamp) > tolerance:
        raise SignatureError(f"timestamp is {abs(now - timestamp):.0f}s away from now (tolerance {tolerance:g}s)")
    return timestamp


@dataclass(frozen=True)
class Event:
    id: str  # evt_...
    type: str  # answer.judged | answer.adjudicated
    created: str
    answer: Answer
    adjudication: dict[str, Any] | None  # answer.adjudicated only: verdict and the decisions


def parse_event(*, secret: str, body: bytes, header: str | None,
                tolerance: float = DEFAULT_TOLERANCE_SECONDS) -> Event:
    """verify() the delivery, then read it."""
    verify(secret=secret, body=body, header=header, tolerance=tolerance)
    data = json.loads(body)
    return Event(id=str(data["id"]), type=str(data["type"]), created=str(data.get("created", "")),
                 answer=Answer.from_json(data["data"]["answer"]), adjudication=data["data"].get("adjudication"))
