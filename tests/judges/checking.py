"""What the tests of judges.checks share: a backend's result built by hand, checked."""

from __future__ import annotations

from judges.checks import apply_checks
from judges.scoring import grounding_score, verdict_for
from judges.types import Claim, JudgeInfo, JudgeRequest, JudgeResult


def backend_result(
    answer: str, *claims: tuple[str, str], locate: bool = True, verdict: str | None = None
) -> JudgeResult:
    """What a model backend might return: one claim per (text, label), placed in the answer."""
    built = []
    for number, (text, label) in enumerate(claims, start=1):
        start = answer.find(text)
        span = (start, start + len(text)) if locate and start >= 0 else None
        built.append(
            Claim(
                id=f"c{number}",
                text=text,
                answer_span=span,
                label=label,
                explanation="Model says so.",
            )
        )
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
