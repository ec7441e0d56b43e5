"""Output shapes shared by the API and the webhook payloads (DESIGN.md field names)."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID
from typing import Any, Literal

from pydantic import BaseModel, Field

from judges.types import Claim, Verdict


class JudgeOut(BaseModel):
    profile: str
    prompt_version: str
    examples: str | None = None  # the worked examples' tag when the prompt carried a set: "ex2"
    backend: str
    model: str
    latency_ms: int | None
    attempts: int
    usage: dict[str, int]


class ReviewOut(BaseModel):
    # adjudicating: every reviewer asked for finished and they disagree; a lead decides
    status: Literal["unrouted", "auto_passed", "in_review", "adjudicating", "adjudicated"]
    reason: str | None


class AnswerState(BaseModel):
    """What ClaimDesk says about an answer: the API's GET and the webhooks' payloads."""

    id: UUID = Field(
        description="The answer's opaque id (random: it says nothing of other answers)"
    )
    external_id: str | None
    session_id: str | None = Field(
        None, description="The conversation the answer is a turn of, as posted"
    )
    status: Literal["queued", "judging", "judged", "failed"]
    verdict: Verdict | None
    grounding_score: float | None
    claims: list[Claim]
    fabrications: list[dict[str, Any]]
    omissions: list[dict[str, Any]]
    rewrite_note: str
    safe_answer: str | None = Field(
        description=(
            "The answer as a guardrail may show it: only the text of SUPPORTED claims and text that"
            " makes no claim. Every clause overlapping a PARTIALLY_SUPPORTED, UNSUPPORTED or"
            " CONTRADICTED claim is removed (a clause leaning on it, such as ', which ...' or a"
            " parenthetical, goes with it), and so is a 'Yes'/'No' whose clause went. Kept text is"
            " the original's, byte for byte, except that a clause that now opens its sentence loses"
            " its joining word and is capitalized, and a sentence whose last clause went keeps its"
            " end mark. Empty when nothing is safe, including when a flagged claim could not be"
            " placed in the answer; null until the answer is judged."
        )
    )
    error: str | None
    judge: JudgeOut | None
    review: ReviewOut
    created_at: datetime
    judged_at: datetime | None
