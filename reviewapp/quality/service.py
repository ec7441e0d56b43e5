"""Gold answers: reviewers scored against answers a lead trusts, and paused when they miss.

* Marking: a lead or an admin marks an adjudicated answer gold; its judge claims' final human
  labels are frozen on the GoldAnswer (later changes to the answer do not move the truth).
* Serving: at the policy's gold rate, "next item" hands a reviewer a gold answer they have not
  seen (not reviewed, not decided, not handed before) as a fresh copy: its own answer, passages,
  run, claims and evidence, undecided, leased to them like any answer. The page, the lease and
  every decision are the ordinary ones; only a GoldCopy row, which no page shows, knows.
* Scoring: when the reviewer finishes a copy it is scored (reviewapp.quality.selectors); once they
  have `gold_min_claims` gold decisions, their accuracy over their latest copies holding at least
  that many claims is their window. Below `gold_pause_below` they are paused from the live queue,
  an AuditEvent and a `reviewer.paused` webhook record it, and their live decisions since the end of
  their last good window are listed for a second look (all of them since they joined, or since
  their last resumption, if no window was good). A resumed reviewer's record starts again from
  the resumption.
"""

from __future__ import annotations

import random
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from reviewapp.access import is_lead_or_admin
from reviewapp.audit import audit_record
from reviewapp.models import (
    Answer,
    Claim,
    Evidence,
    GoldAnswer,
    GoldCopy,
    JudgeRun,
    Passage,
    Policy,
    ReviewerPause,
    ReviewPass,
)
from reviewapp.policy.routing import AUDIT_REASON, decide_route
from reviewapp.quality import selectors
from reviewapp.webhooks.service import REVIEWER_PAUSED, team_event_record

ADJUDICATED, IN_REVIEW = Answer.ReviewStatus.ADJUDICATED, Answer.ReviewStatus.IN_REVIEW


class GoldError(Exception):
    """A gold action that cannot be done; the message is for the person who asked."""


# --- marking -----------------------------------------------------------------------------------


def gold_labels(answer: Answer) -> list[dict]:
    """The answer's judge claims with their final human labels, by position."""
    run = answer.judged_by
    claims = (
        Claim.objects.filter(run=run, origin=Claim.Origin.JUDGE)
        .exclude(human_label="")
        .order_by("position")
    )
    return [
        {"position": c.position, "cid": c.cid, "label": c.human_label, "category": c.category}
        for c in claims
    ]


def gold_mark(*, user, answer: Answer) -> GoldAnswer:
    """Mark an adjudicated answer gold from its page (again: its labels are frozen anew)."""
    if not is_lead_or_admin(user):
        raise GoldError("Only a lead or an admin marks an answer gold.")
    if answer.review_status != ADJUDICATED or answer.judged_by_id is None:
        raise GoldError(
            "Only an adjudicated answer can be gold: its human labels are the truth reviewers "
            "are scored on."
        )
    if selectors.is_gold_copy(answer.pk):
        raise GoldError("This answer is itself a reviewer's copy of a gold answer.")
    labels = gold_labels(answer)
    if not labels:
        raise GoldError("This answer has no judge claim with a human label to score reviewers on.")
    return gold_store(
        answer=answer, run=answer.judged_by, labels=labels, source=GoldAnswer.Source.PAGE, user=user
    )


def gold_store(
    *, answer: Answer, run: JudgeRun, labels: list[dict], source: str, user
) -> GoldAnswer:
    """Make (or renew) the gold answer: `run`'s judge claims, with these gold labels."""
    with transaction.atomic():
        gold, created = GoldAnswer.objects.update_or_create(
            answer=answer,
            defaults={
                "run": run,
                "labels": labels,
                "source": source,
                "marked_by": user,
                "active": True,
            },
        )
        audit_record(
            actor=user,
            actor_label=user.get_username() if user else "system",
            action="answer.gold_marked",
            obj=answer,
            after={"claims": len(labels), "source": source, "again": not created},
        )
    return gold


def gold_unmark(*, user, answer: Answer) -> bool:
    """Stop handing the answer out as gold (copies already scored keep their scores)."""
    if not is_lead_or_admin(user):
        raise GoldError("Only a lead or an admin changes gold answers.")
    with transaction.atomic():
        done = GoldAnswer.objects.filter(answer=answer, active=True).update(active=False)
        if done:
            audit_record(
                actor=user,
                actor_label=user.get_username(),
                action="answer.gold_unmarked",
                obj=answer,
            )
    return bool(done)


# --- serving -----------------------------------------------------------------------------------


def gold_due(rate: float) -> bool:
    """Whether this "next item" is a gold one: a draw per request, so no cadence gives gold away."""
    return rate > 0 and random.random() < rate


def unseen_gold(user):
    """Active gold answers `user` has not seen: not handed to them, nor reviewed or decided."""
    return (
        GoldAnswer.objects.filter(active=True)
        .exclude(copies__reviewer=user)
        .exclude(answer__passes__reviewer=user)
        .exclude(answer__reviews__reviewer=user)
    )


def _unfinished_copies(user, leaving: int | None):
    return (
        GoldCopy.objects.filter(
            reviewer=user,
            scored_at__isnull=True,
            answer__review_status=IN_REVIEW,
            answer__passes__reviewer=user,
            answer__passes__status=ReviewPass.Status.OPEN,
        )
        .exclude(answer_id=leaving)
        .select_related("answer")
    )


def _renew(answer: Answer, user, lease_until) -> Answer:
    ReviewPass.objects.filter(answer=answer, reviewer=user, status=ReviewPass.Status.OPEN).update(
        lease_expires_at=lease_until
    )
    Answer.objects.filter(pk=answer.pk).update(lease_holder=user, lease_expires_at=lease_until)
    answer.refresh_from_db()
    return answer


def gold_held(*, user, lease_until, leaving: int | None = None) -> Answer | None:
    """The gold copy `user` holds a live lease on, renewed: first, as a held live answer is."""
    live = ReviewPass.objects.filter(answer=OuterRef("answer"), reviewer=user).live(timezone.now())
    held = _unfinished_copies(user, leaving).filter(Exists(live)).first()
    return _renew(held.answer, user, lease_until) if held is not None else None


def gold_serve(*, user, lease_until, leaving: int | None = None) -> Answer | None:
    """At the policy's gold rate: a gold copy `user` left unfinished (`n` on it, a lapsed lease),
    else a copy of a gold answer they have not seen, leased to them; None otherwise."""
    if not gold_due(Policy.current().gold_rate):
        return None
    left = _unfinished_copies(user, leaving).first()
    if left is not None:
        return _renew(left.answer, user, lease_until)
    for gold in unseen_gold(user).select_related("answer", "run").order_by("?")[:3]:
        try:
            with transaction.atomic():
                return _copy(gold, user, lease_until)
        except IntegrityError:  # handed to this reviewer in another tab meanwhile
            continue
    return None


def _routing(source: Answer, run: JudgeRun) -> tuple[str, int]:
    """The routing reason and priority a copy shows: its source's, or, for a golden-set record that
    was never routed, what the policy would say of its run (the audit sample's if it would pass)."""
    if source.routing_reason:
        return source.routing_reason, source.priority
    claims = Claim.objects.filter(run=run, origin=Claim.Origin.JUDGE).values_list(
        "label", "category", "confidence"
    )
    route = decide_route(
        policy=Policy.current(),
        answer_id=source.pk,
        grounding_score=run.grounding_score or 0.0,
        claims=list(claims),
    )
    return (route.reason, route.priority) if route.review_status == IN_REVIEW else (AUDIT_REASON, 0)


def _copy(gold: GoldAnswer, user, lease_until) -> Answer:
    source, run = gold.answer, gold.run
    # A golden-set import's metadata holds its labels: a copy must not show them.
    metadata = {} if "golden" in source.metadata else source.metadata
    reason, priority = _routing(source, run)
    answer = Answer.objects.create(
        client=source.client,
        question=source.question,
        answer=source.answer,
        prior_turns=source.prior_turns,
        metadata=metadata,
        requested_profile=source.requested_profile,
        status=Answer.Status.JUDGED,
        verdict=run.verdict,
        grounding_score=run.grounding_score,
        review_status=Answer.ReviewStatus.IN_REVIEW,
        routing_reason=reason,
        priority=priority,
        policy=Policy.current(),
        reviews_required=1,
        judged_at=None,  # as a golden answer: left out of the rates that count judged answers
        lease_holder=user,
        lease_expires_at=lease_until,
    )
    passages = {
        p.pid: p
        for p in Passage.objects.bulk_create(
            Passage(
                answer=answer,
                **{
                    f.name: getattr(p, f.name)
                    for f in Passage._meta.concrete_fields
                    if f.name not in ("id", "answer")
                },
            )
            for p in source.passages.all()
        )
    }
    copied_run = JudgeRun.objects.create(
        answer=answer,
        is_current=True,
        **{
            f.name: getattr(run, f.name)
            for f in JudgeRun._meta.concrete_fields
            if f.name not in ("id", "answer", "is_current", "job", "started_at")
        },
    )
    for claim in Claim.objects.filter(run=run, origin=Claim.Origin.JUDGE).prefetch_related(
        "evidence"
    ):
        copied = Claim.objects.create(
            run=copied_run,
            answer=answer,
            position=claim.position,
            cid=claim.cid,
            text=claim.text,
            answer_start=claim.answer_start,
            answer_end=claim.answer_end,
            label=claim.label,
            category=claim.category,
            explanation=claim.explanation,
            confidence=claim.confidence,
        )
        Evidence.objects.bulk_create(
            Evidence(
                claim=copied,
                passage=passages.get(ev.passage_pid) if ev.passage_id else None,
                passage_pid=ev.passage_pid,
                position=ev.position,
                quote=ev.quote,
                start=ev.start,
                end=ev.end,
                match=ev.match,
                differences=ev.differences,
            )
            for ev in claim.evidence.all()
        )
    Answer.objects.filter(pk=answer.pk).update(judged_by=copied_run)
    ReviewPass.objects.create(answer=answer, reviewer=user, lease_expires_at=lease_until)
    GoldCopy.objects.create(gold=gold, answer=answer, reviewer=user)
    answer.refresh_from_db()
    return answer


# --- scoring and pausing -----------------------------------------------------------------------


def gold_score(*, answer: Answer) -> ReviewerPause | None:
    """Score a finished gold copy (once), then pause its reviewer if their window is below the
    policy's threshold. Call in the transaction that adjudicates the copy."""
    done = GoldCopy.objects.filter(answer=answer, scored_at__isnull=True).update(
        scored_at=timezone.now()
    )
    if not done:
        return None
    copy = GoldCopy.objects.select_related("reviewer").get(answer=answer)
    return _pause_if_below(copy.reviewer, Policy.current())


def _windows(decisions: list[selectors.GoldDecision], size: int):
    """After each scored copy (in order): its time and the accuracy of the latest copies holding at
    least `size` gold claims, or None while the reviewer has fewer than `size`."""
    by_copy: dict[int, list] = {}
    for d in decisions:
        by_copy.setdefault(d.copy_id, []).append(d)
    copies = list(by_copy.values())
    for end in range(len(copies)):
        window: list = []
        for ds in reversed(copies[: end + 1]):
            window = ds + window
            if len(window) >= size:
                break
        yield (
            copies[end][0].scored_at,
            (selectors.accuracy(window) if len(window) >= size else None),
            window,
        )


def _pause_if_below(reviewer, policy: Policy) -> ReviewerPause | None:
    # A resumed reviewer starts afresh: the window that paused them is not held against them.
    resumed = (
        ReviewerPause.objects.filter(reviewer=reviewer, resumed_at__isnull=False)
        .order_by("-resumed_at")
        .values_list("resumed_at", flat=True)
        .first()
    )
    decisions = [
        d
        for d in selectors.gold_decisions(reviewer_id=reviewer.pk)
        if resumed is None or d.scored_at > resumed
    ]
    windows = list(_windows(decisions, max(policy.gold_min_claims, 1)))
    if not windows:
        return None
    _, latest, window = windows[-1]
    if (
        latest is None
        or latest >= policy.gold_pause_below
        or selectors.open_pause(reviewer) is not None
    ):
        return None
    good = [
        at for at, value, _ in windows if value is not None and value >= policy.gold_pause_below
    ]
    # No good window yet: nothing vouches for their decisions since they joined (or were resumed).
    since = good[-1] if good else resumed or reviewer.date_joined
    try:
        with transaction.atomic():
            pause = ReviewerPause.objects.create(
                reviewer=reviewer,
                accuracy=latest,
                claims=len(window),
                threshold=policy.gold_pause_below,
                since=since,
            )
    except IntegrityError:  # paused by a concurrent finish
        return None
    audit_record(
        actor_label="system",
        action="reviewer.paused",
        obj=reviewer,
        after={
            "accuracy": latest,
            "claims": len(window),
            "threshold": policy.gold_pause_below,
            "since": since.isoformat(),
        },
    )
    team_event_record(event=REVIEWER_PAUSED, data=paused_event_data(pause))
    return pause


def paused_event_data(pause: ReviewerPause) -> dict:
    """`reviewer.paused`'s data: who, the window's figures, and the second look's size."""
    return {
        "reviewer": {"id": pause.reviewer_id, "username": pause.reviewer.get_username()},
        "paused_at": pause.paused_at.isoformat(),
        "gold_accuracy": pause.accuracy,
        "gold_claims": pause.claims,
        "threshold": pause.threshold,
        "second_look_since": pause.since.isoformat(),
        "second_look_decisions": selectors.second_look(pause).count(),
    }


def reviewer_resume(*, user, pause_id: int, note: str = "") -> bool:
    """A lead (or an admin) lets a paused reviewer back into the live queue after a second look."""
    if not is_lead_or_admin(user):
        raise GoldError("Only a lead or an admin resumes a reviewer.")
    with transaction.atomic():
        pause = (
            ReviewerPause.objects.select_for_update()
            .filter(pk=pause_id, resumed_at__isnull=True)
            .first()
        )
        if pause is None:
            return False
        ReviewerPause.objects.filter(pk=pause.pk).update(
            resumed_at=timezone.now(), resumed_by=user, note=note
        )
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action="reviewer.resumed",
            obj=pause.reviewer,
            after={"pause": pause.pk},
            note=note,
        )
    return True
