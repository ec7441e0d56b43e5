"""A judge worker on a database connection pool much smaller than its thread pool: a thread gives
its connection back while it waits on the LLM, so the waits overlap and no thread starves."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from reviewapp.models import Answer
from tests import factories as make
from tests.conftest import private_worker, wait_for
from tests.judges.factories import GOOD_ANSWER, GOOD_PASSAGE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

THREADS, POOL, LATENCY = 8, 2, 2.0


@pytest.fixture
def pooled_worker(tmp_path, monkeypatch):
    """A real worker, 8 threads on a pool of 2 connections, on a queue of its own, judging with a
    fake LLM that takes 2 s per request."""
    with private_worker(tmp_path, monkeypatch, name="pool", threads=THREADS, latency=LATENCY,
                        DATABASE_POOL_SIZE=str(POOL), JUDGE_TASK_SOFT_TIME_LIMIT="30",
                        JUDGE_TASK_TIME_LIMIT="40") as fake:
        yield fake


def test_eight_threads_wait_on_the_llm_at_once_with_two_connections(pooled_worker):
    make.openai_policy()
    ids = [make.ingested(GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}]).pk for _ in range(THREADS)]
    wait_for(
        lambda: Answer.objects.filter(pk__in=ids, status="judged").count() == THREADS, timeout=60
    )

    # Had each thread kept its connection through the LLM call, only 2 could be waiting on it at
    # once (the others blocked on the pool before their claim). The 2 s latency lets all 8 overlap.
    assert pooled_worker.peak_concurrency == THREADS
    assert len(pooled_worker.requests) == THREADS


def _sessions_started(database: str) -> int:
    """Connections ever opened to `database`: Postgres counts each session as it ends, at the
    latest."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s", [database])
        return cursor.fetchone()[0]


def test_a_pooled_worker_judges_answer_after_answer_without_reconnecting(tmp_path, monkeypatch):
    # Celery closes a worker's connections after every task, whatever CONN_MAX_AGE says: with a
    # pool (as compose and the demo run workers) closing hands the connection back. Without one,
    # each answer would start a Postgres backend (milliseconds of every verdict).
    answers = 6
    with private_worker(
        tmp_path, monkeypatch, name="reuse", threads=2, latency=0.0, DATABASE_POOL_SIZE="4"
    ):
        # the worker's first connections
        make.ingested(GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}])
        wait_for(lambda: not Answer.objects.exclude(status="judged").exists(), timeout=60)
        database = connection.settings_dict["NAME"]
        time.sleep(1.5)  # Postgres reports sessions to its statistics at most once a second
        before = _sessions_started(database)
        for _ in range(answers):
            answer = make.ingested(GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}])
            wait_for(lambda: Answer.objects.get(pk=answer.pk).status == "judged", timeout=60)
        time.sleep(1.5)
        opened = _sessions_started(database) - before
    assert (
        opened < answers
    ), f"{opened} connections opened to judge {answers} answers one after another"
