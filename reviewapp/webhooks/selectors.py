"""The webhooks' reads: endpoints with their delivery counts, deliveries with their attempts."""

from __future__ import annotations

from django.db.models import Count, F, Prefetch, Q

from reviewapp.models import ApiClient


WEBHOOK_PAGE_SIZE = 100


def webhook_endpoints():
    from reviewapp.models import WebhookEndpoint

    return (
        WebhookEndpoint.objects.select_related("client")
        .annotate(
            pending=Count("deliveries", filter=Q(deliveries__status="pending")),
            failed=Count("deliveries", filter=Q(deliveries__status="failed")),
            delivered=Count("deliveries", filter=Q(deliveries__status="delivered")),
        )
        .order_by("removed_at", "-created_at", "-id")
    )


def webhook_deliveries(
    *,
    status: str = "",
    endpoint_id: int | None = None,
    ids: list[int] | None = None,
    client: ApiClient | None = None,
    limit: int = WEBHOOK_PAGE_SIZE,
) -> list:
    """The newest deliveries, with every attempt: all of them (the admin page) or one client's (the
    API)."""
    from reviewapp.models import WebhookAttempt, WebhookDelivery

    qs = WebhookDelivery.objects.select_related("endpoint__client").annotate(
        answer_public_id=F("answer__public_id")
    )
    if client is not None:
        qs = qs.filter(endpoint__client=client)
    if ids is not None:
        qs = qs.filter(pk__in=ids)
    if status:
        qs = qs.filter(status=status)
    if endpoint_id:
        qs = qs.filter(endpoint_id=endpoint_id)
    return list(
        qs.order_by("-created_at", "-id").prefetch_related(
            Prefetch("attempt_rows", queryset=WebhookAttempt.objects.order_by("number"))
        )[:limit]
    )
