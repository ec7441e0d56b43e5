"""Rows and payloads the app's tests share: users with roles, posted and judged answers, adjudicated
answers built directly as rows, webhook endpoints and deliveries, policy form values.

Two ways to get a judged answer: `judged()` posts one and has the offline judge judge it in process
(real ingest and judging); `answer()` and `claim()` build the rows directly, for exports and
calibration tests that need exact labels, reviewers and dates (the offline judge's labels are not
under a test's control). Judge-level inputs (the fake LLM's replies) are in
tests/judges/factories.py.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone

import judges
from reviewapp.models import (
    Answer, ApiClient, Claim, Evidence, JudgeRun, Passage, Policy, WebhookDelivery, WebhookEndpoint,
)
from reviewapp.api.ingest import answer_ingest
from reviewapp.judging.service import answer_judge

PASSAGE = "Riders aged 65 and older pay a reduced fare of $1.00 per ride."
ANSWER = "Seniors pay $1.00. A monthly pass costs $75.00."


# --- users ------------------------------------------------------------------------------------


def user(name: str, role: str | None = None, **fields):
    """A user with password `pw-<name>-123` and, if named, a role (its group; transactional tests
    flush the data migrations' rows, so the group is made if missing)."""
    account = get_user_model().objects.create_user(name, password=f"pw-{name}-123", **fields)
    if role:
        account.groups.add(Group.objects.get_or_create(name=role)[0])
    return account


def admin(name: str = "ada"):
    return user(name, "admin", is_staff=True)


# --- answers through the real services --------------------------------------------------------


def fare_payload(**overrides) -> dict:
    """A request body for POST /api/v1/answers: a senior-fare answer with one wrong price ($75.00;
    P2 says $92.00)."""
    payload = {
        "external_id": "conv-1",
        "question": "How much is a senior fare?",
        "passages": [
            {
                "id": "P1",
                "text": (
                    "Riders aged 65 and older pay a reduced fare of $1.00 per ride. "
                    "Proof of age, such as a state ID, must be shown when boarding."
                ),
                "tag": "reduced-fare",
                "agency": "Lakeshore Regional Transit",
                "title": "Fare Policy",
                "section": "4.2",
                "source_url": "https://example.org/fares",
                "fetched_at": "2026-08-16",
            },
            {"text": "A 30-day pass costs $92.00 and covers all buses and trains."},
        ],
        "answer": (
            "Riders aged 65 and older pay a reduced fare of $1.00 per ride. A 30-day pass costs"
            " $75.00."
        ),
    }
    payload.update(overrides)
    return payload


def ingested(answer: str | None = None, *, client: ApiClient | None = None, **fields) -> Answer:
    """An answer stored by the ingest service: fare_payload() with `answer` and `fields` replaced
    and, unless given, no external_id (so every call stores a new answer)."""
    if answer is not None:
        fields["answer"] = answer
    payload = fare_payload(**({"external_id": None} | fields))
    return answer_ingest(client=client, request=judges.JudgeRequest.model_validate(payload)).answer


def judged(answer: str | None = None, *, client: ApiClient | None = None, **fields) -> Answer:
    """An ingested answer judged in process (the offline judge unless the policy says otherwise)."""
    row = ingested(answer, client=client, **fields)
    answer_judge(answer_id=row.pk)
    row.refresh_from_db()
    return row


def in_review(**fields) -> Answer:
    """fare_payload()'s answer judged and in review: c1 SUPPORTED, c2 CONTRADICTED (P2 says $92.00,
    not $75.00)."""
    row = judged(**fields)
    # A grounded answer would usually auto-pass; here it is in the audit sample, so in review.
    Answer.objects.filter(pk=row.pk, review_status="auto_passed").update(
        review_status="in_review", routing_reason="audit sample"
    )
    row.refresh_from_db()
    return row


def flagged(answer: Answer) -> Claim:
    """The one claim of `answer` the judge did not find SUPPORTED."""
    return answer.claims.exclude(label="SUPPORTED").get()


def next_policy(**fields) -> Policy:
    """A new current Policy: the current one's version plus one, with `fields` set."""
    return Policy.objects.create(version=Policy.current().version + 1, **fields)


def openai_policy(profile: str = "claim_verification", **fields) -> Policy:
    """A new current Policy judging with the openai backend (in tests, the fake LLM)."""
    return next_policy(
        judge_backend="openai",
        judge_profile=profile,
        **({"note": "judge with the (fake) LLM"} | fields),
    )


def policy_form(policy: Policy, **changes) -> dict:
    """The /policy/ form's fields as `policy` fills them, with `changes`."""
    values = {
        "score_threshold": policy.score_threshold,
        "blocking_labels": policy.blocking_labels,
        "critical_categories": policy.critical_categories,
        "audit_sample_rate": policy.audit_sample_rate,
        "lease_seconds": policy.lease_seconds,
        "judge_profile": "",
        "judge_backend": "",
        "judge_model": "",
        "escalation_profile": "",
        "escalation_backend": "",
        "escalation_model": "",
        "escalation_margin": policy.escalation_margin,
        "note": "test change",
    }
    if policy.critical_single_claim_blocks:
        values["critical_single_claim_blocks"] = "on"
    return values | changes


# --- adjudicated answers built as rows --------------------------------------------------------


def answer(
    *,
    text: str = ANSWER,
    question: str = "How much do seniors pay?",
    review_status: str = "adjudicated",
    routing_reason: str = "1 UNSUPPORTED claim",
    judged_at: datetime | None = None,
    profile: str = "claim_audit",
    version: str = "v1",
    model: str = "gpt-4o-mini",
    **fields,
) -> Answer:
    """A judged answer with one passage and a succeeded, shown run (no claims yet)."""
    row = Answer.objects.create(
        question=question,
        answer=text,
        status="judged",
        review_status=review_status,
        routing_reason=routing_reason,
        judged_at=judged_at or timezone.now(),
        policy=Policy.current(),
        **fields,
    )
    Passage.objects.create(
        answer=row, pid="P1", position=0, text=PASSAGE, agency="Lakeshore Transit"
    )
    run = JudgeRun.objects.create(
        answer=row,
        profile=profile,
        prompt_version=version,
        backend="openai",
        model=model,
        config_key=JudgeRun.make_config_key(profile, version, "openai", model),
        is_current=True,
        status="succeeded",
        verdict="MOSTLY_GROUNDED",
        grounding_score=0.5,
    )
    Answer.objects.filter(pk=row.pk).update(judged_by=run)
    row.refresh_from_db()
    return row


def claim(
    answer: Answer,
    label: str,
    human: str = "",
    *,
    reviewer=None,
    span=(0, 18),
    text: str | None = None,
    origin: str = "judge",
    decided_at: datetime | None = None,
    quote: tuple[str, str] | None = None,
    note: str = "",
    category: str = "price",
    explanation: str = "",
    mode: str = "explicit",
) -> Claim:
    """A claim of the answer's shown run; with `human`, decided by `reviewer` (confirm if equal,
    else overturn)."""
    position = Claim.objects.filter(run=answer.judged_by).count()
    decision = (
        ""
        if not human
        else "add" if origin == "reviewer" else "confirm" if human == label else "overturn"
    )
    row = Claim.objects.create(
        run=answer.judged_by,
        answer=answer,
        position=position,
        cid=f"c{position + 1}",
        text=text or answer.answer[span[0] : span[1]],
        answer_start=span[0],
        answer_end=span[1],
        label=label,
        category=category,
        explanation=explanation,
        origin=origin,
        human_label=human,
        decision=decision,
        decided_by=reviewer if human else None,
        decided_at=(decided_at or timezone.now()) if human else None,
        decision_mode=mode if human else "",
        note=note,
        version=1 if human else 0,
    )
    if quote:
        text, match = quote
        found = PASSAGE.find(text) if match != "not_found" else -1
        Evidence.objects.create(
            claim=row,
            passage=answer.passages.get(),
            passage_pid="P1",
            position=0,
            quote=text,
            start=found if found >= 0 else None,
            end=found + len(text) if found >= 0 else None,
            match=match,
        )
    return row


# --- webhooks ---------------------------------------------------------------------------------


def webhook_endpoint(
    url: str = "https://hooks.example.com/h",
    events=("answer.judged", "answer.adjudicated"),
    client: ApiClient | None = None,
) -> tuple[ApiClient, WebhookEndpoint]:
    """An endpoint of `client` (by default a new API client) subscribed to `events`."""
    client = client or ApiClient.objects.create(
        name="other-bot", token_hash="x" * 64, token_prefix="cdk_x"
    )
    endpoint = WebhookEndpoint.objects.create(client=client, url=url, events=list(events),
                                              secret=WebhookEndpoint.new_secret())
    return client, endpoint


def webhook_delivery(endpoint: WebhookEndpoint, **fields) -> WebhookDelivery:
    """A judged event due now to `endpoint`, about an answer made directly, not ingested: ingesting
    would queue it for judging (and, with a worker running, a judged event of its own)."""
    row = Answer.objects.create(
        client=endpoint.client, answer="Riders aged 65 and older pay $1.00 per ride."
    )
    return WebhookDelivery.objects.create(
        endpoint=endpoint,
        answer=row,
        event="answer.judged",
        event_id=f"evt_{row.pk}",
        next_attempt_at=timezone.now(),
        payload={
            "id": f"evt_{row.pk}",
            "type": "answer.judged",
            "data": {"answer": {"id": row.pk, "note": "naïve"}},
        },
        **fields,
    )
