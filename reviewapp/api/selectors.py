"""The API's reads: a client's answers, by public id or in keyset pages, and what the API (and the
webhooks, and the MCP tools) say about an answer."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db.models import Prefetch

from judges.safe import safe_answer
from judges.types import Claim as ClaimResult
from judges.types import Evidence as EvidenceResult
from reviewapp.api.schemas import AnswerState
from reviewapp.db.keyset import PageOrder, keyset_ids
from reviewapp.models import Answer, ApiClient, Claim, Evidence, JudgeRun
from reviewapp.quality.selectors import live


def answer_status(answer_id: int) -> str | None:
    return Answer.objects.filter(pk=answer_id).values_list("status", flat=True).first()


def answer_for_client(*, client: ApiClient, public_id: str) -> Answer | None:
    """The client's answer by its public id; None for anything else, a primary key included."""
    try:
        public_id = UUID(public_id)
    except ValueError:
        return None
    return (
        Answer.objects.filter(public_id=public_id, client=client)
        .select_related("judged_by")
        .first()
    )


@dataclass(frozen=True)
class ClientAnswerFilters:
    external_id: str | None = None
    status: str | None = None
    verdict: str | None = None
    since: datetime | None = None


class BadCursor(ValueError):
    pass


def client_answers_page(*, client: ApiClient, filters: ClientAnswerFilters, limit: int,
                        cursor: str | None = None) -> tuple[list[Answer], str | None]:
    """The client's own answers, newest first, in keyset pages: (answers, the next page's cursor or
    None). The cursor names the last row by its time and public id, never by its row number, and is
    URL-safe (base64 of the keyset's own cursor)."""
    qs = live(Answer.objects.filter(client=client))
    if filters.external_id is not None:
        qs = qs.filter(external_id=filters.external_id)
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.verdict:
        qs = qs.filter(verdict=filters.verdict)
    if filters.since is not None:
        qs = qs.filter(created_at__gte=filters.since)
    after = ""
    if cursor:
        try:
            after = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        except ValueError:
            after = ""
        if CLIENT_NEWEST.decoded(after) is None:
            raise BadCursor(
                "cursor: not a cursor this API returned (pass next_cursor back unchanged)"
            )
    keys, _, following = keyset_ids(qs, CLIENT_NEWEST, size=limit, after=after)
    rows = {
        answer.public_id: answer
        for answer in Answer.objects.filter(public_id__in=keys).select_related("judged_by")
    }
    token = base64.urlsafe_b64encode(following.encode()).decode().rstrip("=") if following else None
    return [rows[key] for key in keys], token


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
        answer_span=(
            (claim.answer_start, claim.answer_end) if claim.answer_start is not None else None
        ),
        label=claim.label,
        category=claim.category,
        evidence=[
            EvidenceResult(
                passage_id=ev.passage_pid,
                quote=ev.quote,
                span=(ev.start, ev.end) if ev.start is not None else None,
                match=ev.match,
                differences=ev.differences,
            )
            for ev in claim.evidence.all()
        ],
        explanation=claim.explanation,
        confidence=claim.confidence,
    )


def latest_failed_run(answer: Answer) -> JudgeRun | None:
    return answer.runs.filter(status=JudgeRun.Status.FAILED).order_by("-started_at", "-id").first()


def claims_as_results(claim_rows: list[dict], evidence_rows: list[dict]) -> list[ClaimResult]:
    """claim_as_result() of claims not read back: the rows the worker is storing (Claim and
    Evidence fields by attname; evidence with the claim's position as claim_position)."""
    evidence: dict[int, list[EvidenceResult]] = {}
    for ev in evidence_rows:
        evidence.setdefault(ev["claim_position"], []).append(
            EvidenceResult(
                passage_id=ev["passage_pid"],
                quote=ev["quote"],
                match=ev["match"],
                span=(ev["start"], ev["end"]) if ev["start"] is not None else None,
                differences=ev["differences"],
            )
        )
    return [
        ClaimResult(
            id=c["cid"],
            text=c["text"],
            label=c["label"],
            category=c["category"],
            answer_span=(
                (c["answer_start"], c["answer_end"]) if c["answer_start"] is not None else None
            ),
            evidence=evidence.get(c["position"], []),
            explanation=c["explanation"],
            confidence=c["confidence"],
        )
        for c in sorted(claim_rows, key=lambda row: row["position"])
    ]


def answer_state(answer: Answer, claims: list[ClaimResult] | None = None) -> dict[str, Any]:
    """What the API says about an answer: status, verdict, claims, safe answer, error. `claims`:
    those of the run it shows, when the caller has them (claims_as_results)."""
    if claims is None:
        claims = [claim_as_result(c) for c in shown_claims(answer)]
    run = answer.judged_by
    findings = run.findings if run else {}
    failed = latest_failed_run(answer) if answer.status == Answer.Status.FAILED else None
    return {
        "id": answer.public_id,
        "external_id": answer.external_id,
        "session_id": answer.session_id or None,
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


def answer_state_json(answer: Answer, claims: list[ClaimResult] | None = None) -> dict[str, Any]:
    """answer_state() as the API and the webhooks send it (JSON types)."""
    return AnswerState.model_validate(answer_state(answer, claims)).model_dump(mode="json")


def _judge_info(run: JudgeRun) -> dict[str, Any]:
    return {
        "profile": run.profile,
        "prompt_version": run.prompt_version,
        "examples": run.prompt_version.partition("+")[2] or None,  # "v3+ex2" -> "ex2"
        "backend": run.backend,
        "model": run.model,
        "latency_ms": run.latency_ms,
        "attempts": run.attempts,
        "usage": {"prompt_tokens": run.prompt_tokens, "completion_tokens": run.completion_tokens},
    }


# The API's list: no row numbers in its cursors (the public id breaks ties instead).
CLIENT_NEWEST = PageOrder((("created_at", True, datetime.fromisoformat), ("public_id", True, UUID)))
