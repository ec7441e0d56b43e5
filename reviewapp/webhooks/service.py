"""Webhooks: clients register an endpoint; ClaimDesk POSTs signed events to it.

* An event (`answer.judged`, `answer.adjudicated`) creates one delivery row per subscribed endpoint
  in the transaction that changes the answer, with its payload frozen then; the Celery task is
  enqueued on commit, so it never runs before the row exists, nor for a change that rolled back.
* Sending: the delivery is held with a conditional UPDATE (never sent twice at once), an attempt
  row is written, then the POST goes out (no transaction open, no redirects followed, a short
  timeout); a 2xx marks it delivered, anything else schedules the next attempt with exponential
  backoff and jitter, until WEBHOOK_MAX_ATTEMPTS, when it is marked failed.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Callable
from datetime import timedelta
from urllib.parse import urlsplit

import httpx2 as httpx  # the httpx fork the openai package already depends on
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from reviewapp import enqueue

from reviewapp.api import selectors as api_selectors

from reviewapp.review import selectors
from reviewapp.models import (
    WEBHOOK_EVENTS,
    Answer,
    ApiClient,
    Review,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
)
from reviewapp.sealed import is_sealed
from reviewapp.webhooks import network
from reviewapp.audit import audit_record
from reviewapp.webhooks.signing import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    signature_header,
)

log = logging.getLogger(__name__)

JUDGED, ADJUDICATED, REOPENED, MISS_RATE_ALERT, REVIEWER_PAUSED = WEBHOOK_EVENTS
USER_AGENT = "ClaimDesk-Webhooks/1"
# How long past its timeout a held delivery stays held: a worker that died mid-send lets go.
SENDING_MARGIN_SECONDS = 30


class InvalidWebhook(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


# --- registration ----------------------------------------------------------------------------


def validate_url(url: str) -> str:
    """Refuse what a webhook URL must not be; the message names the problem for the client.

    A name is resolved here too, and refused if it points at a non-public address now; a name that
    does not resolve yet is accepted (each connection resolves and checks it again)."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise InvalidWebhook("url", "must start with http:// or https://")
    if not parts.hostname:
        raise InvalidWebhook("url", "has no host")
    if "%" in parts.hostname or any(char.isspace() for char in parts.hostname):
        # A zone id ([fe80::1%25lo]) or encoded whitespace (127.0.0.1%2509) makes the check above
        # see an unresolvable name while a resolver or HTTP library may read the address.
        raise InvalidWebhook(
            "url", "host must not contain a zone id (%25...), percent-encoding or whitespace"
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidWebhook(
            "url", "must not contain credentials; authenticate deliveries by their signature"
        )
    if parts.fragment:
        raise InvalidWebhook("url", "must not have a #fragment (it is never sent)")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise InvalidWebhook("url", "has an invalid port") from None
    if not settings.WEBHOOK_ALLOW_PRIVATE_URLS:
        _refuse_non_public(parts.hostname.rstrip("."), port)
    return url


def _refuse_non_public(host: str, port: int) -> None:
    address = network.numeric_address(host)
    if (
        host == "localhost"
        or host.endswith(".localhost")
        or (address is not None and not network.is_public(address))
    ):
        raise InvalidWebhook("url", "must be a public address, not loopback, private or link-local")
    if address is not None:
        return
    try:
        addresses = network.resolve(host, port)
    except network.NotSent:
        return
    if network.refusal(host, addresses):
        raise InvalidWebhook(
            "url",
            f"{host} resolves to a non-public address; it must be a public address, "
            "not loopback, private or link-local",
        )


@dataclass(frozen=True)
class Registered:
    endpoint: WebhookEndpoint
    created: bool
    secret: str | None  # only when new or rotated: it is shown to the client this once


def endpoint_register(*, client: ApiClient, url: str, events: list[str], active: bool = True,
                      rotate_secret: bool = False) -> Registered:
    """Create the client's endpoint, or change its URL, events or state (and rotate its secret)."""
    url = validate_url(url)  # before the transaction: it may wait on DNS
    return _endpoint_save(
        client=client, url=url, events=events, active=active, rotate_secret=rotate_secret
    )


@transaction.atomic
def _endpoint_save(*, client: ApiClient, url: str, events: list[str], active: bool,
                   rotate_secret: bool) -> Registered:
    unknown = [event for event in events if event not in WEBHOOK_EVENTS]
    if unknown or not events:
        raise InvalidWebhook("events", f"choose one or more of {', '.join(WEBHOOK_EVENTS)}")
    events = [event for event in WEBHOOK_EVENTS if event in events]
    # The client's row is the lock: with no endpoint yet there is no row to lock, and two first
    # registrations would both insert (one then failing on the one-live-endpoint constraint).
    ApiClient.objects.select_for_update().filter(pk=client.pk).first()
    endpoint = (
        WebhookEndpoint.objects.select_for_update()
        .filter(client=client, removed_at__isnull=True)
        .first()
    )
    actor = {"actor_label": f"api:{client.name}"}
    if endpoint is None:
        endpoint = WebhookEndpoint.objects.create(
            client=client,
            url=url,
            events=events,
            active=active,
            secret=WebhookEndpoint.new_secret(),
        )
        audit_record(**actor, action="webhook.created", obj=endpoint, after=_audit_state(endpoint))
        return Registered(endpoint, created=True, secret=endpoint.secret)
    before = _audit_state(endpoint)
    endpoint.url, endpoint.events, endpoint.active = url, events, active
    if rotate_secret:
        endpoint.previous_secret = endpoint.secret
        endpoint.previous_secret_expires_at = timezone.now() + timedelta(
            seconds=settings.WEBHOOK_SECRET_GRACE_SECONDS
        )
        endpoint.secret = WebhookEndpoint.new_secret()
    endpoint.save()
    audit_record(
        **actor,
        action="webhook.secret_rotated" if rotate_secret else "webhook.updated",
        obj=endpoint,
        before=before,
        after=_audit_state(endpoint),
    )
    return Registered(endpoint, created=False, secret=endpoint.secret if rotate_secret else None)


@transaction.atomic
def endpoint_remove(*, client: ApiClient) -> bool:
    """Stop sending to the client's endpoint. Pending deliveries fail when their turn comes."""
    endpoint = (
        WebhookEndpoint.objects.select_for_update()
        .filter(client=client, removed_at__isnull=True)
        .first()
    )
    if endpoint is None:
        return False
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(removed_at=timezone.now(), active=False)
    audit_record(actor_label=f"api:{client.name}", action="webhook.removed", obj=endpoint,
                 before=_audit_state(endpoint))
    return True


def _audit_state(endpoint: WebhookEndpoint) -> dict:
    return {"url": endpoint.url, "events": endpoint.events, "active": endpoint.active}


def live_endpoint(client: ApiClient) -> WebhookEndpoint | None:
    return WebhookEndpoint.objects.filter(client=client, removed_at__isnull=True).first()


# --- events ----------------------------------------------------------------------------------


def answer_payload(answer: Answer) -> dict:
    """The API's view of the answer (the same shape as GET /api/v1/answers/<id>, without url)."""
    return api_selectors.answer_state_json(
        Answer.objects.select_related("judged_by").get(pk=answer.pk)
    )


def adjudication_payload(answer: Answer) -> dict:
    """What the reviewers decided: the verdict after review and one decision per claim."""
    claims = selectors.shown_claims_for_review(answer).order_by("position")
    reviews: dict[int, list] = {}
    for stage in (Review.Stage.REVIEW, Review.Stage.ADJUDICATION):
        for review in sorted(
            selectors.current_decisions(answer.pk, stage=stage), key=lambda r: r.id
        ):
            reviews.setdefault(review.claim_id, []).append(review)
    return {
        "verdict": answer.adjudicated_verdict or None,
        "decisions": [
            {
                "claim_id": claim.cid,
                "text": claim.text,
                "answer_span": (
                    [claim.answer_start, claim.answer_end]
                    if claim.answer_start is not None
                    else None
                ),
                "judge_label": claim.label if claim.origin == claim.Origin.JUDGE else None,
                "human_label": claim.human_label or None,
                # confirm | overturn | add (a claim the judge missed)
                "decision": (claim.decision or None),
                # explicit (the reviewer acted on the claim) | bulk (accepted by finishing)
                "decision_mode": claim.decision_mode or None,
                "note": claim.note,
                "decided_at": claim.decided_at.isoformat() if claim.decided_at else None,
                # single | unanimous | majority | lead
                "consensus_method": claim.consensus_method or None,
                # each reviewer's own decision behind it; their names stay in ClaimDesk (the exports
                # have them)
                "reviews": [
                    {
                        "stage": r.stage,
                        "label": r.final_label,
                        "decision_mode": r.decision_mode,
                        "note": r.note,
                    }
                    for r in reviews.get(claim.pk, [])
                ],
            }
            for claim in claims
        ],
    }


def event_record(
    *, answer: Answer, event: str, state: Callable[[], dict] | None = None
) -> list[WebhookDelivery]:
    """Create the deliveries of `event` for the answer's client (call inside the transaction that
    made the change); their tasks are enqueued once it commits. `state` gives answer_payload(answer)
    without reading it back, when the caller can."""
    if answer.client_id is None:
        return []
    endpoint = WebhookEndpoint.objects.filter(
        client_id=answer.client_id, removed_at__isnull=True, active=True
    ).first()
    # A client told a verdict is told when it is withdrawn, whatever it subscribed to before
    # answer.reopened existed.
    wanted = {event, ADJUDICATED} if event == REOPENED else {event}
    if endpoint is None or not wanted & set(endpoint.events):
        return []
    data = {"answer": state() if state is not None else answer_payload(answer)}
    if event == ADJUDICATED:
        data["adjudication"] = adjudication_payload(answer)
    event_id = f"evt_{uuid.uuid4().hex}"
    now = timezone.now()
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint, answer=answer, event=event, event_id=event_id, next_attempt_at=now,
        payload={"id": event_id, "type": event, "created": now.isoformat(), "data": data},
    )
    # robust: a broker outage must not undo the change that caused the event; the row stays
    # pending and `manage.py webhooks_resend` (or an admin's "retry now") sends it later.
    transaction.on_commit(lambda: enqueue.deliver_webhook_later(delivery.pk), robust=True)
    return [delivery]


def team_event_record(*, event: str, data: dict) -> list[WebhookDelivery]:
    """An event about the team's work rather than one answer (alert.miss_rate, reviewer.paused),
    for every live endpoint that chose it: its deliveries have no answer. Call inside the
    transaction that recorded what happened; the tasks are enqueued once it commits."""
    now = timezone.now()
    deliveries = []
    for endpoint in WebhookEndpoint.objects.filter(
        removed_at__isnull=True, active=True, events__contains=[event]
    ):
        event_id = f"evt_{uuid.uuid4().hex}"
        delivery = WebhookDelivery.objects.create(
            endpoint=endpoint, answer=None, event=event, event_id=event_id, next_attempt_at=now,
            payload={"id": event_id, "type": event, "created": now.isoformat(), "data": data})
        transaction.on_commit(lambda pk=delivery.pk: enqueue.deliver_webhook_later(pk), robust=True)
        deliveries.append(delivery)
    return deliveries


# --- sending ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: str  # delivered | pending (retry_in set) | failed | skipped (not ours to send now)
    retry_in: float | None = None


def backoff_seconds(attempt: int) -> float:
    """Wait before the attempt after `attempt` (1-based): doubling, capped, with half of it random
    so that many deliveries failing together do not all come back together."""
    delay = min(
        settings.WEBHOOK_BACKOFF_SECONDS * 2 ** (attempt - 1), settings.WEBHOOK_BACKOFF_MAX_SECONDS
    )
    return delay / 2 + random.uniform(0, delay / 2)


def _hold(delivery_id: int, now):
    """Take the delivery for one attempt; returns the hold's expiry (our token) or None."""
    until = now + timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + SENDING_MARGIN_SECONDS)
    # A scheduled retry may arrive a moment early, and a stale task message (the admin retried
    # by hand meanwhile) must not send before its turn: allow one second of slack only.
    taken = (
        WebhookDelivery.objects.filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
        .filter(
            Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now + timedelta(seconds=1))
        )
        .filter(Q(sending_until__isnull=True) | Q(sending_until__lt=now))
        .update(attempts=F("attempts") + 1, sending_until=until)
    )
    return until if taken else None


def delivery_send(*, delivery_id: int) -> Outcome:
    """One attempt at a delivery, if it is due and nobody else is sending it."""
    held = _hold(delivery_id, timezone.now())
    if held is None:
        return Outcome("skipped")
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    endpoint = delivery.endpoint
    if endpoint.removed_at is not None or not endpoint.active:
        WebhookDelivery.objects.filter(pk=delivery_id, sending_until=held).update(
            status=WebhookDelivery.Status.FAILED, sending_until=None, attempts=F("attempts") - 1,
            error="not sent: the endpoint was removed or deactivated",
        )
        return Outcome("failed")
    attempt = WebhookAttempt.objects.create(delivery=delivery, number=delivery.attempts)
    http_status, error, latency_ms = _post(delivery, endpoint)
    WebhookAttempt.objects.filter(pk=attempt.pk).update(
        finished_at=timezone.now(), http_status=http_status, latency_ms=latency_ms,
        error=error[: WebhookAttempt.ERROR_MAX],
    )
    return _settle(delivery, held, delivered=http_status is not None and 200 <= http_status < 300)


def _settle(delivery: WebhookDelivery, held, *, delivered: bool) -> Outcome:
    now = timezone.now()
    # Only while our hold stands: if it ran out (a very slow receiver) and another attempt took
    # over, that attempt settles the delivery, not this one.
    mine = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=WebhookDelivery.Status.PENDING, sending_until=held
    )
    if delivered:
        settled = mine.update(
            status=WebhookDelivery.Status.DELIVERED,
            delivered_at=now,
            sending_until=None,
            next_attempt_at=None,
        )
        return Outcome("delivered" if settled else "skipped")
    if delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
        settled = mine.update(
            status=WebhookDelivery.Status.FAILED, sending_until=None, next_attempt_at=None
        )
        return Outcome("failed" if settled else "skipped")
    wait = backoff_seconds(delivery.attempts)
    settled = mine.update(sending_until=None, next_attempt_at=now + timedelta(seconds=wait))
    return Outcome("pending", retry_in=wait) if settled else Outcome("skipped")


def _post(
    delivery: WebhookDelivery, endpoint: WebhookEndpoint
) -> tuple[int | None, str, int | None]:
    """POST the payload; returns (HTTP status or None, error text, latency in ms).

    The error is ours, never the receiver's: its status and a fixed reason, not its body or
    headers, since the client reads it back and the receiver may be a service it should not read."""
    body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
    if is_sealed(endpoint.secret):
        return (
            None,
            (
                "not sent: the endpoint's signing secret does not open with SECRET_KEY or"
                " SECRET_KEY_FALLBACKS (was SECRET_KEY changed? put the old one in"
                " SECRET_KEY_FALLBACKS)"
            ),
            None,
        )
    secrets = [endpoint.secret]
    if (
        endpoint.previous_secret
        and not is_sealed(endpoint.previous_secret)
        and endpoint.previous_secret_expires_at
        and endpoint.previous_secret_expires_at > timezone.now()
    ):
        secrets.append(endpoint.previous_secret)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_HEADER: delivery.event,
        DELIVERY_HEADER: delivery.event_id,
        SIGNATURE_HEADER: signature_header(secrets, body, int(time.time())),
    }
    started = time.monotonic()
    try:
        # Redirects are not followed: the signed request goes to the registered URL or nowhere.
        # Streamed and never read: a receiver cannot make us hold, or hand back, a body.
        with _http().stream(
            "POST",
            endpoint.url,
            content=body,
            headers=headers,
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            follow_redirects=False,
        ) as response:
            latency = _ms(started)
    except network.NotSent as exc:
        return None, f"not sent: {exc}", None
    except httpx.TimeoutException:
        return None, f"timed out after {settings.WEBHOOK_TIMEOUT_SECONDS:g}s", _ms(started)
    except httpx.HTTPError as exc:
        return None, _failure_reason(exc), _ms(started)
    return response.status_code, status_reason(response.status_code), latency


def status_reason(status: int) -> str:
    """What an attempt that got `status` records: "" for a 2xx, else the status and a fixed
    reason."""
    if 200 <= status < 300:
        return ""
    if 300 <= status < 400:
        return f"HTTP {status}: a redirect, not followed"
    return f"HTTP {status}: not a 2xx reply (its body is not kept)"


# httpx's messages can quote what the peer sent (h11 puts a malformed status line in its error).
_FAILURE_REASONS = {
    httpx.ConnectError: "could not connect (refused, unreachable or a failed TLS handshake)",
    httpx.RemoteProtocolError: "the reply was not valid HTTP",
    httpx.NetworkError: "the connection broke",
}


def _failure_reason(exc: httpx.HTTPError) -> str:
    reason = next(
        (text for kind, text in _FAILURE_REASONS.items() if isinstance(exc, kind)),
        "the request failed",
    )
    return f"{type(exc).__name__}: {reason}"


_client: httpx.Client | None = None
_client_lock = threading.Lock()


def _http() -> httpx.Client:
    """One client per process, shared by the worker's threads: building one costs an SSL context
    (tens of ms of CPU), and its pool keeps connections to busy receivers open. Its transport
    connects only to the public addresses it checked (services.webhook_network)."""
    global _client
    with _client_lock:
        if _client is None:
            _client = httpx.Client(
                transport=network.PublicOnlyTransport(), trust_env=False, follow_redirects=False
            )
        return _client


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


# --- admin actions ---------------------------------------------------------------------------


def delivery_retry_now(*, delivery_id: int, user) -> bool:
    """Send a failed delivery once more, now (one more attempt; it fails again if that fails)."""
    with transaction.atomic():
        done = WebhookDelivery.objects.filter(
            pk=delivery_id, status=WebhookDelivery.Status.FAILED
        ).update(
            status=WebhookDelivery.Status.PENDING,
            next_attempt_at=timezone.now(),
            sending_until=None,
            error="",
        )
        if not done:
            return False
        delivery = WebhookDelivery.objects.get(pk=delivery_id)
        audit_record(
            actor=user, actor_label=user.get_username(), action="webhook.retried", obj=delivery
        )
        transaction.on_commit(lambda: enqueue.deliver_webhook_later(delivery_id), robust=True)
    return True


def deliveries_resend_due(*, older_than_seconds: float = 60) -> int:
    """Enqueue again pending deliveries whose task was lost (broker outage at commit, a purged
    queue): due for a while and nobody is sending them. Sending twice is harmless: the claim
    lets only one through."""
    now = timezone.now()
    ids = list(
        WebhookDelivery.objects.filter(
            status=WebhookDelivery.Status.PENDING,
            next_attempt_at__lt=now - timedelta(seconds=older_than_seconds),
        )
        .filter(Q(sending_until__isnull=True) | Q(sending_until__lt=now))
        .values_list("pk", flat=True)
    )
    for delivery_id in ids:
        enqueue.deliver_webhook_later(delivery_id)
    return len(ids)
