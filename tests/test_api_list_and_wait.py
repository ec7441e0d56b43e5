"""GET /api/v1/answers (a client's answers by its own id, filtered, in keyset pages) and
POST /api/v1/answers?wait=S (the guardrail mode: the verdict in the reply when it is ready in time).
"""

from __future__ import annotations

import base64
import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from reviewapp.models import Answer
from reviewapp.api.clients import api_client_create
from tests.factories import fare_payload


def _list(client, token, **query):
    return client.get("/api/v1/answers", query, headers={"Authorization": f"Bearer {token}"})


def _post(client, token, payload, wait=None):
    url = "/api/v1/answers" + (f"?wait={wait}" if wait is not None else "")
    return client.post(url, data=json.dumps(payload), content_type="application/json",
                       headers={"Authorization": f"Bearer {token}"})


@pytest.mark.django_db
def test_an_answer_is_found_by_the_clients_own_id_and_only_by_that_client(client, api, api_token):
    posted = api.post(fare_payload(external_id="conv-42")).json()
    api.post(fare_payload(external_id="conv-43"))
    _, other_token = api_client_create(name="other-bot")
    _post(client, other_token, fare_payload(external_id="conv-42"))

    body = _list(client, api_token, external_id="conv-42").json()
    assert [row["id"] for row in body["results"]] == [posted["id"]] and body["next_cursor"] is None
    assert body["results"][0]["url"].endswith(f"/api/v1/answers/{posted['id']}")
    assert body["results"][0] == api.get(posted["id"]).json()  # each row as the answer's own GET
    assert len(_list(client, other_token).json()["results"]) == 1
    assert _list(client, api_token, external_id="nobody").json() == {
        "results": [],
        "next_cursor": None,
    }


@pytest.mark.django_db
def test_pages_follow_the_cursor_newest_first_without_gaps_or_repeats(client, api, api_token):
    ids = [api.post(fare_payload(external_id=f"e-{n}")).json()["id"] for n in range(7)]
    Answer.objects.update(created_at=timezone.now())  # ties on time are broken by the opaque id
    seen, cursor = [], None
    while True:
        body = _list(client, api_token, limit=3, **({"cursor": cursor} if cursor else {})).json()
        seen += [row["id"] for row in body["results"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
        # the cursor names it by time and opaque id only
        last = Answer.objects.get(public_id=seen[-1])
        assert (
            base64.urlsafe_b64decode(cursor + "==").decode()
            == f"{last.created_at.isoformat()}~{seen[-1]}"
        )
    assert sorted(seen) == sorted(ids) and len(seen) == 7


@pytest.mark.django_db
def test_filters_by_status_verdict_and_time(client, api, api_token):
    old = api.post(fare_payload(external_id="old")).json()["id"]
    new = api.post(fare_payload(external_id="new")).json()["id"]
    Answer.objects.filter(public_id=old).update(created_at=timezone.now() - timedelta(days=3))
    Answer.objects.filter(public_id=new).update(status="judged", verdict="UNGROUNDED")
    since = (timezone.now() - timedelta(days=1)).date().isoformat()
    assert [r["id"] for r in _list(client, api_token, since=since).json()["results"]] == [new]
    assert [r["id"] for r in _list(client, api_token, status="queued").json()["results"]] == [old]
    assert [r["id"] for r in _list(client, api_token, verdict="UNGROUNDED").json()["results"]] == [
        new
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query, field",
    [
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"status": "done"}, "status"),
        ({"verdict": "OK"}, "verdict"),
        ({"since": "yesterday"}, "since"),
        ({"since": "1700000000"}, "since"),
        ({"since": "0001-01-01T00:00:00+05:00"}, "since"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "WzEsMl0"}, "cursor"),  # base64 of [1,2]: well-formed, but not one of ours
        ({"extrnal_id": "conv-42"}, "extrnal_id"),  # misspelt: an error, not an unfiltered list
    ],
)
def test_a_bad_query_is_a_400_naming_the_field(client, api_token, query, field):
    response = _list(client, api_token, **query)
    assert response.status_code == 400, response.content
    assert [error["field"] for error in response.json()["errors"]] == [f"query.{field}"]


@pytest.mark.django_db
def test_listing_needs_a_token(client):
    assert client.get("/api/v1/answers").status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize("wait", ["31", "-1", "nan", "inf", "soon"])
def test_a_wait_beyond_30_seconds_or_not_a_number_is_a_400(client, api_token, wait):
    response = _post(client, api_token, fare_payload(), wait=wait)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "query.wait"
    assert not Answer.objects.exists()


@pytest.mark.django_db
def test_a_parameter_given_twice_is_a_400_naming_it_not_either_value(client, api_token):
    response = _post(client, api_token, fare_payload(), wait="0&wait=30")
    assert response.status_code == 400 and response.json()["errors"] == [
        {
            "field": "query.wait",
            "message": "given more than once; send one value",
            "type": "repeated",
        }
    ]
    assert not Answer.objects.exists()
    listed = client.get(
        "/api/v1/answers?limit=1&limit=100", headers={"Authorization": f"Bearer {api_token}"}
    )
    assert listed.status_code == 400 and listed.json()["errors"][0]["field"] == "query.limit"


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["external_id=", "status=", "verdict=", "since="])
def test_an_empty_filter_is_a_400_naming_it_not_an_unfiltered_list(client, api_token, query):
    listed = client.get(
        f"/api/v1/answers?{query}", headers={"Authorization": f"Bearer {api_token}"}
    )
    assert listed.status_code == 400 and [e["field"] for e in listed.json()["errors"]] == [
        f"query.{query[:-1]}"
    ]


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
def test_with_wait_the_judged_answer_comes_back_in_the_reply(client, api_token, celery_worker):
    started = time.monotonic()
    response = _post(client, api_token, fare_payload(external_id="guard-1"), wait=20)
    elapsed = time.monotonic() - started
    body = response.json()
    assert response.status_code == 200 and body["status"] == "judged", body
    assert [c["label"] for c in body["claims"]] == ["SUPPORTED", "CONTRADICTED"]
    assert body["safe_answer"] == "Riders aged 65 and older pay a reduced fare of $1.00 per ride."
    assert response["Location"].endswith(body["id"]) and elapsed < 15


@pytest.mark.django_db(transaction=True)
def test_with_wait_and_no_worker_the_reply_is_202_after_the_wait(client, api_token):
    started = time.monotonic()
    response = _post(client, api_token, fare_payload(), wait=0.5)
    assert response.status_code == 202 and response.json()["status"] == "queued"
    assert 0.45 < time.monotonic() - started < 3


def _judged_in_process_hearing_the_announcement(client, token, payload):
    """Post without waiting, judge the answer here (no worker) and return the reply's id and the
    message the worker's announcement carried."""
    from reviewapp.judging import waiting
    from reviewapp.judging.service import answer_judge

    posted = _post(client, token, payload).json()
    answer = Answer.objects.get(public_id=posted["id"])
    subscription = waiting._redis().pubsub(ignore_subscribe_messages=True)
    subscription.subscribe(waiting.channel(answer.pk))
    try:
        answer_judge(answer_id=answer.pk)
        deadline, message = time.monotonic() + 5, None
        while (
            message is None and time.monotonic() < deadline
        ):  # None for the subscription's own reply too
            message = subscription.get_message(timeout=1)
    finally:
        subscription.close()
    assert message is not None
    return posted["id"], json.loads(message["data"])


@pytest.mark.django_db(transaction=True)
def test_the_announced_state_is_what_the_api_reads_back(client, api_token):
    # This answer has a CONTRADICTED claim with evidence, a safe answer and findings.
    from reviewapp.api import selectors

    answer_id, announced = _judged_in_process_hearing_the_announcement(
        client, api_token, fare_payload(external_id="announce-1")
    )
    assert announced["status"] == "judged" and announced["claims"]
    answer = Answer.objects.select_related("judged_by").get(public_id=answer_id)
    assert announced == selectors.answer_state_json(answer)


@pytest.mark.django_db(transaction=True)
def test_the_waited_reply_comes_from_the_announcement_and_equals_the_get(
    client, api_token, monkeypatch
):
    import threading

    from django.db import connection

    from reviewapp.judging import waiting
    from reviewapp.judging.service import answer_judge

    def no_read_back(answer_id):
        raise AssertionError("the waiting request read the answer back")

    monkeypatch.setattr(waiting, "_read_state", no_read_back)

    def judge_once_posted():  # the worker's part, in this process
        try:
            for _ in range(200):
                answer = Answer.objects.filter(external_id="waited-1").first()
                if answer is not None:
                    time.sleep(0.2)  # the request is subscribed by now
                    answer_judge(answer_id=answer.pk)
                    return
                time.sleep(0.02)
        finally:
            connection.close()

    worker = threading.Thread(target=judge_once_posted)
    worker.start()
    try:
        waited = _post(client, api_token, fare_payload(external_id="waited-1"), wait=10)
    finally:
        worker.join()
    assert waited.status_code == 200, waited.json()
    got = client.get(
        f"/api/v1/answers/{waited.json()['id']}", headers={"Authorization": f"Bearer {api_token}"}
    )
    assert waited.json() == got.json() and got.json()["status"] == "judged"


@pytest.mark.django_db(transaction=True)
def test_the_webhook_payload_from_the_worker_is_the_one_read_back(client, api_token):
    from reviewapp.models import ApiClient, WebhookDelivery
    from reviewapp.webhooks.service import answer_payload, endpoint_register

    endpoint_register(
        client=ApiClient.objects.get(), url="https://hooks.example.org/in", events=["answer.judged"]
    )
    answer_id, _ = _judged_in_process_hearing_the_announcement(client, api_token, fare_payload())
    delivery = WebhookDelivery.objects.get(answer__public_id=answer_id)
    assert delivery.payload["data"]["answer"] == answer_payload(delivery.answer)


def test_the_channel_names_the_deployment(settings):
    from reviewapp.judging import waiting

    settings.DEPLOYMENT_NAME = "eu-1"
    first = waiting.channel(7)
    settings.DEPLOYMENT_NAME = "eu-2"
    assert first != waiting.channel(7) and first.endswith(":7") and "eu-1" in first


@pytest.mark.django_db(transaction=True)
def test_with_no_request_waiting_the_announcement_is_bare(client, api_token):
    # A pattern subscriber is no waiting request: the worker builds no state for it.
    from reviewapp.judging import waiting
    from reviewapp.judging.service import answer_judge

    answer = Answer.objects.get(public_id=_post(client, api_token, fare_payload()).json()["id"])
    watcher = waiting._redis().pubsub(ignore_subscribe_messages=True)
    watcher.psubscribe(waiting.channel("*"))
    try:
        answer_judge(answer_id=answer.pk)
        deadline, message = time.monotonic() + 5, None
        while message is None and time.monotonic() < deadline:
            message = watcher.get_message(timeout=1)
    finally:
        watcher.close()
    assert message is not None and message["data"] == b"1"
