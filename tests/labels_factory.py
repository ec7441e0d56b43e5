"""Adjudicated answers built directly as rows, for exports and calibration tests that need exact
labels, reviewers and dates (the offline judge's labels are not under a test's control)."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone

from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Passage, Policy

PASSAGE = "Riders aged 65 and older pay a reduced fare of $1.00 per ride."
ANSWER = "Seniors pay $1.00. A monthly pass costs $75.00."


def user(name: str, role: str | None = None, **fields):
    account = get_user_model().objects.create_user(name, password=f"pw-{name}-123", **fields)
    if role:
        account.groups.add(Group.objects.get_or_create(name=role)[0])
    return account


def admin(name: str = "ada"):
    return user(name, "admin", is_staff=True)


def answer(*, text: str = ANSWER, question: str = "How much do seniors pay?", review_status: str = "adjudicated",
           routing_reason: str = "1 UNSUPPORTED claim", judged_at: datetime | None = None,
           profile: str = "claim_audit", version: str = "v1", model: str = "gpt-4o-mini", **fields) -> Answer:
    """A judged answer with one passage and a succeeded, shown run (no claims yet)."""
    row = Answer.objects.create(question=question, answer=text, status="judged", review_status=review_status,
                                routing_reason=routing_reason, judged_at=judged_at or timezone.now(),
                                policy=Policy.current(), **fields)
    Passage.objects.create(answer=row, pid="P1", position=0, text=PASSAGE, agency="Lakeshore Transit")
    run = JudgeRun.objects.create(answer=row, profile=profile, prompt_version=version, backend="openai", model=model,
                                  config_key=JudgeRun.make_config_key(profile, version, "openai", model),
                                  is_current=True, status="succeeded", verdict="MOSTLY_GROUNDED", grounding_score=0.5)
    Answer.objects.filter(pk=row.pk).update(judged_by=run)
    row.refresh_from_db()
    return row


def claim(answer: Answer, label: str, human: str = "", *, reviewer=None, span=(0, 18), text: str | None = None,
          origin: str = "judge", decided_at: datetime | None = None, quote: tuple[str, str] | None = None,
          note: str = "", category: str = "price", explanation: str = "", mode: str = "explicit") -> Claim:
    """A claim of the answer's shown run; with `human`, decided by `reviewer` (confirm if equal, else overturn)."""
    position = Claim.objects.filter(run=answer.judged_by).count()
    decision = "" if not human else "add" if origin == "reviewer" else "confirm" if human == label else "overturn"
    row = Claim.objects.create(
        run=answer.judged_by, answer=answer, position=position, cid=f"c{position + 1}",
        text=text or answer.answer[span[0]:span[1]], answer_start=span[0], answer_end=span[1], label=label,
        category=category, explanation=explanation, origin=origin, human_label=human, decision=decision,
        decided_by=reviewer if human else None, decided_at=(decided_at or timezone.now()) if human else None,
        decision_mode=mode if human else "", note=note, version=1 if human else 0,
    )
    if quote:
        text, match = quote
        found = PASSAGE.find(text) if match != "not_found" else -1
        Evidence.objects.create(claim=row, passage=answer.passages.get(), passage_pid="P1", position=0, quote=text,
                                start=found if found >= 0 else None, end=found + len(text) if found >= 0 else None,
                                match=match)
    return row
