"""Notes as they are typed: a draft per reviewer and claim, kept on the server so that a redraw,
`Esc`, a move to another claim, a reload or leaving the answer never loses the text.

A draft becomes the note of the reviewer's next decision on the claim (the decide form posts
it), of the bulk confirmation when they finish, or, on a claim they already decided, an edited
note (the decision recorded again with it: a Review row and an AuditEvent, as any decision)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from reviewapp.review import selectors
from reviewapp.models import Answer, Claim, DecisionMode, NoteDraft
from reviewapp.review import service as review_service
from reviewapp.review.service import ReviewError


def draft_save(*, user, claim: Claim, text: str) -> None:
    """Keep `text` (a NoteForm's clean value) as `user`'s draft note on `claim`; reading the page
    never needs the lease, and neither does typing: the draft is the reviewer's alone."""
    NoteDraft.objects.update_or_create(reviewer=user, claim=claim,
                                       defaults={"answer_id": claim.answer_id, "text": text})


def drafts_for(user, answer: Answer) -> dict[int, str]:
    """`user`'s drafts on `answer`, by claim id."""
    return dict(
        NoteDraft.objects.filter(reviewer=user, answer=answer).values_list("claim_id", "text")
    )


def drafts_clear(user, claim_ids: Iterable[int]) -> None:
    NoteDraft.objects.filter(reviewer=user, claim_id__in=list(claim_ids)).delete()


def own_decisions(user, answer: Answer) -> dict[int, tuple[str, str, str, int]]:
    """(decision, label, note, version) of each claim `user` may edit the note of: their own
    decisions in a pass of several reviewers, else the claims' stored decisions."""
    if selectors.multi_review(answer) and answer.review_status == Answer.ReviewStatus.IN_REVIEW:
        versions = selectors.own_versions(answer, user)
        return {r.claim_id: (r.decision, r.final_label, r.note, versions.get(r.claim_id, 0))
                for r in selectors.current_decisions(answer.pk, reviewer=user)}
    return {c.pk: (c.decision, c.human_label, c.note, c.version)
            for c in selectors.shown_claims_for_review(answer).exclude(decision="")}


def note_edit(*, user, claim: Claim, note: str) -> Claim:
    """Change the note of a decided claim: the same decision again, with the new note, by `user`
    (explicit: they looked at it now), audited as every decision is."""
    decision, label, _, version = own_decisions(user, claim.answer).get(claim.pk, ("", "", "", 0))
    if decision not in (Claim.Decision.CONFIRM, Claim.Decision.OVERTURN):
        raise ReviewError(
            f"Claim {claim.cid} has no confirm or overturn of yours to attach a note to: "
            "decide it first."
        )
    with transaction.atomic():
        claim = review_service.claim_decide(
            user=user,
            claim=claim,
            decision=decision,
            label=label,
            note=note,
            expected_version=version,
            mode=DecisionMode.EXPLICIT,
        )
        drafts_clear(user, [claim.pk])
    return claim


def drafts_for_finish(*, user, answer: Answer) -> dict[int, str]:
    """Before `user` finishes: each draft on a claim they decided becomes its note (if it differs);
    the rest are returned, by claim id, to go with the bulk confirmation of the claims left."""
    drafts = drafts_for(user, answer)
    decided = own_decisions(user, answer)
    for claim in Claim.objects.filter(pk__in=[pk for pk in drafts if pk in decided]):
        if drafts[claim.pk] != decided[claim.pk][2]:
            claim.answer = answer
            note_edit(user=user, claim=claim, note=drafts[claim.pk])
    return {pk: text for pk, text in drafts.items() if pk not in decided}
