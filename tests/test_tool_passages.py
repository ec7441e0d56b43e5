"""Tool outputs as evidence (issue 33 item 1): a passage of kind "tool" is posted with its tool
name, call id, arguments and output, judged like any passage, and shown on the review page as a tool
result; bad tool fields are 400s naming the field."""

from __future__ import annotations

import pytest

from reviewapp.models import Answer
from reviewapp.judging.service import answer_judge
from reviewapp.tools import render_output
from tests import factories as make

pytestmark = pytest.mark.django_db

FARE_OUTPUT = '{"route": "12", "rider": "senior", "fare": {"amount": 1.00, "currency": "USD"}}'


def tool_payload(answer: str = "On route 12 the senior fare is $1.00 (USD).", **passage) -> dict:
    return {
        "question": "How much is the senior fare on route 12?",
        "passages": [
            {
                "kind": "tool",
                "tool_name": "fare_lookup",
                "call_id": "call_7",
                "arguments": {"route": "12", "rider": "<b>senior</b>"},
                "output": FARE_OUTPUT,
            }
            | passage
        ],
        "answer": answer,
    }


def _judged_claims(api, payload):
    response = api.post(payload)
    assert response.status_code == 202, response.json()
    answer = Answer.objects.get(public_id=response.json()["id"])
    answer_judge(answer_id=answer.pk)
    return answer, api.get(answer.public_id).json()["claims"]


def test_a_json_output_is_rendered_one_record_a_line_with_numbers_as_written():
    output = {
        "route": "12",
        "fare": {"amount": 2.5},
        "stops": ["Main St", "Elm"],
        "results": [{"title": "Fares", "page": 4}, {"title": "Passes", "links": [{"href": "/p"}]}],
    }
    assert render_output(output) == (
        "route: 12; fare.amount: 2.5; stops: Main St, Elm\n"
        "results[0]: title: Fares; page: 4\n"
        "results[1]: title: Passes\n"
        "results[1].links[0]: href: /p")
    assert (
        render_output(FARE_OUTPUT)
        == "route: 12; rider: senior; fare.amount: 1.00; fare.currency: USD"
    )
    assert render_output("Plain text, {not JSON}.") == "Plain text, {not JSON}."
    # The same output gives the same text, so spans into it stay where they were.
    assert render_output(FARE_OUTPUT) == render_output(FARE_OUTPUT)


def test_a_tool_passage_is_stored_with_its_call_and_a_header_naming_it(api):
    assert api.post(tool_payload()).status_code == 202
    passage = Answer.objects.get().passages.get()
    assert (passage.kind, passage.tool_name, passage.call_id) == ("tool", "fare_lookup", "call_7")
    assert passage.tool_arguments == {"route": "12", "rider": "<b>senior</b>"}
    assert passage.text == "route: 12; rider: senior; fare.amount: 1.00; fare.currency: USD"
    assert (passage.tag, passage.title, passage.section) == (
        "tool result", 'fare_lookup(route="12", rider="<b>senior</b>")', "call call_7")


def test_a_claim_the_tool_output_states_is_supported_with_evidence_in_it(api):
    _, claims = _judged_claims(api, tool_payload())
    assert [c["label"] for c in claims] == ["SUPPORTED"]
    evidence = claims[0]["evidence"][0]
    text = render_output(FARE_OUTPUT)
    assert (
        evidence["passage_id"] == "P1"
        and text[evidence["span"][0] : evidence["span"][1]] == evidence["quote"]
    )
    assert "1.00" in evidence["quote"]


def test_a_claim_that_changes_the_tools_number_is_contradicted(api):
    _, claims = _judged_claims(api, tool_payload("On route 12 the senior fare is $1.50 (USD)."))
    assert [c["label"] for c in claims] == ["CONTRADICTED"]


def test_a_tool_output_given_as_text_is_judged_as_it_is(api):
    payload = tool_payload(output=None, text="Senior riders on route 12 pay $1.00 per ride.")
    del payload["passages"][0]["output"]
    _, claims = _judged_claims(
        api, payload | {"answer": "Senior riders on route 12 pay $1.00 per ride."}
    )
    assert [c["label"] for c in claims] == ["SUPPORTED"]


def test_the_review_page_shows_a_tool_result_with_its_arguments_escaped(api, client):
    answer, _ = _judged_claims(api, tool_payload("On route 12 the senior fare is $1.50 (USD)."))
    client.force_login(make.user("rita", "reviewer"))
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert 'class="passage passage-tool"' in page
    assert (
        '<span class="tool-badge">tool result</span> <code class="tool-name">fare_lookup</code>'
        in page
    )
    assert "call <code>call_7</code>" in page
    assert "&lt;b&gt;senior&lt;/b&gt;" in page and "<b>senior</b>" not in page


def test_posting_the_same_tool_call_again_is_the_same_answer(api):
    payload = tool_payload() | {"external_id": "agent-run-1"}
    first, again = api.post(payload), api.post(payload)
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["id"] == first.json()["id"]


@pytest.mark.parametrize(
    ("passage", "field", "message"),
    [
        ({"tool_name": None}, "passages.0.tool_name", "required when kind is 'tool'"),
        (
            {"kind": "document", "output": None, "text": "x"},
            "passages.0.tool_name",
            "only for passages of kind 'tool'",
        ),
        ({"text": "another output"}, "passages.0.output", "give the tool's output once"),
        ({"kind": "function"}, "passages.0.kind", "'document' or 'tool'"),
        ({"call_id": "a\nb"}, "passages.0.call_id", "printable"),
    ],
)
def test_bad_tool_fields_are_400s_naming_the_field(api, passage, field, message):
    payload = tool_payload(**passage)
    payload["passages"][0] = {
        key: value for key, value in payload["passages"][0].items() if value is not None
    }
    response = api.post(payload)
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert any(e["field"] == field and message in e["message"] for e in errors), errors
