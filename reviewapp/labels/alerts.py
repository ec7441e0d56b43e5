"""alert.miss_rate: the miss rate's upper bound against the policy's target, once per crossing.

Evaluated by a task after each change that can move it (an audited answer adjudicated, a policy
saved: reviewapp/review/service.py, reviewapp/policy/service.py), never on a page view: a page
says "above the target" from the same figures, but only the evaluation records the crossing.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from reviewapp.audit import audit_record
from reviewapp.labels import missrate
from reviewapp.models import AlertState, Policy
from reviewapp.webhooks.service import MISS_RATE_ALERT, team_event_record

MISS_RATE = MISS_RATE_ALERT  # the webhook event, the AlertState's name and the AuditEvent's action


def miss_rate_figures(rates: dict, policy: Policy) -> dict:
    overall = rates["overall"]
    return {"target": rates["target"], "estimate": overall.value, "low": overall.low,
            "high": overall.high,
            "audited": overall.answers, "missed": overall.missed, "days": rates["days"],
            "policy_version": policy.version}


def miss_rate_evaluate(*, now: datetime | None = None) -> str:
    """Switch alert.miss_rate on when the upper bound passes the target and it was off (recording
    the crossing: an AuditEvent and the webhook deliveries), off when it no longer does.
    Returns "fired", "cleared" or "unchanged"."""
    now = now or timezone.now()
    policy = Policy.current()
    rates = missrate.miss_rates(target=policy.miss_rate_target, now=now)
    figures = miss_rate_figures(rates, policy)
    AlertState.objects.get_or_create(name=MISS_RATE)
    state = AlertState.objects.filter(name=MISS_RATE)
    with transaction.atomic():
        was_off, was_on = state.filter(active=False), state.filter(active=True)
        if rates["above"] and was_off.update(active=True, changed_at=now, detail=figures):
            audit_record(actor_label="system", action=MISS_RATE, obj=state.get(), after=figures)
            team_event_record(event=MISS_RATE, data={"miss_rate": figures})
            return "fired"
        if not rates["above"] and was_on.update(active=False, changed_at=now, detail=figures):
            audit_record(actor_label="system", action=f"{MISS_RATE}.cleared", obj=state.get(),
                         after=figures)
            return "cleared"
        state.update(detail=figures)  # the latest figures; changed_at stays the crossing's time
    return "unchanged"
