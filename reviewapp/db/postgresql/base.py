"""Django's PostgreSQL backend with a health check that costs no round trip.

Django's CONN_HEALTH_CHECKS runs `SELECT 1` before the first query of every request: on the ingest
API that is one statement in five, paid on every POST for the rare request after a restart. An idle
connection between requests has nothing to read; when the server ends it (a restart, a crash, a
terminated backend, idle_session_timeout) it sends its FATAL message and closes the socket, so the
socket turns readable. Polling it with no timeout finds that without sending anything.

What it cannot see is a connection cut silently on the network (nothing arrives): the request's
first query then fails, and Django's end-of-request check (`close_if_unusable_or_obsolete`, still
a real `SELECT 1` after an error) drops it, as before.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_health_check_failed(self):
        if self.pool or self.connection is None or not self.health_check_enabled or self.health_check_done:
            return super().close_if_health_check_failed()
        info = self.connection.info
        if self.connection.closed or info.transaction_status != info.transaction_status.IDLE:
            # Not the idle connection between requests (a test's open transaction, a broken one):
            # Django's own check, as before.
            return super().close_if_health_check_failed()
        if not self._socket_is_quiet():
            self.close()
        self.health_check_done = True

    def _socket_is_quiet(self) -> bool:
        poller = select.poll()
        try:
            poller.register(self.connection.fileno(), select.POLLIN | select.POLLPRI)
        except (ValueError, OSError):
            return False
        return not poller.poll(0)  # readable, hung up or in error: the server has spoken or gone
