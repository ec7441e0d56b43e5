import heapq

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import judges
from judges import checks
from judges.backends.offline import judge as offline
from judges.text.clauses import split_clauses
from judges.types import JudgeRequest, Passage
from judges.backends.offline.judge import (OFFLINE_MODEL, OFFLINE_PROFILE, OFFLINE_VERSION,
                                           judge_offline)

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


def test_a_changed_number_in_a_near_identical_sentence_is_contradicted(fare_request):
    result = judge_offline(
        fare_request("Riders aged 65 and older pay a reduced fare of $1.50 per ride.")
    )
    [claim] = result.claims
    assert claim.label == "CONTRADICTED"
    assert "'$1.35' where the claim says '$1.50'" in claim.explanation
    assert claim.confidence is not None and claim.confidence >= 0.6  # the words do match
    [fabrication] = result.fabrications
    assert fabrication.text == "$1.50"
    assert result.verdict == "UNGROUNDED"


def test_a_number_with_no_counterpart_is_unsupported_not_contradicted(fare_request):
    [claim] = judge_offline(fare_request("Bicycles ride free on 3 lines.")).claims
    assert claim.label == "UNSUPPORTED"


def test_an_invented_year_is_a_date_fabrication(fare_request):
    answer = "Children under 5 ride free with a paying adult since March 2019."
    [fabrication] = judge_offline(fare_request(answer)).fabrications
    assert fabrication.kind == "date"
    assert answer[slice(*fabrication.answer_span)] == "March 2019"


def test_a_negation_the_source_does_not_have_is_contradicted(fare_request):
    [claim] = judge_offline(
        fare_request("Children under 5 do not ride free with a paying adult.")
    ).claims
    assert claim.label == "CONTRADICTED"
    assert claim.explanation == "The claim says 'not ride' where P1 says 'ride'."


def test_an_answering_no_is_not_a_negation(fare_request):
    [claim] = judge_offline(
        fare_request("No, children under 5 ride free with a paying adult.")
    ).claims
    assert claim.label == "SUPPORTED"


def test_an_antonym_in_the_same_sentence_is_contradicted():
    request = JudgeRequest(
        passages=[{"id": "P1", "text": "Ridership decreased by a third after the fare change."}],
        answer="Ridership increased by a third after the fare change.",
    )
    [claim] = judge_offline(request).claims
    assert claim.label == "CONTRADICTED"
    assert "'decreased' where the claim says 'increased'" in claim.explanation


def test_an_entity_swapped_for_one_the_passages_name_is_contradicted(fare_request):
    answer = (
        "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Reduced Fare"
        " card."
    )
    [claim] = judge_offline(fare_request(answer)).claims
    assert claim.label == "CONTRADICTED"
    assert "P1 says 'Senior ID' where the claim says 'Reduced Fare'" in claim.explanation


def test_an_entity_swapped_for_one_no_passage_names_is_unsupported(fare_request):
    answer = "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Gold Card."
    [claim] = judge_offline(fare_request(answer)).claims
    assert claim.label == "UNSUPPORTED"
    assert "'Gold'" in claim.explanation


def test_a_name_no_passage_has_makes_a_claim_unsupported(fare_request):
    [claim] = judge_offline(fare_request("Seniors pay $1.35 per ride on the Orange Line.")).claims
    assert claim.label == "UNSUPPORTED"
    assert "'Orange'" in claim.explanation


def test_words_the_sentence_lacks_lower_the_confidence_not_the_label(fare_request):
    # New wording is not new content: every word but "monthly" is in the passages.
    [claim] = judge_offline(fare_request("A monthly pass costs $86 for weekend riders.")).claims
    assert claim.label == "SUPPORTED"
    assert 0.35 <= claim.confidence < 0.55
    assert "not word for word: 'monthly', 'weekend'" in claim.explanation


def test_new_content_is_unsupported(fare_request):
    [claim] = judge_offline(
        fare_request("A monthly pass costs $86 for weekend riders and their visiting relatives.")
    ).claims
    assert claim.label == "UNSUPPORTED" and claim.explanation.startswith(
        "New content: no passage has"
    )


def test_an_invented_cause_is_partially_supported():
    request = JudgeRequest(
        passages=[
            {"id": "P1", "text": "The council raised the parking fee to $4. Traffic fell by 10%."}
        ],
        answer="Traffic fell by 10% because the council raised the parking fee.",
    )
    [claim] = judge_offline(request).claims
    assert claim.label == "PARTIALLY_SUPPORTED"
    assert "cause or effect" in claim.explanation


def test_an_added_absolute_is_partially_supported(fare_request):
    answer = "All passes are sold at station vending machines and at the customer service center."
    [claim] = judge_offline(fare_request(answer)).claims
    assert claim.label == "PARTIALLY_SUPPORTED"
    assert "'all'" in claim.explanation


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
    answer = (
        "Here is what the fare policy says:\n- Adults pay $2.75 per ride\n- Children under 5 ride"
        " free"
    )
    result = judge_offline(fare_request(answer))
    assert claim_texts(result) == ["Adults pay $2.75 per ride", "Children under 5 ride free"]


def test_passage_headers_are_not_evidence_for_policy_facts(fare_request):
    request = fare_request(
        "The Gold Card costs $5.00.",
        passages=[
            {
                "id": "P1",
                "text": "Fares are listed in the tariff.",
                "title": "Gold Card costs $5.00",
            }
        ],
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
    answer = "Bikes ride free on all buses. A weekend pass costs $3.00."
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


# --- claims at clause level ---------------------------------------------------------------------


def test_long_sentences_split_into_clause_claims_with_exact_spans(fare_request):
    answer = (
        "A 30-day pass costs $86.00 and is valid for unlimited rides on buses and trains, while"
        " Reduced Fare passes for seniors cost $50; passes are sold at the customer service center."
    )
    request = fare_request(answer)
    result = judge_offline(request)
    assert [claim.text for claim in result.claims] == [
        "A 30-day pass costs $86.00 and is valid for unlimited rides on buses and trains",
        "while Reduced Fare passes for seniors cost $50",
        "passes are sold at the customer service center.",
    ]
    for claim in result.claims:
        assert answer[slice(*claim.answer_span)] == claim.text
    assert [claim.label for claim in result.claims] == ["SUPPORTED", "CONTRADICTED", "SUPPORTED"]


def test_a_short_clause_stays_with_its_sentence(fare_request):
    [claim] = judge_offline(fare_request("Seniors pay $1.35, and so do kids.")).claims
    assert claim.text == "Seniors pay $1.35, and so do kids."


def test_split_clauses_handles_relative_clauses_and_parentheticals():
    from judges.backends.offline.judge import split_clauses

    text = (
        "The museum, which opened in 1901 on the river bank (it was later rebuilt after a fire), "
        "is free to visit on Sundays."
    )
    spans = split_clauses(text, (0, len(text)))
    assert [text[slice(*span)] for span in spans] == [
        "The museum, which opened in 1901 on the river bank",
        "(it was later rebuilt after a fire)",
        "is free to visit on Sundays.",
    ]


# --- what is not a claim, and what the sources' silence and headers support -------------------


def test_hedges_and_redirects_are_not_claims_even_between_facts(fare_request):
    answer = "I hope this helps! Seniors pay $1.35 per ride. Please contact Metro customer service."
    assert claim_texts(judge_offline(fare_request(answer))) == ["Seniors pay $1.35 per ride."]


def test_a_statement_that_the_sources_are_silent_is_supported_when_they_are(fare_request):
    answer = "The policy does not specify whether bicycles are allowed on trains."
    [claim] = judge_offline(fare_request(answer)).claims
    assert claim.label == "SUPPORTED"
    assert "silent" in claim.explanation


def test_a_statement_that_the_sources_are_silent_is_unsupported_when_they_are_not(fare_request):
    [claim] = judge_offline(
        fare_request("The policy does not specify what a 30-day pass costs.")
    ).claims
    assert claim.label == "UNSUPPORTED"


def test_a_provenance_sentence_agreeing_with_the_headers_is_supported(fare_request):
    answer = "This is from the Metro Fare Policy, section 4.2 (fetched 2026-08-16)."
    [claim] = judge_offline(fare_request(answer)).claims
    assert (claim.label, claim.category) == ("SUPPORTED", "provenance")
    assert "Fare Policy" in claim.explanation and "2026-08-16" in claim.explanation


def test_evidence_for_every_claim_is_an_exact_quote(fare_request):
    request = fare_request(
        "Riders aged 65 and older pay $1.50 per ride. A weekend pass costs $3.00. "
        "Passes are sold at stations."
    )
    for claim in judge_offline(request).claims:
        for evidence in claim.evidence:
            assert (
                request.passage(evidence.passage_id).text[slice(*evidence.span)] == evidence.quote
            )


def test_speed_sanity_long_passages_are_indexed_once_per_text(fare_request):
    """Not a timed test: judging an answer against long passages twice reuses the passage index."""
    from judges.passages import index_units

    long_text = " ".join([FARE_SENTENCE] * 400)
    request = fare_request(
        "Seniors pay $1.35 per ride.", passages=[{"id": "P1", "text": long_text}]
    )
    index_units.cache_clear()
    judge_offline(request)
    judge_offline(request)
    info = index_units.cache_info()
    assert (info.misses, info.hits) == (1, 1)


FARE_SENTENCE = "Riders aged 65 and older pay a reduced fare of $1.35 per ride."


LIBRARY = (
    "The Riverside Library opened in 1901 on the east bank of the river. "
    "Its reading room holds the city's collection of maps and local newspapers."
)


def test_a_clause_leans_on_its_sentence_for_support():
    answer = (
        "The Riverside Library opened in 1901 on the east bank of the river, "
        "whose reading room holds rare maps for historians."
    )
    result = judge_offline(JudgeRequest(answer=answer, passages=[{"id": "P1", "text": LIBRARY}]))
    opened, room = result.claims
    assert room.text == "whose reading room holds rare maps for historians."
    assert room.confidence < 0.55  # the clause alone is short of SUPPORTED_AT ...
    assert room.label == "SUPPORTED"  # ... its sentence as a whole is not
    assert "its whole sentence" in room.explanation
    assert opened.label == "SUPPORTED"


def test_a_clause_the_passages_mostly_lack_stays_unsupported_in_a_supported_sentence():
    answer = (
        "The Riverside Library opened in 1901 on the east bank of the river, "
        "which holds old maps for historians."
    )
    result = judge_offline(JudgeRequest(answer=answer, passages=[{"id": "P1", "text": LIBRARY}]))
    assert [claim.label for claim in result.claims] == ["SUPPORTED", "UNSUPPORTED"]


# --- no passages at all -------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["offline", "openai"])
def test_an_answer_with_no_passages_is_unsupported_and_no_model_is_asked(backend):
    from judges.engine import NO_PASSAGES, JudgeConfig, judge

    # Port 9 (discard) on loopback: if the openai backend tried to call out, judging would fail.
    config = JudgeConfig(
        backend=backend,
        profile="claim_audit",
        model="m",
        base_url="http://127.0.0.1:9/v1",
        api_key="k",
        timeout_s=1,
        retry_budget_s=1,
        max_attempts=1,
    )
    request = JudgeRequest(question="What do seniors pay?", passages=[],
                           answer="Seniors pay $1.00 per ride. The pass costs $92.")
    result = judge(request, config).result
    assert result.verdict == "UNGROUNDED" and result.grounding_score == 0.0
    assert [c.label for c in result.claims] == ["UNSUPPORTED", "UNSUPPORTED"]
    assert all(c.explanation.startswith(NO_PASSAGES) for c in result.claims)
    assert result.judge.attempts == 0 and result.judge.backend == backend


# --- the units whose neighbours are tried ---------------------------------------------------------

# Few values, so that ties are many: a tie goes to the earlier passage, then the earlier unit.
_SCORES = st.sampled_from([0.0, 0.3, 0.1 + 0.2, 1.0, 1.5, 2.0])
_PASSAGE_SCORES = st.lists(st.lists(_SCORES, max_size=12), max_size=8)


@settings(max_examples=1000, deadline=None)
@given(_PASSAGE_SCORES, st.integers(min_value=1, max_value=8))
def test_the_best_units_are_those_one_heap_of_every_unit_scored_gives(passage_scores, limit):
    # How they were found before: every unit scored of every passage in one heap.
    scored = [(-score, p, u)
              for p, scores in enumerate(passage_scores) for u, score in enumerate(scores) if score]
    by_unit = [{u: score for u, score in enumerate(scores) if score} for scores in passage_scores]
    assert offline._best_units(by_unit, limit) == heapq.nsmallest(limit, scored)


def test_a_policy_fact_that_something_does_not_include_is_no_statement_of_silence(fare_request):
    passages = [
        {"id": "P1", "text": "Cash fares do not include a transfer. Passes include transfers."}
    ]
    claims = judge_offline(
        fare_request("Cash fares do not include a transfer.", passages=passages)
    ).claims
    assert [claim.label for claim in claims] == ["SUPPORTED"]


def test_a_courtesy_request_after_a_lead_in_phrase_is_not_a_claim(fare_request):
    answer = ("The regular adult fare is $2.75 per ride. "
              "For a decision on your specific situation, please contact customer service.")
    claims = judge_offline(fare_request(answer)).claims
    assert [claim.text for claim in claims] == ["The regular adult fare is $2.75 per ride."]


def test_two_full_clauses_joined_by_a_bare_and_are_two_claims():
    text = "Pets are allowed in the apartments and cats must be kept on a leash."
    spans = split_clauses(text, (0, len(text)))
    assert [text[slice(*span)] for span in spans] == [
        "Pets are allowed in the apartments", "cats must be kept on a leash."]


def test_a_predicate_sharing_its_subject_or_a_conjoined_noun_is_not_cut():
    for text in ("Pets are allowed in the lobby and must be kept on a leash.",
                 "Adults and seniors can ride the bus and the train on weekends."):
        assert split_clauses(text, (0, len(text))) == [(0, len(text))]


def test_the_correct_half_of_a_bare_and_sentence_keeps_its_label():
    passage = "The 2024 conference will be held in Porto. Registration opens in March."
    answer = "The 2024 conference will be held in Lisbon and registration will open in March."
    request = JudgeRequest(
        question="Where?", passages=[Passage(id="P1", text=passage)], answer=answer
    )
    labels = [claim.label for claim in judge_offline(request).claims]
    assert len(labels) == 2 and labels[1] == "SUPPORTED" and labels[0] != "SUPPORTED"


def _titled(answer: str) -> JudgeRequest:
    return JudgeRequest.model_validate(
        {
            "question": "Fare?",
            "answer": answer,
            "passages": [
                {
                    "id": "P1",
                    "text": "Adults pay $2.75 per ride.",
                    "agency": "Metro",
                    "title": "Tariff Rules 2027",
                }
            ],
        }
    )


def test_a_year_in_a_cited_document_title_is_no_unsourced_date():
    request = _titled("According to the Tariff Rules 2027, adults pay $2.75 per ride.")
    result = checks.apply_checks(request, judge_offline(request))
    assert result.fabrications == []
    assert all("2027" not in claim.explanation for claim in result.claims)


def test_a_year_only_a_header_gives_is_no_evidence_for_a_policy_fact():
    request = _titled("Adults pay $2.75 per ride in 2027.")
    result = checks.apply_checks(request, judge_offline(request))
    assert [claim.label for claim in result.claims] == ["UNSUPPORTED"]
    assert [fabrication.text for fabrication in result.fabrications] == ["2027"]


def test_markup_is_not_a_claim_and_claim_spans_point_into_the_original(fare_request):
    answer = ("## Fares\n\n- **Adults** pay $2.75 per ride [P1]\n"
              "* Children under 5 ride <b>free</b> with a paying adult.\n"
              "```\n```\nSee [the fare policy](https://metro.example/fares/2031) for details.")
    claims = judge_offline(fare_request(answer)).claims
    for claim in claims:
        start, end = claim.answer_span
        assert claim.text == answer[start:end]
        assert not claim.text.startswith(("#", "- ", "* ", "`", "[")), claim.text
    assert [claim.text for claim in claims][:2] == [
        "**Adults** pay $2.75 per ride [P1]",
        "Children under 5 ride <b>free</b> with a paying adult.",
    ]
    assert [claim.label for claim in claims][:2] == ["SUPPORTED", "SUPPORTED"]
    for claim in claims:  # no markup word or link number is a term the judge looked for
        assert "2031" not in claim.explanation and "b" not in claim.explanation.split("'")[1::2]


# --- lowercased, tokenized text (CNN/DailyMail style; issue 27)
# --------------------------------------

LOWERCASED = ("the blaxploitation film emerged in the united states during the early 1970s . "
              "it later spread to the middle east and to europe .")


def test_in_lowercased_text_another_thing_the_passages_name_in_a_slot_is_a_contradiction():
    request = JudgeRequest(
        passages=[{"id": "P1", "text": LOWERCASED}],
        answer="the blaxploitation film emerged in the middle east during the early 1970s .",
    )
    [claim] = judge_offline(request).claims
    assert claim.label == "CONTRADICTED"
    assert claim.explanation == "P1 says 'united states' where the claim says 'middle east'."


def test_in_lowercased_text_a_synonym_or_a_verbatim_date_is_no_difference():
    passage = "the circuit was built in 1991 and began hosting the grand prix on january 4 , 1992 ."
    for answer in (
        "the circuit was built in 1991 and started hosting the grand prix on january 4 , 1992 .",
        "the circuit was built in 1991 and began hosting the grand prix on january 4 , 1992 .",
    ):
        [claim] = judge_offline(
            JudgeRequest(passages=[{"id": "P1", "text": passage}], answer=answer)
        ).claims
        assert claim.label == "SUPPORTED", (answer, claim.explanation)


# --- provenance inside a claim (issue 27: no correct fact lowered by its source's date)
# -------------


def test_a_wrong_fetch_date_is_its_own_claim_and_the_fact_beside_it_stays_supported(fare_request):
    request = fare_request(
        "As of the policy fetched on 2026-09-01, the regular adult fare is $2.75 per ride."
    )
    result = judges.judge(request, judges.JudgeConfig(backend="offline")).result
    assert [(c.text, c.label) for c in result.claims] == [
        ("As of the policy fetched on 2026-09-01", "UNSUPPORTED"),
        ("the regular adult fare is $2.75 per ride.", "SUPPORTED"),
    ]
    assert "no passage was fetched on 2026-09-01" in result.claims[0].explanation


def test_the_agency_a_provenance_statement_names_is_no_new_name(fare_request):
    request = fare_request(
        "The regular adult fare is $2.75 per ride, according to the Metro fare policy fetched on"
        " 2026-08-16."
    )
    [claim] = judges.judge(request, judges.JudgeConfig(backend="offline")).result.claims
    assert claim.label == "SUPPORTED", claim.explanation


def test_in_lowercased_text_a_name_no_passage_has_in_a_slot_is_unsupported():
    passage = (
        "macaques at jigokudani monkey park are notable for visiting the hot springs in the winter"
        " . wilk started his career with greta in 1990 ."
    )
    request = JudgeRequest(
        passages=[{"id": "P1", "text": passage}],
        answer=(
            "macaques at london stock exchange are notable for visiting the hot springs in the"
            " winter ."
        ),
    )
    [claim] = judge_offline(request).claims
    assert claim.label == "UNSUPPORTED"
    assert (
        claim.explanation
        == "P1 says 'jigokudani monkey park' where the claim says 'london stock exchange'."
    )
    for answer in (
        "he began his career with greta in 1990 .",
        "wilk started his career with greta in 1990 .",
    ):
        [claim] = judge_offline(
            JudgeRequest(passages=[{"id": "P1", "text": passage}], answer=answer)
        ).claims
        assert claim.label == "SUPPORTED", (answer, claim.explanation)
