"""Webhooks end to end on real parts: the API, Postgres, Redis, a real `celery worker` subprocess
(WEBHOOK_MAX_ATTEMPTS=3, WEBHOOK_BACKOFF_SECONDS=0.2 in its environment, see conftest) and a real
HTTP receiver on 127.0.0.1 that checks every signature."""

import json

import pytest
from django.contrib.auth import get_user_model

from reviewapp.models import Answer, WebhookDelivery
from reviewapp.review import service as review_service
from reviewapp.webhooks import service as webhooks_service
from tests import factories as make
from tests.conftest import wait_for
from tests.factories import fare_payload
from tests.webhook_receiver import Receiver

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


@pytest.fixture
def register(client, api_token, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the receiver is on loopback

    def register(url: str) -> str:
        response = client.put(
            "/api/v1/webhook",
            data=json.dumps({"url": url}),
            content_type="application/json",
            headers={"Authorization": f"Bearer {api_token}"},
        )
        assert response.status_code == 201, response.content
        return response.json()["secret"]

    return register


def _settled(event: str):
    return lambda: WebhookDelivery.objects.filter(event=event).exclude(status="pending").first()


def test_judged_and_adjudicated_events_reach_the_receiver_signed(api, register, celery_worker):
    with Receiver() as receiver:
        receiver.secret = register(receiver.url)
        answer_id = api.post(fare_payload()).json()["id"]
        judged = wait_for(_settled("answer.judged"))

        # A reviewer decides the flagged claim and finishes: the answer is adjudicated, a second
        # event goes out.
        rita = make.user("rita", "reviewer")
        answer = Answer.objects.get(public_id=answer_id)
        flagged = answer.claims.get(label="CONTRADICTED")
        review_service.claim_decide(
            user=rita,
            claim=flagged,
            decision="confirm",
            label=None,
            note="",
            expected_version=flagged.version,
        )
        review_service.answer_finish(user=rita, answer=answer)
        adjudicated = wait_for(_settled("answer.adjudicated"))
        wait_for(lambda: len(receiver.received) == 2)

    assert (judged.status, judged.attempts, adjudicated.status, adjudicated.attempts) == (
        "delivered",
        1,
        "delivered",
        1,
    )
    assert receiver.events() == [
        ("answer.judged", judged.event_id),
        ("answer.adjudicated", adjudicated.event_id),
    ]
    assert all(r.verified for r in receiver.received), [r.verify_error for r in receiver.received]
    first, second = (json.loads(r.body) for r in receiver.received)
    # The judged payload is what GET /api/v1/answers/<id> says, minus the url.
    got = api.get(answer_id).json()
    got.pop("url")
    assert first["data"]["answer"]["claims"] == got["claims"]
    assert (
        first["data"]["answer"]["status"] == "judged"
        and first["data"]["answer"]["verdict"] == got["verdict"]
    )
    assert second["data"]["answer"]["review"]["status"] == "adjudicated"
    decision = next(
        d for d in second["data"]["adjudication"]["decisions"] if d["claim_id"] == flagged.cid
    )
    assert (decision["judge_label"], decision["human_label"], decision["decision"]) == (
        "CONTRADICTED",
        "CONTRADICTED",
        "confirm",
    )
    [attempt] = judged.attempt_rows.all()
    assert attempt.http_status == 200 and attempt.latency_ms is not None


def test_a_failing_endpoint_is_retried_with_backoff_then_marked_failed_and_retry_now_delivers(
    api, register, celery_worker
):
    with Receiver(replies=(500,)) as receiver:
        receiver.secret = register(receiver.url)
        api.post(fare_payload())
        delivery = wait_for(_settled("answer.judged"))

        assert delivery.status == "failed" and delivery.attempts == 3
        attempts = list(delivery.attempt_rows.all())
        assert [(a.number, a.http_status) for a in attempts] == [(1, 500), (2, 500), (3, 500)]
        assert all("HTTP 500" in a.error for a in attempts)
        # Each attempt is re-signed and carries the same event id, so the receiver can dedupe.
        assert len(receiver.received) == 3 and all(r.verified for r in receiver.received)
        assert {r.headers["ClaimDesk-Delivery"] for r in receiver.received} == {delivery.event_id}
        gaps = [b.at - a.at for a, b in zip(receiver.received, receiver.received[1:])]
        # 0.2 s then 0.4 s, each jittered down to half at most
        assert gaps[0] >= 0.1 and gaps[1] >= 0.2

        # The receiver is fixed; an admin presses "retry now".
        receiver.replies = [200]
        ada = get_user_model().objects.create_user("ada")
        assert webhooks_service.delivery_retry_now(delivery_id=delivery.pk, user=ada)
        delivered = wait_for(
            lambda: WebhookDelivery.objects.filter(pk=delivery.pk, status="delivered").first()
        )

    assert delivered.attempts == 4 and len(receiver.received) == 4
    assert [a.http_status for a in delivered.attempt_rows.all()] == [500, 500, 500, 200]


def test_an_endpoint_that_recovers_gets_the_delivery_on_a_later_attempt(
    api, register, celery_worker
):
    with Receiver(replies=(503, 200)) as receiver:
        receiver.secret = register(receiver.url)
        api.post(fare_payload())
        delivery = wait_for(_settled("answer.judged"))
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
    assert [a.http_status for a in delivery.attempt_rows.all()] == [503, 200]
