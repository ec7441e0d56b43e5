"""Reading OTLP trace exports as RAG runs (reviewapp.api.otlp): both encodings, both conventions."""

from __future__ import annotations

import json

import pytest

from judges import JudgeRequest
from reviewapp.api import otlp
from tests import otlp_traces as traces


def _read(request: dict, encoding: str = "json") -> otlp.Reading:
    if encoding == "json":
        return otlp.runs_in(otlp.spans_from(json.dumps(request).encode(), "application/json"))
    return otlp.runs_in(otlp.spans_from(traces.as_protobuf(request), "application/x-protobuf"))


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
@pytest.mark.parametrize(
    "spans", [traces.openinference_spans, traces.genai_spans], ids=["openinference", "genai"]
)
def test_an_llm_span_with_retrieval_in_its_trace_is_one_run(encoding, spans):
    reading = _read(traces.export_request(spans()), encoding)
    [run] = reading.runs
    payload = run.payload
    assert payload["external_id"] == traces.TRACE_ID and run.trace_id == traces.TRACE_ID
    assert payload["question"] == traces.QUESTION and payload["answer"] == traces.ANSWER
    assert [(p["id"], p["text"]) for p in payload["passages"]] == traces.PASSAGES
    assert payload["metadata"]["otel"]["service"] == "rag-api"
    assert payload["metadata"]["otel"]["model"] == "gpt-4o-mini"
    JudgeRequest.model_validate(payload)  # what ingest will be handed is a valid request
    # the chain span
    assert reading.ignored_spans == (1 if spans is traces.openinference_spans else 0)


def test_openinference_document_urls_become_source_urls():
    [run] = _read(traces.export_request(traces.openinference_spans())).runs
    assert run.payload["passages"][0]["source_url"] == "https://fares.example/doc-1"


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_openinference_document_scores_and_metadata_ride_along(encoding):
    [run] = _read(traces.export_request(traces.openinference_spans()), encoding).runs
    assert [(p["score"], p["metadata"]) for p in run.payload["passages"]] == [
        (pytest.approx(0.9), {"url": "https://fares.example/doc-1"}),
        (pytest.approx(0.8), {"url": "https://fares.example/doc-2"})]


def _genai_documents(documents: list[dict]) -> list[dict]:
    spans = traces.genai_spans()
    retrieval = spans[0]["attributes"]
    next(a for a in retrieval if a["key"] == "gen_ai.retrieval.documents")["value"] = {
        "stringValue": json.dumps(documents)}
    [run] = _read(traces.export_request(spans)).runs
    JudgeRequest.model_validate(run.payload)
    return run.payload["passages"]


def test_genai_documents_keep_retriever_ids_scores_and_metadata_and_drop_what_ingest_refuses():
    passages = _genai_documents(
        [
            {
                "id": "doc-17#3",
                "content": "Seniors pay $1.00.",
                "score": 0.82,
                "metadata": {"page": 4},
            },
            {
                "id": "a\nb",
                "content": "A 30-day pass costs $92.00.",
                "score": "high",
                "metadata": {"x": float("nan")},
            },
            {"id": "doc-17#3", "content": "Another text under the same id.", "score": True},
        ]
    )
    assert passages == [
        {"text": "Seniors pay $1.00.", "id": "doc-17#3", "score": 0.82, "metadata": {"page": 4}},
        # the id has a line break, the score is no number, NaN
        {"text": "A 30-day pass costs $92.00."},
        {"text": "Another text under the same id."},  # a repeated id: ingest numbers it
    ]


def test_a_trace_with_two_llm_calls_gives_two_runs_each_named_by_its_span():
    spans = traces.openinference_spans()
    second = json.loads(json.dumps(spans[2]))
    second["spanId"], second["startTimeUnixNano"], second["endTimeUnixNano"] = (
        "a400000000000000",
        "6000",
        "7000",
    )
    reading = _read(traces.export_request(spans + [second]))
    assert sorted(run.payload["external_id"] for run in reading.runs) == [
        f"{traces.TRACE_ID}:a300000000000000", f"{traces.TRACE_ID}:a400000000000000"]


def test_spans_without_both_retrieval_and_an_llm_output_are_counted_not_run():
    lonely_llm = traces.openinference_spans(trace_id="1" * 32)[2:]
    lonely_retriever = traces.openinference_spans(trace_id="2" * 32)[1:2]
    reading = _read(traces.export_request(lonely_llm + lonely_retriever))
    assert reading.runs == [] and (reading.spans, reading.ignored_spans) == (2, 2)
    body, kind = otlp.export_response(reading, "application/json")
    assert kind == "application/json"
    assert json.loads(body)["partialSuccess"]["errorMessage"].startswith(
        "2 of 2 spans held no RAG run"
    )


@pytest.mark.parametrize(
    "body, content_type, message",
    [
        (b"{not json", "application/json", "the body is not JSON"),
        (b'{"resourceSpans": {}}', "application/json", "resourceSpans list"),
        (
            json.dumps(traces.export_request([{"traceId": "xyz", "spanId": "00"}])).encode(),
            "application/json",
            "traceId",
        ),
        (b"\xff\xff\xff", "application/x-protobuf", "not an OTLP ExportTraceServiceRequest"),
        (b"{}", "text/plain", "Content-Type must be"),
    ],
)
def test_a_body_that_is_not_an_otlp_export_is_refused_with_its_reason(body, content_type, message):
    with pytest.raises(otlp.OTLPError, match=message):
        otlp.spans_from(body, content_type)


def test_the_protobuf_reply_is_an_export_response():
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    body, kind = otlp.export_response(_read(traces.export_request(traces.openinference_spans())),
                                      "application/x-protobuf")
    reply = ExportTraceServiceResponse.FromString(body)
    assert (
        kind == "application/x-protobuf" and "1 of 3 spans" in reply.partial_success.error_message
    )


# --- the endpoint: POST /api/v1/otlp/v1/traces ----------------------------------------------------


def _export(client, token, request: dict, encoding: str):
    if encoding == "json":
        body, kind = json.dumps(request).encode(), "application/json"
    else:
        body, kind = traces.as_protobuf(request), "application/x-protobuf"
    return client.post("/api/v1/otlp/v1/traces", data=body, content_type=kind,
                       headers={"Authorization": f"Bearer {token}"})


def _found(client, token, external_id):
    rows = client.get("/api/v1/answers", {"external_id": external_id},
                      headers={"Authorization": f"Bearer {token}"}).json()["results"]
    return rows[0] if rows and rows[0]["status"] in ("judged", "failed") else None


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker
@pytest.mark.parametrize(
    "encoding, spans",
    [("json", traces.openinference_spans), ("protobuf", traces.genai_spans)],
    ids=["json-openinference", "protobuf-genai"],
)
def test_an_exported_trace_becomes_a_judged_answer_found_by_its_trace_id(
    client, api_token, celery_worker, encoding, spans
):
    from tests.conftest import wait_for

    trace_id = ("a1" if encoding == "json" else "b2") * 16
    request = traces.export_request(spans(trace_id=trace_id))
    response = _export(client, api_token, request, encoding)
    assert response.status_code == 200 and response["Content-Type"].startswith(
        "application/json" if encoding == "json" else "application/x-protobuf")

    answer = wait_for(lambda: _found(client, api_token, trace_id))
    assert answer["status"] == "judged" and answer["external_id"] == trace_id
    # $75.00 is not $92.00
    assert [c["label"] for c in answer["claims"]] == [
        "SUPPORTED",
        "CONTRADICTED",
    ]
    # re-sent: the same answer
    assert _export(client, api_token, request, encoding).status_code == 200
    from reviewapp.models import Answer

    assert Answer.objects.filter(external_id=trace_id).count() == 1


@pytest.mark.django_db
def test_the_endpoint_needs_the_api_token_and_refuses_what_is_not_an_export(client, api_token):
    request = traces.export_request(traces.openinference_spans())
    assert client.post("/api/v1/otlp/v1/traces", data=json.dumps(request),
                       content_type="application/json").status_code == 401
    response = client.post("/api/v1/otlp/v1/traces", data=b"<xml/>", content_type="text/xml",
                           headers={"Authorization": f"Bearer {api_token}"})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "body"


@pytest.mark.django_db
def test_a_run_ingest_refuses_is_a_rejected_span_with_its_reason(client, api_token):
    spans = traces.openinference_spans(answer="x" * 200_000)  # longer than an answer may be
    response = _export(client, api_token, traces.export_request(spans), "json")
    partial = response.json()["partialSuccess"]
    assert response.status_code == 200 and partial["rejectedSpans"] == "1"
    assert partial["errorMessage"].startswith("1 runs refused: answer:")
