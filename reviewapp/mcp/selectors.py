"""What the MCP tools read, always one API client's own answers (the token's)."""

from __future__ import annotations

from typing import Any

from django.db.models import Case, Count, F, IntegerField, Min, Value, When
from django.utils import timezone

from judges.types import FLAGGED_LABELS
from reviewapp.models import Answer, ApiClient, Claim
from reviewapp.policy.routing import LABEL_PRIORITY

OPEN_REVIEW = (Answer.ReviewStatus.IN_REVIEW, Answer.ReviewStatus.ADJUDICATING)


def answer_summary(answer: Answer) -> dict[str, Any]:
    """One line of a list: enough to pick an answer and ask get_answer for the rest."""
    return {"id": str(answer.public_id), "external_id": answer.external_id,
            "session_id": answer.session_id or None, "status": answer.status,
            "verdict": answer.verdict or None, "grounding_score": answer.grounding_score,
            "review": answer.review_status, "created_at": answer.created_at.isoformat()}


def queue_status(client: ApiClient) -> dict[str, Any]:
    """The client's answers by judging status and by review status, and how long the oldest one
    waiting for a reviewer has waited."""
    answers = Answer.objects.filter(client=client)
    judging = dict(answers.values_list("status").annotate(n=Count("id")).order_by())
    review = dict(answers.values_list("review_status").annotate(n=Count("id")).order_by())
    oldest = answers.filter(review_status__in=OPEN_REVIEW).aggregate(at=Min("created_at"))["at"]
    waited = round((timezone.now() - oldest).total_seconds()) if oldest else None
    return {
        "judging": {status: judging.get(status, 0) for status in Answer.Status.values},
        "review": {status: review.get(status, 0) for status in Answer.ReviewStatus.values},
        "oldest_waiting_since": oldest.isoformat() if oldest else None,
        "oldest_waiting_seconds": waited,
    }


def flagged_claims(client: ApiClient, limit: int) -> list[dict[str, Any]]:
    """The worst claims no reviewer has decided yet, of the client's answers waiting for review:
    CONTRADICTED before UNSUPPORTED before PARTIALLY_SUPPORTED (routing's order), then the answer's
    priority, oldest first; each with its evidence."""
    ranks = [When(label=label, then=Value(rank)) for label, rank in LABEL_PRIORITY.items()]
    severity = Case(*ranks, default=Value(0), output_field=IntegerField())
    claims = (Claim.objects
              .filter(answer__client=client, answer__review_status__in=OPEN_REVIEW, decision="",
                      label__in=FLAGGED_LABELS)
              .filter(run_id=F("answer__judged_by_id"))  # the claims the answer shows
              .annotate(severity=severity)
              .select_related("answer")
              .prefetch_related("evidence")
              .order_by("-severity", "-answer__priority", "answer__created_at", "position")[:limit])
    return [
        {
            "answer_id": str(claim.answer.public_id),
            "external_id": claim.answer.external_id,
            "claim": claim.text,
            "label": claim.label,
            "category": claim.category,
            "explanation": claim.explanation,
            "evidence": [_evidence(ev) for ev in claim.evidence.all()],
        }
        for claim in claims
    ]


def _evidence(ev) -> dict[str, Any]:
    return {"passage_id": ev.passage_pid, "quote": ev.quote, "match": ev.match,
            "span": [ev.start, ev.end] if ev.start is not None else None}
