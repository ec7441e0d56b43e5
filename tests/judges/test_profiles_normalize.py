"""From a canned model reply to DESIGN.md's normalized result, profile by profile. Every result
must validate as judges.types models, and every span must slice back to its text."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from judges.profiles import OutputError, get_profile, list_profiles
from judges.text import split_sentences
from judges.types import JudgeRequest, JudgeResult, Passage
from tests.judges.factories import ANSWER, CANNED

ALL = [(name, version) for name, versions in list_profiles() for version in versions]
ALL_IDS = [f"{name}@{version}" for name, version in ALL]

# Passages (tests/judges/conftest.py):
#   P1 "The regular adult fare is $2.75 per ride. Riders aged 65 and older pay a reduced fare of
#       $1.35 per ride with a valid Senior ID card. Children under 5 ride free with a paying adult."
#   P2 "A 30-day pass costs $86.00 and is valid for unlimited rides on buses and trains. Reduced
#       Fare passes for seniors cost $43. Passes are sold at station vending machines and at the
#       customer service center."


def normalize(spec: str, reply, request: JudgeRequest):
    profile = get_profile(spec)
    text = reply if isinstance(reply, str) else json.dumps(reply)
    return profile.normalize(profile.parse(text, request), request)


def as_result(normalized, spec: str) -> JudgeResult:
    """The normalized result with judge info added, round-tripped through JSON into the contract."""
    profile = get_profile(spec)
    data = {
        **{
            key: value
            for key, value in asdict(normalized).items()
            if key not in ("claims", "fabrications", "omissions")
        },
        "claims": [claim.model_dump() for claim in normalized.claims],
        "fabrications": [item.model_dump() for item in normalized.fabrications],
        "omissions": [item.model_dump() for item in normalized.omissions],
        "judge": {
            "profile": profile.name,
            "prompt_version": profile.version,
            "backend": "openai",
            "model": "canned",
        },
    }
    return JudgeResult.model_validate_json(json.dumps(data))


def assert_spans_slice_back(result: JudgeResult, request: JudgeRequest):
    passages = {passage.id: passage.text for passage in request.passages}
    for claim in result.claims:
        if claim.answer_span is not None:
            start, end = claim.answer_span
            assert request.answer[start:end] == claim.text
        for evidence in claim.evidence:
            if evidence.match == "not_found":
                assert evidence.span is None
            else:
                start, end = evidence.span
                assert passages[evidence.passage_id][start:end] == evidence.quote
    for fabrication in result.fabrications:
        if fabrication.answer_span is not None:
            start, end = fabrication.answer_span
            assert request.answer[start:end] == fabrication.text
    for omission in result.omissions:
        if omission.span is not None:
            start, end = omission.span
            assert 0 <= start < end <= len(passages[omission.passage_id])
    assert len({claim.id for claim in result.claims}) == len(result.claims)


@pytest.fixture
def request_(fare_request):
    return fare_request(ANSWER)


# --- a canned reply per profile, run through the contract -------------------------------------



@pytest.mark.parametrize("name,version", ALL, ids=ALL_IDS)
def test_every_profile_normalizes_to_the_contract_with_spans_that_slice_back(
    name, version, request_
):
    spec = f"{name}@{version}"
    result = as_result(normalize(spec, CANNED[name], request_), spec)
    assert result.claims
    assert_spans_slice_back(result, request_)
    assert 0.0 <= result.grounding_score <= 1.0
    assert result.verdict != "GROUNDED"  # every canned reply flags the $75.00 pass


@pytest.mark.parametrize("name,version", ALL, ids=ALL_IDS)
def test_normalize_also_takes_the_raw_output_as_a_plain_dict(name, version, request_):
    profile = get_profile(f"{name}@{version}")
    assert profile.normalize(CANNED[name], request_) == normalize(
        f"{name}@{version}", CANNED[name], request_
    )


# --- claim_audit -----------------------------------------------------------------------------


def test_claim_audit_places_claims_and_locates_their_quotes(request_):
    result = normalize("claim_audit", CANNED["claim_audit"], request_)
    c1, c2, c3, c4 = result.claims
    assert [c.id for c in result.claims] == ["c1", "c2", "c3", "c4"]
    assert c1.answer_span == (0, 62) and c1.label == "SUPPORTED" and c1.category == "price"
    assert c1.evidence[0].match == "exact" and c1.evidence[0].passage_id == "P1"
    assert request_.answer[c2.answer_span[0]:c2.answer_span[1]] == "A 30-day pass costs $75.00"
    assert c2.label == "CONTRADICTED" and c2.evidence[0].span == (0, 26)
    # a paraphrase
    assert c3.answer_span is None and c3.text == "Metro describes the pass as the best deal in town"
    # The judge named P1, but the quote is in P2: it is found there.
    assert (c4.evidence[0].passage_id, c4.evidence[0].match) == ("P2", "exact")
    assert c4.explanation.startswith("Also sold at the customer service center")


def test_claim_audit_keeps_fabrications_omissions_and_the_rewrite_note(request_):
    result = normalize("claim_audit", CANNED["claim_audit"], request_)
    (fabrication,) = result.fabrications
    assert fabrication.kind == "quote" and fabrication.text == '"the best deal in town"'
    assert (
        request_.answer[fabrication.answer_span[0] : fabrication.answer_span[1]]
        == '"the best deal in town"'
    )
    (omission,) = result.omissions
    assert omission.passage_id == "P1"
    assert (
        request_.passages[0].text[omission.span[0] : omission.span[1]]
        == "with a valid Senior ID card"
    )
    assert result.rewrite_note == "Say $86.00 and drop the quotation."


def test_claim_audit_scores_the_share_of_supported_claims_whatever_the_models_counts(request_):
    reply = dict(
        CANNED["claim_audit"],
        counts={
            "total": 9,
            "supported": 9,
            "partially_supported": 0,
            "contradicted": 0,
            "unsupported": 0,
        },
    )
    assert normalize("claim_audit", reply, request_).grounding_score == 0.25


def test_claim_audit_verdict_is_the_less_grounded_of_the_models_and_the_labels(request_):
    supported = {
        "id": "c1",
        "text": "Riders aged 65 and older pay a reduced fare of $1.35 per ride.",
        "label": "SUPPORTED",
        "category": "price",
        "explanation": "",
        "quotes": [{"passage_id": "P1", "quote": "pay a reduced fare of $1.35 per ride"}],
    }
    contradicted = dict(supported, id="c2", label="CONTRADICTED")
    base = dict(CANNED["claim_audit"], fabrications=[], omissions=[])
    # The model cannot call an answer GROUNDED while labelling a claim CONTRADICTED ...
    assert (
        normalize(
            "claim_audit",
            dict(base, claims=[supported, contradicted], verdict="GROUNDED"),
            request_,
        ).verdict
        == "UNGROUNDED"
    )
    # ... but may mark down an answer whose claims all hold, e.g. for a material omission.
    assert normalize("claim_audit", dict(base, claims=[supported], verdict="MOSTLY_GROUNDED"),
                     request_).verdict == "MOSTLY_GROUNDED"
    assert (
        normalize(
            "claim_audit", dict(base, claims=[supported], verdict="GROUNDED"), request_
        ).verdict
        == "GROUNDED"
    )


def test_claim_audit_keeps_a_quote_the_judge_invented_as_not_found(request_):
    claim = {
        "id": "c1",
        "text": "Riders aged 65 and older pay a reduced fare of $1.35 per ride.",
        "label": "SUPPORTED",
        "category": "price",
        "quotes": [{"passage_id": "P1", "quote": "Seniors always ride for $1.35"}],
        "explanation": "",
    }
    result = normalize("claim_audit", dict(CANNED["claim_audit"], claims=[claim]), request_)
    (evidence,) = result.claims[0].evidence
    assert (evidence.passage_id, evidence.quote, evidence.span, evidence.match) == (
        "P1", "Seniors always ride for $1.35", None, "not_found")


def test_claim_audit_keeps_an_omission_whose_quote_is_not_in_the_passages(request_):
    reply = dict(
        CANNED["claim_audit"],
        omissions=[
            {"text": "Students ride free.", "passage_id": "P2", "quote": "Students ride free"}
        ],
    )
    (omission,) = normalize("claim_audit", reply, request_).omissions
    assert omission.span is None and omission.passage_id == "P2"
    assert (
        omission.text.startswith("Students ride free.") and '"Students ride free"' in omission.text
    )


@pytest.mark.parametrize("ids,expected", [
    (["a", "b"], ["a", "b"]),
    (["c1", "c1"], ["c1", "c2"]),
    (["", "x"], ["c1", "c2"]),
])
def test_claim_audit_keeps_the_models_claim_ids_unless_missing_or_repeated(ids, expected, request_):
    claims = [dict(CANNED["claim_audit"]["claims"][0], id=claim_id) for claim_id in ids]
    result = normalize("claim_audit", dict(CANNED["claim_audit"], claims=claims), request_)
    assert [claim.id for claim in result.claims] == expected


def test_claim_audit_places_a_repeated_claim_at_its_next_occurrence(fare_request):
    request = fare_request("Seniors pay $1.35. Children ride free. Seniors pay $1.35.")
    claim = {
        "id": "",
        "text": "Seniors pay $1.35.",
        "label": "SUPPORTED",
        "category": "price",
        "quotes": [],
        "explanation": "",
    }
    result = normalize(
        "claim_audit",
        dict(CANNED["claim_audit"], claims=[claim, claim], fabrications=[], omissions=[]),
        request,
    )
    assert [claim.answer_span for claim in result.claims] == [(0, 18), (39, 57)]


def test_claim_audit_with_no_claims_is_grounded_unless_the_model_says_otherwise(request_):
    empty = dict(
        CANNED["claim_audit"], claims=[], fabrications=[], omissions=[], verdict="GROUNDED"
    )
    result = normalize("claim_audit", empty, request_)
    assert (result.verdict, result.grounding_score, result.claims) == ("GROUNDED", 1.0, [])


# --- fare_policy -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1", "v2", "v3"])
def test_fare_policy_grounded_makes_every_sentence_a_supported_claim(version, request_):
    reply = {"grounded": True, "unsupported_claims": [], "reasoning": "All stated in P1 and P2."}
    result = normalize(f"fare_policy@{version}", reply, request_)
    spans = split_sentences(request_.answer)
    assert [claim.answer_span for claim in result.claims] == spans
    assert [claim.text for claim in result.claims] == [request_.answer[s:e] for s, e in spans]
    assert {claim.label for claim in result.claims} == {"SUPPORTED"}
    assert {claim.explanation for claim in result.claims} == {
        "judge found no unsupported claim in this sentence"
    }
    assert all(claim.evidence == [] for claim in result.claims)
    assert (result.verdict, result.grounding_score) == ("GROUNDED", 1.0)


@pytest.mark.parametrize("version", ["v1", "v2", "v3"])
def test_fare_policy_places_each_unsupported_claim_and_keeps_the_other_sentences(version, request_):
    reply = {
        "grounded": False,
        "unsupported_claims": ["A 30-day pass costs $75.00"],
        "reasoning": "P2 says $86.00.",
    }
    result = normalize(f"fare_policy@{version}", reply, request_)
    assert [(claim.id, claim.label) for claim in result.claims] == [
        ("c1", "SUPPORTED"), ("c2", "UNSUPPORTED"), ("c3", "SUPPORTED")]
    flagged = result.claims[1]
    assert flagged.text == "A 30-day pass costs $75.00" and flagged.category == "price"
    assert request_.answer[flagged.answer_span[0]:flagged.answer_span[1]] == flagged.text
    assert "P2 says $86.00." in flagged.explanation
    # The sentence holding the unsupported claim is not also called supported.
    assert all("$75.00" not in claim.text for claim in result.claims if claim.label == "SUPPORTED")
    assert result.claims[2].text == "- Passes are sold at station vending machines."
    assert (result.grounding_score, result.verdict) == (0.6667, "MOSTLY_GROUNDED")


def test_fare_policy_keeps_an_unsupported_claim_it_cannot_place_and_says_so(request_):
    reply = {
        "grounded": False,
        "unsupported_claims": ["The pass is $75"],
        "reasoning": "P2 says $86.00.",
    }
    result = normalize("fare_policy", reply, request_)
    unplaced = result.claims[-1]
    assert (unplaced.label, unplaced.answer_span, unplaced.text) == (
        "UNSUPPORTED",
        None,
        "The pass is $75",
    )
    assert "not verbatim in the answer" in unplaced.explanation
    supported = result.claims[:-1]
    assert len(supported) == 3 and all(claim.label == "SUPPORTED" for claim in supported)
    assert all("could not be placed" in claim.explanation for claim in supported)
    assert result.verdict == "MOSTLY_GROUNDED"  # never GROUNDED when the judge said not grounded


def test_fare_policy_an_unsupported_claim_across_two_sentences_removes_both(fare_request):
    request = fare_request("Seniors pay $1.35. They need a Medicare card. Passes cost $86.")
    reply = {
        "grounded": False,
        "unsupported_claims": ["$1.35. They need a Medicare card"],
        "reasoning": ".",
    }
    result = normalize("fare_policy", reply, request)
    assert [(claim.text, claim.label) for claim in result.claims] == [
        ("$1.35. They need a Medicare card", "UNSUPPORTED"), ("Passes cost $86.", "SUPPORTED")]


@pytest.mark.parametrize("reply,reason", [
    ({"grounded": True, "unsupported_claims": ["A 30-day pass costs $75.00"], "reasoning": ""},
     "inconsistent output: grounded is true but unsupported_claims lists 1 claim"),
    ({"grounded": False, "unsupported_claims": [], "reasoning": ""},
     "inconsistent output: grounded is false but unsupported_claims is empty"),
])
@pytest.mark.parametrize("version", ["v1", "v2", "v3"])
def test_fare_policy_rejects_a_grounded_flag_that_disagrees_with_the_list(
    version, reply, reason, request_
):
    profile = get_profile(f"fare_policy@{version}")
    with pytest.raises(OutputError, match=reason):
        profile.parse(json.dumps(reply))
    with pytest.raises(OutputError, match=reason):
        profile.normalize(reply, request_)


def test_fare_policy_categorizes_claims_by_keywords(fare_request):
    request = fare_request(
        "This is from the Metro fare page, fetched on 2026-08-17. Seniors need a Medicare card."
    )
    reply = {"grounded": False, "reasoning": "",
             "unsupported_claims": ["fetched on 2026-08-17", "Seniors need a Medicare card."]}
    result = normalize("fare_policy@v3", reply, request)
    assert [(claim.label, claim.category) for claim in result.claims] == [
        ("UNSUPPORTED", "provenance"), ("UNSUPPORTED", "document")]


# --- claim_verification ----------------------------------------------------------------------


def test_claim_verification_recomputes_the_grounding_score_from_the_labels(request_):
    reply = dict(
        CANNED["claim_verification"],
        grounding_score=95,
        total_claims=3,
        supported_claims=3,
        unsupported_claims=0,
        contradicted_claims=0,
    )
    profile = get_profile("claim_verification")
    raw = profile.parse(json.dumps(reply), request_)  # wrong arithmetic is not a reason to reject
    assert raw.grounding_score == 95  # kept in the raw output only
    result = profile.normalize(raw, request_)
    assert result.grounding_score == 0.5  # 2 of 4 SUPPORTED
    assert result.verdict == "UNGROUNDED"  # a CONTRADICTED claim


def test_claim_verification_turns_passage_and_text_into_located_evidence(request_):
    result = normalize("claim_verification", CANNED["claim_verification"], request_)
    c1, c2, c3, c4 = result.claims
    assert (c1.evidence[0].passage_id, c1.evidence[0].span, c1.evidence[0].match) == (
        "P1",
        (42, 103),
        "exact",
    )
    assert c2.label == "CONTRADICTED" and c2.evidence[0].quote == "A 30-day pass costs $86.00"
    # null source; the claim text drops the answer's quotation marks, so it is placed fuzzily
    assert c3.evidence == [] and c3.text == 'Metro calls it "the best deal in town"'
    assert c4.answer_span is not None and c4.evidence[0].passage_id == "P2"


@pytest.mark.parametrize(
    "pid,text,expected",
    [
        # a passage that does not exist
        (
            "P7",
            "A 30-day pass costs $86.00",
            ("P7", None, "not_found"),
        ),
        # wrong passage named, quote is real
        (
            "P1",
            "A 30-day pass costs $86.00",
            ("P2", (0, 26), "exact"),
        ),
        # our [P2] rendering echoed back
        (
            "[P2]",
            "A 30-day pass costs $86.00",
            ("P2", (0, 26), "exact"),
        ),
        ("P2", "A 30 day pass is $86", ("P2", None, "not_found")),  # not verbatim
        (None, "A 30-day pass costs $86.00", ("P2", (0, 26), "exact")),
    ],
)
def test_claim_verification_evidence_for_each_kind_of_citation(pid, text, expected, request_):
    claim = dict(CANNED["claim_verification"]["claims"][1], source_passage_id=pid, source_text=text)
    result = normalize(
        "claim_verification", dict(CANNED["claim_verification"], claims=[claim]), request_
    )
    (evidence,) = result.claims[0].evidence
    assert (evidence.passage_id, evidence.span, evidence.match) == expected


def test_claim_verification_notes_a_cited_passage_without_a_quote(request_):
    claim = dict(
        CANNED["claim_verification"]["claims"][1], source_passage_id="P2", source_text=None
    )
    result = normalize(
        "claim_verification", dict(CANNED["claim_verification"], claims=[claim]), request_
    )
    assert result.claims[0].evidence == []
    assert "cited P2 without quoting it" in result.claims[0].explanation


def test_claim_verification_accepts_partially_supported(request_):
    claim = dict(
        CANNED["claim_verification"]["claims"][3], verification_status="PARTIALLY_SUPPORTED"
    )
    result = normalize(
        "claim_verification", dict(CANNED["claim_verification"], claims=[claim]), request_
    )
    assert result.claims[0].label == "PARTIALLY_SUPPORTED"
    assert (result.grounding_score, result.verdict) == (0.0, "UNGROUNDED")


def test_claim_verification_numbers_claims_when_the_model_gives_no_ids(request_):
    claims = [dict(claim, claim_id="") for claim in CANNED["claim_verification"]["claims"]]
    result = normalize(
        "claim_verification", dict(CANNED["claim_verification"], claims=claims), request_
    )
    assert [claim.id for claim in result.claims] == ["c1", "c2", "c3", "c4"]


# --- sentence_map ----------------------------------------------------------------------------


def test_sentence_map_claims_are_exactly_the_pre_split_sentences(request_):
    reply = json.loads(json.dumps(CANNED["sentence_map"]))
    reply["sentences"][1][
        "text"
    ] = "a 30 day pass is 75 dollars"  # the model's text is never used to place it
    result = normalize("sentence_map", reply, request_)
    spans = split_sentences(request_.answer)
    assert [claim.answer_span for claim in result.claims] == spans
    assert [claim.text for claim in result.claims] == [request_.answer[s:e] for s, e in spans]
    assert [claim.label for claim in result.claims] == [
        "SUPPORTED",
        "CONTRADICTED",
        "PARTIALLY_SUPPORTED",
    ]
    assert [claim.explanation for claim in result.claims] == [
        "", 'P2: "A 30-day pass costs $86.00"', "Also at the customer service center."]
    assert all(claim.evidence == [] for claim in result.claims)
    assert (result.grounding_score, result.verdict) == (0.3333, "UNGROUNDED")


def test_sentence_map_takes_the_sentences_in_any_order(request_):
    reply = dict(
        CANNED["sentence_map"], sentences=list(reversed(CANNED["sentence_map"]["sentences"]))
    )
    result = normalize("sentence_map", reply, request_)
    assert [claim.id for claim in result.claims] == ["c1", "c2", "c3"]
    assert [claim.label for claim in result.claims] == [
        "SUPPORTED",
        "CONTRADICTED",
        "PARTIALLY_SUPPORTED",
    ]


@pytest.mark.parametrize("indices,reason", [
    ([0, 2], r"missing sentence indices \[1\]"),
    ([0, 1, 1, 2], "duplicate index 1"),
    ([0, 1, 2, 5], r"unknown sentence indices \[5\]"),
    ([], r"missing sentence indices \[0, 1, 2\]"),
])
def test_sentence_map_rejects_a_reply_that_does_not_cover_every_sentence_once(
    indices, reason, request_
):
    template = CANNED["sentence_map"]["sentences"][0]
    reply = dict(
        CANNED["sentence_map"], sentences=[dict(template, index=index) for index in indices]
    )
    profile = get_profile("sentence_map")
    with pytest.raises(OutputError, match=reason):
        profile.parse(json.dumps(reply), request_)
    raw = profile.parse(json.dumps(reply))  # without the request it cannot know the sentences ...
    with pytest.raises(OutputError, match=reason):  # ... so normalize checks again
        profile.normalize(raw, request_)


def test_sentence_map_coverage_errors_say_how_many_sentences_there_are(request_):
    reply = dict(CANNED["sentence_map"], sentences=CANNED["sentence_map"]["sentences"][:2])
    with pytest.raises(OutputError, match=r"the answer has 3 sentences \(indices 0 to 2\)"):
        get_profile("sentence_map").parse(json.dumps(reply), request_)


def test_sentence_map_works_for_an_answer_with_no_sentences():
    # JudgeRequest rejects a blank answer, but the profile must not depend on that.
    request = JudgeRequest.model_construct(
        question="",
        prior_turns=[],
        answer="  \n ",
        metadata={},
        profile=None,
        external_id=None,
        passages=[Passage(id="P1", text="Seniors pay $1.35.")],
    )
    profile = get_profile("sentence_map")
    prompt = profile.render(request)
    assert "0 numbered sentence(s); indices: none" in prompt.messages[1]["content"]
    empty = {
        "sentences": [],
        "summary": {
            "total_sentences": 0,
            "grounded_count": 0,
            "unsupported_count": 0,
            "contradicted_count": 0,
        },
    }
    result = profile.normalize(profile.parse(json.dumps(empty), request), request)
    assert (result.claims, result.grounding_score, result.verdict) == ([], 1.0, "GROUNDED")
    with pytest.raises(OutputError, match=r"unknown sentence indices \[0\]"):
        profile.parse(
            json.dumps(
                CANNED["sentence_map"] | {"sentences": CANNED["sentence_map"]["sentences"][:1]}
            ),
            request,
        )


def test_sentence_map_summary_arithmetic_is_not_checked(request_):
    reply = dict(
        CANNED["sentence_map"],
        summary={
            "total_sentences": 7,
            "grounded_count": 7,
            "unsupported_count": 0,
            "contradicted_count": 0,
        },
    )
    assert normalize("sentence_map", reply, request_).grounding_score == 0.3333
