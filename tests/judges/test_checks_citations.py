"""judges.checks.citations: cited passages exist and support the sentence citing them."""

from __future__ import annotations

from judges.checks import CITATION_MIN_RECALL, resolve_citation
from judges.checks.answer import Answer
from judges.checks.citations import check_citations
from judges.types import JudgeRequest
from tests.judges.checking import checked, sentence_claims

# --- 3. citations --------------------------------------------------------------------------------


def test_a_citation_of_a_passage_that_does_not_exist_is_a_fabrication(fare_request):
    answer = "Adults pay $2.75 per ride [P1]. Children under 5 ride free [P3]."
    request = fare_request(answer)
    result = checked(request, *sentence_claims(request))
    [fabrication] = result.fabrications
    assert (fabrication.kind, fabrication.text, fabrication.reason) == (
        "citation", "[P3]", "cites P3, which does not exist")
    assert answer[slice(*fabrication.answer_span)] == "[P3]"
    assert [c.label for c in result.claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert "Citation check: [P3] cites P3, which does not exist." in result.claims[1].explanation


def test_a_citation_that_does_not_support_its_sentence_is_a_fabrication(fare_request):
    answer = "Riders aged 65 and older pay a reduced fare of $1.35 per ride [P2]."
    request = fare_request(answer)
    result = checked(request, (answer, "SUPPORTED"))
    [fabrication] = result.fabrications
    assert fabrication.kind == "citation" and fabrication.text == "[P2]"
    assert fabrication.reason.startswith("P2 does not support this sentence")
    assert "'$1.35'" in fabrication.reason
    assert answer[slice(*fabrication.answer_span)] == "[P2]"
    assert result.claims[0].label == "PARTIALLY_SUPPORTED"  # lowered to at most partial


def test_a_citation_must_share_most_of_the_sentence_words(fare_request):
    answer = "Passes are sold at station vending machines [P1]."
    request = fare_request(answer)
    [fabrication] = checked(request, (answer, "SUPPORTED")).fabrications
    assert "P1 does not support this sentence" in fabrication.reason
    assert (
        checked(
            fare_request(answer.replace("P1", "P2")), (answer.replace("P1", "P2"), "SUPPORTED")
        ).fabrications
        == []
    )
    assert CITATION_MIN_RECALL == 0.5


def test_a_supporting_citation_passes_and_several_citations_are_judged_together(fare_request):
    answer = (
        "Adults pay $2.75 per ride and a 30-day pass costs $86.00 [P1, P2]. Seniors pay $1.35 (P1)."
    )
    request = fare_request(answer)
    result = checked(request, *sentence_claims(request))
    assert result.fabrications == []
    alone = fare_request(answer.replace("[P1, P2]", "[P1]"))
    [fabrication] = checked(alone, *sentence_claims(alone)).fabrications
    assert "'$86.00'" in fabrication.reason


def test_a_marker_after_the_full_stop_cites_the_sentence_before_it(fare_request):
    request = fare_request("Seniors pay $1.35 per ride. [P2] Children under 5 ride free.")
    [fabrication] = checked(request, *sentence_claims(request)).fabrications
    assert fabrication.text == "[P2]" and "'$1.35'" in fabrication.reason


def test_a_labelled_unsupported_claim_is_not_raised_by_a_citation_finding(fare_request):
    answer = "Riders aged 65 and older pay $1.35 per ride [P2]."
    result = checked(fare_request(answer), (answer, "UNSUPPORTED"))
    assert result.claims[0].label == "UNSUPPORTED"


def test_a_marker_opening_a_line_cites_that_line(fare_request):
    request = fare_request("Seniors pay $1.35 per ride.\n[P2] A 30-day pass costs $86.00.")
    assert checked(request, *sentence_claims(request)).fabrications == []


def test_a_sentence_about_silence_or_listing_sources_is_not_checked_for_support(fare_request):
    for answer in ("The passages do not specify whether bicycles are allowed on trains [P1].",
                   "Seniors pay $1.35 per ride. Reference: [P1]"):
        request = fare_request(answer)
        assert checked(request, *sentence_claims(request)).fabrications == [], answer


def test_bare_numbers_resolve_to_p_numbered_passages_and_to_literal_ids(fare_request):
    p_numbered = fare_request("x").passages
    assert resolve_citation("2", p_numbered) == "P2"
    assert resolve_citation("p1", p_numbered) == "P1"
    assert resolve_citation("3", p_numbered) is None
    literal = fare_request(
        "x", passages=[{"id": "1", "text": "a"}, {"id": "3", "text": "b"}]
    ).passages
    assert resolve_citation("3", literal) == "3"
    assert resolve_citation("P3", literal) == "3"
    assert resolve_citation("2", literal) is None


def test_a_bare_number_citation_of_a_missing_p_passage_is_named_as_such(fare_request):
    request = fare_request("Children under 5 ride free [3].")
    [fabrication] = checked(request, *sentence_claims(request)).fabrications
    assert fabrication.reason == "cites P3, which does not exist"


def test_a_marker_copied_with_its_sentence_from_a_passage_is_no_citation():
    # Web text keeps its own footnote markers: a verbatim copy carries them (issue 27).
    passage = (
        "The circuit opened in 1991 and has hosted the Spanish Grand Prix every year since.[20,21]"
        " It is 4.6 km long."
    )
    answer = (
        "The circuit opened in 1991 and has hosted the Spanish Grand Prix every year since.[20,21]"
    )
    request = JudgeRequest(passages=[{"id": "P1", "text": passage}], answer=answer)
    assert check_citations(Answer(request)) == []
    invented = JudgeRequest(
        passages=[{"id": "P1", "text": passage}], answer="The circuit is 4.6 km long [20]."
    )
    assert [f.fabrication.kind for f in check_citations(Answer(invented))] == ["citation"]
