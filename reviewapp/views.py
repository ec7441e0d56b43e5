"""Site pages that belong to no capability: sign-in, health checks, metrics."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from reviewapp import metrics as metrics_series
from reviewapp.judging import liveness


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs) | {
            "sso_provider": settings.OIDC_PROVIDER_NAME if settings.SSO_ENABLED else ""}


class LogoutView(auth_views.LogoutView):
    pass


def healthz(request: HttpRequest) -> HttpResponse:
    """For load balancers and compose health checks: the process serves and the database answers."""
    try:
        connection.ensure_connection()
    except DatabaseError:
        return HttpResponse("database unavailable", status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")


def health(request: HttpRequest) -> HttpResponse:
    """For monitors: each worker's last consumed canary, stale workers, answers stuck; 503 if not ok.
    Hostnames and counts only, no answer content."""
    try:
        status = liveness.worker_status()
    except DatabaseError:
        return JsonResponse({"ok": False, "error": "database unavailable"}, status=503)
    return JsonResponse(status, status=200 if status["ok"] else 503)


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """For Prometheus: counts and histograms only, no answer content; METRICS_TOKEN as a bearer token
    (a session does not open it: scrapers have none, and a reviewer needs no fleet figures)."""
    if not settings.METRICS_TOKEN:
        return HttpResponse("metrics are off: set METRICS_TOKEN to serve them", status=404, content_type="text/plain")
    given = request.headers.get("Authorization", "").encode("utf-8", "replace")
    if not hmac.compare_digest(given, f"Bearer {settings.METRICS_TOKEN}".encode()):
        response = HttpResponse("a valid METRICS_TOKEN is required: Authorization: Bearer <token>", status=401,
                                content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    try:
        body = metrics_series.exposition()
    except DatabaseError:
        return HttpResponse("database unavailable", status=503, content_type="text/plain")
    return HttpResponse(body, content_type=metrics_series.CONTENT_TYPE)
