"""Celery tasks that judge answers: thin wrappers that load by id and call a service. Limits live in
settings."""

import random
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError

from reviewapp.celery import task
from reviewapp.db.errors import is_transient
from reviewapp.judging import liveness
from reviewapp.judging.jobs import answer_rejudge, job_run
from reviewapp.judging.service import AnswerBusy, ClientAtLimit, TransientJudgeFailure, answer_judge
from reviewapp.judging.sweeper import answers_sweep


def _backoff(retries: int) -> float:
    return min(settings.JUDGE_RETRY_BACKOFF_SECONDS * 2**retries, 300) * random.uniform(0.8, 1.2)


@task(bind=True, max_retries=settings.JUDGE_MAX_RETRIES)
def judge_answer(self, answer_id: int) -> None:
    countdown = _backoff(self.request.retries)
    try:
        answer_judge(answer_id=answer_id, last_try=self.request.retries >= self.max_retries,
                     delivery_id=self.request.id, retry_in=countdown)
    except AnswerBusy as exc:  # another delivery holds it: look again once its hold can expire
        raise self.retry(exc=exc, countdown=exc.retry_in, max_retries=None)
    except (
        ClientAtLimit
    ) as exc:  # waiting its turn is no failed try: a new task, its retries from 0
        self.apply_async((answer_id,), countdown=exc.retry_in)
    except TransientJudgeFailure as exc:  # only transient errors retry
        raise self.retry(exc=exc, countdown=countdown)
    except DatabaseError as exc:
        if not is_transient(exc):
            raise
        raise self.retry(exc=exc, countdown=countdown)


@task()
def sweep_stuck_answers() -> None:
    answers_sweep()


@task()
def canary_dispatch() -> None:
    liveness.canary_dispatch()


@task(bind=True)
def canary(self, sent_at: str) -> None:
    liveness.canary_consumed(
        hostname=self.request.hostname, sent_at=datetime.fromisoformat(sent_at)
    )


@task()
def run_job(job_id: int) -> None:
    job_run(job_id=job_id)


@task(bind=True, max_retries=settings.JUDGE_MAX_RETRIES)
def rejudge_answer(self, job_id: int, answer_id: int) -> None:
    try:
        answer_rejudge(job_id=job_id, answer_id=answer_id)
    except DatabaseError as exc:
        if not is_transient(exc):
            raise
        raise self.retry(exc=exc, countdown=_backoff(self.request.retries))
