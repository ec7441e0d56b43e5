"""judges.checks: the deterministic answer checks that run after every backend."""

from __future__ import annotations

import json

import pytest

import judges
from judges.checks import (
    CITATION_MIN_RECALL,
    apply_checks,
    find_in_passages,
    provenance_verdict,
    quotations,
    resolve_citation,
)
from judges.engine import JudgeOutput
from judges.offline import judge_offline
from judges.scoring import grounding_score, verdict_for
from judges.types import Claim, Fabrication, JudgeInfo, JudgeRequest, JudgeResult

RANK = {"SUPPORTED": 0, "PARTIALLY_SUPPORTED": 1, "UNSUPPORTED": 2, "CONTRADICTED": 2}
VERDICT_RANK = {"GROUNDED": 0, "MOSTLY_GROUNDED": 1, "UNGROUNDED": 2}


def backend_result(answer: str, *claims: tuple[str, str], locate: bool = True, verdict: str | None = None) -> JudgeResult:
    """What a model backend might return: one claim per (text, label), placed in the answer."""
    built = []
    for number, (text, label) in enumerate(claims, start=1):
        start = answer.find(text)
        span = (start, start + len(text)) if locate and start >= 0 else None
        built.append(Claim(id=f"c{number}", text=text, answer_span=span, label=label, explanation="Model says so."))
    return JudgeResult(
        verdict=verdict or verdict_for(built), grounding_score=grounding_score(built), claims=built,
        judge=JudgeInfo(profile="claim_audit", prompt_version="v1", backend="openai", model="m"),
    )


def checked(request: JudgeRequest, *claims: tuple[str, str], **options) -> JudgeResult:
    return apply_checks(request, backend_result(request.answer, *claims, **options))


def sentence_claims(request: JudgeRequest, label: str = "SUPPORTED") -> list[tuple[str, str]]:
    from judges.text import split_sentences

    return [(request.answer[s:e], label) for s, e in split_sentences(request.answer)]


def assert_spans_exact(request: JudgeRequest, result: JudgeResult) -> None:
    for fabrication in result.fabrications:
        assert request.answer[slice(*fabrication.answer_span)] == fabrication.text
    for claim in result.claims:
        if claim.answer_span is not None:
            assert request.answer[slice(*claim.answer_span)] == claim.text


# --- nothing to find -----------------------------------------------------------------------------


def test_a_grounded_answer_is_left_exactly_as_the_backend_returned_it(fare_request):
    request = fare_request("The regular adult fare is $2.75 per ride. A 30-day pass costs 86 dollars [P2].")
    before = backend_result(request.answer, *sentence_claims(request))
    assert apply_checks(request, before) == before


# --- 1. quotations -------------------------------------------------------------------------------


def test_a_verbatim_quotation_passes(fare_request):
    request = fare_request('The policy says "Children under 5 ride free with a paying adult."')
    result = checked(request, *sentence_claims(request))
    assert result.fabrications == [] and result.claims[0].label == "SUPPORTED"


def test_quotations_are_matched_after_normalization(fare_request):
    answer = "It reads: “a 30–day  PASS costs $86.00 and is valid” and 'Reduced Fare passes for seniors cost $43.'"
    request = fare_request(answer)
    assert len(quotations(answer)) == 2
    assert checked(request, *sentence_claims(request)).fabrications == []


def test_an_ellipsis_in_a_quotation_stands_for_a_gap(fare_request):
    request = fare_request('The tariff says "The regular adult fare is ... per ride."')
    assert checked(request, *sentence_claims(request)).fabrications == []


def test_a_fabricated_quotation_is_a_quote_fabrication_and_its_claim_unsupported(fare_request):
    answer = 'Seniors pay less. The policy says "seniors always ride free on weekends" for sure.'
    request = fare_request(answer)
    result = checked(request, ("Seniors pay less.", "SUPPORTED"),
                     ('The policy says "seniors always ride free on weekends" for sure.', "SUPPORTED"))
    [fabrication] = result.fabrications
    assert fabrication.kind == "quote"
    assert fabrication.text == '"seniors always ride free on weekends"'
    assert fabrication.answer_span == (34, 72)
    assert fabrication.reason == '"seniors always ride free on weekends" appears in no passage'
    assert answer[34:72] == fabrication.text
    assert [c.label for c in result.claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert 'Quote check: "seniors always ride free on weekends" appears in no passage.' in result.claims[1].explanation
    assert result.claims[1].explanation.startswith("Model says so.")  # appended, not replaced


def test_numbers_inside_a_fabricated_quotation_are_reported_once_as_the_quote(fare_request):
    request = fare_request('The policy says "weekend passes cost $75.00 for everyone".')
    result = checked(request, *sentence_claims(request))
    assert [f.kind for f in result.fabrications] == ["quote"]


def test_short_scare_quotes_and_apostrophes_are_not_quotations():
    assert quotations('Seniors ride "free". The riders\' cards don\'t expire and the seniors\' passes are \'valid\'.') == []


def test_a_title_in_quotation_marks_is_a_name_not_a_quotation():
    assert quotations('The program is called "Ride to Learn for All Students" and the film "Beauty and the Beast."') == []
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


# --- 2. numbers ----------------------------------------------------------------------------------


def test_an_invented_price_is_a_statistic_and_its_claim_unsupported(fare_request):
    answer = "The regular adult fare is $2.75 per ride. Weekend passes cost $75.00."
    request = fare_request(answer)
    result = checked(request, *sentence_claims(request))
    [fabrication] = result.fabrications
    assert (fabrication.kind, fabrication.text, fabrication.answer_span) == ("statistic", "$75.00", (62, 68))
    assert fabrication.reason == "'$75.00' appears in no passage"
    assert [c.label for c in result.claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert "Number check: '$75.00' appears in no passage." in result.claims[1].explanation
    assert result.grounding_score == 0.5 and result.verdict == "MOSTLY_GROUNDED"


def test_format_equivalences_are_not_flagged(fare_request):
    passage = ("The 30-day pass costs 86.00 dollars. Refunds are accepted within fourteen days. "
               "Last year 1500 riders used it. Seniors get a 50 percent discount. Fares change on 2027-01-05.")
    answer = ("The 30-day pass costs $86. Refunds are accepted within 14 days. Last year 1,500 riders used it. "
              "Seniors get a 50% discount. Fares change on January 5, 2027.")
    request = fare_request(answer, passages=[{"id": "P1", "text": passage}])
    result = checked(request, *sentence_claims(request))
    assert result.fabrications == []
    assert {c.label for c in result.claims} == {"SUPPORTED"}


def test_number_words_in_the_answer_are_checked_too(fare_request):
    request = fare_request("Refunds take fifteen days.", passages=[{"text": "Refunds take 14 days."}])
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
        passages=[{"id": "P1", "text": "Fares are listed in the tariff.", "title": "Gold Card costs $5.00",
                   "section": "5.00", "agency": "Metro 5.00"}],
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
    assert checked(request, ("Seniors pay $1.50 per ride.", "PARTIALLY_SUPPORTED")).claims[0].label == "UNSUPPORTED"


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
    assert checked(fare_request(answer.replace("P1", "P2")), (answer.replace("P1", "P2"), "SUPPORTED")).fabrications == []
    assert CITATION_MIN_RECALL == 0.5


def test_a_supporting_citation_passes_and_several_citations_are_judged_together(fare_request):
    answer = "Adults pay $2.75 per ride and a 30-day pass costs $86.00 [P1, P2]. Seniors pay $1.35 (P1)."
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
    literal = fare_request("x", passages=[{"id": "1", "text": "a"}, {"id": "3", "text": "b"}]).passages
    assert resolve_citation("3", literal) == "3"
    assert resolve_citation("P3", literal) == "3"
    assert resolve_citation("2", literal) is None


def test_a_bare_number_citation_of_a_missing_p_passage_is_named_as_such(fare_request):
    request = fare_request("Children under 5 ride free [3].")
    [fabrication] = checked(request, *sentence_claims(request)).fabrications
    assert fabrication.reason == "cites P3, which does not exist"


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
    assert result.claims[0].label == "UNSUPPORTED"
    assert "Provenance check: no passage was fetched on 2026-07-01" in result.claims[0].explanation
    assert provenance_verdict(answer, request) == "disagrees"


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
    request = fare_request(answer, passages=[{"text": "Fares changed on 2026-07-01.", "fetched_at": "2026-08-12"}])
    [fabrication] = checked(request, (answer, "SUPPORTED")).fabrications
    assert fabrication.reason == "no passage was fetched on 2026-07-01 (fetched: 2026-08-12)"


def test_an_as_of_date_the_passage_text_states_is_a_policy_date_not_a_fetch_date(fare_request):
    answer = "As of July 1, 2026, adults pay $2.75."
    request = fare_request(answer, passages=[{"text": "From July 1, 2026, adults pay $2.75.", "fetched_at": "2026-08-12"}])
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
    assert fabrication.reason == "no passage was fetched on 2026-08-16 (fetched: no passage gives a fetch date)"


def test_an_invented_agency_document_section_or_url_is_an_entity_fabrication(fare_request):
    cases = {
        "According to the Federal Transit Administration, seniors pay $1.35 per ride.": "Federal Transit Administration",
        "The Metro Senior Handbook states that seniors pay $1.35 per ride.": "Metro Senior Handbook",
        "Seniors pay $1.35 per ride (Fare Policy, section 9.1).": "section 9.1",
        "Seniors pay $1.35 per ride. Source: https://metro.example/seniors": "https://metro.example/seniors",
    }
    for answer, named in cases.items():
        request = fare_request(answer)
        result = checked(request, *sentence_claims(request))
        assert [(f.kind, f.text) for f in result.fabrications] == [("entity", named)], answer
        assert "UNSUPPORTED" in [c.label for c in result.claims], answer
        assert_spans_exact(request, result)
        assert provenance_verdict(answer, request) == "disagrees" or "Source:" in answer


def test_a_named_source_that_agrees_with_a_header_is_not_flagged(fare_request):
    answer = "The Metro fare policy states that seniors pay $1.35 per ride (Fare Policy, section 4.2)."
    request = fare_request(answer)
    assert checked(request, (answer, "SUPPORTED")).fabrications == []
    # It agrees, but it also states a fare, so it is not *only* a provenance statement.
    assert provenance_verdict(answer, request) is None


def test_provenance_verdict_is_none_for_a_sentence_with_no_provenance(fare_request):
    assert provenance_verdict("Seniors pay $1.35 per ride.", fare_request("x")) is None


# --- how findings land ---------------------------------------------------------------------------


def test_claims_without_spans_are_matched_by_text(fare_request):
    answer = "The regular adult fare is $2.75 per ride. Weekend passes cost $75.00."
    request = fare_request(answer)
    result = checked(request, ("The regular adult fare is $2.75 per ride.", "SUPPORTED"),
                     ("weekend passes cost $75.00", "SUPPORTED"), locate=False)
    assert [c.label for c in result.claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert [c.answer_span for c in result.claims] == [None, None]


def test_a_finding_no_placeable_claim_covers_adds_only_the_fabrication(fare_request):
    answer = "The regular adult fare is $2.75 per ride. Weekend passes cost $75.00."
    request = fare_request(answer)
    result = checked(request, ("Adults pay the regular fare", "SUPPORTED"), locate=False)
    assert len(result.claims) == 1 and result.claims[0].label == "SUPPORTED"
    assert [f.text for f in result.fabrications] == ["$75.00"]
    assert result.verdict == "MOSTLY_GROUNDED"  # a result with a fabrication is never GROUNDED


def test_a_finding_in_text_no_claim_covers_adds_a_claim_for_it(fare_request):
    answer = "The regular adult fare is $2.75 per ride. Weekend passes cost $75.00."
    request = fare_request(answer)
    result = checked(request, ("The regular adult fare is $2.75 per ride.", "SUPPORTED"))
    assert [c.id for c in result.claims] == ["c1", "c2"]
    added = result.claims[1]
    assert (added.text, added.label, added.category) == ("Weekend passes cost $75.00.", "UNSUPPORTED", "price")
    assert answer[slice(*added.answer_span)] == added.text
    assert "Number check: '$75.00'" in added.explanation
    assert result.grounding_score == 0.5 and result.verdict == "MOSTLY_GROUNDED"
    assert "c2" in result.rewrite_note


def test_an_added_claim_does_not_overlap_the_claims_beside_it(fare_request):
    answer = "Adults pay $2.75, weekend passes cost $75.00, and children under 5 ride free."
    request = fare_request(answer)
    result = checked(request, ("Adults pay $2.75", "SUPPORTED"), ("children under 5 ride free", "SUPPORTED"))
    added = result.claims[-1]
    assert added.text == "weekend passes cost $75.00"
    assert answer[slice(*added.answer_span)] == added.text


def test_a_backend_fabrication_is_not_reported_twice(fare_request):
    answer = "Weekend passes cost $75.00."
    request = fare_request(answer)
    before = backend_result(answer, (answer, "UNSUPPORTED"))
    before.fabrications.append(Fabrication(kind="statistic", text="$75.00", answer_span=(20, 26), reason="model"))
    after = apply_checks(request, before)
    assert after.fabrications == before.fabrications


def test_the_verdict_is_never_more_grounded_than_the_backend_said(fare_request):
    answer = "The regular adult fare is $2.75 per ride. Weekend passes cost $75.00."
    request = fare_request(answer)
    after = checked(request, *sentence_claims(request), verdict="UNGROUNDED")
    assert after.verdict == "UNGROUNDED"


def test_checks_are_idempotent(fare_request):
    request = fare_request('Weekend passes cost $75.00 [P3]. The policy says "seniors ride free always and forever".')
    once = apply_checks(request, judge_offline(request))
    assert apply_checks(request, once) == once


# --- never removing, never raising -----------------------------------------------------------------

VARIED_ANSWERS = [
    "The regular adult fare is $2.75 per ride. Riders aged 65 and older pay $1.35 with a Senior ID card.",
    "A weekend pass costs $3.00 [P2]. Children under 5 ride free [P4].",
    'The tariff says "every rider may bring a bicycle for free". Seniors pay 1.35 dollars.',
    "As of our data fetched on 2026-07-01, a 30-day pass costs $86.00. This is from the Fare Policy, section 4.2.",
    "Seniors pay $1.50 per ride [1]. Reduced Fare passes for seniors cost $43 (P2). Contact Metro for details.",
    "According to the Federal Transit Administration, passes are sold at station vending machines since March 2019.",
    "Here is what the policy says:\n1. Adults pay $2.75 per ride\n2. A 30-day pass costs fifty dollars",
]


@pytest.mark.parametrize("answer", VARIED_ANSWERS)
def test_checks_never_raise_a_label_and_never_remove_a_claim_or_fabrication(fare_request, answer):
    request = fare_request(answer)
    for before in (judge_offline(request), backend_result(answer, *sentence_claims(request))):
        after = apply_checks(request, before)
        assert len(after.claims) >= len(before.claims)
        for old, new in zip(before.claims, after.claims):
            assert (new.id, new.text, new.answer_span) == (old.id, old.text, old.answer_span)
            assert RANK[new.label] >= RANK[old.label]
            assert new.explanation.startswith(old.explanation)
        assert after.fabrications[:len(before.fabrications)] == before.fabrications
        assert VERDICT_RANK[after.verdict] >= VERDICT_RANK[before.verdict]
        assert after.grounding_score <= before.grounding_score
        assert_spans_exact(request, after)
        JudgeResult.model_validate(after.model_dump())  # still a valid result


# --- through the engine ---------------------------------------------------------------------------


def _demo_requests() -> dict[str, JudgeRequest]:
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "reviewapp" / "demo_data" / "answers.json"
    records = json.loads(path.read_text())
    return {
        record["external_id"]: JudgeRequest.model_validate(
            {key: value for key, value in record.items() if key in JudgeRequest.model_fields})
        for record in records
    }


@pytest.fixture(scope="module")
def demo():
    requests = _demo_requests()
    config = judges.JudgeConfig(backend="offline")
    return {key: (request, judges.judge(request, config).result) for key, request in requests.items()}


def _claim_over(result: JudgeResult, span) -> Claim:
    return next(c for c in result.claims if c.answer_span[0] <= span[0] and span[1] <= c.answer_span[1])


def test_demo_008_invented_fetch_date_is_caught(demo):
    request, result = demo["demo-008"]
    [fabrication] = [f for f in result.fabrications if f.text == "2026-07-01"]
    assert fabrication.kind == "date"
    assert fabrication.reason == "no passage was fetched on 2026-07-01 (fetched: 2026-08-12)"
    assert request.answer[slice(*fabrication.answer_span)] == "2026-07-01"
    assert _claim_over(result, fabrication.answer_span).label == "UNSUPPORTED"


def test_demo_010_fabricated_quotation_is_caught(demo):
    request, result = demo["demo-010"]
    [fabrication] = [f for f in result.fabrications if f.kind == "quote"]
    assert fabrication.text == '"stored value on a LakePass card never expires and is always fully refundable."'
    assert request.answer[slice(*fabrication.answer_span)] == fabrication.text
    assert _claim_over(result, fabrication.answer_span).label == "UNSUPPORTED"


def test_demo_011_citation_of_a_missing_passage_is_caught(demo):
    request, result = demo["demo-011"]
    [fabrication] = [f for f in result.fabrications if f.kind == "citation"]
    assert (fabrication.text, fabrication.reason) == ("[P3]", "cites P3, which does not exist")
    assert request.answer[slice(*fabrication.answer_span)] == "[P3]"
    claim = _claim_over(result, fabrication.answer_span)
    assert claim.label == "UNSUPPORTED"
    assert "weekend and summer" in claim.text
    # The [P1] and [P2] sentences are supported by what they cite.
    assert [c.label for c in result.claims[:2]] == ["SUPPORTED", "SUPPORTED"]


def test_the_checks_add_nothing_to_the_grounded_demos(demo):
    for key in ("demo-001", "demo-003", "demo-006", "demo-009"):
        request, _ = demo[key]
        before = judge_offline(request)
        assert apply_checks(request, before) == before, key


def test_the_demo_001_provenance_statement_agrees_with_the_headers(demo):
    request, _ = demo["demo-001"]
    assert provenance_verdict(
        "This is from the LRT Fare Policy and Tariff, sections 2.1 and 2.4 (fetched 2026-08-16).", request
    ) == "agrees"


def test_the_engine_runs_the_checks_after_the_openai_backend_too(fare_request, monkeypatch):
    from judges.backends import openai_chat

    answer = "The regular adult fare is $2.75 per ride. Weekend passes cost $75.00."
    request = fare_request(answer)
    model_result = backend_result(answer, *sentence_claims(request))
    monkeypatch.setattr(openai_chat, "judge_openai",
                        lambda request, config, profile: JudgeOutput(model_result, raw_output='{"raw": 1}'))
    output = judges.judge(request, judges.JudgeConfig(backend="openai", base_url="http://fake", model="m"))
    assert output.raw_output == '{"raw": 1}'  # the backend's own output, for the audit trail
    assert [c.label for c in output.result.claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert [f.text for f in output.result.fabrications] == ["$75.00"]


def test_checking_twice_adds_nothing_when_a_finding_belongs_to_a_claim_another_finding_adds():
    # Found by hypothesis: the citation finding of the first sentence missed the provenance claim
    # that a later finding added for "Source: ...", and a second pass attached it.
    from judges.checks import apply_checks

    sentence = "Children under 5 ride free [P3]."
    request = JudgeRequest.model_validate({
        "passages": [{"id": "P1", "text": "Riders aged 65 and older pay $1.35.", "source_url": "https://metro.example/"}],
        "answer": f"Source: https://x.example/a {sentence} {sentence}",
    })
    before = JudgeResult(
        verdict="GROUNDED", grounding_score=1.0,
        claims=[Claim(id="c2", text=sentence, label="SUPPORTED", category="other", explanation="model")],
        judge=JudgeInfo(profile="claim_audit", prompt_version="v1", backend="openai", model="m"),
    )
    once = apply_checks(request, before)
    assert apply_checks(request, once) == once
    source_claim = next(c for c in once.claims if c.text.startswith("Source:"))
    assert "cites P3, which does not exist" in source_claim.explanation
