"""Connections the server ended are never used: Django's health check between requests drops one
and the next query reconnects; the pool replaces one on checkout; a read-only database is a
transient error the judge task retries."""

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


# --- the connection pool (DATABASE_POOL_SIZE) --------------------------------------------------


@pytest.fixture
def pooled(monkeypatch):
    """A second connection to the test database, configured as DATABASE_POOL_SIZE=1 configures
    it."""
    from django.db.utils import load_backend

    from reviewapp import settings as app_settings
    from tests.conftest import _test_database_url

    monkeypatch.setattr(app_settings, "DATABASE_POOL_SIZE", 1)
    config = connections.configure_settings(
        {"default": app_settings._database(_test_database_url())}
    )["default"]
    wrapper = load_backend(config["ENGINE"]).DatabaseWrapper(config, alias="pooled")
    yield wrapper
    wrapper.close()
    wrapper.close_pool()


def _backend_pid(wrapper) -> int:
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_a_pooled_connection_killed_by_a_postgres_restart_is_never_handed_out(pooled):
    pid = _backend_pid(pooled)
    pooled.close()  # back to the pool, as at the end of a request
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])  # what a restart does to it
    time.sleep(0.2)

    assert _backend_pid(pooled) != pid  # the dead one was tested on checkout and replaced


def test_a_read_only_database_is_a_transient_error_the_judge_task_retries(monkeypatch):
    from celery.exceptions import Retry
    from django.db import InternalError

    from reviewapp.judging import tasks
    from reviewapp.db.errors import is_transient
    from tests import factories as make

    answer = make.ingested()
    retried: list[BaseException] = []

    def retry(exc=None, **kwargs):
        retried.append(exc)
        return Retry(exc=exc)

    monkeypatch.setattr(tasks.judge_answer, "retry", retry)
    with connection.cursor() as cursor:  # a primary demoted to a standby refuses writes like this
        cursor.execute("SET default_transaction_read_only = on")
    try:
        with pytest.raises(Retry):
            tasks.judge_answer.run(answer.pk)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = off")
    [error] = retried
    assert isinstance(error, InternalError) and "read-only" in str(error)
    assert is_transient(error)
