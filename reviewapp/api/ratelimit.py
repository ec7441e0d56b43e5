"""The API's per-token rate limit (API_RATE_LIMIT, e.g. "600/minute"), and its limit on wrong
tokens per address (API_AUTH_FAILURE_LIMIT), so tokens cannot be guessed at speed.

A moving window (the `limits` package): exact, no double burst at a window's edge. Counts live in
Redis when API_RATE_LIMIT_REDIS_URL is set (by default the broker's Redis), so every web process
shares them; otherwise in this process's memory, which is right for the one-process demo.
"""

from __future__ import annotations

import logging
import math
import time
from functools import lru_cache

from django.conf import settings
from limits import RateLimitItem, parse
from limits.errors import StorageError
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

log = logging.getLogger(__name__)


@lru_cache(maxsize=4)
def _limiter(storage_url: str) -> MovingWindowRateLimiter:
    if storage_url.startswith(("redis://", "rediss://")):
        # Short timeouts and wrapped errors: a slow or absent Redis must not stall or break the API.
        storage = storage_from_string(storage_url, key_prefix="claimdesk-api", wrap_exceptions=True,
                                      socket_timeout=0.5, socket_connect_timeout=0.5)
    else:
        storage = storage_from_string(storage_url)
    return MovingWindowRateLimiter(storage)


@lru_cache(maxsize=4)
def _item(limit: str) -> RateLimitItem:
    return parse(limit)


def retry_after(key: str, cost: int = 1) -> int | None:
    """Count `cost` requests (answers) for `key`; None when they may proceed, else the seconds
    until they may."""
    return _apply(settings.API_RATE_LIMIT, key, count=True, cost=cost)


def auth_failure_wait(address: str) -> int | None:
    """Seconds until `address` may present a token again after too many wrong ones; None if it
    may."""
    return _wait(settings.API_AUTH_FAILURE_LIMIT, f"auth-failure:{address}")


def count_auth_failure(address: str) -> None:
    _hit(settings.API_AUTH_FAILURE_LIMIT, f"auth-failure:{address}")


def _hit(limit: str | None, key: str) -> int | None:
    return _apply(limit, key, count=True)


def _wait(limit: str | None, key: str) -> int | None:
    return _apply(limit, key, count=False)


def _apply(limit: str | None, key: str, *, count: bool, cost: int = 1) -> int | None:
    if not limit:
        return None
    limiter, item = _limiter(settings.API_RATE_LIMIT_STORAGE_URL), _item(limit)
    try:
        if limiter.hit(item, key, cost=cost) if count else limiter.test(item, key):
            return None
        reset_at = limiter.get_window_stats(item, key).reset_time
    except StorageError as exc:
        # Fail open: a rate limit protects the service; refusing every client while Redis is down
        # would be the outage it exists to prevent.
        log.warning("rate limit not applied, its storage failed: %s", exc)
        return None
    return max(1, math.ceil(reset_at - time.time()))
