"""Celery tasks of labels: thin wrappers that call the service."""

from celery import shared_task

from reviewapp.labels.alerts import miss_rate_evaluate


@shared_task(name="reviewapp.tasks.evaluate_miss_rate")
def evaluate_miss_rate() -> None:
    miss_rate_evaluate()
