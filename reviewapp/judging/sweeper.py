"""The sweeper: no answer stays queued or judging forever.

Two ways an answer can be left behind by the broker or a worker:
- *lost message*: `queued` with no live hold for JUDGE_SWEEP_AFTER_SECONDS while the judge queue
  is (nearly) empty (the broker was down when its ingest committed, or lost the message in a restart
  without persistence);
- *lost worker*: `judging` with an expired hold (the worker died and the message was not
  redelivered, e.g. it sits unacknowledged until the visibility timeout).

Each is enqueued again (a lost worker's answer is first given back as `queued`, so a delivery
still alive somewhere cannot write: its token is gone). Rows are locked with
select_for_update(skip_locked=True), so two sweepers never enqueue one answer twice. After
JUDGE_MAX_SWEEPS re-enqueues the answer fails with the reason and goes to review.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from celery import current_app  # reviewapp.celery's app (its worker signals call services)
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from reviewapp import enqueue
from reviewapp.models import Answer, AuditEvent, Policy
from reviewapp.judging.service import (
    abandon_running_runs, answer_fail, judge_config_for, mark_run_failed, start_run,
)

log = logging.getLogger(__name__)


# Messages the judge queue may hold and still count as drained: beat's own periodic tasks and
# canaries pass through it, and a duplicate delivery of an answer that was only waiting is a no-op.
BACKLOG_SLACK = 10


@dataclass
class Sweep:
    requeued: list[int] = field(default_factory=list)
    given_up: list[int] = field(default_factory=list)


def stuck_answers(now=None):
    now = now or timezone.now()
    quiet_since = now - timedelta(seconds=settings.JUDGE_SWEEP_AFTER_SECONDS)
    no_live_claim = ~Answer.live_hold(now)
    lost_message = Q(status=Answer.Status.QUEUED, updated_at__lt=quiet_since) & no_live_claim
    lost_worker = Q(status=Answer.Status.JUDGING, judging_until__isnull=False) & no_live_claim
    return Answer.objects.filter(lost_message | lost_worker)


def judge_queue_backlog() -> int | None:
    """Messages waiting in the judge queue, or None when the broker cannot be asked."""
    try:
        with current_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1)
            return conn.default_channel.queue_declare(
                queue=settings.CELERY_TASK_DEFAULT_QUEUE
            ).message_count
    except Exception as exc:  # kombu raises a different type per transport
        log.warning("judge sweep: cannot read the judge queue's length (%s)", exc)
        return None


def answers_sweep(*, batch: int = 500) -> Sweep:
    sweep = Sweep()
    now = timezone.now()
    stuck_rows = stuck_answers(now)
    backlog = judge_queue_backlog()
    if backlog is None or backlog > BACKLOG_SLACK:
        # A queued answer behind a backlog is waiting, not lost: only when the queue has (nearly)
        # drained is a quiet 'queued' answer known lost; when the broker cannot be read, enqueueing
        # would fail too. A lost worker's answer is known lost from its expired hold alone.
        stuck_rows = stuck_rows.filter(status=Answer.Status.JUDGING)
    with transaction.atomic():
        stuck = list(
            stuck_rows.select_for_update(skip_locked=True).order_by("id")
            .only("id", "status", "sweep_count")[:batch]
        )
        for answer in stuck:
            (
                sweep.given_up
                if answer.sweep_count >= settings.JUDGE_MAX_SWEEPS
                else sweep.requeued
            ).append(answer.pk)
        lost_worker = [
            a.pk for a in stuck if a.status == Answer.Status.JUDGING and a.pk in sweep.requeued
        ]
        Answer.objects.filter(pk__in=lost_worker).update(lost_count=F("lost_count") + 1)
        abandon_running_runs(lost_worker)
        Answer.objects.filter(pk__in=sweep.requeued).update(
            status=Answer.Status.QUEUED, judging_token=None, judging_until=None,
            sweep_count=F("sweep_count") + 1, updated_at=now,
        )
        for answer_id in sweep.given_up:
            _give_up(answer_id)
        if stuck:
            AuditEvent.objects.create(
                actor_label="system", action="judge.sweep", object_type="answer", object_id="*",
                after={"requeued": sweep.requeued, "given_up": sweep.given_up},
                note=f"re-enqueued {len(sweep.requeued)}, gave up on {len(sweep.given_up)}",
            )
        # After commit: the worker must see the rows as queued. A broker still down leaves them
        # queued, and the next sweep tries again.
        for answer_id in sweep.requeued:
            transaction.on_commit(
                lambda answer_id=answer_id: enqueue.judge_answer_later(answer_id), robust=True
            )
    if stuck:
        log.warning(
            "judge sweep: re-enqueued %d answers %s, gave up on %d %s",
            len(sweep.requeued),
            sweep.requeued[:20],
            len(sweep.given_up),
            sweep.given_up[:20],
        )
    return sweep


def _give_up(answer_id: int) -> None:
    answer = Answer.objects.get(pk=answer_id)
    abandon_running_runs([answer.pk])
    # A failed run holds the reason, as for any other judge failure (the API shows it as `error`).
    run, _ = start_run(answer, judge_config_for(answer, Policy.current()))
    mark_run_failed(
        run,
        f"gave up: not judged after {answer.sweep_count} re-enqueues by the sweeper",
        attempts=0,
    )
    answer_fail(answer_id=answer_id)
