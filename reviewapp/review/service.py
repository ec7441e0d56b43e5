"""Reviewing: leases on answers, decisions on claims, undo, consensus and adjudication.

Concurrency rules:
* each reviewer's lease is their ReviewPass on the answer; taking one locks the answer's row
  (`select_for_update(skip_locked=True)` for the next item, a plain row lock for a named one) and
  counts the places left under that lock, so an answer needing N reviews never gets N + 1
  reviewers, nor one reviewer twice; a lease expires by itself;
* a decision that sets a claim's final label (one review asked for, or a lead adjudicating) is a
  conditional UPDATE on the claim's version: of two reviewers (or two tabs) deciding the same
  claim at once, one wins and the other gets DecisionConflict with the current state; a
  reviewer's decision on an answer needing several reviews is their own Review row only, checked
  against their own version of the claim under a lock on their pass; every decision is one
  Review row and one AuditEvent, never two, never none.

Consensus (several reviews): when the last of the N passes finishes, each claim on which every
reviewer chose the same label gets it (`unanimous`); with three reviewers, a label two of them
chose is enough (`majority`). If any claim is left, the answer waits for a lead (`adjudicating`),
who decides it (`lead`); only then is it adjudicated and the client told.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import SimpleNamespace

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from judges.scoring import verdict_for
from judges.types import CATEGORIES, LABELS
from reviewapp.review import selectors
from reviewapp.access import ROLES, is_lead, is_lead_or_admin, is_reviewer
from reviewapp.models import (
    Answer,
    AuditEvent,
    Claim,
    ConsensusMethod,
    DecisionMode,
    Policy,
    Review,
    ReviewPass,
)

# Reads of what a reviewer may see, used by the writes here too (one definition, in selectors).
from reviewapp.review.selectors import (
    has_finished,
    multi_review,
    pending_claims,
    shown_claims_for_review,
)
from reviewapp.quality import selectors as quality_selectors
from reviewapp.quality import service as quality_service
from reviewapp.audit import audit_record
from reviewapp.webhooks.service import event_record
from reviewapp.policy.routing import AUDIT_REASON
from reviewapp import enqueue

IN_REVIEW = Answer.ReviewStatus.IN_REVIEW
ADJUDICATING = Answer.ReviewStatus.ADJUDICATING
ADJUDICATED = Answer.ReviewStatus.ADJUDICATED
OPEN, FINISHED, SKIPPED = (
    ReviewPass.Status.OPEN,
    ReviewPass.Status.FINISHED,
    ReviewPass.Status.SKIPPED,
)
REVIEW, ADJUDICATION = Review.Stage.REVIEW, Review.Stage.ADJUDICATION
# lease_next: candidates found full once locked (another reviewer took the last place meanwhile)
# are passed over; after this many it gives up rather than loop.
LEASE_TRIES = 5
ASSIGN_MAX = 500  # answers one assignment takes (a filtered set on /answers/)
PAUSED_MESSAGE = (
    "You are paused from the live queue: your recent decisions are having a second look. "
    "A lead resumes you from the Reviewers page."
)


class ReviewError(Exception):
    """A review action that cannot be done; the message is for the reviewer."""


class LeaseHeld(ReviewError):
    def __init__(self, answer: Answer):
        if answer.reviews_required > 1 and answer.review_status == IN_REVIEW:
            super().__init__(
                f"All {answer.reviews_required} reviewers' places on this answer are taken."
            )
            return
        holder = answer.lease_holder.get_username() if answer.lease_holder else "someone"
        until = (
            f" (lease until {answer.lease_expires_at:%H:%M:%S} UTC)"
            if answer.lease_expires_at
            else ""
        )
        super().__init__(f"{holder} is reviewing this answer{until}.")


class ReopenUnconfirmed(ReviewError):
    """Undoing a decision on an adjudicated answer reopens it, and its client was told the verdict:
    the reviewer confirms first (`reopen=True`)."""


class DecisionConflict(ReviewError):
    def __init__(self, claim: Claim, message: str | None = None):
        who = claim.decided_by.get_username() if claim.decided_by else "someone"
        super().__init__(
            message or f"{who} changed claim {claim.cid} while you were deciding; it now reads "
            f"{claim.human_label or 'undecided'}. Your decision was not saved."
        )
        self.claim = claim


def _lease_free(now: datetime) -> Q:
    return ~Answer.live_lease(now)


def _lease_until(now: datetime):
    return now + timedelta(seconds=Policy.current().lease_seconds)


# --- leases ----------------------------------------------------------------------------------


def _takes_place(now: datetime) -> Q:
    """A pass that holds one of its answer's places: finished, or open with a live lease or an
    assignment."""
    return Q(status=FINISHED) | ReviewPass.place_held(now)


def _open_to(queue: QuerySet[Answer], user: AbstractUser, now: datetime):
    """The answers of `queue` with a place left for `user`, who has not finished a pass on them."""
    others = (
        ReviewPass.objects.filter(answer=OuterRef("pk"))
        .filter(_takes_place(now))
        .exclude(reviewer=user)
        .order_by()
        .values("answer")
        .annotate(n=Count("*"))
        .values("n")
    )
    finished = ReviewPass.objects.filter(answer=OuterRef("pk"), reviewer=user, status=FINISHED)
    return (queue.annotate(places_taken=Coalesce(Subquery(others), 0))
            .filter(places_taken__lt=F("reviews_required")).exclude(Exists(finished)))


def lease_next(
    *, user: AbstractUser, queue: QuerySet[Answer] | None = None, leaving: int | None = None
) -> Answer | None:
    """Lease the next answer of `queue` (default: the whole queue) with a place for `user`.

    An answer the user already holds comes first, so an abandoned tab's item is not stranded; then
    the answers a lead assigned to them; then the queue in order. `leaving` is the answer the user
    moves on from (`n` on its page): never the one handed, and its lease is given back, as leaving
    its page does, with the decisions made on it kept. Unlike a skip it may come back to the same
    reviewer later, worst first.
    """
    now = timezone.now()
    queue = queue if queue is not None else Answer.objects.filter(review_status=IN_REVIEW)
    queue = queue.exclude(pk__in=skipped_recently(user=user, now=now))
    if leaving is not None:
        queue = queue.exclude(pk=leaving)
        lease_release(user=user, answer_id=leaving)
    mine = ReviewPass.objects.filter(answer=OuterRef("pk"), reviewer=user, status=OPEN)
    for own in (mine.live(now), mine.filter(assigned_by__isnull=False)):
        for answer in queue.filter(Exists(own)).in_queue_order()[:LEASE_TRIES]:
            if lease_take(user=user, answer=answer):
                return answer
    if (
        held := quality_service.gold_held(user=user, lease_until=_lease_until(now), leaving=leaving)
    ) is not None:
        return held
    if quality_selectors.open_pause(user) is not None:
        return None  # paused from the live queue, and from gold with it, until a lead resumes them
    gold = quality_service.gold_serve(user=user, lease_until=_lease_until(now), leaving=leaving)
    if gold is not None:
        return gold
    queue = quality_selectors.live(queue)
    passed_over: list[int] = []
    for _ in range(LEASE_TRIES):
        with transaction.atomic():
            candidates = _open_to(queue, user, now).exclude(pk__in=passed_over).in_queue_order()
            # Skip answers another reviewer is taking; if every one left is being taken right now
            # (two reviewers wanting the last answer's two places), wait for one: such a lock is
            # brief.
            answer = (candidates.select_for_update(skip_locked=True, of=("self",)).first()
                      or candidates.select_for_update(of=("self",)).first())
            if answer is None:
                return None
            if _take_locked(user, answer, now):
                answer.refresh_from_db()
                return answer
            passed_over.append(answer.pk)
    return None


def _take_locked(user: AbstractUser, answer: Answer, now: datetime) -> bool:
    """Take (or renew) `user`'s pass on `answer`, whose row the caller has locked: the places are
    counted under that lock, so two reviewers cannot both take the last one."""
    if answer.review_status != IN_REVIEW:
        return False
    # A gold copy is its reviewer's alone; a paused reviewer takes no live answer.
    copy_for = quality_selectors.gold_copy_reviewer(answer.pk)
    if copy_for is not None and copy_for != user.pk:
        return False
    if copy_for is None and quality_selectors.open_pause(user) is not None:
        return False
    mine = ReviewPass.objects.filter(answer=answer, reviewer=user).first()
    if mine is not None and mine.status == FINISHED:
        return False
    holds = mine is not None and mine.holds_place(now)
    if not holds:
        taken = (
            ReviewPass.objects.filter(answer=answer)
            .filter(_takes_place(now))
            .exclude(reviewer=user)
            .count()
        )
        if taken >= answer.reviews_required:
            return False
    until = _lease_until(now)
    if mine is None:
        ReviewPass.objects.create(answer=answer, reviewer=user, lease_expires_at=until)
    else:
        ReviewPass.objects.filter(pk=mine.pk).update(
            status=OPEN, lease_expires_at=until, finished_at=None
        )
    Answer.objects.filter(pk=answer.pk).update(lease_holder=user, lease_expires_at=until)
    return True


def lease_take(*, user: AbstractUser, answer: Answer) -> bool:
    """Take (or renew) a lease on one answer: a reviewer's pass if it waits for review and has a
    place for them; a lead's, on the whole answer, if it waits for a lead and no other lead holds
    it."""
    now = timezone.now()
    with transaction.atomic():
        locked = Answer.objects.select_for_update(of=("self",)).filter(pk=answer.pk).first()
        if locked is None:
            taken = False
        elif locked.review_status == ADJUDICATING:
            taken = (
                is_lead(user)
                and not reviewed(user, locked)
                and bool(
                    Answer.objects.filter(pk=answer.pk, review_status=ADJUDICATING)
                    .filter(_lease_free(now) | Q(lease_holder=user))
                    .update(lease_holder=user, lease_expires_at=_lease_until(now))
                )
            )
        else:
            taken = _take_locked(user, locked, now)
    answer.refresh_from_db(
        fields=["lease_holder", "lease_expires_at", "review_status", "reviews_required"]
    )
    return taken


def lease_live(answer: Answer) -> bool:
    """Whether somebody holds the answer's latest lease and it has not expired."""
    return answer.lease_live(timezone.now())


def holds_lease(*, user: AbstractUser, answer: Answer) -> bool:
    """Whether `user` holds a live lease on `answer` (reading a page never takes one)."""
    if answer.review_status == ADJUDICATING:
        return answer.lease_holder_id == user.pk and lease_live(answer)
    return answer.review_status == IN_REVIEW and ReviewPass.objects.filter(
        answer=answer, reviewer=user).live(timezone.now()).exists()


def can_take(*, user: AbstractUser, answer: Answer) -> bool:
    """Whether a lease on `answer` is free for `user` now (what "Take this answer" would do; a
    read)."""
    now = timezone.now()
    if answer.review_status == ADJUDICATING:
        return (
            is_lead(user)
            and not reviewed(user, answer)
            and (not lease_live(answer) or answer.lease_holder_id == user.pk)
        )
    if answer.review_status != IN_REVIEW:
        return False
    return _open_to(Answer.objects.filter(pk=answer.pk), user, now).exists()


def lease_renew(*, user: AbstractUser, answer_id: int) -> bool:
    now = timezone.now()
    until = _lease_until(now)
    mine = Q(Answer.live_lease(now), lease_holder=user)
    renewed = (
        ReviewPass.objects.filter(
            answer_id=answer_id, reviewer=user, answer__review_status=IN_REVIEW
        )
        .live(now)
        .update(lease_expires_at=until)
    )
    Answer.objects.filter(mine, pk=answer_id, review_status=IN_REVIEW).update(
        lease_expires_at=until
    )
    adjudicating = Answer.objects.filter(mine, pk=answer_id, review_status=ADJUDICATING).update(
        lease_expires_at=until
    )
    return bool(renewed or adjudicating)


def lease_release(*, user: AbstractUser, answer_id: int) -> bool:
    ReviewPass.objects.filter(answer_id=answer_id, reviewer=user, status=OPEN).update(
        lease_expires_at=None
    )
    return bool(
        Answer.objects.filter(pk=answer_id, lease_holder=user).update(
            lease_holder=None, lease_expires_at=None
        )
    )


def skipped_recently(*, user: AbstractUser, now: datetime | None = None) -> list[int]:
    """Answers `user` skipped within the lease length: lease_next hands them to others, not back."""
    since = (now or timezone.now()) - timedelta(seconds=Policy.current().lease_seconds)
    ids = AuditEvent.objects.filter(
        action=selectors.SKIPPED, actor=user, object_type="answer", created_at__gte=since
    ).values_list("object_id", flat=True)
    return [int(i) for i in ids]


SKIP_REASONS = {  # why a reviewer passed on an answer (kept in the skip's AuditEvent)
    "domain": "not my domain", "lead": "needs a lead", "passages": "passages missing or broken",
    "unreadable": "the answer cannot be read", "other": "other",
}


def answer_skip(*, user: AbstractUser, answer: Answer, reason: str = "") -> None:
    """Pass on an answer: give its lease (and my place on it) back and keep it from coming back to
    me for a while; a skip counts as not reviewed. A skip is an AuditEvent too, so skips are
    counted per reviewer (selectors.skips_today), with its `reason` (SKIP_REASONS, or none)."""
    if reason and reason not in SKIP_REASONS:
        raise ReviewError(f"A skip's reason is one of: {', '.join(SKIP_REASONS)}.")
    with transaction.atomic():
        released = lease_release(user=user, answer_id=answer.pk)
        ReviewPass.objects.filter(answer=answer, reviewer=user, status=OPEN).update(
            status=SKIPPED, finished_at=timezone.now()
        )
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action=selectors.SKIPPED,
            obj=answer,
            after={"released": released, "reason": reason or None},
        )


def lease_refusal(answer: Answer, user: AbstractUser | None = None) -> str:
    """Why a lease on `answer` could not be taken (after lease_take refreshed it)."""
    if answer.review_status == ADJUDICATING:
        if user is not None and not is_lead(user):
            return "The reviewers disagree on this answer: a lead decides it."
        if user is not None and reviewed(user, answer):
            return (
                "You reviewed this answer: another lead settles the disagreement you are part of."
            )
        return str(LeaseHeld(answer))
    if answer.review_status != IN_REVIEW:
        return "This answer is not waiting for review."
    if user is not None and quality_selectors.open_pause(user) is not None:
        return PAUSED_MESSAGE
    if user is not None and has_finished(user, answer):
        return "You have finished your review of this answer; it waits for the other reviewers."
    return str(LeaseHeld(answer))


def require_lease(user: AbstractUser, answer: Answer) -> None:
    """Take (or renew) `user`'s lease on `answer` for a change, or raise ReviewError saying why
    not."""
    _require_lease(user, answer)


def _require_lease(user: AbstractUser, answer: Answer) -> None:
    if answer.review_status in (IN_REVIEW, ADJUDICATING) and lease_take(user=user, answer=answer):
        return
    # (lease_take refreshed it)
    if answer.review_status == IN_REVIEW and not has_finished(user, answer):
        raise LeaseHeld(answer)
    raise ReviewError(lease_refusal(answer, user))


def _others_on(user: AbstractUser, answer: Answer):
    """The other reviewers' passes on `answer` that count: open or finished, not skipped."""
    return ReviewPass.objects.filter(answer=answer).exclude(reviewer=user).exclude(status=SKIPPED)


def reviewed(user: AbstractUser, answer: Answer) -> bool:
    """Whether `user` decided anything on `answer` as one of its reviewers: such a lead is a party
    to a disagreement on it, and another lead settles it."""
    return Review.objects.filter(answer=answer, reviewer=user, stage=REVIEW).exists()


# --- assignment ------------------------------------------------------------------------------


def answers_assign(*, by: AbstractUser, reviewer: AbstractUser, answer_ids: list[int]) -> int:
    """A lead (or an admin) gives waiting answers to a named reviewer: a place on each is theirs,
    first in their next item, until they finish or skip it. Answers they already reviewed, or whose
    places are all taken, are left as they are. Returns how many were assigned."""
    if not is_lead_or_admin(by):
        raise ReviewError("Only a lead or an admin assigns answers.")
    if not is_reviewer(reviewer):
        raise ReviewError(f"{reviewer.get_username()} is not a reviewer.")
    now, assigned = timezone.now(), []
    for answer_id in list(answer_ids)[:ASSIGN_MAX]:
        with transaction.atomic():
            answer = (
                Answer.objects.select_for_update(of=("self",))
                .filter(pk=answer_id, review_status=IN_REVIEW)
                .first()
            )
            if answer is None or not _assign_locked(answer, reviewer, by, now):
                continue
        assigned.append(answer_id)
    audit_record(
        actor=by,
        actor_label=by.get_username(),
        action="answers.assigned",
        obj=reviewer,
        after={
            "reviewer": reviewer.get_username(),
            "answers": assigned[:100],
            "count": len(assigned),
        },
    )
    return len(assigned)


def _assign_locked(answer: Answer, reviewer: AbstractUser, by: AbstractUser, now: datetime) -> bool:
    mine = ReviewPass.objects.filter(answer=answer, reviewer=reviewer).first()
    if mine is not None and mine.status == FINISHED:
        return False
    if mine is None or mine.status != OPEN:
        taken = (
            ReviewPass.objects.filter(answer=answer)
            .filter(_takes_place(now))
            .exclude(reviewer=reviewer)
            .count()
        )
        if taken >= answer.reviews_required:
            return False
    ReviewPass.objects.update_or_create(answer=answer, reviewer=reviewer, defaults={
        "status": OPEN, "assigned_by": by, "assigned_at": now, "finished_at": None})
    return True


def assignable_reviewers():
    """Every active user who may review (a lead and an admin are reviewers too), for the assignment
    form."""
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(Q(is_superuser=True) | Q(groups__name__in=ROLES))
        .distinct()
        .order_by("username")
    )


# --- decisions -------------------------------------------------------------------------------


def _state(claim: Claim) -> dict:
    return {
        "human_label": claim.human_label,
        "decision": claim.decision,
        "decided_by": claim.decided_by.get_username() if claim.decided_by else None,
        "decision_mode": claim.decision_mode,
        "note": claim.note,
        "consensus_method": claim.consensus_method,
        "version": claim.version,
    }


def _final_label(claim: Claim, decision: str, label: str | None) -> str:
    if decision == Claim.Decision.CONFIRM:
        return claim.label
    if decision == Claim.Decision.OVERTURN:
        if label not in LABELS:
            raise ReviewError(f"Choose the label to overturn to: one of {', '.join(LABELS)}.")
        return label
    raise ReviewError("A decision is confirm or overturn.")


def claim_decide(
    *,
    user: AbstractUser,
    claim: Claim,
    decision: str,
    label: str | None,
    note: str,
    expected_version: int,
    mode: str = DecisionMode.EXPLICIT,
    reason: str = "",
) -> Claim:
    """Confirm the judge's label, or overturn it to `label`, if the claim is still at
    `expected_version`. `mode` says how: the reviewer acted on this claim (explicit), or finishing
    accepted it (bulk).

    One review asked for: the decision is the claim's final label (`single`). Several: it is the
    reviewer's own Review row, and `expected_version` their own version of the claim. A lead
    deciding an answer that waits for a lead sets the final label (`lead`)."""
    final_label = _final_label(claim, decision, label)
    if reason and (decision != Claim.Decision.OVERTURN or reason not in Review.Reason.values):
        raise ReviewError(f"An overturn's reason is one of: {', '.join(Review.Reason.values)}.")
    answer = claim.answer
    _require_lease(user, answer)
    if answer.review_status == IN_REVIEW and multi_review(answer):
        return _pass_decide(
            user,
            claim,
            answer,
            decision=decision,
            final_label=final_label,
            note=note,
            expected_version=expected_version,
            mode=mode,
            reason=reason,
        )
    leading = answer.review_status == ADJUDICATING
    if claim.version != expected_version:
        raise DecisionConflict(claim)
    now = timezone.now()
    with transaction.atomic():
        won = Claim.objects.filter(pk=claim.pk, version=expected_version).update(
            human_label=final_label,
            decision=decision,
            decided_by=user,
            decided_at=now,
            note=note,
            decision_mode=mode,
            consensus_method=ConsensusMethod.LEAD if leading else ConsensusMethod.SINGLE,
            version=F("version") + 1,
        )
        if not won:
            raise DecisionConflict(Claim.objects.select_related("decided_by").get(pk=claim.pk))
        before = _state(claim)
        claim.refresh_from_db()
        Review.objects.create(
            claim=claim,
            answer=answer,
            reviewer=user,
            decision=decision,
            final_label=final_label,
            note=note,
            claim_version=claim.version,
            decision_mode=mode,
            stage=ADJUDICATION if leading else REVIEW,
            reason=reason,
            time_spent_ms=_time_spent_ms(user, answer, mode),
        )
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action=f"claim.{decision}",
            obj=claim,
            before=before,
            after=_state(claim),
            note=note,
        )
    return claim


def _time_spent_ms(user: AbstractUser, answer: Answer, mode: str) -> int | None:
    """The reviewer's time on this decision: since their previous decision on the answer, or since
    their pass on it began, at most the lease length (a tab left open overnight is not work).
    None in bulk: finishing accepted the claim, nobody spent time on it."""
    if mode == DecisionMode.BULK:
        return None
    since = max(
        filter(
            None,
            (
                Review.objects.filter(answer=answer, reviewer=user).aggregate(
                    last=Max("created_at")
                )["last"],
                ReviewPass.objects.filter(answer=answer, reviewer=user)
                .values_list("started_at", flat=True)
                .first(),
            ),
        ),
        default=None,
    )
    if since is None:
        return None
    spent = (timezone.now() - since).total_seconds()
    return int(min(max(spent, 0), Policy.current().lease_seconds) * 1000)


def _lock_pass(user: AbstractUser, answer: Answer) -> None:
    """One request of a reviewer's at a time on their pass (two tabs): their version is read under
    it."""
    list(ReviewPass.objects.select_for_update().filter(answer=answer, reviewer=user))


def _pass_decide(
    user: AbstractUser,
    claim: Claim,
    answer: Answer,
    *,
    decision: str,
    final_label: str,
    note: str,
    expected_version: int,
    mode: str,
    reason: str = "",
) -> Claim:
    """A reviewer's own decision in a pass of several: a Review row; the claim itself is not
    touched."""
    with transaction.atomic():
        _lock_pass(user, answer)
        version = selectors.own_versions(answer, user).get(claim.pk, 0)
        if version != expected_version:
            raise DecisionConflict(
                claim,
                f"You changed claim {claim.cid} in another tab or window while deciding; "
                "this decision was not saved.",
            )
        Review.objects.create(
            claim=claim,
            answer=answer,
            reviewer=user,
            decision=decision,
            final_label=final_label,
            note=note,
            claim_version=version + 1,
            decision_mode=mode,
            stage=REVIEW,
            reason=reason,
            time_spent_ms=_time_spent_ms(user, answer, mode),
        )
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action=f"claim.{decision}",
            obj=claim,
            after={
                "label": final_label,
                "decision": decision,
                "decision_mode": mode,
                "stage": REVIEW,
                "version": version + 1,
            },
            note=note,
        )
    return claim


def whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to the words it cuts into and narrowed past the spaces at its ends."""
    while start > 0 and text[start - 1].isalnum() and text[start].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum() and text[end - 1].isalnum():
        end += 1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def claim_add(*, user: AbstractUser, answer: Answer, start: int, end: int, label: str, note: str,
              category: str = "other") -> Claim:
    """A claim the judge missed, marked by a reviewer on the answer text (snapped to whole
    words)."""
    if label not in LABELS:
        raise ReviewError(f"Choose a label: one of {', '.join(LABELS)}.")
    if category not in CATEGORIES:
        raise ReviewError(f"Choose a category: one of {', '.join(CATEGORIES)}.")
    if not 0 <= start < end <= len(answer.answer) or not answer.answer[start:end].strip():
        raise ReviewError("Select the answer text the claim covers.")
    start, end = whole_words(answer.answer, start, end)
    if multi_review(answer) or answer.review_status == ADJUDICATING:
        raise ReviewError("This answer has several reviewers, who decide the judge's claims only: "
                          "say what the judge missed in a claim's note.")
    run = answer.judged_by or answer.runs.order_by("-started_at", "-id").first()
    if run is None:
        raise ReviewError("This answer has not been judged yet.")
    _require_lease(user, answer)
    now = timezone.now()
    with transaction.atomic():
        position = (Claim.objects.filter(run=run).aggregate(top=Max("position"))["top"] or 0) + 1
        added = Claim.objects.filter(answer=answer, origin=Claim.Origin.REVIEWER).count() + 1
        claim = Claim.objects.create(
            run=run,
            answer=answer,
            position=position,
            cid=f"r{added}",
            text=answer.answer[start:end],
            answer_start=start,
            answer_end=end,
            label=label,
            category=category,
            origin=Claim.Origin.REVIEWER,
            explanation="Added by a reviewer: the judge did not list this claim.",
            human_label=label,
            decision=Claim.Decision.ADD,
            decided_by=user,
            decided_at=now,
            note=note,
            version=1,
            decision_mode=DecisionMode.EXPLICIT,
            consensus_method=ConsensusMethod.SINGLE,
        )
        Review.objects.create(
            claim=claim,
            answer=answer,
            reviewer=user,
            decision=Review.Decision.ADD,
            final_label=label,
            note=note,
            claim_version=1,
        )
        audit_record(actor=user, actor_label=user.get_username(), action="claim.add", obj=claim,
                     after=_state(claim), note=note)
    return claim


def answer_finish(
    *, user: AbstractUser, answer: Answer, notes: dict[int, str] | None = None
) -> None:
    """Confirm every claim still undecided (in bulk: the reviewer accepts the rest unseen), then
    finish my pass. Finishing is its own step: deciding the last flagged claim does not finish, so
    every claim stays decidable until the reviewer says so. All or nothing: one outcome per request.

    One review asked for: the answer is adjudicated. Several: once the last reviewer finishes, the
    claims they agree on are settled and the answer is adjudicated, or waits for a lead. A lead
    finishing an answer that waited for them adjudicates it, once every claim has a final label.
    `notes`: a note, by claim id, for claims confirmed in bulk (the reviewer's drafts on them)."""
    notes = notes or {}
    _require_lease(user, answer)
    if answer.review_status == ADJUDICATING:
        return _lead_finish(user, answer)
    with transaction.atomic():
        if multi_review(answer):
            # Finishes one at a time on this answer, so the last one settles it exactly once.
            Answer.objects.select_for_update(of=("self",)).filter(pk=answer.pk).first()
            decided = {r.claim_id for r in selectors.current_decisions(answer.pk, reviewer=user)}
            versions = selectors.own_versions(answer, user)
            undecided = shown_claims_for_review(answer).exclude(pk__in=decided)
        else:
            undecided, versions = shown_claims_for_review(answer).filter(decision=""), {}
        for claim in undecided.select_related("decided_by"):
            claim.answer = answer
            claim_decide(
                user=user,
                claim=claim,
                decision=Claim.Decision.CONFIRM,
                label=None,
                note=notes.get(claim.pk, ""),
                expected_version=versions.get(claim.pk, claim.version),
                mode=DecisionMode.BULK,
            )
        ReviewPass.objects.filter(answer=answer, reviewer=user, status=OPEN).update(
            status=FINISHED, finished_at=timezone.now(), lease_expires_at=None)
        if not multi_review(answer):
            if not _adjudicate(answer, user):
                raise ReviewError("This answer is not waiting for review.")
            return
        Answer.objects.filter(pk=answer.pk, lease_holder=user).update(
            lease_holder=None, lease_expires_at=None
        )
        audit_record(
            actor=user, actor_label=user.get_username(), action="answer.review_finished", obj=answer
        )
        if (
            ReviewPass.objects.filter(answer=answer, status=FINISHED).count()
            >= answer.reviews_required
        ):
            _settle(answer, user)


@transaction.atomic
def _lead_finish(user: AbstractUser, answer: Answer) -> None:
    left = list(
        shown_claims_for_review(answer).filter(human_label="").values_list("cid", flat=True)
    )
    if left:
        raise ReviewError(
            f"Decide {', '.join(left)} first: the reviewers disagree on"
            f" {'it' if len(left) == 1 else 'them'}."
        )
    if not _adjudicate(answer, user, waiting=ADJUDICATING):
        raise ReviewError("This answer is not waiting for a lead.")


def _last_decision(user: AbstractUser, answer: Answer, stage: str) -> Review | None:
    return (
        selectors.standing_reviews(Review.objects.filter(answer=answer, reviewer=user, stage=stage))
        .select_related("claim")
        .order_by("-created_at", "-id")
        .first()
    )


def decision_undo(*, user: AbstractUser, answer: Answer, reopen: bool = False) -> Claim:
    """Revert my last decision on this answer (unless someone decided that claim since). After a
    finish, the last decision is the finish: its bulk confirms are all reverted, in one step.
    With several reviewers, my decisions can be undone until the last of them finishes; then the
    answer is the lead's, and the lead undoes their own decisions until they finish."""
    if multi_review(answer) and answer.review_status == ADJUDICATED:
        raise ReviewError(
            "This answer is adjudicated: its reviewers' and its lead's decisions are closed."
        )
    if answer.review_status == ADJUDICATED and not reopen:
        raise ReopenUnconfirmed(
            f"Answer {answer.pk} is adjudicated and its client has the verdict: undoing "
            "reopens it for review and tells the client. Reopen it?"
        )
    if answer.review_status == ADJUDICATING and not is_lead(user):
        raise ReviewError(
            "Every reviewer has finished this answer and a lead settles it now: nothing to undo."
        )
    stage = ADJUDICATION if answer.review_status == ADJUDICATING else REVIEW
    last = _last_decision(user, answer, stage)
    if last is None:
        raise ReviewError("You have no decision on this answer to undo.")
    with transaction.atomic():
        claim = _undo(user, answer, last)
        while last.decision_mode == DecisionMode.BULK:
            last = _last_decision(user, answer, stage)
            if last is None or last.decision_mode != DecisionMode.BULK:
                break
            claim = _undo(user, answer, last)
    return claim


def _undo(user: AbstractUser, answer: Answer, last: Review) -> Claim:
    answer.refresh_from_db()
    if multi_review(answer) and last.stage == REVIEW:
        return _pass_undo(user, answer, last)
    claim = last.claim
    if claim.version != last.claim_version:
        raise DecisionConflict(
            claim, f"Claim {claim.cid} was decided again after your decision; nothing undone."
        )
    previous = (
        selectors.standing_reviews(
            Review.objects.filter(claim=claim, stage=last.stage, id__lt=last.id)
        )
        .order_by("-id")
        .first()
    )
    if answer.review_status == ADJUDICATED:
        _reopen(answer, user)
    _require_lease(user, answer)
    if previous is not None:
        restored = {
            "human_label": previous.final_label,
            "decision": previous.decision,
            "decided_by": previous.reviewer,
            "decided_at": previous.created_at,
            "note": previous.note,
            "decision_mode": previous.decision_mode,
            "consensus_method": (
                ConsensusMethod.LEAD if last.stage == ADJUDICATION else ConsensusMethod.SINGLE
            ),
        }
    else:
        # A lead's first decision on a claim undone: back to what the reviewers settled, if
        # anything.
        restored = _settled_fields(claim, answer) if last.stage == ADJUDICATION else None
        restored = restored or {
            "human_label": "",
            "decision": "",
            "decided_by": None,
            "decided_at": None,
            "note": "",
            "decision_mode": "",
            "consensus_method": "",
        }
    with transaction.atomic():
        won = Claim.objects.filter(pk=claim.pk, version=last.claim_version).update(
            **restored, version=F("version") + 1
        )
        if not won:
            raise DecisionConflict(Claim.objects.get(pk=claim.pk))
        before = _state(claim)
        claim.refresh_from_db()
        Review.objects.create(
            claim=claim,
            answer=answer,
            reviewer=user,
            decision=Review.Decision.UNDO,
            final_label=claim.human_label,
            claim_version=claim.version,
            undoes=last,
            stage=last.stage,
        )
        audit_record(actor=user, actor_label=user.get_username(), action="claim.undo", obj=claim,
                     before=before, after=_state(claim))
    return claim


def _pass_undo(user: AbstractUser, answer: Answer, last: Review) -> Claim:
    """Undo a decision of my own pass (several reviewers): an undo row; my finished pass opens
    again, unless the review is blind and another reviewer has a pass on the answer: finishing
    showed me their decisions, and copying them into a reopened pass would fake an independent
    agreement."""
    claim = last.claim
    if answer.review_status != IN_REVIEW:
        raise ReviewError(
            "Every reviewer has finished this answer: nothing of yours can be undone now."
        )
    if answer.reviews_blind and has_finished(user, answer) and _others_on(user, answer).exists():
        raise ReviewError(
            "You have finished this blind review and have seen the other reviewers' decisions: "
            "your review stays as you finished it. A lead settles any disagreement."
        )
    ReviewPass.objects.filter(answer=answer, reviewer=user, status=FINISHED).update(
        status=OPEN, finished_at=None
    )
    _require_lease(user, answer)
    with transaction.atomic():
        _lock_pass(user, answer)
        version = selectors.own_versions(answer, user).get(claim.pk, 0)
        if version != last.claim_version:
            raise DecisionConflict(
                claim, f"You decided claim {claim.cid} again after that decision; nothing undone."
            )
        previous = (
            selectors.standing_reviews(
                Review.objects.filter(claim=claim, reviewer=user, stage=REVIEW, id__lt=last.id)
            )
            .order_by("-id")
            .first()
        )
        Review.objects.create(
            claim=claim,
            answer=answer,
            reviewer=user,
            decision=Review.Decision.UNDO,
            final_label=previous.final_label if previous else "",
            claim_version=version + 1,
            undoes=last,
            stage=REVIEW,
        )
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action="claim.undo",
            obj=claim,
            before={"label": last.final_label, "version": version},
            after={"label": previous.final_label if previous else "", "version": version + 1},
        )
    return claim


# --- consensus and adjudication --------------------------------------------------------------


def pending_claims_for(user: AbstractUser, answer: Answer):
    """The flagged claims `user` has still to decide: in a pass of several reviewers, those without
    a decision of their own (the claims' final labels wait for everyone); otherwise pending_claims.
    """
    pending = pending_claims(answer)
    if multi_review(answer) and answer.review_status == IN_REVIEW:
        pending = pending.exclude(
            pk__in=[r.claim_id for r in selectors.current_decisions(answer.pk, reviewer=user)]
        )
    return pending


def consensus(labels: list[str], *, required: int) -> tuple[str, str] | None:
    """The reviewers' label for one claim and how it was reached, or None when a lead must decide:
    the label every one of them chose (unanimous); with three or more, one more than half of them
    chose (majority). Fewer decisions than reviews required settle nothing."""
    if not labels or len(labels) < required:
        return None
    label, count = Counter(labels).most_common(1)[0]
    if count == len(labels):
        return label, ConsensusMethod.UNANIMOUS
    if len(labels) >= 3 and count * 2 > len(labels):
        return label, ConsensusMethod.MAJORITY
    return None


def _finished_decisions(answer: Answer) -> dict[int, list[Review]]:
    """Each finished reviewer's current decision, by claim."""
    finished = set(
        ReviewPass.objects.filter(answer=answer, status=FINISHED).values_list(
            "reviewer_id", flat=True
        )
    )
    by_claim: dict[int, list[Review]] = {}
    for review in selectors.current_decisions(answer.pk):
        if review.reviewer_id in finished:
            by_claim.setdefault(review.claim_id, []).append(review)
    return by_claim


def _settled_fields(
    claim: Claim, answer: Answer, reviews: list[Review] | None = None
) -> dict | None:
    """The claim's final-label fields as its reviewers settled it, or None if they did not agree."""
    reviews = reviews if reviews is not None else _finished_decisions(answer).get(claim.pk, [])
    settled = consensus([r.final_label for r in reviews], required=answer.reviews_required)
    if settled is None:
        return None
    label, method = settled
    agreeing = [r for r in reviews if r.final_label == label]
    latest = max(agreeing, key=lambda r: r.id)
    explicit = any(r.decision_mode == DecisionMode.EXPLICIT for r in agreeing)
    return {
        "human_label": label,
        "decision": Claim.Decision.CONFIRM if label == claim.label else Claim.Decision.OVERTURN,
        "decided_by": latest.reviewer, "decided_at": latest.created_at,
        "note": " / ".join(dict.fromkeys(r.note for r in agreeing if r.note)),
        "decision_mode": DecisionMode.EXPLICIT if explicit else DecisionMode.BULK,
        "consensus_method": method if explicit else ConsensusMethod.BULK,
    }


def _settle(answer: Answer, user: AbstractUser) -> None:
    """Every review asked for is in: each claim the reviewers agree on gets its final label; if any
    is left, the answer waits for a lead, else it is adjudicated."""
    by_claim = _finished_decisions(answer)
    left = []
    for claim in shown_claims_for_review(answer):
        fields = _settled_fields(claim, answer, by_claim.get(claim.pk, []))
        if fields is None:
            left.append(claim.cid)
            continue
        Claim.objects.filter(pk=claim.pk).update(**fields, version=F("version") + 1)
    if not left:
        if not _adjudicate(answer, user):
            raise ReviewError("This answer is not waiting for review.")
        return
    Answer.objects.filter(pk=answer.pk, review_status=IN_REVIEW).update(
        review_status=ADJUDICATING, lease_holder=None, lease_expires_at=None)
    audit_record(
        actor=user,
        actor_label=user.get_username(),
        action="answer.adjudication_needed",
        obj=answer,
        after={"claims": left},
    )
    answer.refresh_from_db()


def _adjudicate(answer: Answer, user: AbstractUser, *, waiting: str = IN_REVIEW) -> bool:
    """The verdict from the human labels, once every shown claim is decided; False if someone
    else's request adjudicated (or reopened) it first. Only here is the client told."""
    claims = list(shown_claims_for_review(answer))
    verdict = verdict_for([SimpleNamespace(label=c.human_label or c.label) for c in claims])
    done = Answer.objects.filter(pk=answer.pk, review_status=waiting).update(
        review_status=ADJUDICATED,
        adjudicated_verdict=verdict,
        lease_holder=None,
        lease_expires_at=None,
    )
    if done:
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action="answer.adjudicated",
            obj=answer,
            before={"verdict": answer.verdict},
            after={"adjudicated_verdict": verdict},
        )
        answer.refresh_from_db()
        if quality_selectors.is_gold_copy(answer.pk):
            quality_service.gold_score(answer=answer)  # nobody outside hears of a gold copy
        else:
            event_record(answer=answer, event="answer.adjudicated")
            if (
                answer.routing_reason == AUDIT_REASON
            ):  # the miss rate moved: alert.miss_rate is checked
                transaction.on_commit(enqueue.evaluate_miss_rate_later, robust=True)
    return bool(done)


def answer_reopen(*, user: AbstractUser, answer: Answer) -> None:
    """After consensus, a lead sends an answer of several reviewers back to a lead (themselves): the
    claims keep their final labels until decided again, and the client hears of the answer once it
    is adjudicated again. Reviewers cannot reopen it (their undo is closed), nor can a lead who
    reviewed it; each reopening is an AuditEvent with the verdict it withdrew."""
    if not is_lead(user):
        raise ReviewError("Only a lead reopens an answer its reviewers settled.")
    if not multi_review(answer):
        raise ReviewError("One reviewer's answer is reopened by that reviewer's undo.")
    if reviewed(user, answer):
        raise ReviewError("You reviewed this answer: another lead reopens it.")
    with transaction.atomic():
        withdrawn = answer.adjudicated_verdict
        done = Answer.objects.filter(pk=answer.pk, review_status=ADJUDICATED).update(
            review_status=ADJUDICATING, adjudicated_verdict="", lease_holder=user,
            lease_expires_at=_lease_until(timezone.now()))
        if not done:
            raise ReviewError("This answer is not adjudicated: there is nothing to reopen.")
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action="answer.reopened",
            obj=answer,
            before={"review_status": ADJUDICATED, "adjudicated_verdict": withdrawn},
            after={"review_status": ADJUDICATING},
        )
    answer.refresh_from_db()


def _reopen(answer: Answer, user: AbstractUser) -> None:
    until = _lease_until(timezone.now())
    Answer.objects.filter(pk=answer.pk, review_status=ADJUDICATED).update(
        review_status=IN_REVIEW, adjudicated_verdict="", lease_holder=user, lease_expires_at=until
    )
    ReviewPass.objects.update_or_create(answer=answer, reviewer=user, defaults={
        "status": OPEN, "lease_expires_at": until, "finished_at": None})
    audit_record(actor=user, actor_label=user.get_username(), action="answer.reopened", obj=answer)
    answer.refresh_from_db()
    if not quality_selectors.is_gold_copy(answer.pk):
        # the client had the verdict: it is withdrawn
        event_record(answer=answer, event="answer.reopened")


@dataclass(frozen=True)
class Progress:
    remaining: int
    mine_today: int
    everyone_today: int


def review_progress(*, user: AbstractUser) -> Progress:
    start_of_day = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    # Decisions a reviewer made: not undos, not the claims finishing accepted in bulk, not undone.
    decisions_today = selectors.standing_reviews(
        Review.objects.filter(created_at__gte=start_of_day, decision_mode=DecisionMode.EXPLICIT))
    # Both counts in one pass over the day's decisions (two counts read them twice).
    today = decisions_today.aggregate(
        mine=Count("pk", filter=Q(reviewer=user)), everyone=Count("*")
    )
    return Progress(
        remaining=selectors.waiting_count(),
        mine_today=today["mine"],
        everyone_today=today["everyone"],
    )
