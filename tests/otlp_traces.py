"""OTLP trace export requests as RAG frameworks' instrumentation sends them, for tests."""

from __future__ import annotations

import json

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

TRACE_ID = "5b8efff798038103d269b633813fc60c"
PASSAGES = [("doc-1", "Riders aged 65 and older pay a reduced fare of $1.00 per ride."),
            ("doc-2", "A 30-day pass costs $92.00.")]
QUESTION = "What do seniors pay?"
ANSWER = "Seniors pay $1.00 per ride. A 30-day pass costs $75.00."


def _value(value) -> dict:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": value}


def _attributes(values: dict) -> list[dict]:
    return [{"key": key, "value": _value(value)} for key, value in values.items()]


def openinference_spans(trace_id: str = TRACE_ID, answer: str = ANSWER) -> list[dict]:
    retriever = {"openinference.span.kind": "RETRIEVER", "input.value": QUESTION}
    for n, (pid, text) in enumerate(PASSAGES):
        retriever |= {
            f"retrieval.documents.{n}.document.id": pid,
            f"retrieval.documents.{n}.document.content": text,
            f"retrieval.documents.{n}.document.score": 0.9 - n / 10,
            f"retrieval.documents.{n}.document.metadata": json.dumps(
                {"url": f"https://fares.example/{pid}"}
            ),
        }
    llm = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Answer from context.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": QUESTION,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": answer,
    }
    chain = {"openinference.span.kind": "CHAIN", "input.value": QUESTION, "output.value": answer}
    return [
        _span(trace_id, "a1", "RAGChain", 1000, 5000, chain),
        _span(trace_id, "a2", "retrieve", 1100, 1900, retriever, parent="a1"),
        _span(trace_id, "a3", "ChatOpenAI", 2000, 4900, llm, parent="a1"),
    ]


def genai_spans(trace_id: str = TRACE_ID) -> list[dict]:
    documents = [{"id": pid, "content": text, "score": 0.8} for pid, text in PASSAGES]
    retrieval = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": QUESTION,
                 "gen_ai.retrieval.documents": json.dumps(documents)}
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [
                {
                    "role": "assistant",
                    "finish_reason": "stop",
                    "parts": [{"type": "text", "content": ANSWER}],
                }
            ]
        ),
    }
    return [
        _span(trace_id, "b1", "retrieval", 100, 200, retrieval),
        _span(trace_id, "b2", "chat", 300, 900, chat),
    ]


def _span(
    trace_id: str, span_id: str, name: str, start: int, end: int, attributes: dict, parent: str = ""
) -> dict:
    span = {
        "traceId": trace_id,
        "spanId": span_id.ljust(16, "0"),
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": _attributes(attributes),
    }
    if parent:
        span["parentSpanId"] = parent.ljust(16, "0")
    return span


def export_request(spans: list[dict], service: str = "rag-api") -> dict:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes({"service.name": service})},
                "scopeSpans": [
                    {"scope": {"name": "openinference.instrumentation.langchain"}, "spans": spans}
                ],
            }
        ]
    }


def as_protobuf(request: dict) -> bytes:
    """The same request in OTLP's protobuf encoding (ids as bytes, values typed)."""
    message = ExportTraceServiceRequest()
    for resource_spans in request["resourceSpans"]:
        out = message.resource_spans.add()
        out.resource.attributes.extend(_proto_attributes(resource_spans["resource"]["attributes"]))
        for scope_spans in resource_spans["scopeSpans"]:
            scope = out.scope_spans.add()
            scope.scope.name = scope_spans["scope"]["name"]
            for span in scope_spans["spans"]:
                item = scope.spans.add()
                item.trace_id, item.span_id = bytes.fromhex(span["traceId"]), bytes.fromhex(
                    span["spanId"]
                )
                item.name = span["name"]
                item.start_time_unix_nano, item.end_time_unix_nano = int(
                    span["startTimeUnixNano"]
                ), int(span["endTimeUnixNano"])
                item.attributes.extend(_proto_attributes(span["attributes"]))
    return message.SerializeToString()


def _proto_attributes(attributes: list[dict]) -> list[KeyValue]:
    out = []
    for kv in attributes:
        (kind, value), = kv["value"].items()
        any_value = AnyValue(
            **{
                {
                    "stringValue": "string_value",
                    "intValue": "int_value",
                    "doubleValue": "double_value",
                    "boolValue": "bool_value",
                }[kind]: (int(value) if kind == "intValue" else value)
            }
        )
        out.append(KeyValue(key=kv["key"], value=any_value))
    return out
