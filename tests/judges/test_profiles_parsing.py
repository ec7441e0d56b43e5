"""The shared pieces under every profile: finding the JSON object in a reply, validating it with
field paths in the errors, placing claim text and quotes, and filling templates."""

from __future__ import annotations

from typing import Literal

import pytest

from judges.profiles.base import OutputError
from judges.profiles.locate import locate_in_answer, locate_quote
from judges.profiles.parsing import NonBlank, RawModel, extract_json, validate
from judges.profiles.render import fill, new_delimiter
from judges.types import Passage

# --- extract_json ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"grounded": true}',
        '  \n{"grounded": true}\n  ',
        '```json\n{"grounded": true}\n```',
        '```JSON\n{"grounded": true}\n```',
        '```\n{"grounded": true}\n```',
        'Here is the audit:\n{"grounded": true}',
        'Here is the audit:\n```json\n{"grounded": true}\n```',
        '{"grounded": true}\nI judged strictly, as asked.',
        'Result {for P1}: {"grounded": true} (see {P2})',
        # the same object twice is still one answer
        '{"grounded": true}\n```json\n{"grounded": true}\n```',
    ],
)
def test_the_one_json_object_is_found_however_it_is_wrapped(text):
    assert extract_json(text) == {"grounded": True}


def test_braces_and_fences_inside_json_strings_do_not_confuse_it():
    text = (
        'Audit:\n{"reasoning": "uses } and { and ``` inside", "nested": {"a": [1, {"b": 2}]}}\nEnd.'
    )
    assert extract_json(text) == {
        "reasoning": "uses } and { and ``` inside",
        "nested": {"a": [1, {"b": 2}]},
    }


@pytest.mark.parametrize(
    "text,reason",
    [
        ("", "the reply is empty"),
        ("   \n ", "the reply is empty"),
        ("The answer is grounded.", "no JSON object found"),
        ("Passages {P1} and [P2] agree.", "no JSON object found"),
        ('{"grounded": true', "truncated"),
        ('{"claims": [{"id": "c1"}, {"id": "c2"', "truncated"),
        ('{"reasoning": "the fare is', "truncated"),
        ('```json\n{"claims": [1, 2\n```', "truncated"),
        ('[{"grounded": true}]', "the top-level JSON value is an array"),
        ('```json\n["A 30-day pass costs $75."]\n```', "the top-level JSON value is an array"),
        ('{"grounded": true} {"grounded": false}', "found 2 different JSON values"),
        (
            'First try: {"grounded": true}\nActually: {"grounded": false}',
            "found 2 different JSON values",
        ),
        ("{'grounded': true}", "invalid JSON at character 1: Expecting property name"),
        ("{grounded: true}", "invalid JSON"),
        ('{"grounded": true,}', "invalid JSON"),
        ('{"grounded": True}', "invalid JSON"),
        ('{"score": NaN}', "NaN is not valid JSON"),
        ('{"grounded": true, "grounded": false}', "duplicate key 'grounded'"),
        ('{"grounded": true} and {"grounded": tru}', "found a JSON object but also invalid JSON"),
    ],
)
def test_anything_but_exactly_one_well_formed_object_is_rejected_with_the_reason(text, reason):
    with pytest.raises(OutputError, match=reason):
        extract_json(text)


def test_content_is_never_repaired():
    # A trailing comma or single quotes would be easy to "fix"; the parser refuses instead.
    with pytest.raises(OutputError):
        extract_json('{"unsupported_claims": ["a", "b",], "grounded": false}')


# --- validate --------------------------------------------------------------------------------


class Item(RawModel):
    status: Literal["SUPPORTED", "UNSUPPORTED"]
    text: NonBlank
    source: str | None


class Reply(RawModel):
    items: list[Item]
    score: float
    flag: bool


def test_validation_returns_the_model_and_ignores_unknown_keys():
    reply = validate(
        Reply,
        {
            "items": [{"status": "SUPPORTED", "text": "x", "source": None, "extra": 1}],
            "score": 1,
            "flag": True,
            "comment": "hi",
        },
    )
    assert reply.items[0].status == "SUPPORTED" and reply.score == 1.0


@pytest.mark.parametrize(
    "data,message",
    [
        ({"items": [], "score": 1.0}, "flag: is required"),
        (
            {
                "items": [
                    {"status": "SUPPORTED", "text": "x", "source": None},
                    {"status": "MAYBE", "text": "y", "source": None},
                ],
                "score": 1.0,
                "flag": True,
            },
            'items[1].status: must be one of SUPPORTED, UNSUPPORTED (got "MAYBE")',
        ),
        (
            {
                "items": [{"status": "SUPPORTED", "text": " ", "source": None}],
                "score": 1.0,
                "flag": True,
            },
            "items[0].text: must not be empty",
        ),
        (
            {"items": [{"status": "SUPPORTED", "text": "x"}], "score": 1.0, "flag": True},
            "items[0].source: is required",
        ),
        ({"items": [], "score": "0.9", "flag": True}, 'score: must be a number (got "0.9")'),
        ({"items": [], "score": 0.9, "flag": "true"}, 'flag: must be true or false (got "true")'),
        ({"items": [], "score": 0.9, "flag": 1}, "flag: must be true or false (got 1)"),
        ({"items": {}, "score": 0.9, "flag": True}, "items: must be a list"),
        ({"items": ["x"], "score": 0.9, "flag": True}, "items[0]: must be an object"),
    ],
)
def test_validation_errors_name_the_field_path(data, message):
    with pytest.raises(OutputError) as error:
        validate(Reply, data)
    assert message in str(error.value)


def test_validation_reports_several_problems_at_once():
    with pytest.raises(OutputError) as error:
        validate(Reply, {"items": [{"status": "NO", "text": "", "source": 3}]})
    message = str(error.value)
    for part in (
        "items[0].status",
        "items[0].text",
        "items[0].source",
        "score: is required",
        "flag: is required",
    ):
        assert part in message


# --- locating --------------------------------------------------------------------------------

ANSWER = "Seniors pay $1.35. Children ride free. Seniors pay $1.35."


def test_claim_text_is_found_verbatim_in_the_answer():
    span = locate_in_answer("Children ride free.", ANSWER)
    assert span == (19, 38) and ANSWER[span[0]:span[1]] == "Children ride free."


def test_the_first_occurrence_at_or_after_the_hint_is_taken():
    assert locate_in_answer("Seniors pay $1.35.", ANSWER) == (0, 18)
    assert locate_in_answer("Seniors pay $1.35.", ANSWER, hint=1) == (39, 57)


def test_a_text_only_before_the_hint_is_still_found():
    assert locate_in_answer("Children ride free.", ANSWER, hint=50) == (19, 38)


def test_outer_whitespace_is_trimmed_and_case_and_spacing_differences_are_normalized():
    assert locate_in_answer("  Children ride free. \n", ANSWER) == (19, 38)
    # judges.locate: normalized matches
    assert locate_in_answer("children ride free.", ANSWER) == (19, 38)
    assert locate_in_answer("Children  ride free", ANSWER) == (19, 37)
    assert locate_in_answer("   ", ANSWER) is None


def test_a_claim_restated_with_other_wording_is_placed_fuzzily_or_not_at_all():
    assert locate_in_answer("Children ride for free.", ANSWER) == (19, 37)
    assert locate_in_answer("Children never pay anything.", ANSWER) is None


PASSAGES = [
    Passage(id="P1", text="The adult fare is $2.75. Seniors pay $1.35."),
    Passage(id="P2", text="Seniors pay $1.35. Passes cost $86."),
]


def test_a_quote_is_looked_for_in_the_named_passage_first():
    evidence = locate_quote("Seniors pay $1.35.", PASSAGES, "P2")
    assert (evidence.passage_id, evidence.span, evidence.match) == ("P2", (0, 18), "exact")


def test_a_quote_missing_from_the_named_passage_is_found_in_another():
    evidence = locate_quote("Passes cost $86.", PASSAGES, "P1")
    assert (evidence.passage_id, evidence.match) == ("P2", "exact")
    assert PASSAGES[1].text[evidence.span[0]:evidence.span[1]] == evidence.quote


def test_a_quote_without_a_passage_id_is_looked_for_everywhere():
    evidence = locate_quote("The adult fare is $2.75.", PASSAGES, None)
    assert (evidence.passage_id, evidence.span, evidence.match) == ("P1", (0, 24), "exact")


def test_a_quote_in_no_passage_is_kept_as_not_found():
    evidence = locate_quote("Seniors ride free.", PASSAGES, "P1")
    assert (evidence.passage_id, evidence.quote, evidence.span, evidence.match) == (
        "P1", "Seniors ride free.", None, "not_found")
    assert locate_quote("Seniors ride free.", PASSAGES).passage_id == ""


def test_a_quote_naming_a_passage_that_does_not_exist_keeps_that_id_and_is_not_found():
    evidence = locate_quote("Seniors pay $1.35.", PASSAGES, "P9")
    assert (evidence.passage_id, evidence.span, evidence.match) == ("P9", None, "not_found")


def test_a_passage_id_written_with_the_prompts_brackets_names_that_passage():
    assert locate_quote("Passes cost $86.", PASSAGES, "[P2]").passage_id == "P2"


# --- templates and delimiters ----------------------------------------------------------------


def test_templates_fill_known_placeholders_once_and_leave_json_braces_alone():
    template = 'Data: {data}\nReply {"grounded": true} with id {delimiter}.'
    filled = fill(
        template, {"data": "a passage says {delimiter} and {data}", "delimiter": "DATA-x"}
    )
    assert (
        filled
        == 'Data: a passage says {delimiter} and {data}\nReply {"grounded": true} with id DATA-x.'
    )


def test_a_new_delimiter_is_data_and_sixteen_hex_digits():
    delimiter = new_delimiter(["some input"])
    assert delimiter.startswith("DATA-") and len(delimiter) == 21
    int(delimiter[5:], 16)
