"""Celery tasks of labels: thin wrappers that call the service."""

from reviewapp.celery import task
from reviewapp.labels.alerts import miss_rate_evaluate


@task()
def evaluate_miss_rate() -> None:
    miss_rate_evaluate()
