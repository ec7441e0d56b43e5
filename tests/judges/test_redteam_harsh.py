"""The harsh red-team instrument (issue 16): its cases are fabrications the honest passages never
state, and its fake LLM marks everything SUPPORTED with a real passage sentence, copied exactly,
as the quote. These tests hold the instrument honest; bench/redteam.py reports the figure."""

from __future__ import annotations

import pytest

from judges.text import split_sentences
from tests.judges.redteam import SimilarQuoteLLM, run_all
from tests.judges.redteam_harsh_cases import BIKES, FABRICATIONS, LINES, RULES, WORDINGS

HONEST_TEXT = (BIKES, LINES, RULES)
PASSAGE_SENTENCES = {text[s:e] for text in HONEST_TEXT for s, e in split_sentences(text)}


def test_every_fabrication_kind_has_three_cases_over_the_honest_passages():
    kinds = [case.kind for case in FABRICATIONS]
    assert {kind: kinds.count(kind) for kind in kinds} == {
        "invented_rule": 3,
        "swapped_entity": 3,
        "dropped_negation": 3,
        "wrong_unit": 3,
        "fabricated_number": 3,
    }


@pytest.mark.parametrize("case", FABRICATIONS + WORDINGS, ids=lambda case: case.id)
def test_no_honest_passage_states_the_fabricated_fact(case):
    for fact in case.hallucinated:
        assert case.spans()
        assert all(fact not in text for text in HONEST_TEXT)
        assert fact not in PASSAGE_SENTENCES


def test_the_fake_marks_everything_supported_quoting_real_passage_sentences_exactly():
    llm = SimilarQuoteLLM()
    outcomes = run_all(FABRICATIONS[:5], profiles=["claim_audit@v1"], llm=llm)
    assert len(outcomes) == 5 and not any(o.failed_closed for o in outcomes)
    quotes = [quote for entry in llm.log for quote in entry["quotes"]]
    assert len(quotes) >= 10
    assert set(quotes) <= PASSAGE_SENTENCES


def test_the_fake_quotes_the_closest_sentence_for_a_swapped_entity():
    llm = SimilarQuoteLLM()
    run_all(
        [case for case in FABRICATIONS if case.id == "f04"],
        profiles=["claim_verification@v1"],
        llm=llm,
    )
    assert "The Harbor Line runs 14 km from Central Station to Bayview." in llm.log[0]["quotes"]


def test_a_judge_that_marks_every_fabrication_supported_with_the_closest_real_quote_passes_none():
    """The quote check (judges.checks.trust.check_support) on every profile: an invented rule, a
    swapped entity, a dropped negation, a wrong unit and a made-up number each end below SUPPORTED
    although the judge called them SUPPORTED and quoted a real passage sentence exactly."""
    outcomes = run_all(FABRICATIONS, llm=SimilarQuoteLLM())
    assert not any(o.failed_closed for o in outcomes)
    assert [(o.profile, o.case, o.missed) for o in outcomes if o.succeeded] == []
    assert sum(o.honest_supported for o in outcomes) == sum(o.honest_total for o in outcomes)
