"""A client that asked to wait (POST /api/v1/answers?wait=S) hears the moment its answer is judged.

The worker publishes on a Redis channel of the answer's own once the result is committed; when a
request is subscribed to it, the message carries the answer's API state as committed (what GET
/api/v1/answers/<id> would read then), so the waiting request replies without reading it back. A
failed judging (or any message without a state) is announced bare, and the waiter then reads the
row. The waiter subscribes before it first reads the answer's status, so a result that lands between
the read and the subscription is not missed, and reads the status again every second, should a
message be lost. Channels are server-wide in Redis, so their names carry the deployment
(DEPLOYMENT_NAME).
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
import logging
import threading
import time
from typing import Any, AsyncIterator, Callable
import weakref

from asgiref.sync import sync_to_async
import orjson
import redis
import redis.asyncio as aioredis
from django.conf import settings
from django.db import connection, transaction

from reviewapp.api import selectors
from reviewapp.models import Answer

log = logging.getLogger(__name__)
MAX_WAIT_SECONDS = 30
# Only a lost announcement waits for this; each re-read costs a database round trip per waiter.
_RECHECK_SECONDS = 5.0
_SETTLED = (Answer.Status.JUDGED, Answer.Status.FAILED)
_BARE = b"1"
_client: redis.Redis | None = None


def _redis() -> redis.Redis:
    global _client
    if _client is None:
        _client = redis.Redis.from_url(
            settings.CELERY_BROKER_URL, socket_timeout=5, health_check_interval=30
        )
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
            message = (
                orjson.dumps(state())
                if state is not None and client.pubsub_numsub(name)[0][1]
                else _BARE
            )
            client.publish(name, message)
        except redis.RedisError as exc:  # a waiter then sees the result on its next re-read
            log.warning("could not announce answer %s judged: %s", answer_id, exc)

    transaction.on_commit(publish, robust=True)


async def _read_state(answer_id: int) -> dict[str, Any]:
    def read() -> dict[str, Any]:
        try:
            answer = Answer.objects.select_related("judged_by").get(pk=answer_id)
            return selectors.answer_state_json(answer)
        finally:
            give_back_connection()
    return await sync_to_async(read)()


async def _settled(answer_id: int) -> bool:
    def read() -> bool:
        try:
            return selectors.answer_status(answer_id) in _SETTLED
        finally:
            give_back_connection()
    return await sync_to_async(read)()


def give_back_connection() -> None:
    """A waiting request must not hold a database connection for its wait (200 waits would be 200
    Postgres backends, or a drained pool): close it (a pooled one goes back to the pool). Inside a
    transaction (the test client's) it stays."""
    if not connection.in_atomic_block:
        connection.close()


class _ProcessWaits:
    """Waits held in this process. A lock, not the event loop's order: under WSGI (the demo's
    runserver, the test client) each request runs its own loop in its own thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.held = 0

    def take(self) -> bool:
        with self._lock:
            if self.held >= settings.API_WAITS_PER_PROCESS:
                return False
            self.held += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self.held -= 1


_process_waits = _ProcessWaits()


def _token_key(token_key: str) -> str:
    return f"claimdesk:{settings.DEPLOYMENT_NAME}:waits:{token_key}"


@asynccontextmanager
async def wait_slot(token_key: str) -> AsyncIterator[bool]:
    """True when this request may wait: under API_WAITS_PER_PROCESS here and API_WAITS_PER_TOKEN
    for its token (counted in Redis, so across processes; the count expires after the longest wait,
    so a killed process's waits are not held for ever). False: answer 202 at once."""
    if not _process_waits.take():
        yield False
        return
    client, key, counted = _async_redis(), _token_key(token_key), False
    try:
        try:
            async with client.pipeline(transaction=True) as pipe:
                held, _ = await pipe.incr(key).expire(key, MAX_WAIT_SECONDS + 5).execute()
            counted = True
        except redis.RedisError as exc:  # no Redis, no announcement to wait for either
            log.warning("cannot wait for an answer: %s", exc)
            held = None
        yield held is not None and held <= settings.API_WAITS_PER_TOKEN
    finally:
        _process_waits.give_back()
        if counted:
            try:
                await client.decr(key)
            except redis.RedisError as exc:
                log.warning("could not release a wait of token %s: %s", token_key[:8], exc)


# event loop -> aioredis.Redis
_async_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _async_redis() -> aioredis.Redis:
    # One client (a connection pool) per event loop: uvicorn runs one loop per process; WSGI's
    # async_to_sync a loop per request, whose client goes with it.
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        client = _async_clients[loop] = aioredis.Redis.from_url(
            settings.CELERY_BROKER_URL, socket_timeout=5, health_check_interval=30)
    return client


async def judged_within(answer: Answer, seconds: float) -> dict[str, Any] | None:
    """The answer's API state (selectors.answer_state_json) once it is judged or failed, or None if
    it is not within `seconds` (or cannot be waited for: Redis unreachable). Awaits the announcement
    on an asyncio Redis subscription, so the wait holds no thread and no database connection; the
    status is read again every _RECHECK_SECONDS, should an announcement be lost."""
    deadline = time.monotonic() + min(seconds, MAX_WAIT_SECONDS)
    try:
        subscription = _async_redis().pubsub(ignore_subscribe_messages=True)
        await subscription.subscribe(channel(answer.pk))
    except redis.RedisError as exc:
        log.warning("cannot wait for answer %s: %s", answer.pk, exc)
        return None
    try:
        while True:
            if await _settled(answer.pk):
                return await _read_state(answer.pk)
            recheck_at = min(deadline, time.monotonic() + _RECHECK_SECONDS)
            while (left := recheck_at - time.monotonic()) > 0:
                message = await subscription.get_message(timeout=left)
                if message is not None and message["data"] != _BARE:
                    return orjson.loads(message["data"])
                if message is not None:
                    break  # a failed judging is announced bare: read it
            if time.monotonic() >= deadline:
                return await _read_state(answer.pk) if await _settled(answer.pk) else None
    except redis.RedisError as exc:
        log.warning("stopped waiting for answer %s: %s", answer.pk, exc)
        return await _read_state(answer.pk) if await _settled(answer.pk) else None
    finally:
        await subscription.aclose()
