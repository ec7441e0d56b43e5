"""The cache of figures that are slow to compute and move slowly (queue counters, /calibration/),
shared by every web process when CACHE_URL names a Redis.

With Django's default (a memory cache in each process) every gunicorn worker recomputes each figure
once per period: at a million decided claims that is 2-3 s of a database core a minute for
/calibration/ alone, per process, and a reviewer whose request lands on a process with a stale copy
waits for it. A Redis cache makes it once per period for the whole fleet.

Django's own Redis cache raises when Redis is unreachable, which would turn a cache outage into a
500 on the queue page. Nothing is lost without the cache (every cached figure can be computed), so
here Redis errors read as misses and writes are dropped, and after one the cache is not tried for
RETRY_AFTER_SECONDS: a page view during an outage does not wait for a connect timeout per figure.
"""

from __future__ import annotations

import logging
import threading
import time
from functools import wraps

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5.0


def _or_miss(missing):
    """Run the cache call; on a Redis error (or while Redis is known to be down) give what
    `missing(args, kwargs)` says a miss gives."""

    def decorate(method):
        @wraps(method)
        def call(self, *args, **kwargs):
            if time.monotonic() < self._down_until:
                return missing(args, kwargs)
            try:
                return method(self, *args, **kwargs)
            except RedisError as exc:
                self._went_down(exc)
                return missing(args, kwargs)

        return call

    return decorate


def _default(args, kwargs):
    # get(key, default=None, version=None)
    return kwargs.get("default", args[1] if len(args) > 1 else None)


def _nothing(args, kwargs):
    return None


def _false(args, kwargs):
    return False


def _empty(args, kwargs):
    return {}


def _every_key(args, kwargs):
    # set_many(data, ...) returns the keys it could not set
    return list(kwargs.get("data", args[0] if args else {}))


class SharedCache(RedisCache):
    """Django's Redis cache that degrades to no cache while Redis is unreachable (see the
    module)."""

    def __init__(self, server, params):
        options = {
            "socket_connect_timeout": 0.5,
            "socket_timeout": 1.0,
            **params.get("OPTIONS", {}),
        }
        super().__init__(server, {**params, "OPTIONS": options})
        self._down_until = 0.0
        self._lock = threading.Lock()

    def _went_down(self, exc: RedisError) -> None:
        with self._lock:
            if time.monotonic() >= self._down_until:
                log.warning("cache unreachable, figures are computed uncached for %.0f s: %s",
                            RETRY_AFTER_SECONDS, exc)
            self._down_until = time.monotonic() + RETRY_AFTER_SECONDS

    @_or_miss(_default)
    def get(self, key, default=None, version=None):
        return super().get(key, default, version)

    @_or_miss(_false)  # not added: get_or_set then computes and returns its own value
    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return super().add(key, value, timeout, version)

    @_or_miss(_nothing)
    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return super().set(key, value, timeout, version)

    @_or_miss(_false)
    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return super().touch(key, timeout, version)

    @_or_miss(_false)
    def delete(self, key, version=None):
        return super().delete(key, version)

    @_or_miss(_empty)
    def get_many(self, keys, version=None):
        return super().get_many(keys, version)

    @_or_miss(_false)
    def has_key(self, key, version=None):
        return super().has_key(key, version)

    @_or_miss(_every_key)
    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return super().set_many(data, timeout, version)

    @_or_miss(_nothing)
    def delete_many(self, keys, version=None):
        return super().delete_many(keys, version)

    @_or_miss(_false)
    def clear(self):
        return super().clear()
