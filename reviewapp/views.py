"""Site pages that belong to no capability: sign-in, health checks, metrics, the error page."""

from __future__ import annotations

import hmac
import sys

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults
from django.views.decorators.http import require_GET

from reviewapp import metrics as metrics_series
from reviewapp.db.errors import is_transient
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
    """For monitors: each worker's last consumed canary, stale workers, answers stuck; 503 if not
    ok. Hostnames and counts only, no answer content."""
    try:
        status = liveness.worker_status()
    except DatabaseError:
        return JsonResponse({"ok": False, "error": "database unavailable"}, status=503)
    return JsonResponse(status, status=200 if status["ok"] else 503)


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """For Prometheus: counts and histograms only, no answer content; METRICS_TOKEN as a bearer
    token (a session does not open it: scrapers have none, and a reviewer needs no fleet
    figures)."""
    if not settings.METRICS_TOKEN:
        return HttpResponse(
            "metrics are off: set METRICS_TOKEN to serve them",
            status=404,
            content_type="text/plain",
        )
    given = request.headers.get("Authorization", "").encode("utf-8", "replace")
    if not hmac.compare_digest(given, f"Bearer {settings.METRICS_TOKEN}".encode()):
        response = HttpResponse(
            "a valid METRICS_TOKEN is required: Authorization: Bearer <token>",
            status=401,
            content_type="text/plain",
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    try:
        body = metrics_series.exposition()
    except DatabaseError:
        return HttpResponse("database unavailable", status=503, content_type="text/plain")
    return HttpResponse(body, content_type=metrics_series.CONTENT_TYPE)


DATABASE_RETRY_SECONDS = 15


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: an unhandled error. The database down or restarting is not a bug but a wait:
    503 with Retry-After and a page that says so, rendered without the request (its context
    would read the session and the user from that database). Anything else: Django's own 500."""
    exc = sys.exc_info()[1]
    if exc is None or not is_transient(exc):
        return defaults.server_error(request)
    response = HttpResponse(
        render_to_string("503.html", {"retry_after": DATABASE_RETRY_SECONDS}), status=503
    )
    response["Retry-After"] = str(DATABASE_RETRY_SECONDS)
    return response
