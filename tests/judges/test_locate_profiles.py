"""The locator inside the profiles: every judge quote goes through judges.locate, and a SUPPORTED
claim resting on a quote that is in no passage is not left SUPPORTED. Plain pytest (no Django)."""

from __future__ import annotations

import json

import pytest

from judges.profiles import get_profile
from judges.types import JudgeRequest

C1 = "Riders aged 65 and older pay a reduced fare of $1.35 per ride."
C2 = "Passes are sold at station vending machines."
ANSWER = f"{C1} {C2}"


def normalize(spec: str, reply: dict, request: JudgeRequest):
    profile = get_profile(spec)
    return profile.normalize(profile.parse(json.dumps(reply), request), request)


def audit_claim(claim_id, text, quotes, label="SUPPORTED", explanation="Stated in the passage."):
    return {
        "id": claim_id,
        "text": text,
        "label": label,
        "category": "other",
        "explanation": explanation,
        "quotes": [{"passage_id": pid, "quote": quote} for pid, quote in quotes],
    }


def audit_reply(*claims, verdict="GROUNDED"):
    return {"claims": list(claims), "fabrications": [], "omissions": [],
            "counts": {"total": len(claims), "supported": len(claims), "partially_supported": 0,
                       "contradicted": 0, "unsupported": 0},
            "verdict": verdict, "rewrite_note": ""}


@pytest.fixture
def request_(fare_request):
    return fare_request(ANSWER)


# --- claim_audit -------------------------------------------------------------------------------


def test_claim_audit_a_supported_claim_with_an_invented_quote_is_downgraded_and_flagged(request_):
    reply = audit_reply(
        audit_claim("c1", C1, [("P1", "Seniors always ride for $1.35 on every route")]),
        audit_claim("c2", C2, [("P2", "Passes are sold at station vending machines")]),
    )
    result = normalize("claim_audit", reply, request_)
    c1, c2 = result.claims
    assert c1.label == "PARTIALLY_SUPPORTED"
    assert c1.explanation == (
        "Unverified quote: the judge's quote is not in any passage. Stated in the passage.")
    (evidence,) = c1.evidence
    assert (evidence.passage_id, evidence.quote, evidence.span, evidence.match) == (
        "P1", "Seniors always ride for $1.35 on every route", None, "not_found")
    assert c2.label == "SUPPORTED" and c2.evidence[0].match == "exact"
    # The score and the verdict follow the downgrade, whatever the judge's own verdict said.
    assert (result.grounding_score, result.verdict) == (0.5, "MOSTLY_GROUNDED")


def test_claim_audit_quotes_with_small_differences_are_located_and_stay_supported(request_):
    reply = audit_reply(
        audit_claim(
            "c1",
            C1,
            [("P1", "riders aged 65 and older pay a reduced fare of $1.35 per ride\u2026")],
        ),
        # typo, wrong passage
        audit_claim("c2", C2, [("P1", "Passes are sold at staton vending machines")]),
    )
    result = normalize("claim_audit", reply, request_)
    c1, c2 = result.claims
    assert (c1.label, c1.evidence[0].match, c1.evidence[0].passage_id) == (
        "SUPPORTED",
        "normalized",
        "P1",
    )
    assert c1.evidence[0].quote == "Riders aged 65 and older pay a reduced fare of $1.35 per ride"
    assert (c2.label, c2.evidence[0].match, c2.evidence[0].passage_id) == (
        "SUPPORTED",
        "fuzzy",
        "P2",
    )
    assert c2.evidence[0].quote == "Passes are sold at station vending machines"
    passages = {p.id: p.text for p in request_.passages}
    for claim in result.claims:
        start, end = claim.evidence[0].span
        assert passages[claim.evidence[0].passage_id][start:end] == claim.evidence[0].quote
    assert (result.grounding_score, result.verdict) == (1.0, "GROUNDED")


def test_claim_audit_one_located_quote_is_enough(request_):
    reply = audit_reply(
        audit_claim(
            "c1",
            C1,
            [
                ("P1", "Seniors always ride for $1.35 on every route"),
                ("P1", "pay a reduced fare of $1.35 per ride"),
            ],
        )
    )
    (claim,) = normalize("claim_audit", reply, request_).claims
    assert claim.label == "SUPPORTED" and [e.match for e in claim.evidence] == [
        "not_found",
        "exact",
    ]


def test_claim_audit_a_supported_claim_without_any_quote_is_unverified(request_):
    reply = audit_reply(audit_claim("c1", C1, []))
    result = normalize("claim_audit", reply, request_)
    (claim,) = result.claims
    assert claim.label == "PARTIALLY_SUPPORTED" and claim.explanation.startswith(
        "Unverified quote:"
    )
    assert claim.evidence == []
    assert (result.grounding_score, result.verdict) == (0.0, "UNGROUNDED")


def test_claim_audit_other_labels_keep_their_invented_quotes_without_a_downgrade(request_):
    reply = audit_reply(
        audit_claim(
            "c1",
            C1,
            [("P1", "Seniors always ride for $1.35 on every route")],
            label="CONTRADICTED",
            explanation="P1 says otherwise.",
        ),
        verdict="UNGROUNDED",
    )
    (claim,) = normalize("claim_audit", reply, request_).claims
    assert (claim.label, claim.explanation, claim.evidence[0].match) == (
        "CONTRADICTED", "P1 says otherwise.", "not_found")


def test_claim_audit_places_a_claim_the_judge_reworded_slightly(request_):
    reply = audit_reply(
        audit_claim(
            "c1",
            "riders aged 65 and older pay a reduced fare of $1.35 per ride",
            [("P1", "pay a reduced fare of $1.35 per ride")],
        ),
        audit_claim(
            "c2",
            "Passes are sold at the station vending machines",
            [("P2", "Passes are sold at station vending machines")],
        ),
    )
    c1, c2 = normalize("claim_audit", reply, request_).claims
    assert c1.answer_span == (0, 61) and c1.text == ANSWER[0:61]
    assert c2.answer_span is not None and c2.text == "Passes are sold at station vending machines"


# --- claim_verification -----------------------------------------------------------------------


def verification_claim(claim_id, text, pid, source, status="SUPPORTED"):
    return {"claim_id": claim_id, "claim_text": text, "verification_status": status,
            "source_passage_id": pid, "source_text": source, "explanation": "Checked."}


def verification_reply(*claims):
    return {"claims": list(claims), "grounding_score": 1.0, "total_claims": len(claims),
            "supported_claims": len(claims), "unsupported_claims": 0, "contradicted_claims": 0}


@pytest.mark.parametrize("pid,source,explanation", [
    ("P1", "Seniors always ride for $1.35 on every route",
     "Unverified quote: the judge's quote is not in any passage. Checked."),
    (None, None, "Unverified quote: the judge quoted no passage for this claim. Checked."),
    ("P1", None, "Unverified quote: the judge quoted no passage for this claim. Checked. "
                 "(The judge cited P1 without quoting it.)"),
])
def test_claim_verification_a_supported_claim_without_a_located_quote_is_downgraded(
    pid, source, explanation, request_
):
    reply = verification_reply(verification_claim("c1", C1, pid, source),
                               verification_claim("c2", C2, "P2", C2.rstrip(".")))
    result = normalize("claim_verification", reply, request_)
    c1, c2 = result.claims
    assert (c1.label, c1.explanation) == ("PARTIALLY_SUPPORTED", explanation)
    assert [e.match for e in c1.evidence] == (["not_found"] if source else [])
    assert c2.label == "SUPPORTED"
    assert (result.grounding_score, result.verdict) == (0.5, "MOSTLY_GROUNDED")


def test_claim_verification_a_normalized_quote_keeps_the_claim_supported(request_):
    reply = verification_reply(
        verification_claim(
            "c1",
            C1,
            "P1",
            "\u201cRiders aged 65 and older pay a " "reduced fare of $1.35 per ride\u201d",
        )
    )
    (claim,) = normalize("claim_verification", reply, request_).claims
    evidence = claim.evidence[0]
    assert (claim.label, evidence.match, evidence.span) == ("SUPPORTED", "normalized", (42, 103))


# --- profiles that report no quotes -----------------------------------------------------------


def test_fare_policy_and_sentence_map_labels_are_not_touched(request_):
    result = normalize(
        "fare_policy", {"grounded": True, "unsupported_claims": [], "reasoning": ""}, request_
    )
    assert {claim.label for claim in result.claims} == {
        "SUPPORTED"
    } and result.verdict == "GROUNDED"
    reply = {"sentences": [{"index": 0, "text": C1, "verdict": "GROUNDED", "reason": None},
                           {"index": 1, "text": C2, "verdict": "GROUNDED", "reason": None}],
             "summary": {"total_sentences": 2, "grounded_count": 2, "unsupported_count": 0,
                         "contradicted_count": 0}}
    result = normalize("sentence_map", reply, request_)
    assert {claim.label for claim in result.claims} == {
        "SUPPORTED"
    } and result.verdict == "GROUNDED"
