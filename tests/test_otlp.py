"""Reading OTLP trace exports as RAG runs (reviewapp.otlp): both encodings, both conventions."""

from __future__ import annotations

import json

import pytest

from judges import JudgeRequest
from reviewapp import otlp
from tests import otlp_traces as traces


def _read(request: dict, encoding: str = "json") -> otlp.Reading:
    if encoding == "json":
        return otlp.runs_in(otlp.spans_from(json.dumps(request).encode(), "application/json"))
    return otlp.runs_in(otlp.spans_from(traces.as_protobuf(request), "application/x-protobuf"))


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
@pytest.mark.parametrize("spans", [traces.openinference_spans, traces.genai_spans], ids=["openinference", "genai"])
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
    assert reading.ignored_spans == (1 if spans is traces.openinference_spans else 0)  # the chain span


def test_openinference_document_urls_become_source_urls():
    [run] = _read(traces.export_request(traces.openinference_spans())).runs
    assert run.payload["passages"][0]["source_url"] == "https://fares.example/doc-1"


def test_a_trace_with_two_llm_calls_gives_two_runs_each_named_by_its_span():
    spans = traces.openinference_spans()
    second = json.loads(json.dumps(spans[2]))
    second["spanId"], second["startTimeUnixNano"], second["endTimeUnixNano"] = "a400000000000000", "6000", "7000"
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
    assert json.loads(body)["partialSuccess"]["errorMessage"].startswith("2 of 2 spans held no RAG run")


@pytest.mark.parametrize("body, content_type, message", [
    (b"{not json", "application/json", "the body is not JSON"),
    (b'{"resourceSpans": {}}', "application/json", "resourceSpans list"),
    (json.dumps(traces.export_request([{"traceId": "xyz", "spanId": "00"}])).encode(), "application/json", "traceId"),
    (b"\xff\xff\xff", "application/x-protobuf", "not an OTLP ExportTraceServiceRequest"),
    (b"{}", "text/plain", "Content-Type must be"),
])
def test_a_body_that_is_not_an_otlp_export_is_refused_with_its_reason(body, content_type, message):
    with pytest.raises(otlp.OTLPError, match=message):
        otlp.spans_from(body, content_type)


def test_the_protobuf_reply_is_an_export_response():
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    body, kind = otlp.export_response(_read(traces.export_request(traces.openinference_spans())),
                                      "application/x-protobuf")
    reply = ExportTraceServiceResponse.FromString(body)
    assert kind == "application/x-protobuf" and "1 of 3 spans" in reply.partial_success.error_message
