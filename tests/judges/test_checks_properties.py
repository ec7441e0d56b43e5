"""Properties of judges.checks over generated answers and backend results: the checks only add."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judges.checks import Answer, apply_checks
from judges.backends.offline.judge import judge_offline
from judges.scoring import grounding_score, verdict_for
from judges.text import quantities, quantity_values, split_sentences
from judges.types import (
    LABEL_SEVERITY,
    LABELS,
    VERDICT_SEVERITY,
    Claim,
    JudgeInfo,
    JudgeRequest,
    JudgeResult,
)

PASSAGES = [
    {
        "id": "P1",
        "text": "The regular adult fare is $2.75 per ride. Riders aged 65 and older pay $1.35. "
        "Fares change on July 1, 2026.",
        "agency": "Metro",
        "title": "Fare Policy",
        "section": "4.2",
        "source_url": "https://metro.example/fares",
        "fetched_at": "2026-08-16",
    },
    {
        "id": "P2",
        "text": "A 30-day pass costs $86.00. Refunds are accepted within fourteen days.",
        "agency": "Metro",
        "title": "Passes",
        "fetched_at": "2026-08-16",
    },
]
FRAGMENTS = [
    "The regular adult fare is $2.75 per ride.",
    "A 30-day pass costs 86 dollars [P2].",
    "Weekend passes cost $75.00.",
    "Children under 5 ride free [P3].",
    "Seniors pay $1.35 per ride [P2].",
    'The policy says "all riders travel free on Sundays".',
    "Refunds are accepted within 14 days.",
    "As of our data fetched on 2026-07-01, fares are unchanged.",
    "This is from the Fare Policy, section 4.2.",
    "According to the Federal Transit Administration, passes are valid.",
    "Fares change on January 5, 2027.",
    "Contact Metro for details.",
    "1. Adults pay $2.75",
    "Seniors' cards don't expire.",
    "Source: https://x.example/a",
    "Fares change on July 1, 2026 (fetched 2026-08-16).",
    "Bikes ride along, and passes cost $90.",
]


@st.composite
def cases(draw):
    pieces = draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6))
    separators = draw(
        st.lists(st.sampled_from([" ", "\n", "  "]), min_size=len(pieces), max_size=len(pieces))
    )
    answer = "".join(piece + sep for piece, sep in zip(pieces, separators)).strip()
    request = JudgeRequest.model_validate({"passages": PASSAGES, "answer": answer})
    if draw(st.booleans()):
        return request, judge_offline(request)
    # A model-like result: some sentences as claims, any labels, spans given or not.
    claims = []
    for number, (start, end) in enumerate(split_sentences(answer), start=1):
        if draw(st.booleans()):
            placed = draw(st.booleans())
            claims.append(
                Claim(
                    id=f"c{number}",
                    text=answer[start:end],
                    answer_span=(start, end) if placed else None,
                    label=draw(st.sampled_from(LABELS)),
                    explanation="model",
                )
            )
    result = JudgeResult(
        verdict=draw(st.sampled_from([verdict_for(claims), "UNGROUNDED", "MOSTLY_GROUNDED"])),
        grounding_score=grounding_score(claims), claims=claims,
        judge=JudgeInfo(profile="claim_audit", prompt_version="v1", backend="openai", model="m"),
    )
    return request, result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_checks_only_add_findings(case):
    request, before = case
    after = apply_checks(request, before)
    JudgeResult.model_validate(after.model_dump())
    assert len(after.claims) >= len(before.claims)
    for old, new in zip(before.claims, after.claims):
        assert (new.id, new.text, new.answer_span, new.category) == (
            old.id,
            old.text,
            old.answer_span,
            old.category,
        )
        assert LABEL_SEVERITY[new.label] >= LABEL_SEVERITY[old.label]
        assert new.explanation.startswith(old.explanation)
    assert len({claim.id for claim in after.claims}) == len(after.claims)
    assert after.fabrications[:len(before.fabrications)] == before.fabrications
    assert VERDICT_SEVERITY[after.verdict] >= VERDICT_SEVERITY[before.verdict]
    assert after.grounding_score <= before.grounding_score
    for fabrication in after.fabrications[len(before.fabrications):]:
        assert request.answer[slice(*fabrication.answer_span)] == fabrication.text
    for claim in after.claims[len(before.claims):]:
        assert request.answer[slice(*claim.answer_span)] == claim.text
    assert apply_checks(request, after) == after  # idempotent


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6),
       st.permutations([p["text"] for p in PASSAGES] + FRAGMENTS[:6]))
def test_the_number_check_finds_the_values_every_passage_together_gives(fragments, texts):
    """It stops reading passages once every value is found, in an order of its own: what it finds
    is still exactly the answer's values that the union of all the passages' values holds."""
    answer = " ".join(fragments)
    request = JudgeRequest.model_validate(
        {
            "question": "Fares?",
            "answer": answer,
            "passages": [{"id": f"P{i}", "text": t} for i, t in enumerate(texts)],
        }
    )
    wanted = quantities(answer)
    everything = frozenset().union(*(quantity_values(t) for t in texts))
    assert Answer(request).values_in_text(wanted) == {
        q.value for q in wanted if q.value in everything
    }
