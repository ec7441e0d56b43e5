"""A client that asked to wait (POST /api/v1/answers?wait=S) hears the moment its answer is judged.

The worker publishes the answer's id on a Redis channel of its own once the result is committed;
the waiting web request subscribes before it first reads the answer, so a result that lands between
the read and the subscription is not missed, and reads the row again on every message (or every
second, should a message be lost), so the database stays the only source of the answer's state.
"""

from __future__ import annotations

import logging
import time

import redis
from django.conf import settings
from django.db import transaction

from reviewapp.models import Answer

log = logging.getLogger(__name__)
MAX_WAIT_SECONDS = 30
_RECHECK_SECONDS = 1.0
_SETTLED = (Answer.Status.JUDGED, Answer.Status.FAILED)
_client: redis.Redis | None = None


def _redis() -> redis.Redis:
    global _client
    if _client is None:
        _client = redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=5, health_check_interval=30)
    return _client


def _channel(answer_id: int) -> str:
    return f"claimdesk:judged:{answer_id}"


def judged_announce(answer_id: int) -> None:
    """Call where an answer's judging ends (judged or failed): published once that commits."""

    def publish() -> None:
        try:
            _redis().publish(_channel(answer_id), "1")
        except redis.RedisError as exc:  # a waiter then sees the result on its next re-read
            log.warning("could not announce answer %s judged: %s", answer_id, exc)

    transaction.on_commit(publish, robust=True)


def judged_within(answer: Answer, seconds: float) -> Answer:
    """The answer as stored once it is judged or failed, or as it is after `seconds`."""
    deadline = time.monotonic() + min(seconds, MAX_WAIT_SECONDS)
    try:
        subscription = _redis().pubsub(ignore_subscribe_messages=True)
        subscription.subscribe(_channel(answer.pk))
    except redis.RedisError as exc:
        log.warning("cannot wait for answer %s: %s", answer.pk, exc)
        return answer
    try:
        while True:
            answer = Answer.objects.select_related("judged_by").get(pk=answer.pk)
            left = deadline - time.monotonic()
            if answer.status in _SETTLED or left <= 0:
                return answer
            subscription.get_message(timeout=min(left, _RECHECK_SECONDS))
    except redis.RedisError as exc:
        log.warning("stopped waiting for answer %s: %s", answer.pk, exc)
        return Answer.objects.select_related("judged_by").get(pk=answer.pk)
    finally:
        subscription.close()
