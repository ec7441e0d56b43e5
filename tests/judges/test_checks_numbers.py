"""judges.checks.numbers: every quantity the answer states must be in some passage's text."""

from __future__ import annotations

from tests.judges.checking import checked, sentence_claims

# --- 2. numbers ----------------------------------------------------------------------------------


def test_an_invented_price_is_a_statistic_and_its_claim_unsupported(fare_request):
    answer = "The regular adult fare is $2.75 per ride. Weekend passes cost $75.00."
    request = fare_request(answer)
    result = checked(request, *sentence_claims(request))
    [fabrication] = result.fabrications
    assert (fabrication.kind, fabrication.text, fabrication.answer_span) == (
        "statistic",
        "$75.00",
        (62, 68),
    )
    assert fabrication.reason == "'$75.00' appears in no passage"
    assert [c.label for c in result.claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert "Number check: '$75.00' appears in no passage." in result.claims[1].explanation
    assert result.grounding_score == 0.5 and result.verdict == "MOSTLY_GROUNDED"


def test_format_equivalences_are_not_flagged(fare_request):
    passage = (
        "The 30-day pass costs 86.00 dollars. Refunds are accepted within fourteen days. Last year"
        " 1500 riders used it. Seniors get a 50 percent discount. Fares change on 2027-01-05."
    )
    answer = (
        "The 30-day pass costs $86. Refunds are accepted within 14 days. Last year 1,500 riders"
        " used it. Seniors get a 50% discount. Fares change on January 5, 2027."
    )
    request = fare_request(answer, passages=[{"id": "P1", "text": passage}])
    result = checked(request, *sentence_claims(request))
    assert result.fabrications == []
    assert {c.label for c in result.claims} == {"SUPPORTED"}


def test_number_words_in_the_answer_are_checked_too(fare_request):
    request = fare_request(
        "Refunds take fifteen days.", passages=[{"text": "Refunds take 14 days."}]
    )
    [fabrication] = checked(request, *sentence_claims(request)).fabrications
    assert fabrication.text == "fifteen"


def test_an_invented_date_is_a_date_fabrication_over_the_whole_date(fare_request):
    answer = "Fares change on January 6, 2027."
    request = fare_request(answer, passages=[{"text": "Fares change on 2027-01-05."}])
    result = checked(request, *sentence_claims(request))
    [fabrication] = result.fabrications
    assert (fabrication.kind, fabrication.text) == ("date", "January 6, 2027")
    assert answer[slice(*fabrication.answer_span)] == "January 6, 2027"
    assert "Date check: 'January 6, 2027' appears in no passage." in result.claims[0].explanation


def test_header_fields_never_support_a_price(fare_request):
    request = fare_request(
        "The Gold Card costs $5.00.",
        passages=[
            {
                "id": "P1",
                "text": "Fares are listed in the tariff.",
                "title": "Gold Card costs $5.00",
                "section": "5.00",
                "agency": "Metro 5.00",
            }
        ],
    )
    result = checked(request, ("The Gold Card costs $5.00.", "SUPPORTED"))
    assert [f.text for f in result.fabrications] == ["$5.00"]
    assert result.claims[0].label == "UNSUPPORTED"


def test_citation_markers_and_list_numbers_are_not_numbers(fare_request):
    request = fare_request("Fares:\n1. Adults pay $2.75 per ride [P1]\n2. Seniors pay $1.35 [1]")
    result = checked(request, *sentence_claims(request))
    assert result.fabrications == []


def test_a_contradicted_claim_stays_contradicted(fare_request):
    request = fare_request("Seniors pay $1.50 per ride.")
    result = checked(request, ("Seniors pay $1.50 per ride.", "CONTRADICTED"))
    assert result.claims[0].label == "CONTRADICTED"
    assert [f.text for f in result.fabrications] == ["$1.50"]


def test_a_partially_supported_claim_is_lowered_to_unsupported(fare_request):
    request = fare_request("Seniors pay $1.50 per ride.")
    assert (
        checked(request, ("Seniors pay $1.50 per ride.", "PARTIALLY_SUPPORTED")).claims[0].label
        == "UNSUPPORTED"
    )
