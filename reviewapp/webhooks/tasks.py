"""Celery tasks that send webhook deliveries: thin wrappers that load by id and call the service."""


from django.conf import settings
from django.db import DatabaseError

from reviewapp.celery import task
from reviewapp.db.errors import is_transient
from reviewapp.webhooks.service import SENDING_MARGIN_SECONDS, deliveries_resend_due, delivery_send


@task(bind=True, max_retries=None)  # the service counts attempts (WEBHOOK_MAX_ATTEMPTS), not Celery
def deliver_webhook(self, delivery_id: int) -> None:
    try:
        outcome = delivery_send(delivery_id=delivery_id)
    except DatabaseError as exc:  # after a claim this long, any worker may take it
        if not is_transient(exc):
            raise
        raise self.retry(
            exc=exc, countdown=settings.WEBHOOK_TIMEOUT_SECONDS + SENDING_MARGIN_SECONDS
        )
    if outcome.retry_in is not None:
        raise self.retry(countdown=outcome.retry_in)


@task()
def resend_overdue_webhooks() -> None:
    deliveries_resend_due(older_than_seconds=settings.WEBHOOK_RESEND_AFTER_SECONDS)
