"""The ingest API: validation, idempotency, auth, OpenAPI. No worker needed here: with the
`db` fixture nothing commits, so on_commit never enqueues."""

import uuid

import pytest

from reviewapp.models import Answer, ApiClient, JudgeRun, Passage
from tests.factories import fare_payload

pytestmark = pytest.mark.django_db


def test_it_accepts_an_answer_and_stores_it_with_its_passages(api):
    response = api.post(fare_payload())
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued"
    assert body["url"].endswith(f"/api/v1/answers/{body['id']}")
    assert response["Location"] == body["url"]
    answer = Answer.objects.get(public_id=body["id"])
    assert answer.client.name == "fares-bot"
    assert answer.external_id == "conv-1"
    passages = list(answer.passages.order_by("position"))
    assert [p.pid for p in passages] == ["P1", "P2"]  # the second id defaulted by position
    assert passages[0].agency == "Lakeshore Regional Transit"
    assert passages[0].fetched_at == "2026-08-16"


def test_it_returns_the_state_of_a_queued_answer(api):
    answer_id = api.post(fare_payload()).json()["id"]
    body = api.get(answer_id).json()
    assert body["status"] == "queued"
    assert body["verdict"] is None
    assert body["claims"] == []
    assert body["safe_answer"] is None
    assert body["error"] is None


@pytest.mark.parametrize(
    "change, field",
    [
        ({"answer": ""}, "answer"),
        ({"answer": "   "}, "answer"),
        ({"passages": None}, "passages"),
        ({"passages": [{"id": "P1"}]}, "passages.0.text"),
        ({"passages": [{"text": "a"}, {"id": "P1", "text": "b"}]}, "passages"),
        ({"passages": [{"text": "fine", "fetched_at": "last tuesday"}]}, "passages.0.fetched_at"),
        ({"prior_turns": [{"role": "robot", "content": "hi"}]}, "prior_turns.0.role"),
        ({"surprise": 1}, "surprise"),
        ({"metadata": "not an object"}, "metadata"),
        ({"answer": "Seniors pay\x00 $1."}, "answer"),
        ({"question": "\x00"}, "question"),
        ({"passages": [{"text": "ok", "title": "a\x00"}]}, "passages.0.title"),
        ({"prior_turns": [{"role": "user", "content": "\x00"}]}, "prior_turns.0.content"),
        ({"metadata": {"k": ["v\x00"]}}, "metadata.k.0"),
        ({"metadata": {"k\x00": 1}}, "metadata"),
    ],
)
def test_it_rejects_a_bad_payload_field_by_field_and_stores_nothing(api, change, field):
    response = api.post(fare_payload(**change))
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "invalid payload"
    assert field in [error["field"] for error in body["errors"]], body
    assert Answer.objects.count() == 0
    assert Passage.objects.count() == 0


def test_it_rejects_an_unknown_judge_profile_naming_the_ones_that_exist(api):
    response = api.post(fare_payload(profile="fare_policy@v9"))
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "profile" and "v1, v2, v3" in error["message"]
    assert Answer.objects.count() == 0


def test_it_stores_the_judge_profile_a_client_asks_for(api):
    answer_id = api.post(fare_payload(profile="fare_policy@v2")).json()["id"]
    assert Answer.objects.get(public_id=answer_id).requested_profile == "fare_policy@v2"


def test_it_rejects_a_payload_missing_required_fields(api):
    response = api.post({"question": "hi"})
    assert response.status_code == 400
    fields = {error["field"] for error in response.json()["errors"]}
    assert {"answer", "passages"} <= fields


def test_it_rejects_a_body_that_is_not_json(client, api_token):
    response = client.post(
        "/api/v1/answers",
        data="{not json",
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["body"]
    assert Answer.objects.count() == 0


def test_the_same_external_id_returns_the_existing_answer(api):
    first = api.post(fare_payload())
    second = api.post(fare_payload())
    assert first.status_code == 202
    assert second.status_code == 200
    assert second.json()["id"] == first.json()["id"]
    assert second.json()["status"] == "queued"
    assert Answer.objects.count() == 1


def test_a_retry_spelt_differently_is_the_same_request(api):
    first = api.post(fare_payload())
    payload = fare_payload(prior_turns=[], profile=None, metadata={"trace": "retry-2"})
    payload["passages"][1]["id"] = "P2"  # the id the API gives a passage without one
    retry = api.post(dict(reversed(list(payload.items()))))
    assert retry.status_code == 200, retry.json()
    assert retry.json()["id"] == first.json()["id"]


@pytest.mark.parametrize("change", [
    {"answer": "Riders aged 65 and older ride free."},
    {"question": "How much is a student fare?"},
    {"passages": [{"text": "Seniors ride free."}]},
    {"prior_turns": [{"role": "user", "content": "Hi"}]},
    {"profile": "claim_audit"},
], ids=["answer", "question", "passages", "prior_turns", "profile"])
def test_a_reused_external_id_with_a_different_request_is_refused_naming_both_hashes(api, change):
    import judges
    from reviewapp.api.ingest import request_hash

    api.post(fare_payload())
    reused = api.post(fare_payload(**change))
    assert reused.status_code == 409
    body = reused.json()
    assert "conv-1" in body["detail"] and "verdict" not in body and "claims" not in body
    assert body["stored_request_hash"] == Answer.objects.get().request_hash
    assert body["request_hash"] == request_hash(
        judges.JudgeRequest.model_validate(fare_payload(**change))
    )
    assert body["request_hash"] != body["stored_request_hash"]
    assert Answer.objects.count() == 1


def test_an_answer_stored_before_requests_were_hashed_keeps_its_external_id_idempotent(api):
    first = api.post(fare_payload())
    Answer.objects.update(request_hash=None)  # as rows stored before the hash existed
    again = api.post(fare_payload(answer="Riders aged 65 and older ride free."))
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]


def test_the_same_external_id_from_another_client_is_another_answer(api):
    from reviewapp.api.clients import api_client_create

    _, other_token = api_client_create(name="other-bot")
    first = api.post(fare_payload())
    second = api.post(fare_payload(), token=other_token)
    assert second.status_code == 202
    assert second.json()["id"] != first.json()["id"]


def test_answers_without_external_id_are_never_deduplicated(api):
    api.post(fare_payload(external_id=None))
    api.post(fare_payload(external_id=None))
    assert Answer.objects.count() == 2


@pytest.mark.parametrize("token", [None, "cdk_wrong", "", "Bearer"])
def test_it_refuses_a_missing_or_wrong_token(api, token):
    response = api.post(fare_payload(), token=token)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert Answer.objects.count() == 0


def test_it_refuses_a_revoked_token(api, api_token):
    from django.utils import timezone

    ApiClient.objects.update(revoked_at=timezone.now())
    assert api.post(fare_payload()).status_code == 401


def test_a_get_needs_a_token(api):
    answer_id = api.post(fare_payload()).json()["id"]
    assert api.get(answer_id, token=None).status_code == 401


def test_a_client_cannot_read_another_clients_answer(api):
    from reviewapp.api.clients import api_client_create

    _, other_token = api_client_create(name="other-bot")
    answer_id = api.post(fare_payload()).json()["id"]
    assert api.get(answer_id, token=other_token).status_code == 404


def test_answer_ids_given_to_a_client_tell_nothing_of_how_many_answers_others_post(api):
    from reviewapp.api.clients import api_client_create

    _, other_token = api_client_create(name="other-bot")
    first = api.post(fare_payload(external_id=None))
    for _ in range(3):  # another client's answers, between this client's two
        api.post(fare_payload(external_id=None), token=other_token)
    second = api.post(fare_payload(external_id=None))

    ids = [first.json()["id"], second.json()["id"]]
    assert [uuid.UUID(answer_id).version for answer_id in ids] == [4, 4]  # random, not a count
    for response, answer in zip(
        (first, second), Answer.objects.filter(public_id__in=ids).order_by("pk")
    ):
        assert response["Location"] == response.json()["url"]
        assert response["Location"].endswith(f"/api/v1/answers/{answer.public_id}")
        for body in (response.json(), api.get(str(answer.public_id)).json()):
            assert body["id"] == str(answer.public_id) and body["url"] == response["Location"]
            assert answer.pk not in _values(body) and str(answer.pk) not in _values(body)


def _values(body) -> list:
    if isinstance(body, dict):
        return [v for value in body.values() for v in _values(value)]
    if isinstance(body, list):
        return [v for value in body for v in _values(value)]
    return [body]


def test_the_integer_url_of_an_answer_is_a_404_like_any_unknown_id(api):
    answer_id = api.post(fare_payload()).json()["id"]
    pk = Answer.objects.get(public_id=answer_id).pk
    unknown = api.get(str(uuid.uuid4()))
    for by_pk in (api.get(pk), api.get(f"{pk:08d}"), api.get("0x1")):
        assert (by_pk.status_code, by_pk.json()) == (404, unknown.json())
    assert unknown.status_code == 404
    assert api.get(answer_id).status_code == 200


def test_tokens_are_stored_only_as_hashes(api_token):
    client = ApiClient.objects.get()
    assert api_token not in (client.token_hash, client.token_prefix)
    assert client.token_hash == ApiClient.hash_token(api_token)


def test_it_records_when_a_token_was_last_used(api):
    api.post(fare_payload())
    assert ApiClient.objects.get().last_used_at is not None


def test_the_openapi_document_describes_every_operation(client):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    doc = response.json()
    assert set(doc["paths"]) == {
        "/api/v1/answers",
        "/api/v1/answers/{answer_id}",
        "/api/v1/webhook",
        "/api/v1/webhook/deliveries",
        "/api/v1/otlp/v1/traces",
    }
    assert set(doc["paths"]["/api/v1/webhook"]) == {"put", "get", "delete"}
    post = doc["paths"]["/api/v1/answers"]["post"]
    assert {"200", "202", "400", "401", "409"} <= set(post["responses"])
    schemas = doc["components"]["schemas"]
    assert {"stored_request_hash", "request_hash"} <= set(schemas["ReusedIdOut"]["properties"])
    assert {"JudgeRequest", "AnswerOut", "Claim", "Evidence"} <= set(schemas)
    assert set(schemas["AnswerOut"]["properties"]) >= {
        "status", "verdict", "grounding_score", "claims", "safe_answer", "error"
    }
    assert set(schemas["WebhookIn"]["properties"]) == {"url", "events", "active", "rotate_secret"}
    assert doc["components"]["securitySchemes"]["BearerToken"]["scheme"] == "bearer"


def test_the_openapi_document_says_what_safe_answer_keeps(client):
    field = client.get("/api/v1/openapi.json").json()["components"]["schemas"]["AnswerOut"][
        "properties"
    ]
    description = field["safe_answer"]["description"]
    assert "only the text of SUPPORTED claims" in description
    assert all(
        label in description for label in ("PARTIALLY_SUPPORTED", "UNSUPPORTED", "CONTRADICTED")
    )


def test_no_judge_run_exists_before_a_worker_takes_the_answer(api):
    api.post(fare_payload())
    assert JudgeRun.objects.count() == 0


def test_a_token_revoked_through_the_service_is_refused_at_once_though_it_was_just_used(api):
    from reviewapp.api.clients import api_client_revoke

    assert api.post(fare_payload(external_id="before")).status_code == 202
    api_client_revoke(client=ApiClient.objects.get())
    assert api.post(fare_payload(external_id="after")).status_code == 401


def test_a_rotated_token_works_at_once_and_the_old_one_stops(api, api_token):
    from reviewapp.api.clients import api_client_rotate_token

    assert api.post(fare_payload(external_id="before")).status_code == 202
    new_token = api_client_rotate_token(client=ApiClient.objects.get())
    assert api.post(fare_payload(external_id="old"), token=api_token).status_code == 401
    assert api.post(fare_payload(external_id="new"), token=new_token).status_code == 202


def test_a_revocation_made_by_another_process_is_seen_within_the_cache_time(
    api, settings, monkeypatch
):
    from django.utils import timezone

    from reviewapp.api import clients

    settings.API_CLIENT_CACHE_SECONDS = 5
    assert api.post(fare_payload(external_id="before")).status_code == 202
    # what another process's revocation looks like here
    ApiClient.objects.update(revoked_at=timezone.now())
    # the cost of not reading per request
    assert api.post(fare_payload(external_id="cached")).status_code == 202
    later = clients._clock() + 5.1
    monkeypatch.setattr(clients, "_clock", lambda: later)
    assert api.post(fare_payload(external_id="after")).status_code == 401
