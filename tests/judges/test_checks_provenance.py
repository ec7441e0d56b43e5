"""judges.checks.provenance: what the answer says about its sources agrees with the headers."""

from __future__ import annotations

from judges.checks import provenance_verdict
from tests.judges.checking import assert_spans_exact, checked, sentence_claims

# --- 4. provenance -------------------------------------------------------------------------------


def test_an_invented_fetch_date_is_a_date_fabrication(fare_request):
    answer = "As of our data fetched on 2026-07-01, seniors pay a reduced fare of $1.35 per ride."
    request = fare_request(answer)
    result = checked(request, (answer, "SUPPORTED"))
    [fabrication] = result.fabrications
    assert fabrication.kind == "date"
    assert fabrication.text == "2026-07-01"
    assert answer[slice(*fabrication.answer_span)] == "2026-07-01"
    assert fabrication.reason == "no passage was fetched on 2026-07-01 (fetched: 2026-08-16)"
    assert "Provenance check: no passage was fetched on 2026-07-01" in result.claims[0].explanation
    assert provenance_verdict(answer, request) == "disagrees"


def test_a_wrong_fetch_date_is_a_claim_of_its_own_and_lowers_no_fact_beside_it(fare_request):
    # The fare is the passage's: the invented date beside it is what is unsupported.
    for answer in ("As of our data fetched on 2026-07-01, seniors pay a reduced fare of $1.35.",
                   "Seniors pay a reduced fare of $1.35 per ride (fetched 2026-07-01)."):
        result = checked(fare_request(answer), (answer, "SUPPORTED"))
        fare, date = result.claims
        assert fare.label == "SUPPORTED"
        assert "Provenance check: no passage was fetched on 2026-07-01" in fare.explanation
        assert date.label == "UNSUPPORTED"
        assert "2026-07-01" in date.text and "$1.35" not in date.text
        assert result.verdict != "GROUNDED"


def test_a_sentence_that_is_only_a_wrong_provenance_statement_is_lowered(fare_request):
    answer = "This is from the Fare Policy, fetched 2026-07-01."
    [claim] = checked(fare_request(answer), (answer, "SUPPORTED")).claims
    assert claim.label == "UNSUPPORTED"


def test_a_fetch_date_that_agrees_with_the_headers_is_not_flagged(fare_request):
    for answer in (
        "This is from Metro's Fare Policy, section 4.2 (fetched 2026-08-16).",
        "Source: https://metro.example/fares, retrieved August 16, 2026.",
        "According to Metro, this information is current as of August 2026.",
    ):
        request = fare_request(answer)
        assert checked(request, (answer, "SUPPORTED")).fabrications == [], answer
        assert provenance_verdict(answer, request) == "agrees", answer


def test_a_fetch_date_is_checked_against_fetched_at_never_the_passage_text(fare_request):
    answer = "Our data was fetched on 2026-07-01."
    request = fare_request(
        answer, passages=[{"text": "Fares changed on 2026-07-01.", "fetched_at": "2026-08-12"}]
    )
    [fabrication] = checked(request, (answer, "SUPPORTED")).fabrications
    assert fabrication.reason == "no passage was fetched on 2026-07-01 (fetched: 2026-08-12)"


def test_an_as_of_date_the_passage_text_states_is_a_policy_date_not_a_fetch_date(fare_request):
    answer = "As of July 1, 2026, adults pay $2.75."
    request = fare_request(
        answer,
        passages=[{"text": "From July 1, 2026, adults pay $2.75.", "fetched_at": "2026-08-12"}],
    )
    assert checked(request, (answer, "SUPPORTED")).fabrications == []


def test_an_as_of_date_without_any_fetch_dates_is_an_ordinary_date(fare_request):
    answer = "As of 2021, adults pay $2.75."
    request = fare_request(answer, passages=[{"text": "Adults pay $2.75."}])
    [fabrication] = checked(request, (answer, "SUPPORTED")).fabrications
    assert (fabrication.kind, fabrication.text) == ("date", "2021")
    assert fabrication.reason == "'2021' appears in no passage"
    assert provenance_verdict(answer, request) is None


def test_a_fetch_date_with_no_fetch_dates_in_the_headers_is_still_a_fabrication(fare_request):
    answer = "This data was fetched on 2026-08-16."
    request = fare_request(answer, passages=[{"text": "Adults pay $2.75."}])
    [fabrication] = checked(request, (answer, "SUPPORTED")).fabrications
    assert (
        fabrication.reason
        == "no passage was fetched on 2026-08-16 (fetched: no passage gives a fetch date)"
    )


def test_an_invented_agency_document_section_or_url_is_an_entity_fabrication(fare_request):
    cases = {
        "According to the Federal Transit Administration, seniors pay $1.35 per ride.": (
            "Federal Transit Administration"
        ),
        "The Metro Senior Handbook states that seniors pay $1.35 per ride.": (
            "Metro Senior Handbook"
        ),
        "Seniors pay $1.35 per ride (Fare Policy, section 9.1).": "section 9.1",
        "Seniors pay $1.35 per ride. Source: https://metro.example/seniors": (
            "https://metro.example/seniors"
        ),
    }
    for answer, named in cases.items():
        request = fare_request(answer)
        result = checked(request, *sentence_claims(request))
        assert [(f.kind, f.text) for f in result.fabrications] == [("entity", named)], answer
        assert "UNSUPPORTED" in [c.label for c in result.claims], answer
        assert_spans_exact(request, result)
        assert provenance_verdict(answer, request) == "disagrees" or "Source:" in answer


def test_a_named_source_that_agrees_with_a_header_is_not_flagged(fare_request):
    answer = (
        "The Metro fare policy states that seniors pay $1.35 per ride (Fare Policy, section 4.2)."
    )
    request = fare_request(answer)
    assert checked(request, (answer, "SUPPORTED")).fabrications == []
    # It agrees, but it also states a fare, so it is not *only* a provenance statement.
    assert provenance_verdict(answer, request) is None


def test_provenance_verdict_is_none_for_a_sentence_with_no_provenance(fare_request):
    assert provenance_verdict("Seniors pay $1.35 per ride.", fare_request("x")) is None
