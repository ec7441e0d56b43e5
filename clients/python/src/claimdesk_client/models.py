"""The answer as the API returns it, with DESIGN.md's field names (the normalized judge result).

Parsing is lenient about fields it does not know or that are absent, so a newer server or a
list row carrying fewer fields still reads; ids are opaque strings."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

DONE_STATUSES = frozenset({"judged", "failed"})
FLAGGED_LABELS = frozenset({"PARTIALLY_SUPPORTED", "CONTRADICTED", "UNSUPPORTED"})
Span = tuple[int, int]


def _span(value: Any) -> Span | None:
    return (int(value[0]), int(value[1])) if isinstance(value, (list, tuple)) and len(value) == 2 else None


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Evidence:
    passage_id: str
    quote: str
    span: Span | None  # into the passage's text; None when the quote was not found there
    match: str  # exact | normalized | fuzzy | not_found

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        return cls(str(data.get("passage_id", "")), str(data.get("quote", "")), _span(data.get("span")),
                   str(data.get("match", "not_found")))


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    answer_span: Span | None  # half-open character offsets into the answer
    label: str  # SUPPORTED | PARTIALLY_SUPPORTED | CONTRADICTED | UNSUPPORTED
    category: str
    evidence: list[Evidence]
    explanation: str
    confidence: float | None

    @property
    def span(self) -> Span | None:
        """The claim's place in the answer (DESIGN.md calls it `answer_span`)."""
        return self.answer_span

    @property
    def flagged(self) -> bool:
        return self.label in FLAGGED_LABELS

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Claim:
        return cls(str(data.get("id", "")), str(data.get("text", "")), _span(data.get("answer_span")),
                   str(data.get("label", "")), str(data.get("category", "other")),
                   [Evidence.from_json(e) for e in data.get("evidence") or []], str(data.get("explanation", "")),
                   data.get("confidence"))


@dataclass(frozen=True)
class Review:
    status: str  # unrouted | auto_passed | in_review | adjudicating | adjudicated
    reason: str | None

    @classmethod
    def from_json(cls, data: Any) -> Review:
        data = data if isinstance(data, dict) else {}
        return cls(str(data.get("status", "unrouted")), data.get("reason"))


@dataclass(frozen=True)
class Judge:
    profile: str
    prompt_version: str
    backend: str
    model: str
    examples: str | None
    latency_ms: int | None
    attempts: int
    usage: dict[str, int]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Judge:
        return cls(str(data.get("profile", "")), str(data.get("prompt_version", "")), str(data.get("backend", "")),
                   str(data.get("model", "")), data.get("examples"), data.get("latency_ms"),
                   int(data.get("attempts", 0)), dict(data.get("usage") or {}))


@dataclass(frozen=True)
class Answer:
    """An answer's state: `GET /api/v1/answers/<id>` and a webhook's `data.answer`."""

    id: str
    external_id: str | None
    status: str  # queued | judging | judged | failed
    verdict: str | None  # GROUNDED | MOSTLY_GROUNDED | UNGROUNDED, once judged
    grounding_score: float | None
    claims: list[Claim]
    safe_answer: str | None  # what a guardrail may show; None until judged
    review: Review
    error: str | None  # why the judge failed
    rewrite_note: str
    fabrications: list[dict[str, Any]]
    omissions: list[dict[str, Any]]
    judge: Judge | None
    created_at: datetime | None
    judged_at: datetime | None
    url: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def done(self) -> bool:
        """Judged or failed: polling it again will not change the judge's result."""
        return self.status in DONE_STATUSES

    @property
    def flagged_claims(self) -> list[Claim]:
        return [claim for claim in self.claims if claim.flagged]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Answer:
        score = data.get("grounding_score")
        return cls(
            id=str(data["id"]), external_id=data.get("external_id"), status=str(data.get("status", "")),
            verdict=data.get("verdict"), grounding_score=None if score is None else float(score),
            claims=[Claim.from_json(c) for c in data.get("claims") or []], safe_answer=data.get("safe_answer"),
            review=Review.from_json(data.get("review")), error=data.get("error"),
            rewrite_note=str(data.get("rewrite_note") or ""), fabrications=list(data.get("fabrications") or []),
            omissions=list(data.get("omissions") or []),
            judge=Judge.from_json(data["judge"]) if isinstance(data.get("judge"), dict) else None,
            created_at=_time(data.get("created_at")), judged_at=_time(data.get("judged_at")), url=data.get("url"),
            raw=data,
        )


@dataclass(frozen=True)
class Page:
    """One page of `GET /api/v1/answers`; `next_cursor` is None on the last page."""

    results: list[Answer]
    next_cursor: str | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Page:
        return cls([Answer.from_json(row) for row in data.get("results") or []], data.get("next_cursor") or None)
