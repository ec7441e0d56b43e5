"""Evidence-level labels: on a claim, the passage span a reviewer found supporting or
contradicting it, and the cause when the judge was wrong or the claim is bad (EvidenceMark).

A mark is the reviewer's own (one per claim, replaced as they refine it) and needs their lease,
as a decision does. Spans are character offsets into the passage's text, snapped to whole words
as claims added on the answer are; the text they cover is read back from the passage, never
taken from the browser. Nothing given clears the mark.
"""

from __future__ import annotations

from django.db import transaction

from reviewapp.audit import audit_record
from reviewapp.models import Claim, EvidenceMark, Passage
from reviewapp.review import service as review_service
from reviewapp.review.service import ReviewError

STANCES = tuple(EvidenceMark.Stance.values)
CAUSES = tuple(EvidenceMark.Cause.values)


def _span(passage: Passage, start: int | None, end: int | None) -> tuple[int, int]:
    if (
        start is None
        or end is None
        or not 0 <= start < end <= len(passage.text)
        or not passage.text[start:end].strip()
    ):
        raise ReviewError(
            f"start, end: select the text of {passage.pid} that bears on the claim "
            f"(offsets within 0-{len(passage.text)})."
        )
    return review_service.whole_words(passage.text, start, end)


def evidence_mark(
    *,
    user,
    claim: Claim,
    passage_pid: str,
    start: int | None,
    end: int | None,
    stance: str,
    cause: str,
) -> EvidenceMark | None:
    """Set (or, given nothing, clear) `user`'s evidence on `claim`. ReviewError names the field."""
    if stance and stance not in STANCES:
        raise ReviewError(f"stance: one of {', '.join(STANCES)}.")
    if cause and cause not in CAUSES:
        raise ReviewError(f"cause: one of {', '.join(CAUSES)}.")
    answer = claim.answer
    passage = None
    if passage_pid:
        passage = Passage.objects.filter(answer=answer, pid=passage_pid).first()
        if passage is None:
            raise ReviewError(f"passage: this answer has no passage {passage_pid!r}.")
        start, end = _span(passage, start, end)
        if not stance:
            raise ReviewError("stance: say whether the span supports or contradicts the claim.")
    elif stance or start is not None:
        raise ReviewError("passage: choose the passage the span is in.")
    review_service.require_lease(user, answer)
    values = {
        "passage": passage,
        "start": start if passage else None,
        "end": end if passage else None,
        "stance": stance if passage else "",
        "cause": cause,
    }
    with transaction.atomic():
        before = EvidenceMark.objects.filter(claim=claim, reviewer=user).first()
        if passage is None and not cause:
            if before is not None:
                before.delete()
                audit_record(
                    actor=user,
                    actor_label=user.get_username(),
                    action="claim.evidence_cleared",
                    obj=claim,
                    before=_state(before),
                )
            return None
        mark, _ = EvidenceMark.objects.update_or_create(
            claim=claim, reviewer=user, defaults=values | {"answer": answer}
        )
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action="claim.evidence_marked",
            obj=claim,
            before=_state(before) if before else None,
            after=_state(mark),
        )
    return mark


def _state(mark: EvidenceMark) -> dict:
    return {
        "passage": mark.passage.pid if mark.passage_id else None,
        "span": [mark.start, mark.end] if mark.start is not None else None,
        "stance": mark.stance,
        "cause": mark.cause,
    }


def marks_by_claim(user, claims: list[Claim]) -> dict[int, EvidenceMark]:
    """`user`'s marks on these claims, by claim id, with the text each span covers."""
    marks = EvidenceMark.objects.filter(claim__in=claims, reviewer=user).select_related("passage")
    out = {}
    for mark in marks:
        mark.text = mark.passage.text[mark.start : mark.end] if mark.passage_id else ""
        out[mark.claim_id] = mark
    return out
