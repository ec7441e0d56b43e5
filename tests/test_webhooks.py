"""Webhooks in process: signatures, registration, events, sending, the admin page.

The end-to-end path through a real celery worker is in test_webhooks_worker.py.
"""

import json
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from reviewapp import enqueue
from reviewapp.models import (
    Answer,
    ApiClient,
    AuditEvent,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
)
from reviewapp.review import service as review_service
from reviewapp.webhooks import service as webhooks_service
from reviewapp.webhooks.signing import SignatureError, sign, signature_header, verify
from tests import factories as make
from tests.webhook_receiver import Receiver

BODY = b'{"id":"evt_1","type":"answer.judged"}'
SECRET = "whsec_test"


# --- signatures ------------------------------------------------------------------------------


def test_a_signature_verifies_and_returns_its_timestamp():
    now = 1_764_451_200
    header = signature_header([SECRET], BODY, now)
    assert header == f"t={now},v1={sign(SECRET, BODY, now)}"
    assert verify(secret=SECRET, body=BODY, header=header, now=now + 10) == now


@pytest.mark.parametrize(
    "body, secret, header_time, now, reason",
    [
        (BODY + b" ", SECRET, 1000, 1000, "does not match"),  # tampered body
        (BODY, "whsec_other", 1000, 1000, "does not match"),  # another secret
        (BODY, SECRET, 1000, 1000 + 301, "tolerance"),  # replayed later
        (BODY, SECRET, 1000 + 301, 1000, "tolerance"),  # from the future
    ],
)
def test_a_signature_fails_on_a_tampered_body_a_wrong_secret_or_an_old_timestamp(
    body, secret, header_time, now, reason
):
    header = signature_header([SECRET], BODY, header_time)
    with pytest.raises(SignatureError, match=reason):
        verify(secret=secret, body=body, header=header, now=now)


def test_a_forged_timestamp_does_not_verify():
    header = signature_header([SECRET], BODY, 1000).replace("t=1000", "t=2000")
    with pytest.raises(SignatureError, match="does not match"):
        verify(secret=SECRET, body=BODY, header=header, now=2000)


@pytest.mark.parametrize("header", [None, "", "v1=abc", "t=1000", "t=soon,v1=abc", "garbage"])
def test_a_missing_or_malformed_header_is_refused(header):
    with pytest.raises(SignatureError):
        verify(secret=SECRET, body=BODY, header=header, now=1000)


def test_during_a_rotation_either_secret_verifies():
    header = signature_header(["whsec_new", "whsec_old"], BODY, 1000)
    assert verify(secret="whsec_new", body=BODY, header=header, now=1000) == 1000
    assert verify(secret="whsec_old", body=BODY, header=header, now=1000) == 1000


# --- registration through the API -----------------------------------------------------------


def test_registering_returns_the_secret_once_and_get_never_shows_it(hook_api, private_refused):
    created = hook_api.put(url="https://hooks.example.com/claimdesk")
    assert created.status_code == 201
    body = created.json()
    assert body["secret"].startswith("whsec_") and len(body["secret"]) > 40
    assert body["events"] == ["answer.judged", "answer.adjudicated"] and body["active"] is True
    assert body["secret_hint"] == body["secret"][:10] + "…"

    shown = hook_api.get().json()
    assert shown["secret"] is None and shown["url"] == "https://hooks.example.com/claimdesk"

    changed = hook_api.put(url="https://hooks.example.com/v2", events=["answer.adjudicated"])
    assert changed.status_code == 200 and changed.json()["secret"] is None
    assert changed.json()["events"] == ["answer.adjudicated"]
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secret == body["secret"]  # changing the URL keeps the secret
    assert list(
        AuditEvent.objects.filter(object_type="webhookendpoint").values_list("action", flat=True)
    ) == ["webhook.updated", "webhook.created"]


def test_rotating_the_secret_keeps_the_old_one_signing_for_a_grace_period(
    hook_api, private_refused
):
    old = hook_api.put(url="https://hooks.example.com/h").json()["secret"]
    new = hook_api.put(url="https://hooks.example.com/h", rotate_secret=True).json()["secret"]
    assert new and new != old
    endpoint = WebhookEndpoint.objects.get()
    assert (endpoint.secret, endpoint.previous_secret) == (new, old)
    assert endpoint.previous_secret_expires_at > timezone.now() + timedelta(hours=23)


def test_removing_the_webhook_keeps_its_history_and_allows_a_new_one(hook_api, private_refused):
    hook_api.put(url="https://hooks.example.com/h")
    assert hook_api.delete().status_code == 204
    assert hook_api.get().status_code == 404
    assert hook_api.delete().status_code == 404
    assert hook_api.put(url="https://hooks.example.com/again").status_code == 201
    assert WebhookEndpoint.objects.count() == 2
    assert WebhookEndpoint.objects.filter(removed_at__isnull=True).count() == 1


@pytest.mark.parametrize(
    "payload, field, message",
    [
        ({"url": "ftp://hooks.example.com/h"}, "url", "http:// or https://"),
        ({"url": "hooks.example.com/h"}, "url", "http:// or https://"),
        ({"url": "https:///nohost"}, "url", "no host"),
        ({"url": "https://user:pw@hooks.example.com/h"}, "url", "credentials"),
        ({"url": "https://hooks.example.com:99999/h"}, "url", "port"),
        ({"url": "https://hooks.example.com/h#frag"}, "url", "fragment"),
        ({"url": "http://127.0.0.1:8000/h"}, "url", "public address"),
        ({"url": "http://localhost/h"}, "url", "public address"),
        ({"url": "http://api.localhost/h"}, "url", "public address"),
        ({"url": "http://10.1.2.3/h"}, "url", "public address"),
        ({"url": "http://192.168.0.10/h"}, "url", "public address"),
        # cloud metadata
        (
            {"url": "http://169.254.169.254/latest/meta-data"},
            "url",
            "public address",
        ),
        ({"url": "http://[::1]/h"}, "url", "public address"),
        ({"url": "http://[::ffff:127.0.0.1]/h"}, "url", "public address"),
        ({"url": "http://2130706433/h"}, "url", "public address"),  # 127.0.0.1 as one number
        ({"url": "http://0x7f.1/h"}, "url", "public address"),
        ({"url": "http://[64:ff9b::7f00:1]/h"}, "url", "public address"),  # NAT64 of 127.0.0.1
        ({"url": "http://[2002:7f00:1::1]/h"}, "url", "public address"),  # 6to4 of 127.0.0.1
        ({"url": "http://[::127.0.0.1]/h"}, "url", "public address"),  # IPv4-compatible
        ({"url": "https://hooks.example.com/h", "events": ["answer.deleted"]}, "events.0", ""),
        ({"url": "https://hooks.example.com/h", "events": []}, "events", ""),
        ({"events": ["answer.judged"]}, "url", ""),
        ({"url": "https://hooks.example.com/" + "a" * 2000}, "url", ""),
    ],
)
def test_bad_registrations_get_field_errors(hook_api, private_refused, payload, field, message):
    response = hook_api.put(**payload)
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert [e["field"] for e in errors] == [field]
    assert message in errors[0]["message"]
    assert not WebhookEndpoint.objects.exists()


def test_loopback_urls_are_accepted_when_the_setting_allows_them(hook_api, private_ok):
    assert hook_api.put(url="http://127.0.0.1:9999/h").status_code == 201


def test_the_webhook_api_needs_a_token(client):
    response = client.put(
        "/api/v1/webhook",
        data=json.dumps({"url": "https://hooks.example.com/h"}),
        content_type="application/json",
    )
    assert response.status_code == 401
    assert client.get("/api/v1/webhook").status_code == 401


# --- events ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_judging_records_one_delivery_with_the_apis_answer_shape():
    client, endpoint = make.webhook_endpoint()
    answer = make.judged(client=client)

    delivery = WebhookDelivery.objects.get()
    assert (delivery.endpoint, delivery.answer, delivery.event, delivery.status) == (
        endpoint,
        answer,
        "answer.judged",
        "pending",
    )
    assert delivery.event_id.startswith("evt_") and delivery.next_attempt_at is not None
    payload = delivery.payload
    assert (payload["id"], payload["type"]) == (delivery.event_id, "answer.judged")
    from reviewapp.api import selectors
    from reviewapp.api.routes import AnswerOut

    # The API's own serializer, minus the url (which needs a request to build).
    expected = AnswerOut.model_validate(selectors.answer_state(answer) | {"url": "x"}).model_dump(
        mode="json"
    )
    expected.pop("url")
    assert payload["data"]["answer"] == expected
    assert payload["data"]["answer"]["status"] == "judged"


@pytest.mark.django_db
def test_a_webhook_payload_names_the_answer_by_its_opaque_id_never_its_row_number():
    client, _ = make.webhook_endpoint()
    answer = make.judged(client=client)

    payload = WebhookDelivery.objects.get().payload
    assert payload["data"]["answer"]["id"] == str(answer.public_id)
    assert uuid.UUID(payload["data"]["answer"]["id"]).version == 4
    assert f'"id": {answer.pk}' not in json.dumps(
        payload
    ) and f'"answer_id": {answer.pk}' not in json.dumps(payload)
    assert [c["label"] for c in payload["data"]["answer"]["claims"]] == [
        "SUPPORTED",
        "CONTRADICTED",
    ]
    assert "adjudication" not in payload["data"]


@pytest.mark.django_db
def test_a_judge_that_fails_for_good_records_a_judged_event_with_status_failed_and_the_error(
    settings, fake_llm
):
    from tests.fake_openai import Reply

    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = fake_llm.base_url, "test-key"
    make.openai_policy()
    fake_llm.enqueue(Reply.refusal("I cannot evaluate this content."))
    client, _ = make.webhook_endpoint()
    answer = make.judged(client=client)
    assert answer.status == "failed"
    data = WebhookDelivery.objects.get(event="answer.judged").payload["data"]["answer"]
    assert data["status"] == "failed" and "cannot evaluate" in data["error"]
    assert data["claims"] == [] and data["review"] == {
        "status": "in_review",
        "reason": "judge failed",
    }


@pytest.mark.django_db
def test_adjudication_records_a_delivery_with_the_human_decisions():
    client, _ = make.webhook_endpoint()
    answer = make.judged(client=client)
    rita = make.user("rita", "reviewer")
    contradicted = answer.claims.get(label="CONTRADICTED")
    review_service.claim_decide(
        user=rita,
        claim=contradicted,
        decision="overturn",
        label="UNSUPPORTED",
        note="P2 gives another price",
        expected_version=contradicted.version,
    )
    # not finished yet
    assert not WebhookDelivery.objects.filter(event="answer.adjudicated").exists()
    review_service.answer_finish(user=rita, answer=answer)

    delivery = WebhookDelivery.objects.get(event="answer.adjudicated")
    data = delivery.payload["data"]
    assert data["answer"]["review"]["status"] == "adjudicated"
    assert data["adjudication"]["verdict"] == Answer.objects.get(pk=answer.pk).adjudicated_verdict
    decisions = {d["claim_id"]: d for d in data["adjudication"]["decisions"]}
    overturned = decisions[contradicted.cid]
    assert (
        overturned["judge_label"],
        overturned["human_label"],
        overturned["decision"],
        overturned["note"],
    ) == ("CONTRADICTED", "UNSUPPORTED", "overturn", "P2 gives another price")
    assert overturned["decided_at"] and overturned["decision_mode"] == "explicit"
    assert {d["decision_mode"] for c, d in decisions.items() if c != contradicted.cid} == {"bulk"}


@pytest.mark.django_db
def test_no_delivery_for_unsubscribed_events_paused_endpoints_or_answers_without_a_client():
    client, endpoint = make.webhook_endpoint(events=("answer.adjudicated",))
    make.judged(client=client)
    assert not WebhookDelivery.objects.exists()
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(events=["answer.judged"], active=False)
    make.judged(client=client, external_id="conv-2")
    make.judged(external_id="conv-3")
    assert not WebhookDelivery.objects.exists()


# --- sending (in process, to a real local HTTP server) ----------------------------------------


@pytest.mark.django_db
def test_a_2xx_marks_the_delivery_delivered_with_a_verifiable_signature(private_ok):
    with Receiver() as receiver:
        _, endpoint = make.webhook_endpoint(url=receiver.url)
        receiver.secret = endpoint.secret
        delivery = make.webhook_delivery(endpoint)
        outcome = webhooks_service.delivery_send(delivery_id=delivery.pk)

    assert outcome.status == "delivered"
    [got] = receiver.received
    assert got.verified, got.verify_error
    assert got.path == "/hooks/claimdesk"
    assert (got.headers["ClaimDesk-Event"], got.headers["ClaimDesk-Delivery"]) == (
        "answer.judged",
        delivery.event_id,
    )
    assert got.headers["Content-Type"] == "application/json"
    assert json.loads(got.body) == delivery.payload
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.sending_until) == ("delivered", 1, None)
    [attempt] = delivery.attempt_rows.all()
    assert (attempt.number, attempt.http_status, attempt.error) == (1, 200, "")
    assert attempt.latency_ms is not None and attempt.finished_at >= attempt.started_at


@pytest.mark.django_db
def test_a_failure_schedules_a_retry_with_backoff_and_the_last_attempt_marks_it_failed(
    settings, private_ok
):
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    settings.WEBHOOK_BACKOFF_SECONDS = 10
    with Receiver(replies=(500,)) as receiver:
        _, endpoint = make.webhook_endpoint(url=receiver.url)
        delivery = make.webhook_delivery(endpoint)
        first = webhooks_service.delivery_send(delivery_id=delivery.pk)
        assert first.status == "pending" and 5 <= first.retry_in <= 10
        # Not due yet: a early task message sends nothing.
        assert webhooks_service.delivery_send(delivery_id=delivery.pk).status == "skipped"
        for _ in range(2):
            WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
            last = webhooks_service.delivery_send(delivery_id=delivery.pk)

    assert last.status == "failed" and last.retry_in is None
    assert len(receiver.received) == 3
    # one idempotency key
    assert len({r.headers["ClaimDesk-Delivery"] for r in receiver.received}) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("failed", 3, None)
    attempts = list(delivery.attempt_rows.all())
    assert [a.number for a in attempts] == [1, 2, 3]
    assert all(
        a.http_status == 500 and a.error == "HTTP 500: not a 2xx reply (its body is not kept)"
        for a in attempts
    )
    assert webhooks_service.delivery_send(delivery_id=delivery.pk).status == "skipped"


@pytest.mark.parametrize(
    "attempt, low, high", [(1, 30, 60), (2, 60, 120), (3, 120, 240), (10, 300, 600)]
)
def test_backoff_doubles_with_jitter_up_to_a_cap(settings, attempt, low, high):
    settings.WEBHOOK_BACKOFF_SECONDS = 60
    settings.WEBHOOK_BACKOFF_MAX_SECONDS = 600
    waits = [webhooks_service.backoff_seconds(attempt) for _ in range(200)]
    assert all(low <= w <= high for w in waits)
    assert len(set(waits)) > 100  # jittered, not in lockstep


@pytest.mark.django_db
def test_redirects_are_not_followed(private_ok):
    with Receiver(replies=(302,), location="http://127.0.0.1:1/elsewhere") as receiver:
        _, endpoint = make.webhook_endpoint(url=receiver.url)
        delivery = make.webhook_delivery(endpoint)
        assert webhooks_service.delivery_send(delivery_id=delivery.pk).status == "pending"
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert attempt.http_status == 302
    assert attempt.error == "HTTP 302: a redirect, not followed"  # its Location is not handed back
    assert len(receiver.received) == 1


@pytest.mark.django_db
def test_an_unreachable_endpoint_records_the_connection_error(private_ok):
    with Receiver() as receiver:
        url = receiver.url
    _, endpoint = make.webhook_endpoint(url=url)  # the server is gone: connection refused
    delivery = make.webhook_delivery(endpoint)
    assert webhooks_service.delivery_send(delivery_id=delivery.pk).status == "pending"
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert attempt.http_status is None and "ConnectError" in attempt.error


@pytest.mark.django_db
def test_a_slow_endpoint_times_out(settings, private_ok):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    with Receiver(delay=1.0) as receiver:
        _, endpoint = make.webhook_endpoint(url=receiver.url)
        delivery = make.webhook_delivery(endpoint)
        assert webhooks_service.delivery_send(delivery_id=delivery.pk).status == "pending"
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert attempt.error == "timed out after 0.3s" and attempt.http_status is None


@pytest.mark.django_db
def test_a_private_address_is_refused_at_send_time_too(private_refused):
    with Receiver() as receiver:
        # stored before the rules applied to it
        _, endpoint = make.webhook_endpoint(url=receiver.url)
        delivery = make.webhook_delivery(endpoint)
        webhooks_service.delivery_send(delivery_id=delivery.pk)
    assert receiver.received == []
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert (
        attempt.error
        == "not sent: refused: 127.0.0.1 resolves to a loopback, private or otherwise non-public"
        " address"
    )


@pytest.mark.django_db
def test_a_removed_endpoint_fails_its_pending_deliveries_without_sending(private_ok):
    with Receiver() as receiver:
        _, endpoint = make.webhook_endpoint(url=receiver.url)
        delivery = make.webhook_delivery(endpoint)
        webhooks_service.endpoint_remove(client=endpoint.client)
        assert webhooks_service.delivery_send(delivery_id=delivery.pk).status == "failed"
    assert receiver.received == []
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", 0)
    assert "removed" in delivery.error


@pytest.mark.django_db(transaction=True)
def test_a_delivery_is_never_sent_twice_at_once(private_ok):
    """Six workers get the same delivery at the same moment: the conditional UPDATE lets one
    send."""
    from django.db import connection

    with Receiver(delay=0.5) as receiver:
        _, endpoint = make.webhook_endpoint(url=receiver.url)
        delivery = make.webhook_delivery(endpoint)
        barrier, outcomes = threading.Barrier(6), []

        def send():
            try:
                barrier.wait()
                outcomes.append(webhooks_service.delivery_send(delivery_id=delivery.pk).status)
            finally:
                connection.close()

        threads = [threading.Thread(target=send) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(outcomes) == ["delivered"] + ["skipped"] * 5
    assert len(receiver.received) == 1 and receiver.max_in_flight == 1
    assert WebhookAttempt.objects.filter(delivery=delivery).count() == 1


def test_a_client_sees_its_own_deliveries_with_every_attempt(client, api_token):
    headers = {"Authorization": f"Bearer {api_token}"}
    _, mine = make.webhook_endpoint(client=ApiClient.objects.get(name="fares-bot"))
    _, theirs = make.webhook_endpoint()
    failed = make.webhook_delivery(mine, status="failed", attempts=1, error="")
    WebhookAttempt.objects.create(
        delivery=failed, number=1, http_status=500, latency_ms=7, error="HTTP 500: no"
    )
    delivered = make.webhook_delivery(
        mine, status="delivered", attempts=1, delivered_at=timezone.now()
    )
    make.webhook_delivery(theirs)

    rows = client.get("/api/v1/webhook/deliveries", headers=headers).json()
    assert [r["event_id"] for r in rows] == [delivered.event_id, failed.event_id]
    assert rows[1]["status"] == "failed" and rows[1]["answer_id"] == str(failed.answer.public_id)
    assert rows[1]["attempts"] == [{"number": 1, "started_at": rows[1]["attempts"][0]["started_at"],
                                    "http_status": 500, "latency_ms": 7, "error": "HTTP 500: no"}]
    only_failed = client.get("/api/v1/webhook/deliveries?status=failed", headers=headers).json()
    assert [r["event_id"] for r in only_failed] == [failed.event_id]
    bad = client.get("/api/v1/webhook/deliveries?limit=0&status=lost", headers=headers)
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"query.limit", "query.status"}
    misspelt = client.get("/api/v1/webhook/deliveries?stauts=failed", headers=headers)
    assert misspelt.status_code == 400
    assert [e["field"] for e in misspelt.json()["errors"]] == ["query.stauts"]


# --- the admin page --------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_webhooks_page_is_for_admins_only(client):
    response = client.get("/webhooks/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert client.post("/webhooks/deliveries/1/retry").status_code == 302
    client.force_login(make.user("rita", "reviewer"))
    assert client.get("/webhooks/").status_code == 403
    assert client.post("/webhooks/deliveries/1/retry").status_code == 403


@pytest.mark.django_db
def test_the_webhooks_page_shows_every_attempt_and_escapes_urls_and_errors(client):
    client.force_login(make.user("ada", "admin"))
    _, endpoint = make.webhook_endpoint(
        url='https://hooks.example.com/h?x="><script>alert(1)</script>'
    )
    delivery = make.webhook_delivery(endpoint, status="failed", attempts=2)
    WebhookAttempt.objects.create(
        delivery=delivery,
        number=1,
        http_status=500,
        latency_ms=12,
        finished_at=timezone.now(),
        error="HTTP 500: <img src=x onerror=alert(2)>",
    )
    WebhookAttempt.objects.create(
        delivery=delivery,
        number=2,
        latency_ms=5000,
        finished_at=timezone.now(),
        error="timed out after 5s",
    )

    page = client.get("/webhooks/").content.decode()
    assert (
        "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    )
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(2)&gt;" in page
    assert (
        "HTTP 500" in page
        and "12 ms" in page
        and "timed out after 5s" in page
        and "no response" in page
    )
    assert delivery.event_id in page and "Retry now" in page
    assert endpoint.secret not in page and endpoint.secret_hint in page
    failed_only = client.get("/webhooks/?status=delivered").content.decode()
    assert delivery.event_id not in failed_only


@pytest.mark.django_db
def test_retry_now_puts_a_failed_delivery_back_and_is_audited(client):
    ada = make.user("ada", "admin")
    client.force_login(ada)
    _, endpoint = make.webhook_endpoint()
    failed = make.webhook_delivery(endpoint, status="failed", attempts=8)
    delivered = make.webhook_delivery(endpoint, status="delivered", attempts=1)

    response = client.post(
        f"/webhooks/deliveries/{failed.pk}/retry", headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert (
        b"<html" not in response.content
        and f'id="delivery-{failed.pk}"'.encode() in response.content
    )
    failed.refresh_from_db()
    assert failed.status == "pending" and failed.next_attempt_at <= timezone.now()
    assert AuditEvent.objects.filter(
        action="webhook.retried", object_id=str(failed.pk), actor=ada
    ).exists()

    response = client.post(f"/webhooks/deliveries/{delivered.pk}/retry", follow=True)
    assert b"only failed deliveries can be retried" in response.content
    delivered.refresh_from_db()
    assert delivered.status == "delivered"
    assert client.post("/webhooks/deliveries/999999/retry").status_code == 404


@pytest.mark.django_db
def test_a_manual_retry_is_one_more_attempt(settings, private_ok):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    with Receiver(replies=(500,)) as receiver:
        _, endpoint = make.webhook_endpoint(url=receiver.url)
        delivery = make.webhook_delivery(endpoint, status="failed", attempts=2)
        webhooks_service.delivery_retry_now(
            delivery_id=delivery.pk, user=get_user_model().objects.create_user("ada")
        )
        assert webhooks_service.delivery_send(delivery_id=delivery.pk).status == "failed"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, len(receiver.received)) == ("failed", 3, 1)


@pytest.mark.django_db
def test_resend_enqueues_overdue_unclaimed_deliveries_only(monkeypatch):
    _, endpoint = make.webhook_endpoint()
    overdue = make.webhook_delivery(endpoint)
    WebhookDelivery.objects.filter(pk=overdue.pk).update(
        next_attempt_at=timezone.now() - timedelta(minutes=5)
    )
    fresh = make.webhook_delivery(endpoint)
    claimed = make.webhook_delivery(endpoint, sending_until=timezone.now() + timedelta(seconds=30))
    WebhookDelivery.objects.filter(pk=claimed.pk).update(
        next_attempt_at=timezone.now() - timedelta(minutes=5)
    )
    make.webhook_delivery(endpoint, status="failed")
    sent = []
    monkeypatch.setattr(enqueue, "deliver_webhook_later", sent.append)
    assert webhooks_service.deliveries_resend_due(older_than_seconds=60) == 1
    assert sent == [overdue.pk] and fresh.pk not in sent


@pytest.mark.django_db
def test_beats_resend_task_enqueues_what_is_overdue_by_the_configured_delay(monkeypatch, settings):
    from reviewapp.webhooks.tasks import resend_overdue_webhooks

    _, endpoint = make.webhook_endpoint()
    lost = make.webhook_delivery(endpoint)
    WebhookDelivery.objects.filter(pk=lost.pk).update(
        next_attempt_at=timezone.now() - timedelta(seconds=90)
    )
    sent = []
    monkeypatch.setattr(enqueue, "deliver_webhook_later", sent.append)
    settings.WEBHOOK_RESEND_AFTER_SECONDS = 120
    resend_overdue_webhooks()
    assert sent == []
    settings.WEBHOOK_RESEND_AFTER_SECONDS = 60
    resend_overdue_webhooks()
    assert sent == [lost.pk]


def test_the_documented_receiver_snippet_accepts_a_real_signature_and_refuses_a_tampered_body():
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "webhooks.md").read_text()
    snippet = page.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(snippet, namespace)  # noqa: S102 - our own docs
    header = signature_header([SECRET], BODY, int(time.time()))
    assert namespace["verify"](SECRET, BODY, header) is True
    assert namespace["verify"](SECRET, BODY + b"x", header) is False
    assert namespace["verify"]("whsec_other", BODY, header) is False
    assert (
        namespace["verify"](SECRET, BODY, signature_header([SECRET], BODY, int(time.time()) - 600))
        is False
    )
