"""The database health check between requests polls the socket instead of sending SELECT 1
(reviewapp/db/postgresql): a live connection is kept without a round trip, one the server ended
is dropped and the next query reconnects."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection, connections

pytestmark = pytest.mark.django_db(transaction=True)  # an idle connection, as between two requests


def _idle_connection_due_a_check():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    connection.health_check_done = False  # what the end of a request does
    return pid


def test_a_live_connection_is_kept_without_a_query(monkeypatch):
    assert connection.health_check_enabled
    _idle_connection_due_a_check()
    raw = connection.connection
    monkeypatch.setattr(type(connections["default"]), "is_usable", lambda self: pytest.fail("sent SELECT 1"))

    connection.close_if_health_check_failed()

    assert connection.connection is raw
    assert connection.health_check_done


def test_a_connection_the_server_ended_is_dropped_and_the_next_query_reconnects():
    pid = _idle_connection_due_a_check()
    settings = connection.get_connection_params()
    with psycopg.connect(**settings, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
    time.sleep(0.2)  # the server's FATAL message and the close reach the socket

    connection.close_if_health_check_failed()

    assert connection.connection is None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
