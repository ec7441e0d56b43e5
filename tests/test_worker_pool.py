"""A judge worker on a database connection pool much smaller than its thread pool: a thread gives
its connection back while it waits on the LLM, so the waits overlap and no thread starves."""

from __future__ import annotations

import os

import pytest
from django.conf import settings

from judges import JudgeRequest
from reviewapp.models import Answer, Policy
from reviewapp.services import ingest
from tests.conftest import _test_database_url, fare_payload, wait_for
from tests.fake_openai import FakeOpenAI, Reply
from tests.faultkit import Worker
from tests.judges.test_openai_backend import GOOD, PASSAGE
from tests.test_judging_worker import ANSWER_FOR_GOOD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

THREADS, POOL, LATENCY = 8, 2, 2.0


@pytest.fixture
def pooled_worker(tmp_path, monkeypatch):
    """A real worker, 8 threads on a pool of 2 connections, on a queue of its own, judging with a
    fake LLM that takes 2 s per request."""
    queue = f"pool-test-{os.getpid()}"
    with FakeOpenAI(default=Reply.ok(GOOD), latency=LATENCY) as fake:
        log = tmp_path / "worker.log"
        env = os.environ | {
            "DATABASE_URL": _test_database_url(), "DATABASE_POOL_SIZE": str(POOL),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL, "CELERY_QUEUE": queue,
            "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test-key", "JUDGE_MODEL": "fake-judge",
            "JUDGE_BACKEND": "offline", "JUDGE_TASK_SOFT_TIME_LIMIT": "30", "JUDGE_TASK_TIME_LIMIT": "40",
            "JUDGE_RETRY_BUDGET_SECONDS": "20",
        }
        from reviewapp.tasks import judge_answer

        # Answers stored by this test go to this worker's queue.
        monkeypatch.setattr(ingest, "enqueue_judging", lambda answer_id: judge_answer.apply_async((answer_id,), queue=queue))
        worker = Worker(env=env, log=log, pool="threads", concurrency=THREADS, name="pool")
        try:
            worker.start()
            yield fake
        finally:
            worker.stop()
            import redis

            redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(
                queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")


def test_eight_threads_wait_on_the_llm_at_once_with_two_connections(pooled_worker):
    Policy.objects.create(version=Policy.current().version + 1, judge_backend="openai",
                          judge_profile="claim_verification", note="judge with the (fake) LLM")
    request = JudgeRequest.model_validate(fare_payload(external_id=None, answer=ANSWER_FOR_GOOD,
                                                       passages=[{"text": PASSAGE}]))
    ids = [ingest.answer_ingest(client=None, request=request).answer.pk for _ in range(THREADS)]
    wait_for(lambda: Answer.objects.filter(pk__in=ids, status="judged").count() == THREADS, timeout=60)

    # Had each thread kept its connection through the LLM call, only 2 could be waiting on it at
    # once (the others blocked on the pool before their claim). The 2 s latency lets all 8 overlap.
    assert pooled_worker.peak_concurrency == THREADS
    assert len(pooled_worker.requests) == THREADS
