"""OTLP and API inputs from the attack run of issue 28 (items 2, 5, 6, 8, 13): each is refused as a
4xx naming what was wrong, or read within bounds, never a 500 or a worker timeout."""

from __future__ import annotations

import gzip
import json
import time

import pytest

from reviewapp.api import otlp
from reviewapp.models import Answer
from tests import factories as make
from tests import otlp_traces as traces

pytestmark = pytest.mark.django_db


def _post(client, token, body: bytes, **headers):
    return client.post("/api/v1/otlp/v1/traces", data=body, content_type="application/json",
                       headers={"Authorization": f"Bearer {token}", **headers})


def _export(spans: list[dict]) -> bytes:
    return json.dumps(traces.export_request(spans)).encode()


def _interleaved_trace(n: int) -> list[dict]:
    """n retrievals and n LLM calls in one trace, each call after its retrieval."""
    spans = []
    for i in range(n):
        retriever = {
            "openinference.span.kind": "RETRIEVER",
            "input.value": f"question {i}",
            "retrieval.documents.0.document.id": f"d{i}",
            "retrieval.documents.0.document.content": f"Passage {i} says the fare is ${i}.00.",
        }
        llm = {"openinference.span.kind": "LLM", "llm.output_messages.0.message.role": "assistant",
               "llm.output_messages.0.message.content": f"The fare is ${i}.00."}
        spans.append(
            traces._span(
                traces.TRACE_ID, f"a{i:07x}", "retrieve", 10 * i + 1, 10 * i + 5, retriever
            )
        )
        spans.append(traces._span(traces.TRACE_ID, f"b{i:07x}", "llm", 10 * i + 6, 10 * i + 9, llm))
    return spans


# --- item 2: one trace of thousands of retrievals and LLM calls
# -------------------------------------


def test_a_trace_of_3000_retrievals_and_3000_llm_calls_is_read_in_linear_time():
    body = _export(_interleaved_trace(3000))  # 0.6 MB, under the 2 MiB cap: 26.7 s before
    started = time.process_time()
    reading = otlp.runs_in(otlp.spans_from(body, "application/json"))
    took = time.process_time() - started
    assert took < 5, f"{took:.1f} s of CPU"
    assert len(reading.runs) == otlp.MAX_RUNS and reading.over_cap == 3000 - otlp.MAX_RUNS
    # Each call still gets the retrievals that ended before it, the latest first, as far as one
    # answer's passages reach.
    last = reading.runs[-1].payload
    assert [p["id"] for p in last["passages"]] == [f"d{i}" for i in range(otlp.MAX_RUNS)]


def test_an_export_past_its_span_cap_is_a_400_naming_the_cap(client, api_token):
    many = [
        traces._span(traces.TRACE_ID, f"{i:08x}", "noise", 1, 2, {})
        for i in range(otlp.MAX_SPANS + 1)
    ]
    response = _post(client, api_token, _export(many))
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["type"] == "invalid_otlp" and f"at most {otlp.MAX_SPANS} spans" in error["message"]


# --- item 5: inputs that gave a 500 --------------------------------------------------------------


def _nested_array_value(depth: int) -> bytes:
    """An attribute `deep` whose value is an arrayValue nested `depth` deep (written out by hand:
    json.dumps itself would run out of recursion)."""
    nested = '{"arrayValue": {"values": [' * depth + '{"stringValue": "x"}' + "]}}" * depth
    return _retriever_with([{"key": "deep", "value": "NESTED"}]).replace(
        b'"NESTED"', nested.encode()
    )


def _retriever_with(attributes: list[dict]) -> bytes:
    spans = traces.openinference_spans()
    spans[1]["attributes"] += attributes
    return _export(spans)


ATTACKS = {
    "deeply nested JSON arrays": (
        b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "nests too deeply",
    ),
    "span kind as an int": (
        _retriever_with([{"key": "openinference.span.kind", "value": {"intValue": "7"}}]),
        "openinference.span.kind must be a string, not int",
    ),
    "a document index of 5000 digits": (
        _retriever_with(
            [
                {
                    "key": f"retrieval.documents.{'9' * 5000}.document.content",
                    "value": {"stringValue": "x"},
                }
            ]
        ),
        "at most 6 digits",
    ),
    "a string attribute of nested brackets": (
        _export(
            [
                traces._span(
                    traces.TRACE_ID,
                    "c1",
                    "retrieval",
                    1,
                    2,
                    {"gen_ai.retrieval.documents": "[" * 100_000},
                )
            ]
        ),
        "gen_ai.retrieval.documents",
    ),
    "arrayValue nested 400 deep": (_nested_array_value(400), "nests too deeply"),
    "arrayValue nested 100 deep": (_nested_array_value(100), "'deep': its value nests deeper than"),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_otlp_inputs_that_gave_a_500_are_a_400_invalid_otlp_naming_it(client, api_token, attack):
    body, says = ATTACKS[attack]
    response = _post(client, api_token, body)
    assert response.status_code == 400, response.content[:300]
    error = response.json()["errors"][0]
    assert error["type"] == "invalid_otlp" and says in error["message"], error


# --- item 6: numbers and NUL
# ------------------------------------------------------------------------


def test_passage_metadata_with_an_integer_beyond_64_bits_is_a_400_naming_it(client, api_token):
    payload = make.fare_payload()
    payload["passages"][0]["metadata"] = {"doc_version": 2**70}
    response = client.post(
        "/api/v1/answers",
        data=json.dumps(payload),
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "passages.0.metadata.doc_version"


def test_otlp_document_metadata_with_an_integer_beyond_64_bits_is_left_out_not_a_500(
    client, api_token
):
    spans = traces.openinference_spans()
    for attribute in spans[1]["attributes"]:
        if attribute["key"] == "retrieval.documents.0.document.metadata":
            attribute["value"] = {"stringValue": json.dumps({"doc_version": 2**70})}
    assert _post(client, api_token, _export(spans)).status_code == 200
    assert Answer.objects.filter(external_id=traces.TRACE_ID).exists()
    got = client.get("/api/v1/answers", {"external_id": traces.TRACE_ID},
                     headers={"Authorization": f"Bearer {api_token}"})
    assert got.status_code == 200 and got.json()["results"][0]["external_id"] == traces.TRACE_ID


def test_a_nul_in_the_external_id_filter_is_a_400_naming_it(client, api_token):
    response = client.get(
        "/api/v1/answers?external_id=%00", headers={"Authorization": f"Bearer {api_token}"}
    )
    assert (
        response.status_code == 400 and response.json()["errors"][0]["field"] == "query.external_id"
    )


# --- item 8: one export of many traces against the per-token rate limit
# ------------------------------


def test_an_export_of_more_traces_than_the_rate_limit_allows_is_a_429(client, api_token, settings):
    settings.API_RATE_LIMIT = "5/minute"
    spans = [span for n in range(10) for span in traces.openinference_spans(trace_id=f"{n:032x}")]
    response = _post(client, api_token, _export(spans))
    assert response.status_code == 429 and response["Retry-After"]
    assert Answer.objects.count() == 0


def test_an_export_makes_at_most_max_runs_answers_and_says_so(
    client, api_token, settings, monkeypatch
):
    monkeypatch.setattr(otlp, "MAX_RUNS", 3)
    spans = [span for n in range(5) for span in traces.openinference_spans(trace_id=f"{n:032x}")]
    response = _post(client, api_token, _export(spans))
    assert response.status_code == 200 and Answer.objects.count() == 3
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "2" and "2 runs past the 3" in partial["errorMessage"]


# --- item 13: gzip, as the Collector's otlphttp exporter sends it
# ------------------------------------


def test_a_gzip_export_from_the_collector_is_read(client, api_token):
    body = gzip.compress(_export(traces.openinference_spans()))
    response = _post(client, api_token, body, **{"Content-Encoding": "gzip"})
    assert response.status_code == 200, response.content[:300]
    assert Answer.objects.filter(external_id=traces.TRACE_ID).exists()


def test_a_gzip_bomb_is_refused_before_it_is_inflated_whole(client, api_token):
    # 16 MB of spaces, 16 kB sent
    bomb = gzip.compress(b"[" + b" " * (otlp.MAX_INFLATED_BYTES + 1024) + b"]")
    response = _post(client, api_token, bomb, **{"Content-Encoding": "gzip"})
    assert (
        response.status_code == 400 and "inflates beyond" in response.json()["errors"][0]["message"]
    )
