import judges
from judges.offline import OFFLINE_MODEL, OFFLINE_PROFILE, OFFLINE_VERSION, judge_offline

GROUNDED = (
    "The regular adult fare is $2.75 per ride. "
    "Riders aged 65 and older pay a reduced fare of $1.35 with a Senior ID card. "
    "A 30-day pass costs 86 dollars."
)


def claim_texts(result):
    return [claim.text for claim in result.claims]


def test_a_grounded_answer_is_grounded_with_score_one(fare_request):
    result = judge_offline(fare_request(GROUNDED))
    assert [claim.label for claim in result.claims] == ["SUPPORTED"] * 3
    assert result.verdict == "GROUNDED"
    assert result.grounding_score == 1.0
    assert result.fabrications == []
    assert result.rewrite_note == ""


def test_it_flags_an_invented_price(fare_request):
    answer = "The regular adult fare is $2.75 per ride. A weekend pass costs $3.00."
    result = judge_offline(fare_request(answer))
    invented = result.claims[1]
    assert invented.label == "UNSUPPORTED"
    assert invented.category == "price"
    assert "'$3.00' appears in no passage" in invented.explanation
    [fabrication] = result.fabrications
    assert fabrication.kind == "statistic"
    assert fabrication.text == "$3.00"
    assert answer[slice(*fabrication.answer_span)] == "$3.00"
    assert result.verdict == "MOSTLY_GROUNDED"
    assert result.grounding_score == 0.5
    assert result.rewrite_note == "Remove or source c2."


def test_a_wrong_number_is_unsupported_however_well_the_words_match(fare_request):
    result = judge_offline(fare_request("Riders aged 65 and older pay a reduced fare of $1.50 per ride."))
    [claim] = result.claims
    assert claim.label == "UNSUPPORTED"
    assert claim.confidence is not None and claim.confidence >= 0.8  # the words do match
    assert result.verdict == "UNGROUNDED"


def test_an_invented_year_is_a_date_fabrication(fare_request):
    answer = "Children under 5 ride free with a paying adult since March 2019."
    [fabrication] = judge_offline(fare_request(answer)).fabrications
    assert fabrication.kind == "date"
    assert answer[slice(*fabrication.answer_span)] == "2019"


def test_a_sentence_sharing_only_some_words_is_partially_supported(fare_request):
    [claim] = judge_offline(fare_request("A monthly pass costs $86 for weekend riders.")).claims
    assert claim.label == "PARTIALLY_SUPPORTED"
    assert claim.confidence == 0.5
    assert "'monthly', 'rider', 'weekend'" in claim.explanation


def test_evidence_quotes_the_best_passage_sentence_exactly(fare_request):
    request = fare_request(GROUNDED + " A weekend pass costs $3.00.")
    result = judge_offline(request)
    for claim in result.claims:
        [evidence] = claim.evidence
        passage = request.passage(evidence.passage_id)
        assert passage.text[slice(*evidence.span)] == evidence.quote
        assert evidence.match == "exact"
    assert result.claims[1].evidence[0].quote == (
        "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Senior ID card."
    )
    assert result.claims[2].evidence[0].passage_id == "P2"


def test_a_sentence_sharing_nothing_with_the_passages_has_no_evidence(fare_request):
    [claim] = judge_offline(fare_request("Bicycles travel aboard without restriction.")).claims
    assert claim.label == "UNSUPPORTED"
    assert claim.evidence == []
    assert claim.confidence == 0.0


def test_a_pure_hedge_or_redirect_is_not_a_claim(fare_request):
    answer = "Seniors pay $1.35 per ride. Please contact the agency for details. I hope this helps!"
    result = judge_offline(fare_request(answer))
    assert claim_texts(result) == ["Seniors pay $1.35 per ride."]


def test_a_redirect_to_the_agency_by_name_is_not_a_claim(fare_request):
    result = judge_offline(fare_request("Contact Metro customer service with any questions."))
    assert result.claims == []
    assert result.verdict == "GROUNDED"
    assert result.grounding_score == 1.0


def test_a_lead_in_ending_with_a_colon_is_not_a_claim(fare_request):
    answer = "Here is what the fare policy says:\n- Adults pay $2.75 per ride\n- Children under 5 ride free"
    result = judge_offline(fare_request(answer))
    assert claim_texts(result) == ["- Adults pay $2.75 per ride", "- Children under 5 ride free"]


def test_passage_headers_are_not_evidence_for_policy_facts(fare_request):
    request = fare_request(
        "The Gold Card costs $5.00.",
        passages=[{"id": "P1", "text": "Fares are listed in the tariff.", "title": "Gold Card costs $5.00"}],
    )
    [claim] = judge_offline(request).claims
    assert claim.label == "UNSUPPORTED"


def test_claims_are_numbered_in_order_and_point_at_their_sentences(fare_request):
    request = fare_request(GROUNDED)
    result = judge_offline(request)
    assert [claim.id for claim in result.claims] == ["c1", "c2", "c3"]
    for claim in result.claims:
        assert request.answer[slice(*claim.answer_span)] == claim.text


def test_categories_follow_what_the_claim_is_about(fare_request):
    expected = {
        "A 30-day pass costs $86.00.": "price",
        "Seniors must show a Senior ID card.": "document",
        "Riders aged 65 and older qualify.": "age",
        "The policy took effect in June 2026.": "date",
        "Reduced Fare passes are sold at stations.": "program",
        "Applications are submitted online.": "process",
        "According to the source, fares apply.": "provenance",
        'The tariff says "fares are final".': "quote",
        "Buses run often.": "other",
    }
    result = judge_offline(fare_request("\n".join(expected)))
    assert {claim.text: claim.category for claim in result.claims} == expected


def test_the_rewrite_note_names_claims_to_remove_and_to_narrow(fare_request):
    answer = "A monthly pass costs $86 for weekend riders. A weekend pass costs $3.00."
    note = judge_offline(fare_request(answer)).rewrite_note
    assert note == "Remove or source c2. Narrow c1 to what the passages say."


def test_the_judge_names_itself(fare_request):
    info = judge_offline(fare_request(GROUNDED)).judge
    assert (info.profile, info.prompt_version, info.backend, info.model) == (
        OFFLINE_PROFILE, OFFLINE_VERSION, "offline", OFFLINE_MODEL,
    )
    assert info.attempts == 1
    assert info.latency_ms >= 0


def test_it_is_deterministic(fare_request):
    request = fare_request(GROUNDED + " A weekend pass costs $3.00. Contact Metro.")
    first, second = judge_offline(request).model_dump(), judge_offline(request).model_dump()
    first["judge"].pop("latency_ms"), second["judge"].pop("latency_ms")
    assert first == second


def test_the_engine_runs_it_as_the_offline_backend(fare_request):
    output = judges.judge(fare_request(GROUNDED), judges.JudgeConfig(backend="offline"))
    assert output.result.verdict == "GROUNDED"
    assert judges.JudgeResult.model_validate_json(output.raw_output).claims == output.result.claims
