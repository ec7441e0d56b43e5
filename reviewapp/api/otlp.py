"""OpenTelemetry traces in, answers out: an OTLP/HTTP export request (JSON or protobuf) read as
the RAG runs it records.

A run is an LLM span whose trace also holds retrieval: the retrieved documents are its passages,
its output is the answer, the retrieval query (or the last user message) the question. Two
attribute conventions are read:

* OpenInference (Phoenix, Arize, openinference-instrumentation-*): `openinference.span.kind`
  RETRIEVER with `retrieval.documents.N.document.{id,content,score,metadata}` and `input.value`
  (the query); LLM with `llm.output_messages.N.message.{role,content}` or `output.value`, and
  `llm.input_messages.N.message.{role,content}` or `input.value`;
* OpenTelemetry's GenAI conventions: `gen_ai.retrieval.documents`, `gen_ai.retrieval.query.text`,
  `gen_ai.input.messages` / `gen_ai.output.messages` (JSON, messages made of parts).

An agent's tool calls are evidence too: a TOOL span (OpenInference) or `execute_tool` span (GenAI)
becomes a passage of kind "tool" for the LLM spans after it (tool_passage), and a run carries the
session its spans name (`session.id`, `gen_ai.conversation.id`; session_id_of).

Spans that are neither part of a run nor a run are counted, not refused. Nothing here stores:
`runs_in(...)` returns ingest payloads for services.ingest.
"""

from __future__ import annotations

from bisect import bisect_right
import json
import math
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest, ExportTraceServiceResponse,
)

from judges.types import MAX_PASSAGES, passage_id_problem
from reviewapp import tools
from reviewapp.api import strict_json

JSON_TYPE, PROTOBUF_TYPE = "application/json", "application/x-protobuf"
# An index of at most 6 digits: int() of thousands of digits is refused by Python (and slow).
_OI_DOCUMENT = re.compile(
    r"^retrieval\.documents\.(\d{1,6})\.document\.(id|content|score|metadata)$"
)
_OI_MESSAGE = re.compile(r"^llm\.(input|output)_messages\.(\d{1,6})\.message\.(role|content)$")
_LONG_INDEX = re.compile(r"^(retrieval\.documents|llm\.(input|output)_messages)\.\d{7,}\.")
# Bounds on one export request, so its cost is bounded whatever it holds (issue 28): spans read,
# answers made (each is a judging), attribute values nested, and a gzip body's inflated size.
MAX_SPANS = 10_000
MAX_RUNS = 100
MAX_VALUE_DEPTH = 32
MAX_INFLATED_BYTES = 16 * 1024 * 1024


class OTLPError(ValueError):
    """The body is not an OTLP trace export request; the message says why."""


@dataclass
class Span:
    trace_id: str
    span_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    service: str = ""


@dataclass
class Run:
    """One answer to ingest: the payload (DESIGN.md's ingest fields) and where it came from."""

    payload: dict[str, Any]
    trace_id: str
    span_id: str


@dataclass
class Reading:
    runs: list[Run] = field(default_factory=list)
    spans: int = 0
    ignored_spans: int = 0
    over_cap: int = 0  # runs past MAX_RUNS, not made


# --- decoding ------------------------------------------------------------------------------------


def spans_from(body: bytes, content_type: str, content_encoding: str = "") -> list[Span]:
    body = _decoded(body, content_encoding)
    kind = content_type.split(";")[0].strip().lower()
    if kind == PROTOBUF_TYPE:
        spans = _spans_from_protobuf(body)
    elif kind == JSON_TYPE:
        try:
            document = json.loads(body)
        except RecursionError:
            raise OTLPError("the body nests too deeply to be an OTLP export") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise OTLPError(f"the body is not JSON: {exc}") from None
        spans = _spans_from_json(document)
    else:
        raise OTLPError(
            f"Content-Type must be {JSON_TYPE} or {PROTOBUF_TYPE}, not {kind or 'missing'!r}"
        )
    if len(spans) > MAX_SPANS:
        raise OTLPError(
            f"an export may hold at most {MAX_SPANS} spans, this one holds {len(spans)}: "
            "send smaller batches (the exporter's max_export_batch_size)"
        )
    return spans


def _decoded(body: bytes, content_encoding: str) -> bytes:
    """The body without its Content-Encoding: identity, or gzip (the OpenTelemetry Collector's
    otlphttp exporter compresses by default), inflated to at most MAX_INFLATED_BYTES."""
    encoding = content_encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise OTLPError(f"Content-Encoding must be gzip or identity, not {encoding!r}")
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        inflated = inflater.decompress(body, MAX_INFLATED_BYTES)
    except zlib.error as exc:
        raise OTLPError(f"the body is not valid gzip: {exc}") from None
    if inflater.unconsumed_tail:
        raise OTLPError(f"the gzip body inflates beyond {MAX_INFLATED_BYTES} bytes")
    if not inflater.eof:
        raise OTLPError("the gzip body is truncated")
    return inflated


def _spans_from_protobuf(body: bytes) -> list[Span]:
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise OTLPError(f"the body is not an OTLP ExportTraceServiceRequest: {exc}") from None
    spans = []
    for resource_spans in request.resource_spans:
        resource = resource_spans.resource.attributes
        service = _service_of({kv.key: _proto_value(kv.value, kv.key) for kv in resource})
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    Span(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        name=span.name,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        attributes=_checked(
                            {kv.key: _proto_value(kv.value, kv.key) for kv in span.attributes}
                        ),
                        service=service,
                    )
                )
    return spans


def _checked(attributes: dict[str, Any]) -> dict[str, Any]:
    """Refuse what the conventions cannot mean, naming it, rather than guess or ignore it."""
    kind = attributes.get("openinference.span.kind")
    if kind is not None and not isinstance(kind, str):
        raise OTLPError(f"openinference.span.kind must be a string, not {type(kind).__name__}")
    for key in attributes:
        if _LONG_INDEX.match(key):
            raise OTLPError(f"attribute {key[:40]}...: an index has at most 6 digits")
    return attributes


def _too_deep(key: str) -> OTLPError:
    return OTLPError(
        f"attribute {key[:100]!r}: its value nests deeper than {MAX_VALUE_DEPTH} levels"
    )


def _proto_value(value, key: str, depth: int = 0) -> Any:
    if depth > MAX_VALUE_DEPTH:
        raise _too_deep(key)
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_proto_value(item, key, depth + 1) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _proto_value(kv.value, key, depth + 1) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind) if kind else None


def _spans_from_json(document: Any) -> list[Span]:
    if not isinstance(document, dict) or not isinstance(document.get("resourceSpans", []), list):
        raise OTLPError("the body must be an object with a resourceSpans list (OTLP/JSON)")
    spans = []
    for resource_spans in document.get("resourceSpans", []):
        resource = _object(resource_spans, "resourceSpans[]").get("resource") or {}
        service = _service_of(_json_attributes(_object(resource, "resource").get("attributes")))
        for scope_spans in _list(resource_spans.get("scopeSpans"), "scopeSpans"):
            for span in _list(_object(scope_spans, "scopeSpans[]").get("spans"), "spans"):
                span = _object(span, "spans[]")
                spans.append(
                    Span(
                        trace_id=_id(span.get("traceId"), "traceId"),
                        span_id=_id(span.get("spanId"), "spanId"),
                        name=str(span.get("name", "")),
                        start_ns=_int(span.get("startTimeUnixNano")),
                        end_ns=_int(span.get("endTimeUnixNano")),
                        attributes=_checked(_json_attributes(span.get("attributes"))),
                        service=service,
                    )
                )
    return spans


def _json_attributes(items: Any, key: str = "", depth: int = 0) -> dict[str, Any]:
    return {str(kv.get("key")): _json_value(kv.get("value") or {}, key or str(kv.get("key")), depth)
            for kv in _list(items, "attributes") if isinstance(kv, dict)}


def _json_value(value: Any, key: str, depth: int = 0) -> Any:
    if depth > MAX_VALUE_DEPTH:
        raise _too_deep(key)
    if not isinstance(value, dict):
        return None
    if "arrayValue" in value:
        array = _object(value["arrayValue"] or {}, f"{key[:100]}: arrayValue")
        values = _list(array.get("values"), "arrayValue")
        return [_json_value(item, key, depth + 1) for item in values]
    if "kvlistValue" in value:
        kvlist = _object(value["kvlistValue"] or {}, f"{key[:100]}: kvlistValue")
        return _json_attributes(kvlist.get("values"), key, depth + 1)
    if "intValue" in value:  # int64 is a string in OTLP/JSON
        return _int(value["intValue"])
    for key in ("stringValue", "doubleValue", "boolValue", "bytesValue"):
        if key in value:
            return value[key]
    return None


def _id(value: Any, name: str) -> str:
    # OTLP/JSON writes trace and span ids as hex (not base64, unlike protobuf's JSON mapping).
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-fA-F]{8,64}", value):
        raise OTLPError(f"{name} must be a hex string, not {value!r}"[:200])
    return value.lower()


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _object(value: Any, name: str) -> dict:
    if not isinstance(value, dict):
        raise OTLPError(f"{name} must be an object")
    return value


def _list(value: Any, name: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise OTLPError(f"{name} must be a list")
    return value


def _service_of(resource_attributes: dict[str, Any]) -> str:
    return str(resource_attributes.get("service.name") or "")


# --- reading the runs --------------------------------------------------------------------------


def runs_in(spans: list[Span]) -> Reading:
    """One run per LLM span with retrieval in its trace (at most MAX_RUNS an export; the rest are
    counted in `over_cap`). A trace with one such span keeps the trace id as its external_id;
    several get "<trace id>:<span id>" each.

    Linear in the spans: each span's documents are read once, and a run's retrievals are found by
    bisecting the trace's retrievals ordered by their end, walking back from the latest that ended
    before the call only as far as one answer's passages can reach (MAX_PASSAGES)."""
    reading = Reading(spans=len(spans))
    used: set[tuple[str, str]] = set()
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    for trace_id, trace in by_trace.items():
        retrievals = [(span, docs) for span in trace if (docs := _evidence(span)) is not None]
        if not retrievals:
            continue
        answered = [(span, text) for span in trace if (text := _output_text(span))]
        trace_session = session_id_of(trace)  # once a trace: a call's own span may name another
        ended = sorted((r for r in range(len(retrievals)) if retrievals[r][0].end_ns),
                       key=lambda r: retrievals[r][0].end_ns)
        ends = [retrievals[r][0].end_ns for r in ended]
        for span, answer in answered:
            if len(reading.runs) >= MAX_RUNS:
                reading.over_cap += 1
                continue
            # The retrieval that fed this call: what ended before it started, else all of the
            # trace's.
            before = ended[:bisect_right(ends, span.start_ns)] if span.start_ns else []
            chosen = _latest(before or range(len(retrievals)), retrievals)
            fed = [retrievals[r] for r in sorted(chosen)]
            external_id = trace_id if len(answered) == 1 else f"{trace_id}:{span.span_id}"
            payload = _payload(external_id, span, answer, fed)
            if session := session_id_of([span]) or trace_session:
                payload["session_id"] = session
            reading.runs.append(Run(payload=payload, trace_id=trace_id, span_id=span.span_id))
            used.add((trace_id, span.span_id))
            used.update((trace_id, r.span_id) for r, _ in fed)
    reading.ignored_spans = len(spans) - len(used)
    return reading


def _latest(candidates, retrievals: list[tuple[Span, list[dict]]]) -> list[int]:
    """The last of `candidates` (indexes into retrievals) whose documents fill one answer."""
    chosen, passages = [], 0
    for index in reversed(candidates):
        if passages >= MAX_PASSAGES:
            break
        chosen.append(index)
        passages += len(retrievals[index][1])
    return chosen


def _payload(external_id: str, llm: Span, answer: str,
             retrievals: list[tuple[Span, list[dict]]]) -> dict[str, Any]:
    passages, seen, seen_ids = [], set(), set()
    for _, documents in retrievals:
        for document in documents:
            key = (document.get("id"), document["text"])
            if key not in seen:
                seen.add(key)
                if document.get("id") in seen_ids:  # one id, two texts: ingest numbers the second
                    document = {k: v for k, v in document.items() if k != "id"}
                elif "id" in document:
                    seen_ids.add(document["id"])
                passages.append(document)
    question = next((q for r, _ in retrievals if (q := _query(r))), "") or _last_user_message(llm)
    return {
        "external_id": external_id[:200],
        "question": question,
        "passages": passages,
        "answer": answer,
        "metadata": {
            "otel": {
                "trace_id": llm.trace_id,
                "span_id": llm.span_id,
                "span_name": llm.name,
                "service": llm.service,
                "model": str(
                    llm.attributes.get("llm.model_name")
                    or llm.attributes.get("gen_ai.request.model")
                    or ""
                ),
            }
        },
    }


def _documents(span: Span) -> list[dict] | None:
    """The span's retrieved documents as passages ({id?, text, score?, metadata?}), or None when it
    retrieved nothing."""
    attributes = span.attributes
    if str(attributes.get("openinference.span.kind", "")).upper() == "RETRIEVER" or any(
            _OI_DOCUMENT.match(key) for key in attributes):
        found: dict[int, dict] = {}
        for key, value in attributes.items():
            if match := _OI_DOCUMENT.match(key):
                found.setdefault(int(match[1]), {})[match[2]] = value
        return [_passage(found[n]) for n in sorted(found) if _text(found[n].get("content"))]
    if "gen_ai.retrieval.documents" in attributes:
        name = "gen_ai.retrieval.documents"
        documents = _json_or_value(attributes[name], name)
        documents = documents if isinstance(documents, list) else []
        return [
            _passage(doc | {"content": doc.get("content", doc.get("text"))})
            for doc in documents
            if isinstance(doc, dict) and _text(doc.get("content", doc.get("text")))
        ]
    return None


def _passage(document: dict) -> dict:
    passage = {"text": _text(document.get("content"))}
    identifier = str(document.get("id") or "")
    # An id the ingest payload refuses (too long, a line break) is left out: ingest numbers it.
    if identifier and passage_id_problem(identifier) is None:
        passage["id"] = identifier
    score = document.get("score")
    number = isinstance(score, (int, float)) and not isinstance(score, bool)
    if number and math.isfinite(score) and abs(score) < 2**53:  # what every JSON reader keeps exact
        passage["score"] = score
    metadata = _json_or_value(document.get("metadata"), "retrieval.documents.N.document.metadata")
    if isinstance(metadata, dict):
        try:
            # a trace's JSON may hold NaN or lone surrogates: not stored
            strict_json.check(metadata)
            passage["metadata"] = metadata
        except strict_json.UnstorableJSON:
            pass
        url = metadata.get("url") or metadata.get("source")
        if isinstance(url, str) and url.startswith(("http://", "https://")) and len(url) <= 2000:
            passage["source_url"] = url
        title = metadata.get("title")
        if isinstance(title, str) and title:
            passage["title"] = title[:500]
    return passage


def _query(span: Span) -> str:
    attributes = span.attributes
    if str(attributes.get("openinference.span.kind", "")).upper() == "TOOL":
        return ""  # its input is the call's arguments, not a question
    return _text(attributes.get("gen_ai.retrieval.query.text") or attributes.get("input.value"))


def _output_text(span: Span) -> str:
    attributes = span.attributes
    kind = str(attributes.get("openinference.span.kind", "")).upper()
    if kind == "LLM" or any(_OI_MESSAGE.match(key) for key in attributes):
        messages = _oi_messages(attributes, "output")
        if messages:
            return messages[-1][1]
        if kind == "LLM":
            return _completion_text(attributes.get("output.value"))
    if "gen_ai.output.messages" in attributes:
        messages = _genai_messages(attributes["gen_ai.output.messages"])
        return messages[-1][1] if messages else ""
    return ""


def _last_user_message(span: Span) -> str:
    attributes = span.attributes
    messages = _oi_messages(attributes, "input") or _genai_messages(
        attributes.get("gen_ai.input.messages")
    )
    users = [text for role, text in messages if role == "user"]
    return users[-1] if users else _text(attributes.get("input.value"))[:2000]


def _oi_messages(attributes: dict, direction: str) -> list[tuple[str, str]]:
    found: dict[int, dict] = {}
    for key, value in attributes.items():
        if (match := _OI_MESSAGE.match(key)) and match[1] == direction:
            found.setdefault(int(match[2]), {})[match[3]] = value
    return [
        (str(m.get("role", "")), text)
        for n in sorted(found)
        if (text := _text((m := found[n]).get("content")))
    ]


def _genai_messages(value: Any) -> list[tuple[str, str]]:
    messages = _json_or_value(value, "gen_ai.*.messages")
    out = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        parts = message.get("parts")
        text = (
            "".join(
                str(p.get("content", ""))
                for p in parts
                if isinstance(p, dict) and p.get("type") == "text"
            )
            if isinstance(parts, list)
            else _text(message.get("content"))
        )
        if text.strip():
            out.append((str(message.get("role", "")), text))
    return out


def _completion_text(value: Any) -> str:
    """output.value: plain text, or an OpenAI-style response serialized as JSON."""
    parsed = _json_or_value(value, "output.value")
    if isinstance(parsed, dict):
        choices = parsed.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message") or {}
            return _text(
                message.get("content") if isinstance(message, dict) else choices[0].get("text")
            )
        return ""
    return _text(value)


def _json_or_value(value: Any, name: str) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except RecursionError:
            raise OTLPError(f"{name[:100]}: its JSON nests too deeply to read") from None
        except ValueError:  # not JSON: a plain string
            return value
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- agents: tool spans as evidence, session ids --------------------------------------------------

_SESSION_KEYS = ("session.id", "gen_ai.conversation.id")


def _evidence(span: Span) -> list[dict] | None:
    """The passages a span contributes: its retrieved documents, or its tool call's output (one
    passage of kind "tool"); None when it contributes none."""
    documents = _documents(span)
    if documents is not None:
        return documents
    tool = tool_passage(span)
    return [tool] if tool is not None else None


def tool_passage(span: Span) -> dict | None:
    """A tool span as an ingest passage of kind "tool", or None when the span is not a tool call
    with an output: OpenInference's TOOL kind (`tool.name`, `input.value` the arguments,
    `output.value` the result, `tool_call.id`) or a GenAI `execute_tool` span (`gen_ai.tool.name`,
    `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`)."""
    attributes = span.attributes
    if str(attributes.get("openinference.span.kind", "")).upper() == "TOOL":
        name, call_id = attributes.get("tool.name"), attributes.get(
            "tool_call.id"
        ) or attributes.get("tool.id")
        arguments, output = attributes.get("input.value"), attributes.get("output.value")
    elif attributes.get("gen_ai.operation.name") == "execute_tool":
        name, call_id = attributes.get("gen_ai.tool.name"), attributes.get("gen_ai.tool.call.id")
        arguments, output = attributes.get("gen_ai.tool.call.arguments"), attributes.get(
            "gen_ai.tool.call.result"
        )
    else:
        return None
    text = tools.render_output(output) if isinstance(output, str) else ""
    if not text.strip():
        return None
    passage: dict[str, Any] = {
        "kind": "tool",
        "tool_name": _tool_field(name) or span.name[:200] or "tool",
        "call_id": _tool_field(call_id) or span.span_id,
        "text": text,
    }
    arguments = _json_or_value(arguments, "tool arguments")
    if isinstance(arguments, (dict, list)) or (isinstance(arguments, str) and arguments):
        try:
            strict_json.check(arguments)  # NaN or a lone surrogate cannot be stored: left out
            passage["arguments"] = arguments
        except strict_json.UnstorableJSON:
            pass
    return passage


def _tool_field(value: Any) -> str:
    """A tool name or call id the payload accepts (printable, at most 200 characters), else ""."""
    text = str(value).strip() if isinstance(value, (str, int)) else ""
    return text if text.isprintable() and len(text) <= 200 else ""


def session_id_of(spans: list[Span]) -> str | None:
    """The session the first span naming one belongs to (OpenInference `session.id`, GenAI
    `gen_ai.conversation.id`), if the payload accepts it as a session_id."""
    for span in spans:
        for key in _SESSION_KEYS:
            value = span.attributes.get(key)
            if isinstance(value, str) and value and value == value.strip() and value.isprintable() \
                    and len(value) <= 200:
                return value
    return None


# --- the reply ---------------------------------------------------------------------------------


def export_response(
    reading: Reading, content_type: str, rejected: list[str] = ()
) -> tuple[bytes, str]:
    """OTLP's ExportTraceServiceResponse, in the request's encoding. `rejected` holds a reason per
    run that could not be stored (its LLM span is a rejected span); spans that held no run are
    named in the message too, as a warning (the spec's partial success with nothing rejected)."""
    notes = (
        [f"{len(rejected)} runs refused: " + "; ".join(sorted(set(rejected)))[:900]]
        if rejected
        else []
    )
    if reading.over_cap:
        notes.append(
            f"{reading.over_cap} runs past the {MAX_RUNS} an export may hold were not made: "
            "send smaller batches"
        )
    if reading.ignored_spans:
        notes.append(
            f"{reading.ignored_spans} of {reading.spans} spans held no RAG run (an LLM span with "
            "retrieval in its trace) and were ignored"
        )
    message = ". ".join(notes)
    if content_type.split(";")[0].strip().lower() == PROTOBUF_TYPE:
        response = ExportTraceServiceResponse()
        if message:
            response.partial_success.rejected_spans = len(rejected) + reading.over_cap
            response.partial_success.error_message = message
        return response.SerializeToString(), PROTOBUF_TYPE
    refused = str(len(rejected) + reading.over_cap)
    body = {
        "partialSuccess": {"rejectedSpans": refused, "errorMessage": message} if message else {}
    }
    return json.dumps(body).encode(), JSON_TYPE
