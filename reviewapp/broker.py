"""kombu's Redis transport, with one Redis client per channel for the synchronous commands.

kombu builds a new `redis.Redis` for every publish (`Channel.conn_or_acquire()`), and redis-py's
constructor fills a table of ~170 response callbacks each time: about 0.4 ms of CPU, a tenth of
what an ingest POST costs. The client holds no connection of its own (it borrows one from the
channel's pool per command and is thread-safe), so one per pool serves every call; a new pool,
after a reconnect, gets a new client.
"""

from __future__ import annotations

from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    _sync_client: tuple | None = None  # (pool, client)

    def _create_client(self, asynchronous=False):
        if asynchronous:
            return super()._create_client(asynchronous=True)
        pool = self.pool
        cached = self._sync_client
        if cached is None or cached[0] is not pool:
            cached = self._sync_client = (pool, super()._create_client())
        return cached[1]


class Transport(kombu_redis.Transport):
    Channel = Channel
