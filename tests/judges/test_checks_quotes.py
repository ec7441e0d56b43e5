"""judges.checks.quotes: a quotation in the answer must stand in some passage."""

from __future__ import annotations

from judges.checks import find_in_passages, quotations
from tests.judges.checking import checked, sentence_claims

# --- 1. quotations -------------------------------------------------------------------------------


def test_a_verbatim_quotation_passes(fare_request):
    request = fare_request('The policy says "Children under 5 ride free with a paying adult."')
    result = checked(request, *sentence_claims(request))
    assert result.fabrications == [] and result.claims[0].label == "SUPPORTED"


def test_quotations_are_matched_after_normalization(fare_request):
    answer = (
        "It reads: “a 30–day  PASS costs $86.00 and is valid” and 'Reduced Fare passes for seniors"
        " cost $43.'"
    )
    request = fare_request(answer)
    assert len(quotations(answer)) == 2
    assert checked(request, *sentence_claims(request)).fabrications == []


def test_an_ellipsis_in_a_quotation_stands_for_a_gap(fare_request):
    request = fare_request('The tariff says "The regular adult fare is ... per ride."')
    assert checked(request, *sentence_claims(request)).fabrications == []


def test_a_fabricated_quotation_is_a_quote_fabrication_and_its_claim_unsupported(fare_request):
    answer = 'Seniors pay less. The policy says "seniors always ride free on weekends" for sure.'
    request = fare_request(answer)
    result = checked(
        request,
        ("Seniors pay less.", "SUPPORTED"),
        ('The policy says "seniors always ride free on weekends" for sure.', "SUPPORTED"),
    )
    [fabrication] = result.fabrications
    assert fabrication.kind == "quote"
    assert fabrication.text == '"seniors always ride free on weekends"'
    assert fabrication.answer_span == (34, 72)
    assert fabrication.reason == '"seniors always ride free on weekends" appears in no passage'
    assert answer[34:72] == fabrication.text
    assert [c.label for c in result.claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert (
        'Quote check: "seniors always ride free on weekends" appears in no passage.'
        in result.claims[1].explanation
    )
    assert result.claims[1].explanation.startswith("Model says so.")  # appended, not replaced


def test_numbers_inside_a_fabricated_quotation_are_reported_once_as_the_quote(fare_request):
    request = fare_request('The policy says "weekend passes cost $75.00 for everyone".')
    result = checked(request, *sentence_claims(request))
    assert [f.kind for f in result.fabrications] == ["quote"]


def test_short_scare_quotes_and_apostrophes_are_not_quotations():
    assert (
        quotations(
            'Seniors ride "free". The riders\' cards don\'t expire and the seniors\' passes are'
            ' \'valid\'.'
        )
        == []
    )


def test_a_title_in_quotation_marks_is_a_name_not_a_quotation():
    assert (
        quotations(
            'The program is called "Ride to Learn for All Students" and the film "Beauty and the'
            ' Beast."'
        )
        == []
    )
    assert len(quotations('The policy says "Ride Free on weekends and holidays"')) == 1


def test_tokenized_passage_text_still_matches_a_quotation(fare_request):
    request = fare_request('It says "Veeram (Valour), 2014 film" here.',
                           passages=[{"text": "Veeram ( Valour ) , 2014 film by Siva ."}])
    assert checked(request, *sentence_claims(request)).fabrications == []


def test_a_single_quoted_quotation_is_checked(fare_request):
    answer = "The tariff states 'children under 12 always ride free' in every zone."
    request = fare_request(answer)
    [fabrication] = checked(request, *sentence_claims(request)).fabrications
    assert fabrication.text == "'children under 12 always ride free'"
    assert answer[slice(*fabrication.answer_span)] == fabrication.text


def test_find_in_passages_normalizes_case_space_quotes_dashes_and_unicode_forms(fare_request):
    passages = fare_request("x").passages
    assert find_in_passages("A 30–DAY\u00a0pass  costs $86.00", passages) == "P2"
    assert find_in_passages("ﬁfty seniors", passages) is None  # NFKC turns the ligature into "fi"
    assert find_in_passages("riders aged 65", passages) == "P1"
    assert find_in_passages("iders aged 65", passages) is None  # whole words only


def test_a_policy_fact_saying_what_something_does_not_include_is_quote_checked(fare_request):
    # "do not include" speaks of the passes here, not of the sources' silence (judges.silence).
    request = fare_request("Reduced Fare passes do not include free museum entry on weekends.")
    [claim] = checked(request, *sentence_claims(request)).claims
    assert claim.label == "PARTIALLY_SUPPORTED"
    assert "Quote check:" in claim.explanation


def test_a_statement_that_the_policy_is_silent_is_not_quote_checked(fare_request):
    request = fare_request("The policy does not specify whether bicycles are allowed on trains.")
    [claim] = checked(request, *sentence_claims(request)).claims
    assert claim.label == "SUPPORTED"
