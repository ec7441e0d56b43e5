"""judges.checks.apply: how findings land on a backend's result, and the checks through the
engine."""

from __future__ import annotations

import json

import pytest

import judges
from judges.checks import apply_checks, provenance_verdict
from judges.engine import JudgeOutput
from judges.backends.offline.judge import judge_offline
from judges.types import (
    LABEL_SEVERITY,
    VERDICT_SEVERITY,
    Claim,
    Fabrication,
    JudgeInfo,
    JudgeRequest,
    JudgeResult,
)
from tests.judges.checking import (
    assert_spans_exact,
    backend_result,
    checked,
    sentence_claims,
)

# --- nothing to find -----------------------------------------------------------------------------


def test_a_grounded_answer_is_left_exactly_as_the_backend_returned_it(fare_request):
    request = fare_request(
        "The regular adult fare is $2.75 per ride. A 30-day pass costs 86 dollars [P2]."
    )
    before = backend_result(request.answer, *sentence_claims(request))
    assert apply_checks(request, before) == before


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
    assert (added.text, added.label, added.category) == (
        "Weekend passes cost $75.00.",
        "UNSUPPORTED",
        "price",
    )
    assert answer[slice(*added.answer_span)] == added.text
    assert "Number check: '$75.00'" in added.explanation
    assert result.grounding_score == 0.5 and result.verdict == "MOSTLY_GROUNDED"
    assert "c2" in result.rewrite_note


def test_an_added_claim_does_not_overlap_the_claims_beside_it(fare_request):
    answer = "Adults pay $2.75, weekend passes cost $75.00, and children under 5 ride free."
    request = fare_request(answer)
    result = checked(
        request, ("Adults pay $2.75", "SUPPORTED"), ("children under 5 ride free", "SUPPORTED")
    )
    added = result.claims[-1]
    assert added.text == "weekend passes cost $75.00"
    assert answer[slice(*added.answer_span)] == added.text


def test_a_backend_fabrication_is_not_reported_twice(fare_request):
    answer = "Weekend passes cost $75.00."
    request = fare_request(answer)
    before = backend_result(answer, (answer, "UNSUPPORTED"))
    before.fabrications.append(
        Fabrication(kind="statistic", text="$75.00", answer_span=(20, 26), reason="model")
    )
    after = apply_checks(request, before)
    assert after.fabrications == before.fabrications


def test_the_verdict_is_never_more_grounded_than_the_backend_said(fare_request):
    answer = "The regular adult fare is $2.75 per ride. Weekend passes cost $75.00."
    request = fare_request(answer)
    after = checked(request, *sentence_claims(request), verdict="UNGROUNDED")
    assert after.verdict == "UNGROUNDED"


def test_checks_are_idempotent(fare_request):
    request = fare_request(
        'Weekend passes cost $75.00 [P3]. The policy says "seniors ride free always and forever".'
    )
    once = apply_checks(request, judge_offline(request))
    assert apply_checks(request, once) == once


# --- never removing, never raising
# -----------------------------------------------------------------

VARIED_ANSWERS = [
    (
        "The regular adult fare is $2.75 per ride. Riders aged 65 and older pay $1.35 with a Senior"
        " ID card."
    ),
    "A weekend pass costs $3.00 [P2]. Children under 5 ride free [P4].",
    'The tariff says "every rider may bring a bicycle for free". Seniors pay 1.35 dollars.',
    (
        "As of our data fetched on 2026-07-01, a 30-day pass costs $86.00. This is from the Fare"
        " Policy, section 4.2."
    ),
    (
        "Seniors pay $1.50 per ride [1]. Reduced Fare passes for seniors cost $43 (P2). Contact"
        " Metro for details."
    ),
    (
        "According to the Federal Transit Administration, passes are sold at station vending"
        " machines since March 2019."
    ),
    (
        "Here is what the policy says:\n1. Adults pay $2.75 per ride\n2. A 30-day pass costs fifty"
        " dollars"
    ),
]


@pytest.mark.parametrize("answer", VARIED_ANSWERS)
def test_checks_never_raise_a_label_and_never_remove_a_claim_or_fabrication(fare_request, answer):
    request = fare_request(answer)
    for before in (judge_offline(request), backend_result(answer, *sentence_claims(request))):
        after = apply_checks(request, before)
        assert len(after.claims) >= len(before.claims)
        for old, new in zip(before.claims, after.claims):
            assert (new.id, new.text, new.answer_span) == (old.id, old.text, old.answer_span)
            assert LABEL_SEVERITY[new.label] >= LABEL_SEVERITY[old.label]
            assert new.explanation.startswith(old.explanation)
        assert after.fabrications[:len(before.fabrications)] == before.fabrications
        assert VERDICT_SEVERITY[after.verdict] >= VERDICT_SEVERITY[before.verdict]
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
    return {
        key: (request, judges.judge(request, config).result) for key, request in requests.items()
    }


def _claim_over(result: JudgeResult, span) -> Claim:
    return next(
        c for c in result.claims if c.answer_span[0] <= span[0] and span[1] <= c.answer_span[1]
    )


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
    assert (
        fabrication.text
        == '"stored value on a LakePass card never expires and is always fully refundable."'
    )
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
    assert (
        provenance_verdict(
            "This is from the LRT Fare Policy and Tariff, sections 2.1 and 2.4 (fetched"
            " 2026-08-16).",
            request,
        )
        == "agrees"
    )


def test_the_engine_runs_the_checks_after_the_openai_backend_too(fare_request, monkeypatch):
    from judges.backends import openai_chat

    answer = "The regular adult fare is $2.75 per ride. Weekend passes cost $75.00."
    request = fare_request(answer)
    model_result = backend_result(answer, *sentence_claims(request))
    monkeypatch.setattr(
        openai_chat,
        "judge_openai",
        lambda request, config, profile: JudgeOutput(model_result, raw_output='{"raw": 1}'),
    )
    output = judges.judge(
        request, judges.JudgeConfig(backend="openai", base_url="http://fake", model="m")
    )
    assert output.raw_output == '{"raw": 1}'  # the backend's own output, for the audit trail
    assert [c.label for c in output.result.claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert [f.text for f in output.result.fabrications] == ["$75.00"]


def test_checking_twice_adds_nothing_when_a_finding_belongs_to_a_claim_another_finding_adds():
    # Found by hypothesis: the citation finding of the first sentence missed the provenance claim
    # that a later finding added for "Source: ...", and a second pass attached it.
    from judges.checks import apply_checks

    sentence = "Children under 5 ride free [P3]."
    request = JudgeRequest.model_validate(
        {
            "passages": [
                {
                    "id": "P1",
                    "text": "Riders aged 65 and older pay $1.35.",
                    "source_url": "https://metro.example/",
                }
            ],
            "answer": f"Source: https://x.example/a {sentence} {sentence}",
        }
    )
    before = JudgeResult(
        verdict="GROUNDED",
        grounding_score=1.0,
        claims=[
            Claim(id="c2", text=sentence, label="SUPPORTED", category="other", explanation="model")
        ],
        judge=JudgeInfo(profile="claim_audit", prompt_version="v1", backend="openai", model="m"),
    )
    once = apply_checks(request, before)
    assert apply_checks(request, once) == once
    source_claim = next(c for c in once.claims if c.text.startswith("Source:"))
    assert "cites P3, which does not exist" in source_claim.explanation
