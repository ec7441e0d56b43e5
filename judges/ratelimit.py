"""Fleet-wide limits on LLM requests, shared through Redis: requests and tokens per minute
(`RateLimiter`), and requests in flight at once (`InFlightLimit`).

Celery's `rate_limit` is per worker; a provider's limit is per key. Every worker thread and process
asks one Redis sorted set for a slot before each request attempt, so the fleet together stays
under the limit however many workers run.

The window slides: a request is admitted only if fewer than `rpm` requests (and fewer than `tpm`
tokens, counting its own estimate) were admitted in the 60 seconds before it. Unlike a fixed
window this never lets 2 x rpm through around a minute boundary, and unlike a token bucket it never
lets a burst exceed the cap in any 60 s window. Each admitted request is one member
"<id>:<tokens>" scored by the Redis server's clock (one clock for the whole fleet); the check and
the admission are one Lua script, so two workers cannot both take the last slot.

Tokens: a request is admitted on an estimate of its prompt's tokens (characters / 4), then
`settle()` replaces the estimate with the usage the endpoint reported, so the window holds what
was really spent.

Why not the `limits` package (checked: its Redis moving window is the same idea): it stores one
list entry per unit of cost, i.e. per token (a 1M tokens/min limit means a 1M-entry list and
thousands of pushes per request), stamps entries with each worker's own clock, and cannot correct
a hit once the real usage is known.

In flight: a provider (or a self-hosted model server) that serves C requests at once answers
the C+1st with a 429. The fleet can keep it exactly at C only if every request slot is refilled
the moment it frees, which C worker threads cannot do: each spends part of every cycle on the
database, on the broker and waiting for the GIL (measured: ~7% of a 1 s call, plus gaps between
tasks). With a fleet-wide in-flight limit of C, the fleet runs more threads than C; the extra
ones have their next request ready and take a slot as soon as one frees (woken through a Redis
list, not by polling). Each slot is a lease in a sorted set, scored by its expiry on the Redis
clock: a worker killed mid-request loses its slot after the lease (the request's own timeout and
a margin), not never.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
import uuid
from dataclasses import dataclass

log = logging.getLogger(__name__)

WINDOW_SECONDS = 60.0
CHARS_PER_TOKEN = 4  # OpenAI's rule of thumb for English; corrected by settle() after the call
POLL_SECONDS = 0.25  # longest single sleep while waiting, so a freed slot is noticed soon

# KEYS[1]: the window (sorted set). ARGV: window seconds, rpm (0 = none), tpm (0 = none),
# tokens of this request, its id. Returns {1, admission time} when admitted, else {0, seconds to
# wait}. Numbers travel as strings: Redis would truncate a Lua number to an integer.
_ACQUIRE = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
local window, rpm, tpm = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tokens, id = tonumber(ARGV[4]), ARGV[5]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t - window)
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local count = #entries / 2
if rpm > 0 and count >= rpm then
  -- the request that must leave the window before this one fits
  local leaves = tonumber(entries[(count - rpm) * 2 + 2])
  return {0, tostring(leaves + window - t)}
end
if tpm > 0 and count > 0 then
  local used = 0
  for i = 1, #entries, 2 do used = used + tonumber(string.match(entries[i], ':(%d+)$')) end
  local excess = used + tokens - tpm
  if excess > 0 then
    local freed = 0
    for i = 1, #entries, 2 do
      freed = freed + tonumber(string.match(entries[i], ':(%d+)$'))
      if freed >= excess then return {0, tostring(tonumber(entries[i + 1]) + window - t)} end
    end
  end
end
redis.call('ZADD', KEYS[1], t, id .. ':' .. tokens)
redis.call('PEXPIRE', KEYS[1], math.ceil(window * 1000) + 1000)
return {1, tostring(t)}
"""

# Replace an admitted request's token estimate by its real usage, keeping its time.
_SETTLE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], score, ARGV[2])
return 1
"""


class RateLimitUnavailable(Exception):
    """Redis could not be asked; the request must not go out unlimited, so the caller retries
    later."""


class RateLimitTimeout(Exception):
    """The limit would not admit the request before the caller's deadline."""

    def __init__(self, waited: float, wait_more: float, message: str = ""):
        super().__init__(
            message
            or f"fleet rate limit: waited {waited:.1f}s and a slot frees up only in "
            f"{wait_more:.1f}s more"
        )
        self.waited = waited
        self.wait_more = wait_more


@dataclass(frozen=True)
class Ticket:
    """One admitted request; hand it to settle() with the real usage."""

    member: str
    tokens: int
    admitted_at: float  # the Redis server's clock, in seconds since the epoch


def estimate_tokens(messages: list[dict]) -> int:
    chars = sum(len(str(message.get("content") or "")) for message in messages)
    return max(1, math.ceil(chars / CHARS_PER_TOKEN))


# Every wait a limit made, fleet-wide, in one hash: "<key>|count" and "<key>|seconds" (/metrics).
WAITS_KEY = "judges:limit-waits"


def record_wait(client, key: str, seconds: float) -> None:
    """Count one wait for the limit `key` (admitted after waiting, or given up)."""
    try:
        client.pipeline(transaction=False).hincrby(WAITS_KEY, f"{key}|count", 1).hincrbyfloat(
            WAITS_KEY, f"{key}|seconds", round(seconds, 6)).execute()
    except Exception as exc:  # a figure for operators; never a reason to fail the judging
        log.debug("could not record a limit's wait: %s", exc)


def waits_recorded(client) -> dict[str, tuple[int, float]]:
    """Each limit key's (waits, seconds waited) so far."""
    raw = {
        k.decode() if isinstance(k, bytes) else k: v for k, v in client.hgetall(WAITS_KEY).items()
    }
    keys = {field.rsplit("|", 1)[0] for field in raw}
    return {
        key: (int(raw.get(f"{key}|count", 0)), float(raw.get(f"{key}|seconds", 0)))
        for key in sorted(keys)
    }


class RateLimiter:
    """Requests and tokens per minute for everyone using the same Redis key."""

    def __init__(
        self,
        redis_url: str,
        *,
        key: str,
        rpm: int = 0,
        tpm: int = 0,
        window_s: float = WINDOW_SECONDS,
    ):
        import redis  # only needed when a limit is configured

        if rpm < 0 or tpm < 0 or not (rpm or tpm):
            raise ValueError("a rate limiter needs rpm and/or tpm above 0")
        self.key = key
        self.rpm = rpm
        self.tpm = tpm
        self.window_s = window_s
        self._errors = redis.RedisError
        # Short socket timeouts: a Redis that hangs must not hold the judge past its budget.
        self._redis = redis.Redis.from_url(redis_url, socket_timeout=5, socket_connect_timeout=5)
        self._acquire = self._redis.register_script(_ACQUIRE)
        self._settle = self._redis.register_script(_SETTLE)

    def try_acquire(self, tokens: int = 1) -> tuple[Ticket | None, float]:
        """Admit one request now, or say how many seconds until it could be admitted."""
        tokens = max(int(tokens), 0)
        member = uuid.uuid4().hex
        try:
            admitted, value = self._acquire(
                keys=[self.key], args=[self.window_s, self.rpm, self.tpm, tokens, member]
            )
        except self._errors as exc:
            raise RateLimitUnavailable(f"fleet rate limit: Redis unavailable: {exc}") from None
        if admitted:
            return Ticket(f"{member}:{tokens}", tokens, float(value)), 0.0
        return None, max(float(value), 0.001)

    def acquire(self, tokens: int = 1, *, deadline: float | None = None) -> Ticket:
        """Block (in short sleeps) until admitted. Raises RateLimitTimeout rather than wait past
        `deadline` (a time.monotonic() value), so the caller's time budget bounds the wait."""
        started, waited = time.monotonic(), False
        while True:
            ticket, wait = self.try_acquire(tokens)
            if ticket is not None:
                if waited:
                    record_wait(self._redis, self.key, time.monotonic() - started)
                return ticket
            now = time.monotonic()
            if deadline is not None and now + wait >= deadline:
                record_wait(self._redis, self.key, now - started)
                raise RateLimitTimeout(now - started, wait)
            waited = True
            # Jitter, so the waiting workers do not all ask again at the same instant.
            time.sleep(min(wait, POLL_SECONDS) * random.uniform(0.5, 1.0))

    def settle(self, ticket: Ticket, actual_tokens: int) -> None:
        if actual_tokens == ticket.tokens:
            return
        member = ticket.member.rsplit(":", 1)[0]
        try:
            self._settle(
                keys=[self.key], args=[ticket.member, f"{member}:{max(int(actual_tokens), 0)}"]
            )
        except self._errors as exc:  # the request was made; only the token count stays an estimate
            log.warning("fleet rate limit: could not record actual usage: %s", exc)

    def reset(self) -> None:
        self._redis.delete(self.key)


# KEYS[1]: the leases (sorted set of ids scored by expiry). ARGV: limit, lease seconds, id.
# Returns {1, 0} when the slot is taken, else {0, seconds until the first lease expires}.
_TAKE_SLOT = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
local limit, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t)
if redis.call('ZCARD', KEYS[1]) >= limit then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tostring(tonumber(first[2]) - t)}
end
redis.call('ZADD', KEYS[1], t + lease, ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(lease * 1000) + 1000)
return {1, '0'}
"""

# KEYS[1]: the leases, KEYS[2]: the list waiters block on. ARGV: id, limit. A freed slot pushes one
# wake-up (at most `limit` are kept: a wake-up nobody waited for only costs a waiter one retry).
_FREE_SLOT = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('LPUSH', KEYS[2], '1')
  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
  redis.call('PEXPIRE', KEYS[2], 60000)
end
return 1
"""
WAKE_CHECK_SECONDS = 1.0  # longest block on the wake-up list before looking at the leases again


class InFlightLimit:
    """At most `limit` requests in flight at once for everyone using the same Redis key."""

    def __init__(self, redis_url: str, *, key: str, limit: int, lease_s: float):
        import redis

        if limit < 1 or lease_s <= 0:
            raise ValueError("an in-flight limit needs limit >= 1 and a lease above 0 s")
        self.key = key
        self.freed_key = f"{key}:freed"
        self.limit = limit
        self.lease_s = lease_s
        self._errors = redis.RedisError
        # The socket timeout outlasts the longest block on the wake-up list.
        self._redis = redis.Redis.from_url(
            redis_url, socket_timeout=WAKE_CHECK_SECONDS + 5, socket_connect_timeout=5
        )
        self._take = self._redis.register_script(_TAKE_SLOT)
        self._free = self._redis.register_script(_FREE_SLOT)

    def acquire(self, *, deadline: float | None = None) -> str:
        """Take a slot, waiting until one frees; returns the slot's id for release(). Raises
        RateLimitTimeout rather than wait past `deadline` (time.monotonic()), RateLimitUnavailable
        when Redis cannot be asked."""
        started, waited = time.monotonic(), False
        try:
            while True:
                slot = uuid.uuid4().hex
                taken, expires_in = self._take(
                    keys=[self.key], args=[self.limit, self.lease_s, slot]
                )
                if taken:
                    if waited:
                        record_wait(self._redis, self.key, time.monotonic() - started)
                    return slot
                now = time.monotonic()
                wait = min(float(expires_in), WAKE_CHECK_SECONDS)
                waited = True
                if deadline is not None:
                    if now >= deadline:
                        record_wait(self._redis, self.key, now - started)
                        # Any request may finish next: only the oldest lease's end is known.
                        raise RateLimitTimeout(
                            now - started,
                            float(expires_in),
                            f"fleet in-flight limit: waited {now - started:.1f}s and all "
                            f"{self.limit} slots are still in use",
                        )
                    wait = min(wait, deadline - now)
                # Redis takes fractional seconds; 0 would mean forever.
                self._redis.blpop([self.freed_key], timeout=max(wait, 0.01))
        except self._errors as exc:
            raise RateLimitUnavailable(f"fleet in-flight limit: Redis unavailable: {exc}") from None

    def release(self, slot: str) -> None:
        try:
            self._free(keys=[self.key, self.freed_key], args=[slot, self.limit])
        except self._errors as exc:  # the slot frees itself when its lease ends
            log.warning(
                "fleet in-flight limit: could not free a slot (it frees at its lease's end): %s",
                exc,
            )

    def reset(self) -> None:
        self._redis.delete(self.key, self.freed_key)


_limiters: dict[tuple, RateLimiter | InFlightLimit] = {}
_lock = threading.Lock()


def _shared(kind: type, redis_url: str, **config):
    """One limiter (and one Redis connection pool) per configuration, shared by a process's
    threads."""
    identity = (kind, redis_url, *sorted(config.items()))
    with _lock:
        limiter = _limiters.get(identity)
        if limiter is None:
            limiter = _limiters[identity] = kind(redis_url, **config)
    return limiter


def limiter_for(redis_url: str, *, key: str, rpm: int, tpm: int) -> RateLimiter:
    return _shared(RateLimiter, redis_url, key=key, rpm=rpm, tpm=tpm)


def in_flight_limit_for(redis_url: str, *, key: str, limit: int, lease_s: float) -> InFlightLimit:
    return _shared(InFlightLimit, redis_url, key=key, limit=limit, lease_s=lease_s)
