"""Sign-in throttling as reviewers see it (django-axes does the counting, see settings): a
locked-out sign-in gets the sign-in page with how long to wait, and each lockout is recorded once as
an AuditEvent (axes' own failure log keeps every failed attempt)."""

from __future__ import annotations

import math

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from reviewapp.models import AuditEvent

LOCKED_OUT = "login.locked_out"


def lockout_minutes() -> int:
    return math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60)


def login_locked_out(
    request: HttpRequest, original_response=None, credentials=None
) -> HttpResponse:
    context = {"form": AuthenticationForm(request), "next": request.POST.get("next", ""),
               "locked_out_minutes": lockout_minutes()}
    return render(request, "registration/login.html", context, status=429)


def audit_lockout(
    sender, request: HttpRequest, username: str | None, ip_address: str | None, **kwargs
) -> None:
    """Once per lockout: every refused attempt during one would otherwise add a row to the
    history."""
    name = (username or "")[:40]
    since = timezone.now() - settings.AXES_COOLOFF_TIME
    if AuditEvent.objects.filter(
        action=LOCKED_OUT,
        object_type="user",
        object_id=name,
        created_at__gte=since,
        after__ip_address=ip_address,
    ).exists():
        return
    AuditEvent.objects.create(
        actor_label="system",
        action=LOCKED_OUT,
        object_type="user",
        object_id=name,
        after={"ip_address": ip_address, "failure_limit": settings.AXES_FAILURE_LIMIT},
        note=f"sign-in refused for {lockout_minutes()} minutes after repeated failures",
    )
