"""alert.miss_rate end to end on real parts: a policy's target saved, a reviewer finishing an
audited answer, the evaluation on a real `celery worker`, the signed delivery to a real receiver."""

from __future__ import annotations

import json

import pytest

from reviewapp.labels.alerts import MISS_RATE
from reviewapp.models import AlertState, AuditEvent, Policy, WebhookDelivery
from reviewapp.policy.service import policy_create, policy_values
from reviewapp.review import service as review_service
from tests import factories as make
from tests.conftest import wait_for
from tests.test_miss_rate import _audited
from tests.webhook_receiver import Receiver

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def test_a_target_under_the_upper_bound_fires_alert_miss_rate_once_to_the_receiver(
        client, api_token, settings, celery_worker):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the receiver is on loopback
    rita, ada = make.user("rita", "reviewer"), make.admin()
    _audited(rita, 0.5, missed="price")  # 1 audited answer, a miss: 100% [20.7%-100%]
    with Receiver() as receiver:
        response = client.put("/api/v1/webhook",
                              data=json.dumps({"url": receiver.url, "events": [MISS_RATE]}),
                              content_type="application/json",
                              headers={"Authorization": f"Bearer {api_token}"})
        receiver.secret = response.json()["secret"]
        policy_create(user=ada, values=policy_values(Policy.current()) | {"miss_rate_target": 0.05},
                      note="at most 5% of passed answers")
        delivery = wait_for(
            lambda: WebhookDelivery.objects.filter(event=MISS_RATE, status="delivered").first())
        # A reviewer finishes another audited answer, clean: the bound stays above, nothing fires
        # again.
        clean = make.in_review(
            answer="Riders aged 65 and older pay a reduced fare of $1.00 per ride."
        )
        review_service.answer_finish(user=rita, answer=clean)
        wait_for(lambda: AlertState.objects.filter(name=MISS_RATE, detail__audited=2).exists())
    assert AlertState.objects.get(name=MISS_RATE).active
    assert WebhookDelivery.objects.filter(event=MISS_RATE).count() == 1
    assert AuditEvent.objects.filter(action=MISS_RATE).count() == 1
    [received] = receiver.received
    assert received.verified, received.verify_error
    body = json.loads(received.body)
    assert (body["type"], body["id"]) == (MISS_RATE, delivery.event_id)
    figures = body["data"]["miss_rate"]
    assert (figures["target"], figures["estimate"], figures["audited"], figures["missed"]) == (
        0.05, 1.0, 1, 1)
    assert figures["high"] == 1.0
    assert figures["low"] == pytest.approx(1 / (1 + 1.959964 ** 2), abs=1e-5)
