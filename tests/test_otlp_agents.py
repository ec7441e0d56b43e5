"""Agents' traces (issue 33 items 1-2 over OTLP): a TOOL span (OpenInference) or `execute_tool`
span (GenAI) is evidence for the LLM span after it, as a passage of kind "tool"; a run carries
the session its spans name (`session.id`, `gen_ai.conversation.id`)."""

from __future__ import annotations

import json

import pytest

from reviewapp.api import otlp
from reviewapp.judging.service import answer_judge
from reviewapp.models import Answer
from tests.otlp_traces import _span, as_protobuf, export_request

TRACE_ID = "7a1e0b2c3d4e5f60718293a4b5c6d7e8"
FARE = json.dumps({"route": "12", "rider": "senior", "fare": {"amount": 1.00, "currency": "USD"}})
ARGUMENTS = json.dumps({"route": "12", "rider": "senior"})
QUESTION = "How much does a senior pay on route 12?"
ANSWER = "On route 12 the senior fare is $1.00 (USD)."


def agent_spans(answer: str = ANSWER, trace_id: str = TRACE_ID) -> list[dict]:
    """A retriever-less agent, as openinference-instrumentation writes it: the agent span, an LLM
    call that asks for the tool (no text), the TOOL span whose output holds the fact, the answering
    LLM call."""
    session = {"session.id": "chat-77"}
    asks = {"openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": QUESTION} | session
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "fare_lookup",
        "tool_call.id": "call_abc",
        "input.value": ARGUMENTS,
        "output.value": FARE,
    } | session
    answers = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": QUESTION,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": answer,
    } | session
    agent = {
        "openinference.span.kind": "AGENT",
        "input.value": QUESTION,
        "output.value": answer,
    } | session
    return [_span(trace_id, "c1", "agent", 1000, 9000, agent),
            _span(trace_id, "c2", "ChatOpenAI", 1100, 1900, asks, parent="c1"),
            _span(trace_id, "c3", "fare_lookup", 2000, 2900, tool, parent="c1"),
            _span(trace_id, "c4", "ChatOpenAI", 3000, 8900, answers, parent="c1")]


def genai_agent_spans() -> list[dict]:
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fare_lookup",
            "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": ARGUMENTS,
            "gen_ai.tool.call.result": FARE, "gen_ai.conversation.id": "conv-5"}
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": "conv-5",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}]
        ),
    }
    return [_span(TRACE_ID, "d1", "execute_tool fare_lookup", 100, 200, tool),
            _span(TRACE_ID, "d2", "chat", 300, 900, chat)]


def _read(spans: list[dict]) -> otlp.Reading:
    return otlp.runs_in(otlp.spans_from(json.dumps(export_request(spans)).encode(), otlp.JSON_TYPE))


def test_a_tool_span_is_a_tool_passage_for_the_llm_span_after_it():
    reading = _read(agent_spans())
    assert len(reading.runs) == 1  # the LLM call that only asked for the tool answered nothing
    payload = reading.runs[0].payload
    assert payload["passages"] == [
        {
            "kind": "tool",
            "tool_name": "fare_lookup",
            "call_id": "call_abc",
            "text": "route: 12; rider: senior; fare.amount: 1.0; fare.currency: USD",
            "arguments": {"route": "12", "rider": "senior"},
        }
    ]
    assert (payload["question"], payload["answer"], payload["session_id"]) == (
        QUESTION,
        ANSWER,
        "chat-77",
    )


def test_a_genai_execute_tool_span_and_conversation_id_are_read_the_same_way():
    payload = _read(genai_agent_spans()).runs[0].payload
    assert [(p["kind"], p["tool_name"], p["call_id"]) for p in payload["passages"]] == [
        ("tool", "fare_lookup", "call_1")
    ]
    assert payload["session_id"] == "conv-5"


def test_a_tool_span_without_an_output_is_no_evidence():
    spans = agent_spans()
    spans[2] = _span(
        TRACE_ID,
        "c3",
        "fare_lookup",
        2000,
        2900,
        {"openinference.span.kind": "TOOL", "tool.name": "fare_lookup", "input.value": ARGUMENTS},
    )
    reading = _read(spans)
    assert reading.runs == [] and reading.ignored_spans == 4


def test_a_session_id_the_payload_refuses_is_left_out_not_the_run():
    spans = [
        _span(
            TRACE_ID,
            "d1",
            "t",
            100,
            200,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "x",
                "gen_ai.tool.call.result": "Route 12 runs hourly.",
                "gen_ai.conversation.id": "bad\nid",
            },
        ),
        genai_agent_spans()[1],
    ]
    spans[1] = _span(
        TRACE_ID,
        "d2",
        "chat",
        300,
        900,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Hourly."}]}]
            ),
        },
    )
    payload = _read(spans).runs[0].payload
    assert "session_id" not in payload and payload["passages"][0]["call_id"] == "d100000000000000"


# --- the endpoint: a retriever-less agent's trace becomes a judged answer
# ----------------------------


def _export(client, token, spans, encoding):
    request = export_request(spans)
    body, kind = ((as_protobuf(request), otlp.PROTOBUF_TYPE) if encoding == "protobuf"
                  else (json.dumps(request).encode(), otlp.JSON_TYPE))
    response = client.post("/api/v1/otlp/v1/traces", data=body, content_type=kind,
                           headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.content


@pytest.mark.django_db
@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_the_agents_claim_is_supported_by_the_tool_output_and_contradicted_when_changed(
    client, api_token, encoding
):
    _export(client, api_token, agent_spans(), encoding)
    _export(client, api_token, agent_spans("On route 12 the senior fare is $1.50 (USD).",
                                           trace_id="8b2f1c3d4e5f60718293a4b5c6d7e8f9"), encoding)
    right, changed = Answer.objects.order_by("created_at")
    for answer in (right, changed):
        answer_judge(answer_id=answer.pk)
        assert answer.session_id == "chat-77" and answer.passages.get().kind == "tool"

    claim = right.claims.get()
    evidence = claim.evidence.get()
    assert claim.label == "SUPPORTED" and evidence.passage.tool_name == "fare_lookup"
    assert (
        evidence.passage.text[evidence.start : evidence.end] == evidence.quote
        and "1.0" in evidence.quote
    )
    assert changed.claims.get().label == "CONTRADICTED"
    assert right.external_id == TRACE_ID
