"""The sweeper, claim takeover and liveness, in-process against the real Postgres and Redis."""

import threading
import uuid
from datetime import timedelta

import pytest
import redis
from django.db import connection, transaction
from django.utils import timezone

from reviewapp.models import (
    Answer,
    AuditEvent,
    Claim,
    JudgeRun,
    SchedulerHeartbeat,
    WorkerHeartbeat,
)
from reviewapp.judging.service import AnswerBusy, answer_judge
from reviewapp.judging.liveness import beat_sent, canary_consumed, worker_started, worker_status
from reviewapp.judging.sweeper import BACKLOG_SLACK, answers_sweep, judge_queue_backlog
from tests import factories as make

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _own_queue(settings):
    # A queue no worker consumes, empty at the start: the sweeper reads its length.
    settings.CELERY_TASK_DEFAULT_QUEUE = f"sweeper-test-{uuid.uuid4().hex[:8]}"
    yield settings.CELERY_TASK_DEFAULT_QUEUE
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(settings.CELERY_TASK_DEFAULT_QUEUE)


@pytest.fixture
def no_workers(db):
    # The session's celery_worker fixture registers itself in the test database: start from none.
    WorkerHeartbeat.objects.all().delete()


def _age(answer: Answer, seconds: float, **fields) -> None:
    Answer.objects.filter(pk=answer.pk).update(
        updated_at=timezone.now() - timedelta(seconds=seconds), **fields
    )


def test_a_queued_answer_whose_message_was_lost_is_enqueued_again_and_counted(
    settings, django_capture_on_commit_callbacks
):
    answer = make.ingested()
    _age(answer, settings.JUDGE_SWEEP_AFTER_SECONDS + 5)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        sweep = answers_sweep()

    assert sweep.requeued == [answer.pk] and sweep.given_up == []
    assert len(callbacks) == 1 and judge_queue_backlog() == 1  # really on the broker
    answer.refresh_from_db()
    assert (answer.status, answer.sweep_count, answer.lost_count) == ("queued", 1, 0)
    event = AuditEvent.objects.get(action="judge.sweep")
    assert event.after == {"requeued": [answer.pk], "given_up": []}
    # just swept: quiet again only after JUDGE_SWEEP_AFTER_SECONDS
    assert answers_sweep().requeued == []


def test_a_recent_answer_a_live_claim_and_a_pending_retry_are_left_alone(settings):
    recent = make.ingested(external_id="recent")
    live = make.ingested(external_id="live")
    _age(
        live,
        3600,
        status="judging",
        judging_token=uuid.uuid4(),
        judging_until=timezone.now() + timedelta(seconds=60),
    )
    retry_due_later = make.ingested(external_id="retry")
    _age(retry_due_later, 3600, judging_until=timezone.now() + timedelta(seconds=60))

    assert answers_sweep().requeued == []
    assert (
        Answer.objects.filter(
            pk__in=[recent.pk, live.pk, retry_due_later.pk], sweep_count=0
        ).count()
        == 3
    )


def test_a_lost_workers_answer_is_given_back_as_queued_so_the_dead_holder_cannot_write(settings):
    answer = make.ingested()
    token = uuid.uuid4()
    _age(
        answer,
        10,
        status="judging",
        judging_token=token,
        judging_until=timezone.now() - timedelta(seconds=1),
    )

    assert answers_sweep().requeued == [answer.pk]
    answer.refresh_from_db()
    assert (answer.status, answer.judging_token, answer.lost_count, answer.sweep_count) == (
        "queued",
        None,
        1,
        1,
    )


def test_quiet_queued_answers_are_not_swept_while_the_queue_has_a_backlog(settings, _own_queue):
    queued = make.ingested(external_id="behind-the-backlog")
    _age(queued, settings.JUDGE_SWEEP_AFTER_SECONDS + 5)
    lost_worker = make.ingested(external_id="lost-worker")
    _age(
        lost_worker,
        10,
        status="judging",
        judging_token=uuid.uuid4(),
        judging_until=timezone.now() - timedelta(seconds=1),
    )
    redis.Redis.from_url(settings.CELERY_BROKER_URL).lpush(
        _own_queue, *["a message waiting its turn"] * (BACKLOG_SLACK + 1)
    )

    # a lost worker shows by its expired claim alone
    assert answers_sweep().requeued == [lost_worker.pk]


@pytest.mark.django_db(transaction=True)
def test_two_sweepers_never_enqueue_one_answer_twice(settings):
    # its ingest enqueued it (a committed transaction): make it a lost worker's
    answer = make.ingested()
    _age(
        answer,
        10,
        status="judging",
        judging_token=uuid.uuid4(),
        judging_until=timezone.now() - timedelta(seconds=1),
    )
    locked, release = threading.Event(), threading.Event()

    def first_sweeper_mid_sweep():  # holds the row lock the way answers_sweep does
        with transaction.atomic():
            list(Answer.objects.select_for_update(skip_locked=True).filter(pk=answer.pk))
            locked.set()
            release.wait(10)
        connection.close()

    thread = threading.Thread(target=first_sweeper_mid_sweep)
    thread.start()
    locked.wait(10)
    try:
        # skipped the locked row instead of waiting or doubling
        assert answers_sweep().requeued == []
    finally:
        release.set()
        thread.join()
    assert answers_sweep().requeued == [answer.pk]


def test_after_max_sweeps_the_answer_fails_with_the_reason_and_goes_to_review(settings, api):
    answer = make.ingested()
    _age(answer, settings.JUDGE_SWEEP_AFTER_SECONDS + 5, sweep_count=settings.JUDGE_MAX_SWEEPS)

    assert answers_sweep().given_up == [answer.pk]
    answer.refresh_from_db()
    assert (answer.status, answer.review_status, answer.routing_reason) == (
        "failed",
        "in_review",
        "judge failed",
    )
    run = JudgeRun.objects.get(answer=answer)
    assert run.status == "failed" and "not judged after 5 re-enqueues" in run.error
    assert Claim.objects.filter(answer=answer).count() == 0


def test_a_redelivered_message_takes_over_its_own_dead_claim_at_once():
    answer = make.ingested()
    delivery = str(uuid.uuid4())
    # Its first delivery held the answer, recorded a run and was killed with its worker.
    Answer.objects.filter(pk=answer.pk).update(
        status="judging",
        judging_token=delivery,
        judging_until=timezone.now() + timedelta(seconds=300),
    )
    dead = JudgeRun.objects.create(
        answer=answer,
        profile="claim_audit",
        prompt_version="v1",
        backend="offline",
        model="m",
        config_key="k",
    )

    with pytest.raises(AnswerBusy):  # a different message must wait for the claim to expire
        answer_judge(answer_id=answer.pk, delivery_id=str(uuid.uuid4()))
    run = answer_judge(answer_id=answer.pk, delivery_id=delivery)

    assert run.status == "succeeded"
    answer.refresh_from_db()
    assert (answer.status, answer.lost_count) == ("judged", 1)
    dead.refresh_from_db()
    assert dead.status == "failed" and dead.error.startswith("abandoned")
    assert Claim.objects.filter(answer=answer).count() == Claim.objects.filter(run=run).count() == 2


def test_an_answer_that_keeps_losing_its_worker_fails_to_review_after_the_bound(settings):
    answer = make.ingested()
    delivery = str(uuid.uuid4())
    Answer.objects.filter(pk=answer.pk).update(
        status="judging",
        judging_token=delivery,
        lost_count=settings.JUDGE_MAX_LOST,
        judging_until=timezone.now() + timedelta(seconds=300),
    )

    run = answer_judge(answer_id=answer.pk, delivery_id=delivery)

    answer.refresh_from_db()
    run.refresh_from_db()
    assert (answer.status, answer.review_status, answer.routing_reason) == (
        "failed",
        "in_review",
        "judge failed",
    )
    assert run.status == "failed" and f"lost {settings.JUDGE_MAX_LOST + 1} times" in run.error


def test_worker_status_flags_a_worker_whose_last_canary_is_older_than_two_intervals(
    settings, no_workers
):
    settings.CANARY_INTERVAL_SECONDS = 10
    worker_started(hostname="fresh@a")
    canary_consumed(hostname="fresh@a", sent_at=timezone.now())
    worker_started(hostname="stuck@b")
    WorkerHeartbeat.objects.filter(hostname="stuck@b").update(
        last_consumed_at=timezone.now() - timedelta(seconds=25)
    )

    status = worker_status()

    assert status["stale_workers"] == ["stuck@b"] and status["ok"] is False
    assert [w["hostname"] for w in status["workers"]] == ["fresh@a", "stuck@b"]
    assert WorkerHeartbeat.objects.get(hostname="fresh@a").consumed == 1


def test_health_json_is_503_with_a_stale_worker_and_200_when_all_consume(
    client, settings, no_workers
):
    settings.CANARY_INTERVAL_SECONDS = 10
    beat_sent()
    canary_consumed(hostname="w1@host", sent_at=timezone.now())
    assert client.get("/health/").status_code == 200
    assert client.get("/health/").json()["workers"][0]["stale"] is False

    WorkerHeartbeat.objects.update(last_consumed_at=timezone.now() - timedelta(minutes=5))
    response = client.get("/health/")
    assert response.status_code == 503
    assert response.json()["stale_workers"] == ["w1@host"]


def test_when_beat_dies_health_blames_beat_and_not_the_workers(client, settings, no_workers):
    settings.CANARY_INTERVAL_SECONDS = 10
    long_ago = timezone.now() - timedelta(minutes=5)
    beat_sent()
    canary_consumed(hostname="w1@host", sent_at=timezone.now())
    canary_consumed(hostname="w2@host", sent_at=timezone.now())
    # Beat's last dispatch, then each worker consumed its canary; nothing was sent since.
    SchedulerHeartbeat.objects.update(last_beat_at=long_ago)
    WorkerHeartbeat.objects.update(last_consumed_at=long_ago + timedelta(seconds=1))

    response = client.get("/health/")

    body = response.json()
    assert response.status_code == 503
    assert body["beat"]["stale"] is True and body["beat"]["seconds_since_beat"] >= 300
    assert body["stale_workers"] == [] and body["restart"] == ["beat"]


def test_with_beat_alive_a_silent_worker_is_the_one_to_restart(client, settings, no_workers):
    settings.CANARY_INTERVAL_SECONDS = 10
    canary_consumed(hostname="w1@host", sent_at=timezone.now())
    canary_consumed(hostname="w2@host", sent_at=timezone.now())
    WorkerHeartbeat.objects.filter(hostname="w2@host").update(
        last_consumed_at=timezone.now() - timedelta(minutes=5)
    )
    beat_sent()

    body = client.get("/health/").json()

    assert body["beat"]["stale"] is False and body["restart"] == ["w2@host"]


def test_the_beat_heartbeat_is_stamped_when_the_dispatch_is_published_not_run(no_workers, settings):
    from reviewapp.judging.tasks import canary_dispatch

    queue = f"nobody-consumes-{uuid.uuid4().hex}"
    canary_dispatch.apply_async(queue=queue)
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(queue)
    assert SchedulerHeartbeat.objects.get(name="beat").last_beat_at > timezone.now() - timedelta(
        seconds=5
    )


def test_a_beat_that_just_started_is_not_reported_stale_before_its_first_dispatch(
    client, settings, no_workers
):
    from celery import signals

    settings.CANARY_INTERVAL_SECONDS = 60
    canary_consumed(hostname="w1@host", sent_at=timezone.now())
    assert client.get("/health/").json()["restart"] == ["beat"]  # never seen: beat is not running

    signals.beat_init.send(sender=None)  # what `celery beat` and `worker -B` send as beat starts

    response = client.get("/health/")
    assert response.status_code == 200 and response.json()["beat"]["stale"] is False


def test_health_is_503_when_no_worker_has_ever_reported(client, no_workers):
    response = client.get("/health/")
    assert response.status_code == 503 and response.json()["workers"] == []


def test_the_policy_page_shows_each_worker_and_flags_a_stale_one(client, settings, no_workers):
    user = make.admin()
    client.force_login(user)
    canary_consumed(hostname="<b>w2</b>@host", sent_at=timezone.now())
    WorkerHeartbeat.objects.update(last_consumed_at=timezone.now() - timedelta(minutes=5))

    page = client.get("/policy/").content.decode()

    assert "&lt;b&gt;w2&lt;/b&gt;@host" in page and "<b>w2</b>" not in page  # hostnames are escaped
    assert "STALE" in page
