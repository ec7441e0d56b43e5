"""Reads. Views and the API render what these return."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch

from judges.safe import safe_answer
from judges.types import Claim as ClaimResult
from judges.types import Evidence as EvidenceResult
from reviewapp.models import Answer, ApiClient, Claim, Evidence, JudgeRun


def answer_for_client(*, client: ApiClient, answer_id: int) -> Answer | None:
    return Answer.objects.filter(pk=answer_id, client=client).select_related("judged_by").first()


def shown_claims(answer: Answer) -> list[Claim]:
    """The claims of the run whose result the answer shows, with their evidence."""
    if answer.judged_by_id is None:
        return []
    return list(
        Claim.objects.filter(run_id=answer.judged_by_id)
        .order_by("position")
        .prefetch_related(Prefetch("evidence", queryset=Evidence.objects.order_by("position")))
    )


def claim_as_result(claim: Claim) -> ClaimResult:
    """A stored claim in the normalized result's shape (DESIGN.md field names)."""
    return ClaimResult(
        id=claim.cid,
        text=claim.text,
        answer_span=(claim.answer_start, claim.answer_end) if claim.answer_start is not None else None,
        label=claim.label,
        category=claim.category,
        evidence=[
            EvidenceResult(
                passage_id=ev.passage_pid,
                quote=ev.quote,
                span=(ev.start, ev.end) if ev.start is not None else None,
                match=ev.match,
            )
            for ev in claim.evidence.all()
        ],
        explanation=claim.explanation,
        confidence=claim.confidence,
    )


def latest_failed_run(answer: Answer) -> JudgeRun | None:
    return answer.runs.filter(status=JudgeRun.Status.FAILED).order_by("-started_at", "-id").first()


def answer_state(answer: Answer) -> dict[str, Any]:
    """What the API says about an answer: status, verdict, claims, safe answer, error."""
    claims = [claim_as_result(c) for c in shown_claims(answer)]
    run = answer.judged_by
    findings = run.findings if run else {}
    failed = latest_failed_run(answer) if answer.status == Answer.Status.FAILED else None
    return {
        "id": answer.pk,
        "external_id": answer.external_id,
        "status": answer.status,
        "verdict": answer.verdict or None,
        "grounding_score": answer.grounding_score,
        "claims": [c.model_dump(mode="json") for c in claims],
        "fabrications": findings.get("fabrications", []),
        "omissions": findings.get("omissions", []),
        "rewrite_note": findings.get("rewrite_note", ""),
        "safe_answer": safe_answer(answer.answer, claims) if run else None,
        "error": failed.error if failed else None,
        "judge": _judge_info(run) if run else None,
        "review": {"status": answer.review_status, "reason": answer.routing_reason or None},
        "created_at": answer.created_at,
        "judged_at": answer.judged_at,
    }


def _judge_info(run: JudgeRun) -> dict[str, Any]:
    return {
        "profile": run.profile,
        "prompt_version": run.prompt_version,
        "backend": run.backend,
        "model": run.model,
        "latency_ms": run.latency_ms,
        "attempts": run.attempts,
        "usage": {"prompt_tokens": run.prompt_tokens, "completion_tokens": run.completion_tokens},
    }
