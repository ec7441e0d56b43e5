"""The API's limits: a per-token rate limit (429 + Retry-After, counted in the real Redis), a body
size cap (413 before the body is read) and per-field caps (400 naming the field)."""

from __future__ import annotations

import json
import socket

import pytest

from judges.types import MAX_ANSWER_CHARS, MAX_PASSAGES
from reviewapp.models import Answer
from reviewapp.api.clients import api_client_create
from tests.factories import fare_payload

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_per_minute(settings):
    settings.API_RATE_LIMIT = "3/minute"
    # the shared Redis, as in production
    assert settings.API_RATE_LIMIT_STORAGE_URL.startswith("redis://")
    return settings


def test_a_token_over_its_rate_gets_429_with_retry_after(api, three_per_minute):
    statuses = [api.post(fare_payload(external_id=f"conv-{i}")).status_code for i in range(3)]
    assert statuses == [202, 202, 202]
    refused = api.post(fare_payload(external_id="conv-4"))
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json() == {
        "detail": f"rate limit exceeded (3/minute per token); retry in {refused['Retry-After']} s",
        "errors": [],
    }
    assert Answer.objects.count() == 3  # the refused request stored nothing
    assert api.get(Answer.objects.first().pk).status_code == 429  # reads count too


def test_the_rate_is_per_token(api, three_per_minute):
    for i in range(3):
        assert api.post(fare_payload(external_id=f"a-{i}")).status_code == 202
    assert api.post(fare_payload(external_id="a-4")).status_code == 429
    _, other = api_client_create(name="other-bot")
    assert api.post(fare_payload(external_id="b-1"), token=other).status_code == 202


def test_a_bad_token_is_401_not_429(api, three_per_minute):
    for _ in range(5):
        assert api.post(fare_payload(), token="cdk_wrong").status_code == 401


def test_guessing_tokens_from_one_address_gets_429_before_any_look_up(
    api, settings, django_assert_num_queries
):
    settings.API_AUTH_FAILURE_LIMIT = "5/minute"
    for n in range(5):
        assert api.post(fare_payload(), token=f"cdk_guess{n}").status_code == 401
    with django_assert_num_queries(0):  # the guess is not even looked up
        refused = api.post(fare_payload(), token="cdk_guess5")
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json()["detail"].startswith(
        "too many invalid tokens from this address (5/minute)"
    )


def test_wrong_tokens_from_one_address_do_not_lock_out_another(api, settings, client, api_token):
    settings.API_AUTH_FAILURE_LIMIT = "5/minute"
    for n in range(6):
        api.post(fare_payload(), token=f"cdk_guess{n}")
    elsewhere = client.get("/api/v1/webhook", headers={"Authorization": f"Bearer {api_token}"},
                           REMOTE_ADDR="192.0.2.44")
    assert elsewhere.status_code == 404  # through authentication: no webhook registered


def test_without_redis_the_count_is_kept_in_memory(api, three_per_minute):
    three_per_minute.API_RATE_LIMIT_STORAGE_URL = "memory://"
    statuses = [api.post(fare_payload(external_id=f"m-{i}")).status_code for i in range(4)]
    assert statuses == [202, 202, 202, 429]


def test_an_unreachable_redis_lets_requests_through_and_says_so(api, three_per_minute, caplog):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    three_per_minute.API_RATE_LIMIT_STORAGE_URL = f"redis://127.0.0.1:{port}/0"
    statuses = [api.post(fare_payload(external_id=f"d-{i}")).status_code for i in range(4)]
    assert statuses == [202, 202, 202, 202]
    assert "rate limit not applied" in caplog.text


def test_a_body_over_the_cap_is_413_before_it_is_read(client, api_token, settings):
    settings.API_MAX_BODY_BYTES = 4096
    body = json.dumps(fare_payload(answer="x" * 5000))
    response = client.post("/api/v1/answers", data=body, content_type="application/json",
                           headers={"Authorization": f"Bearer {api_token}"})
    assert response.status_code == 413
    assert response.json() == {
        "detail": "request body too large: the limit is 4096 bytes",
        "errors": [],
    }
    assert Answer.objects.count() == 0


def test_a_body_that_understates_its_length_is_still_capped(client, api_token, settings):
    # Django reads at most DATA_UPLOAD_MAX_MEMORY_SIZE; the API turns its error into the same 413.
    settings.API_MAX_BODY_BYTES = 1 << 20
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    body = json.dumps(fare_payload(answer="x" * 5000))
    response = client.post("/api/v1/answers", data=body, content_type="application/json",
                           headers={"Authorization": f"Bearer {api_token}"})
    assert response.status_code == 413
    assert Answer.objects.count() == 0


def test_the_default_cap_is_two_megabytes_and_forms_share_it(settings):
    assert settings.API_MAX_BODY_BYTES == settings.DATA_UPLOAD_MAX_MEMORY_SIZE == 2 * 1024 * 1024


@pytest.mark.parametrize(
    "change, field",
    [
        ({"answer": "a" * (MAX_ANSWER_CHARS + 1)}, "answer"),
        ({"question": "q" * (MAX_ANSWER_CHARS + 1)}, "question"),
        ({"passages": [{"text": "p"}] * (MAX_PASSAGES + 1)}, "passages"),
        ({"external_id": "e" * 201}, "external_id"),
    ],
)
def test_fields_over_their_caps_are_400_naming_the_field(api, change, field):
    response = api.post(fare_payload(**change))
    assert response.status_code == 400
    assert field in [error["field"] for error in response.json()["errors"]]
    assert Answer.objects.count() == 0
