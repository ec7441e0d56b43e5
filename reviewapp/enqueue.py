"""The tasks the write side sends to the broker, one function each.

Services call these, after commit (`transaction.on_commit(lambda: enqueue.judge_answer_later(pk))`)
so that the worker finds the rows committed. They never import a tasks module (judging/tasks.py,
webhooks/tasks.py): the tasks import the services, and a service importing them back would make the
two one tangle (tests/test_imports.py). Each task is taken by name from the Celery app's registry,
which reviewapp/apps.py fills when Django starts, and sent with its own `apply_async`: the message
(options, time limits, routing) is the one the task object sends when imported directly.
"""

from __future__ import annotations

from celery import current_app


def _task(name: str):
    return current_app.tasks[name]


def judge_answer_later(answer_id: int) -> None:
    _task("reviewapp.judging.tasks.judge_answer").delay(answer_id)


def rejudge_answer_later(job_id: int, answer_id: int) -> None:
    _task("reviewapp.judging.tasks.rejudge_answer").delay(job_id, answer_id)


def run_job_later(job_id: int) -> None:
    _task("reviewapp.judging.tasks.run_job").delay(job_id)


def evaluate_miss_rate_later() -> None:
    _task("reviewapp.labels.tasks.evaluate_miss_rate").delay()


def deliver_webhook_later(delivery_id: int) -> None:
    _task("reviewapp.webhooks.tasks.deliver_webhook").delay(delivery_id)


def canary_later(sent_at: str, *, expires: float, queue=None) -> None:
    """A canary on `queue` (a worker's own: celery's `worker_direct(hostname)`), or on the judge
    queue."""
    options = {"queue": queue} if queue else {}
    _task("reviewapp.judging.tasks.canary").apply_async((sent_at,), expires=expires, **options)
