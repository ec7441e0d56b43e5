"""A client that asked to wait (POST /api/v1/answers?wait=S) hears the moment its answer is judged.

The worker publishes on a Redis channel of the answer's own once the result is committed; when a
request is subscribed to it, the message carries the answer's API state as committed (what GET
/api/v1/answers/<id> would read then), so the waiting request replies without reading it back. A failed judging (or any message
without a state) is announced bare, and the waiter then reads the row. The waiter subscribes before
it first reads the answer's status, so a result that lands between the read and the subscription
is not missed, and reads the status again every second, should a message be lost.
Channels are server-wide in Redis, so their names carry the deployment (DEPLOYMENT_NAME).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

import orjson
import redis
from django.conf import settings
from django.db import transaction

from reviewapp import selectors
from reviewapp.models import Answer

log = logging.getLogger(__name__)
MAX_WAIT_SECONDS = 30
_RECHECK_SECONDS = 1.0
_SETTLED = (Answer.Status.JUDGED, Answer.Status.FAILED)
_BARE = b"1"
_client: redis.Redis | None = None


def _redis() -> redis.Redis:
    global _client
    if _client is None:
        _client = redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=5, health_check_interval=30)
    return _client


def channel(answer_id: int | str) -> str:
    """The answer's channel; channel("*") is the pattern of all of this deployment's."""
    return f"claimdesk:{settings.DEPLOYMENT_NAME}:judged:{answer_id}"


def judged_announce(answer_id: int, state: Callable[[], dict[str, Any]] | None = None) -> None:
    """Call where an answer's judging ends (judged or failed): published once that commits. `state`
    gives the answer's API state as committed (selectors.answer_state_json) when the caller can
    build it: it is built, and sent, only when a request is waiting on the answer."""

    def publish() -> None:
        try:
            client = _redis()
            name = channel(answer_id)
            message = orjson.dumps(state()) if state is not None and client.pubsub_numsub(name)[0][1] else _BARE
            client.publish(name, message)
        except redis.RedisError as exc:  # a waiter then sees the result on its next re-read
            log.warning("could not announce answer %s judged: %s", answer_id, exc)

    transaction.on_commit(publish, robust=True)


def _read_state(answer_id: int) -> dict[str, Any]:
    return selectors.answer_state_json(Answer.objects.select_related("judged_by").get(pk=answer_id))


def judged_within(answer: Answer, seconds: float) -> dict[str, Any] | None:
    """The answer's API state (selectors.answer_state_json) once it is judged or failed, or None if it is not
    within `seconds` (or cannot be waited for: Redis unreachable)."""
    deadline = time.monotonic() + min(seconds, MAX_WAIT_SECONDS)
    try:
        subscription = _redis().pubsub(ignore_subscribe_messages=True)
        subscription.subscribe(channel(answer.pk))
    except redis.RedisError as exc:
        log.warning("cannot wait for answer %s: %s", answer.pk, exc)
        return None
    try:
        while True:
            if selectors.answer_status(answer.pk) in _SETTLED:
                return _read_state(answer.pk)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            message = subscription.get_message(timeout=min(left, _RECHECK_SECONDS))
            if message is not None and message["data"] != _BARE:
                return orjson.loads(message["data"])
    except redis.RedisError as exc:
        log.warning("stopped waiting for answer %s: %s", answer.pk, exc)
        return _read_state(answer.pk) if selectors.answer_status(answer.pk) in _SETTLED else None
    finally:
        subscription.close()
