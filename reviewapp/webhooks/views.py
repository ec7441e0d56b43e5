"""The admins' webhook page (/webhooks/): endpoints, deliveries with every attempt, retry now."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from reviewapp.webhooks import selectors
from reviewapp.access import admin_required
from reviewapp.models import WebhookDelivery
from reviewapp.webhooks import service as webhooks_service


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


@require_GET
@admin_required
def webhooks(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", "")
    status = status if status in WebhookDelivery.Status.values else ""
    endpoint_id = _int(request.GET.get("endpoint"))
    return render(request, "reviewapp/webhooks.html", {
        "endpoints": selectors.webhook_endpoints(),
        "deliveries": selectors.webhook_deliveries(status=status, endpoint_id=endpoint_id),
        "status": status,
        "endpoint_id": endpoint_id,
        "statuses": WebhookDelivery.Status.values,
        "page_size": selectors.WEBHOOK_PAGE_SIZE,
    })


@require_POST
@admin_required
def webhook_retry(request: HttpRequest, delivery_id: int) -> HttpResponse:
    get_object_or_404(WebhookDelivery, pk=delivery_id)
    retried = webhooks_service.delivery_retry_now(delivery_id=delivery_id, user=request.user)
    if request.htmx:
        delivery = selectors.webhook_deliveries(ids=[delivery_id])[0]
        return render(
            request, "reviewapp/webhooks.html#delivery", {"delivery": delivery, "retried": retried}
        )
    if retried:
        messages.success(request, f"Delivery #{delivery_id} will be sent again now.")
    else:
        messages.error(
            request,
            f"Delivery #{delivery_id} is not failed; only failed deliveries can be retried.",
        )
    return redirect(reverse("webhooks") + f"#delivery-{delivery_id}")
