"""Reviewing: leases on answers, decisions on claims, undo, adjudication.

Concurrency rules:
* a lease is taken with `select_for_update(skip_locked=True)` (the next item) or a conditional
  UPDATE (a named item), so two reviewers never hold one answer; it expires by itself;
* a decision is a conditional UPDATE on the claim's version: of two reviewers (or two tabs)
  deciding the same claim at once, one wins and the other gets DecisionConflict with the
  current state; every decision is one Review row and one AuditEvent, never two, never none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace

from django.db import transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from judges.scoring import verdict_for
from judges.types import LABELS
from reviewapp import selectors
from reviewapp.selectors import shown_claims_for_review
from reviewapp.models import Answer, AuditEvent, Claim, DecisionMode, Policy, Review
from reviewapp.services.audit import audit_record
from reviewapp.services.webhooks import event_record

IN_REVIEW = Answer.ReviewStatus.IN_REVIEW
ADJUDICATED = Answer.ReviewStatus.ADJUDICATED
QUEUE_ORDER = ("-priority", "created_at", "id")


class ReviewError(Exception):
    """A review action that cannot be done; the message is for the reviewer."""


class LeaseHeld(ReviewError):
    def __init__(self, answer: Answer):
        holder = answer.lease_holder.get_username() if answer.lease_holder else "someone"
        until = f" (lease until {answer.lease_expires_at:%H:%M:%S} UTC)" if answer.lease_expires_at else ""
        super().__init__(f"{holder} is reviewing this answer{until}.")


class DecisionConflict(ReviewError):
    def __init__(self, claim: Claim, message: str | None = None):
        who = claim.decided_by.get_username() if claim.decided_by else "someone"
        super().__init__(
            message or f"{who} changed claim {claim.cid} while you were deciding; it now reads "
            f"{claim.human_label or 'undecided'}. Your decision was not saved."
        )
        self.claim = claim


def _lease_free(now) -> Q:
    return Q(lease_holder__isnull=True) | Q(lease_expires_at__lt=now)


def _lease_until(now):
    return now + timedelta(seconds=Policy.current().lease_seconds)


# --- leases ----------------------------------------------------------------------------------


def lease_next(*, user, queue=None, leaving: int | None = None) -> Answer | None:
    """Lease the next free answer of `queue` (default: the whole queue) to `user`.

    An answer the user already holds comes first, so an abandoned tab's item is not stranded.
    `leaving` is the answer the user moves on from (`n` on its page): never the one handed, and
    its lease is given back, as leaving its page does, with the decisions made on it kept. Unlike
    a skip it may come back to the same reviewer later, worst first.
    """
    now = timezone.now()
    queue = queue if queue is not None else Answer.objects.filter(review_status=IN_REVIEW)
    queue = queue.exclude(pk__in=skipped_recently(user=user, now=now))
    if leaving is not None:
        queue = queue.exclude(pk=leaving)
    with transaction.atomic():
        if leaving is not None:
            lease_release(user=user, answer_id=leaving)
        answer = (
            queue.filter(lease_holder=user, lease_expires_at__gte=now).order_by(*QUEUE_ORDER).first()
            or queue.filter(_lease_free(now))
            .order_by(*QUEUE_ORDER)
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if answer is None:
            return None
        Answer.objects.filter(pk=answer.pk).update(lease_holder=user, lease_expires_at=_lease_until(now))
    answer.refresh_from_db()
    return answer


def lease_take(*, user, answer: Answer) -> bool:
    """Take (or renew) the lease on one answer if it is waiting and nobody else holds it."""
    now = timezone.now()
    taken = (
        Answer.objects.filter(pk=answer.pk, review_status=IN_REVIEW)
        .filter(_lease_free(now) | Q(lease_holder=user))
        .update(lease_holder=user, lease_expires_at=_lease_until(now))
    )
    answer.refresh_from_db(fields=["lease_holder", "lease_expires_at", "review_status"])
    return bool(taken)


def lease_live(answer: Answer) -> bool:
    """Whether somebody holds a lease on `answer` that has not expired."""
    return answer.lease_holder_id is not None and answer.lease_expires_at is not None \
        and answer.lease_expires_at >= timezone.now()


def holds_lease(*, user, answer: Answer) -> bool:
    """Whether `user` holds a live lease on `answer` (reading a page never takes one)."""
    return answer.review_status == IN_REVIEW and answer.lease_holder_id == user.pk and lease_live(answer)


def lease_renew(*, user, answer_id: int) -> bool:
    now = timezone.now()
    return bool(
        Answer.objects.filter(pk=answer_id, lease_holder=user, review_status=IN_REVIEW, lease_expires_at__gte=now)
        .update(lease_expires_at=_lease_until(now))
    )


def lease_release(*, user, answer_id: int) -> bool:
    return bool(Answer.objects.filter(pk=answer_id, lease_holder=user).update(lease_holder=None, lease_expires_at=None))


def skipped_recently(*, user, now=None) -> list[int]:
    """Answers `user` skipped within the lease length: lease_next hands them to others, not back."""
    since = (now or timezone.now()) - timedelta(seconds=Policy.current().lease_seconds)
    ids = (AuditEvent.objects.filter(action=selectors.SKIPPED, actor=user, object_type="answer", created_at__gte=since)
           .values_list("object_id", flat=True))
    return [int(i) for i in ids]


def answer_skip(*, user, answer: Answer) -> None:
    """Pass on an answer: give its lease back and keep it from coming back to me for a while.
    A skip is an AuditEvent, so skips are counted per reviewer (selectors.skips_today)."""
    with transaction.atomic():
        released = lease_release(user=user, answer_id=answer.pk)
        audit_record(actor=user, actor_label=user.get_username(), action=selectors.SKIPPED, obj=answer,
                     after={"released": released})


def lease_refusal(answer: Answer) -> str:
    """Why a lease on `answer` could not be taken (after lease_take refreshed it)."""
    if answer.review_status != IN_REVIEW:
        return "This answer is not waiting for review."
    return str(LeaseHeld(answer))


def _require_lease(user, answer: Answer) -> None:
    if answer.review_status == IN_REVIEW and lease_take(user=user, answer=answer):
        return
    if answer.review_status != IN_REVIEW:  # (lease_take refreshed it)
        raise ReviewError(lease_refusal(answer))
    raise LeaseHeld(answer)


# --- decisions -------------------------------------------------------------------------------


def _state(claim: Claim) -> dict:
    return {
        "human_label": claim.human_label,
        "decision": claim.decision,
        "decided_by": claim.decided_by.get_username() if claim.decided_by else None,
        "decision_mode": claim.decision_mode,
        "note": claim.note,
        "version": claim.version,
    }


def claim_decide(*, user, claim: Claim, decision: str, label: str | None, note: str, expected_version: int,
                 mode: str = DecisionMode.EXPLICIT) -> Claim:
    """Confirm the judge's label, or overturn it to `label`, if the claim is still at `expected_version`.
    `mode` says how: the reviewer acted on this claim (explicit), or finishing accepted it (bulk)."""
    if decision == Claim.Decision.CONFIRM:
        final_label = claim.label
    elif decision == Claim.Decision.OVERTURN:
        if label not in LABELS:
            raise ReviewError(f"Choose the label to overturn to: one of {', '.join(LABELS)}.")
        final_label = label
    else:
        raise ReviewError("A decision is confirm or overturn.")
    answer = claim.answer
    _require_lease(user, answer)
    if claim.version != expected_version:
        raise DecisionConflict(claim)
    now = timezone.now()
    with transaction.atomic():
        won = Claim.objects.filter(pk=claim.pk, version=expected_version).update(
            human_label=final_label, decision=decision, decided_by=user, decided_at=now, note=note,
            decision_mode=mode, version=F("version") + 1,
        )
        if not won:
            raise DecisionConflict(Claim.objects.select_related("decided_by").get(pk=claim.pk))
        before = _state(claim)
        claim.refresh_from_db()
        Review.objects.create(claim=claim, answer=answer, reviewer=user, decision=decision, final_label=final_label,
                              note=note, claim_version=claim.version, decision_mode=mode)
        audit_record(actor=user, actor_label=user.get_username(), action=f"claim.{decision}", obj=claim,
                     before=before, after=_state(claim), note=note)
    return claim


def claim_add(*, user, answer: Answer, start: int, end: int, label: str, note: str) -> Claim:
    """A claim the judge missed, marked by a reviewer on the answer text."""
    if label not in LABELS:
        raise ReviewError(f"Choose a label: one of {', '.join(LABELS)}.")
    if not 0 <= start < end <= len(answer.answer) or not answer.answer[start:end].strip():
        raise ReviewError("Select the answer text the claim covers.")
    run = answer.judged_by or answer.runs.order_by("-started_at", "-id").first()
    if run is None:
        raise ReviewError("This answer has not been judged yet.")
    _require_lease(user, answer)
    now = timezone.now()
    with transaction.atomic():
        position = (Claim.objects.filter(run=run).aggregate(top=Max("position"))["top"] or 0) + 1
        added = Claim.objects.filter(answer=answer, origin=Claim.Origin.REVIEWER).count() + 1
        claim = Claim.objects.create(
            run=run, answer=answer, position=position, cid=f"r{added}", text=answer.answer[start:end],
            answer_start=start, answer_end=end, label=label, category="other", origin=Claim.Origin.REVIEWER,
            explanation="Added by a reviewer: the judge did not list this claim.",
            human_label=label, decision=Claim.Decision.ADD, decided_by=user, decided_at=now, note=note, version=1,
            decision_mode=DecisionMode.EXPLICIT,
        )
        Review.objects.create(claim=claim, answer=answer, reviewer=user, decision=Review.Decision.ADD,
                              final_label=label, note=note, claim_version=1)
        audit_record(actor=user, actor_label=user.get_username(), action="claim.add", obj=claim,
                     after=_state(claim), note=note)
    return claim


def answer_finish(*, user, answer: Answer) -> None:
    """Confirm every claim still undecided (in bulk: the reviewer accepts the rest unseen), then
    adjudicate. Finishing is its own step: deciding the last flagged claim does not finish, so every
    claim stays decidable until the reviewer says so. All or nothing: one outcome per request."""
    _require_lease(user, answer)
    with transaction.atomic():
        for claim in shown_claims_for_review(answer).filter(decision="").select_related("decided_by"):
            claim.answer = answer
            claim_decide(user=user, claim=claim, decision=Claim.Decision.CONFIRM, label=None, note="",
                         expected_version=claim.version, mode=DecisionMode.BULK)
        if not _adjudicate(answer, user):
            raise ReviewError("This answer is not waiting for review.")


def _last_decision(user, answer: Answer) -> Review | None:
    return (
        Review.objects.filter(answer=answer, reviewer=user, undone_by__isnull=True)
        .exclude(decision=Review.Decision.UNDO)
        .select_related("claim")
        .order_by("-created_at", "-id")
        .first()
    )


def decision_undo(*, user, answer: Answer) -> Claim:
    """Revert my last decision on this answer (unless someone decided that claim since). After a
    finish, the last decision is the finish: its bulk confirms are all reverted, in one step."""
    last = _last_decision(user, answer)
    if last is None:
        raise ReviewError("You have no decision on this answer to undo.")
    with transaction.atomic():
        claim = _undo(user, answer, last)
        while last.decision_mode == DecisionMode.BULK:
            last = _last_decision(user, answer)
            if last is None or last.decision_mode != DecisionMode.BULK:
                break
            claim = _undo(user, answer, last)
    return claim


def _undo(user, answer: Answer, last: Review) -> Claim:
    answer.refresh_from_db()
    claim = last.claim
    if claim.version != last.claim_version:
        raise DecisionConflict(claim, f"Claim {claim.cid} was decided again after your decision; nothing undone.")
    previous = (
        Review.objects.filter(claim=claim, undone_by__isnull=True, id__lt=last.id)
        .exclude(decision=Review.Decision.UNDO)
        .order_by("-id")
        .first()
    )
    if answer.review_status == ADJUDICATED:
        _reopen(answer, user)
    _require_lease(user, answer)
    restored = {
        "human_label": previous.final_label if previous else "",
        "decision": previous.decision if previous else "",
        "decided_by": previous.reviewer if previous else None,
        "decided_at": previous.created_at if previous else None,
        "note": previous.note if previous else "",
        "decision_mode": previous.decision_mode if previous else "",
    }
    with transaction.atomic():
        won = Claim.objects.filter(pk=claim.pk, version=last.claim_version).update(**restored, version=F("version") + 1)
        if not won:
            raise DecisionConflict(Claim.objects.get(pk=claim.pk))
        before = _state(claim)
        claim.refresh_from_db()
        Review.objects.create(claim=claim, answer=answer, reviewer=user, decision=Review.Decision.UNDO,
                              final_label=claim.human_label, claim_version=claim.version, undoes=last)
        audit_record(actor=user, actor_label=user.get_username(), action="claim.undo", obj=claim,
                     before=before, after=_state(claim))
    return claim


# --- adjudication ----------------------------------------------------------------------------


def pending_claims(answer: Answer):
    """Flagged judge claims nobody has decided yet: the answer is adjudicated when none are left."""
    return shown_claims_for_review(answer).filter(origin=Claim.Origin.JUDGE, decision="").exclude(label="SUPPORTED")


def _adjudicate(answer: Answer, user) -> bool:
    """The verdict from the human labels, once every shown claim is decided; False if someone
    else's request adjudicated (or reopened) it first."""
    claims = list(shown_claims_for_review(answer))
    verdict = verdict_for([SimpleNamespace(label=c.human_label or c.label) for c in claims])
    done = Answer.objects.filter(pk=answer.pk, review_status=IN_REVIEW).update(
        review_status=ADJUDICATED, adjudicated_verdict=verdict, lease_holder=None, lease_expires_at=None
    )
    if done:
        audit_record(actor=user, actor_label=user.get_username(), action="answer.adjudicated", obj=answer,
                     before={"verdict": answer.verdict}, after={"adjudicated_verdict": verdict})
        answer.refresh_from_db()
        event_record(answer=answer, event="answer.adjudicated")
    return bool(done)


def _reopen(answer: Answer, user) -> None:
    Answer.objects.filter(pk=answer.pk, review_status=ADJUDICATED).update(
        review_status=IN_REVIEW, adjudicated_verdict="", lease_holder=user, lease_expires_at=_lease_until(timezone.now())
    )
    audit_record(actor=user, actor_label=user.get_username(), action="answer.reopened", obj=answer)
    answer.refresh_from_db()


@dataclass(frozen=True)
class Progress:
    remaining: int
    mine_today: int
    everyone_today: int


def review_progress(*, user) -> Progress:
    start_of_day = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    # Decisions a reviewer made: not undos, not the claims finishing accepted in bulk.
    decisions_today = (Review.objects.filter(created_at__gte=start_of_day, decision_mode=DecisionMode.EXPLICIT)
                       .exclude(decision=Review.Decision.UNDO))
    return Progress(
        remaining=selectors.waiting_count(),
        mine_today=decisions_today.filter(reviewer=user).count(),
        everyone_today=decisions_today.count(),
    )
