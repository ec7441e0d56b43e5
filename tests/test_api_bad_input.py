"""Inputs that used to make the API answer 500: each is now a 4xx naming the field, or a JSON 503
when the database is down, and nothing is stored."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from django.db import connection
from django.test import Client

from reviewapp.models import Answer, WebhookEndpoint
from tests.factories import fare_payload

pytestmark = pytest.mark.django_db


def _post_raw(client, token, body: str, path="/api/v1/answers", method="post", **extra):
    return getattr(client, method)(path, data=body, content_type="application/json",
                                   headers={"Authorization": f"Bearer {token}"}, **extra)


def _with_metadata(raw_metadata: str) -> str:
    return json.dumps(fare_payload(metadata={"slot": 0})).replace('{"slot": 0}', raw_metadata)


@pytest.mark.parametrize("raw, field", [
    ('{"score": NaN}', "metadata.score"),
    ('{"score": Infinity}', "metadata.score"),
    ('{"score": -Infinity}', "metadata.score"),
    ('{"score": 1e400}', "metadata.score"),
    ('{"note": "\\ud800"}', "metadata.note"),
    ('{"\\udfff": 1}', "metadata"),
    ('{"deep": ' + "[" * 500 + "]" * 500 + "}", "metadata"),
    ('{"deeper": ' + "[" * 5000 + "]" * 5000 + "}", "body"),  # past what Python's parser walks
])
def test_metadata_postgres_cannot_store_is_a_400_naming_the_field(client, api_token, raw, field):
    response = _post_raw(client, api_token, _with_metadata(raw))
    assert response.status_code == 400, response.content[:500]
    body = response.json()
    assert body["detail"] == "invalid payload"
    assert [error["field"] for error in body["errors"]] == [field]
    assert Answer.objects.count() == 0


def test_ordinary_nested_metadata_with_floats_is_still_stored(client, api_token):
    metadata = {"scores": [0.25, 12345.678, -3.5], "trace": {"a": {"b": {"c": ["é", "😀"]}}}}
    response = _post_raw(client, api_token, json.dumps(fare_payload(metadata=metadata)))
    assert response.status_code == 202
    assert Answer.objects.get().metadata == metadata


def test_a_nul_in_a_webhook_url_is_a_400_naming_the_url(client, api_token):
    response = _post_raw(
        client,
        api_token,
        json.dumps({"url": "https://hooks.example.org/\u0000x"}),
        path="/api/v1/webhook",
        method="put",
    )
    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == ["url"]
    assert not WebhookEndpoint.objects.exists()


def test_a_chunked_body_is_refused_with_411_not_read_as_empty(client, api_token):
    # What a WSGI server hands Django for Transfer-Encoding: chunked: no Content-Length.
    response = _post_raw(
        client,
        api_token,
        json.dumps(fare_payload()),
        HTTP_TRANSFER_ENCODING="chunked",
        CONTENT_LENGTH="",
    )
    assert response.status_code == 411
    assert "Content-Length" in response.json()["detail"]
    assert Answer.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_first_webhook_registrations_never_500(api_token, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    statuses: list[int] = []
    start = threading.Barrier(20)

    def register(n: int) -> None:
        start.wait()
        try:
            response = _post_raw(
                Client(),
                api_token,
                json.dumps({"url": f"https://127.0.0.1/hook/{n}"}),
                path="/api/v1/webhook",
                method="put",
            )
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=register, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] * 19 + [201]
    assert WebhookEndpoint.objects.filter(removed_at__isnull=True).count() == 1


@pytest.mark.django_db(transaction=True)
def test_with_the_database_down_the_api_answers_json_503(api_token, monkeypatch):
    from reviewapp.api.clients import forget_authenticated_clients

    forget_authenticated_clients()
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nobody listens once this socket closes
    connection.close()
    monkeypatch.setitem(connection.settings_dict, "PORT", port)
    try:
        response = Client().get(
            "/api/v1/answers/1", headers={"Authorization": f"Bearer {api_token}"}
        )
    finally:
        connection.close()
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"] == "database unavailable; retry shortly"
