"""Property-based tests of the API against its own OpenAPI document (schemathesis).

Schemathesis reads /api/v1/openapi.json from the app itself, generates requests for each operation
(valid payloads and broken ones) and calls the real Django app in-process through WSGI, on the
test database. Every response must be no 5xx and must match the document: its status code,
content type, headers and body schema. SCHEMATHESIS_EXAMPLES sets the examples per operation:
100 here to keep the suite short; `python bench/api_fuzz.py` runs 250 per operation and prints
the responses it saw.
"""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import override_settings
from hypothesis import HealthCheck, assume, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from reviewapp.judging import waiting
from reviewapp.models import ApiClient
from reviewapp.judging.service import answer_judge
from tests import factories as make
from tests.factories import fare_payload

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "100"))
# Responses seen, per operation and status; written to SCHEMATHESIS_REPORT (a path) when set.
SEEN: Counter = Counter()

# A request the API refuses for its size (413, the body over API_MAX_BODY_BYTES; 411, a chunked
# body) is rejected as the document says: schemathesis' default list of rejections leaves those two
# out.
REJECTIONS = [
    "400",
    "401",
    "403",
    "404",
    "405",
    "406",
    "409",
    "411",
    "413",
    "415",
    "422",
    "428",
    "429",
    "5xx",
]
schema = schemathesis.openapi.from_wsgi(
    "/api/v1/openapi.json", get_wsgi_application(),
    config=schemathesis.config.SchemathesisConfig.from_dict(
        {"checks": {"negative_data_rejection": {"expected-statuses": REJECTIONS}}}),
)


@schemathesis.check
def bad_input_names_its_field(ctx, response, case):
    """A 400 says which field is wrong and why, never a bare 'bad request'."""
    if response.status_code == 400:
        errors = response.json()["errors"]
        assert errors and all(
            e["field"] and e["message"] for e in errors
        ), f"400 without field errors: {errors}"


@pytest.fixture
def wsgi_in_test_transaction(settings, monkeypatch):
    """Calls go through the real WSGI handler, which closes the database connection after each
    request; keep it open, as Django's test client does, so the test's transaction survives."""
    settings.API_RATE_LIMIT = None  # hundreds of requests a second from one token, on purpose
    settings.API_AUTH_FAILURE_LIMIT = None  # and wrong tokens among them, on purpose
    # Nothing is judged inside the test's transaction (no worker sees it), so a generated
    # `?wait=S` could only sleep its S seconds before the 202: wait a tenth of a second at most.
    within = waiting.judged_within
    monkeypatch.setattr(
        waiting, "judged_within", lambda answer, seconds: within(answer, min(seconds, 0.1))
    )
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much, HealthCheck.data_too_large])
def test_the_api_matches_its_openapi_document(case, api_token, wsgi_in_test_transaction):
    # A query parameter "mutated" into a one-item array goes on the wire as the same `?wait=0.0`
    # its valid form does: not invalid input, whatever the generator meant by it.
    assume(
        not any(
            isinstance(value, list) and len(value) == 1 for value in (case.query or {}).values()
        )
    )
    response = case.call_and_validate(
        headers={"Authorization": f"Bearer {api_token}"},
        additional_checks=[bad_input_names_its_field],
        # The API checks more than JSON Schema can say (known judge profiles, unique passage ids,
        # ISO dates, non-blank text) and answers 400 naming the field, which the check above
        # asserts.
        excluded_checks=[positive_data_acceptance],
    )
    SEEN[f"{case.operation.label} {response.status_code}"] += 1


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if os.environ.get("SCHEMATHESIS_REPORT"):
        with open(os.environ["SCHEMATHESIS_REPORT"], "w") as out:
            json.dump({"examples_per_operation": EXAMPLES, "responses": dict(SEEN)}, out, indent=2)


@pytest.mark.django_db
def test_every_documented_answer_state_matches_the_document(api_token, wsgi_in_test_transaction):
    """Generated ids rarely name a stored answer, so the 200 bodies are checked here on purpose:
    queued, judged (claims, evidence, findings), and failed, plus the 200 of a repeated external_id.
    """
    headers = {"Authorization": f"Bearer {api_token}"}
    client = ApiClient.objects.get()

    def ingest(external_id):
        return make.ingested(client=client, external_id=external_id)

    queued, judged, failed = ingest("q"), ingest("j"), ingest("f")
    answer_judge(answer_id=judged.pk)
    # An LLM endpoint where nobody listens: the last try fails the answer, with its error.
    make.next_policy(judge_backend="openai", note="nobody answers")
    with override_settings(
        OPENAI_BASE_URL="http://127.0.0.1:9/v1", JUDGE_MAX_ATTEMPTS=1, JUDGE_RETRY_BUDGET_SECONDS=1
    ):
        answer_judge(answer_id=failed.pk, last_try=True)
    get = schema["/api/v1/answers/{answer_id}"]["GET"]
    seen = {}
    for answer in (queued, judged, failed):
        response = get.Case(path_parameters={"answer_id": str(answer.public_id)}).call_and_validate(
            headers=headers
        )
        assert response.status_code == 200, response.text
        seen[answer.external_id] = response.json()["status"]
    assert seen == {"q": "queued", "j": "judged", "f": "failed"}
    post = schema["/api/v1/answers"]["POST"]
    again = post.Case(
        body=fare_payload(external_id="j"), media_type="application/json"
    ).call_and_validate(headers=headers)
    assert again.status_code == 200 and again.json()["claims"]
