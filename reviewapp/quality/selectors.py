"""Reads of reviewer quality: gold decisions against gold labels, pauses, second looks.

A gold decision is a reviewer's final label on a judge claim of a gold copy they finished, set
against the gold label of the same claim (by position) frozen when the answer was marked gold.
Decisions accepted in bulk by finishing count too: on gold, accepting a wrong label unseen is a
miss like any other. Figures are reviewapp.labels.agreement's (the reviewer and GOLD as two raters):
accuracy is their percent agreement, kappa Cohen's, both with 95% bootstrap intervals.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet

from judges.types import LABELS
from reviewapp.access import is_lead_or_admin
from reviewapp.labels import agreement
from reviewapp.labels.agreement import Figure
from reviewapp.models import Answer, Claim, GoldAnswer, GoldCopy, Review, ReviewerPause

GOLD = " gold"  # the rater name of the gold label: no user name has a space


def live(answers: QuerySet[Answer]) -> QuerySet[Answer]:
    """`answers` without gold copies: what queues, lists, exports and judge measurements read."""
    return answers.exclude(Exists(GoldCopy.objects.filter(answer=OuterRef("pk"))))


def live_claims(claims: QuerySet[Claim]) -> QuerySet[Claim]:
    return claims.exclude(Exists(GoldCopy.objects.filter(answer=OuterRef("answer_id"))))


def is_gold_copy(answer_id: int) -> bool:
    return GoldCopy.objects.filter(answer_id=answer_id).exists()


def gold_copy_reviewer(answer_id: int) -> int | None:
    """The reviewer a gold copy was handed to (its only possible holder); None: a live answer."""
    return (
        GoldCopy.objects.filter(answer_id=answer_id).values_list("reviewer_id", flat=True).first()
    )


@dataclass(frozen=True)
class GoldState:
    can_mark: bool  # a lead or an admin, on an adjudicated answer that is not itself a gold copy
    active: bool


def gold_state(user, answer: Answer) -> GoldState:
    """What the review page offers of gold. A reviewer is told nothing, least of all on a copy."""
    if (
        not is_lead_or_admin(user)
        or answer.review_status != Answer.ReviewStatus.ADJUDICATED
        or is_gold_copy(answer.pk)
    ):
        return GoldState(False, False)
    return GoldState(True, GoldAnswer.objects.filter(answer=answer, active=True).exists())


def open_pause(user) -> ReviewerPause | None:
    return ReviewerPause.objects.filter(reviewer=user, resumed_at__isnull=True).first()


def open_pauses() -> list[ReviewerPause]:
    """Every reviewer paused now, for the leads' banner."""
    return list(
        ReviewerPause.objects.filter(resumed_at__isnull=True)
        .select_related("reviewer")
        .order_by("paused_at")
    )


@dataclass(frozen=True)
class GoldDecision:
    reviewer_id: int
    reviewer: str
    copy_id: int
    gold_answer_id: int  # the gold (source) answer
    answer_id: int  # the copy the reviewer saw
    position: int
    cid: str
    category: str
    judge_label: str
    gold_label: str
    label: str  # the reviewer's
    decision_mode: str
    decided_at: datetime | None
    scored_at: datetime

    @property
    def correct(self) -> bool:
        return self.label == self.gold_label


def gold_decisions(*, reviewer_id: int | None = None) -> list[GoldDecision]:
    """Every scored gold decision (of one reviewer, or everyone's), oldest copy first."""
    copies = GoldCopy.objects.filter(scored_at__isnull=False).select_related("gold", "reviewer")
    if reviewer_id is not None:
        copies = copies.filter(reviewer_id=reviewer_id)
    copies = list(copies.order_by("scored_at", "id"))
    claims = defaultdict(list)
    for claim in (
        Claim.objects.filter(answer_id__in=[c.answer_id for c in copies], origin=Claim.Origin.JUDGE)
        .exclude(human_label="")
        .order_by("position")
    ):
        claims[claim.answer_id].append(claim)
    out = []
    for copy in copies:
        gold = {entry["position"]: entry["label"] for entry in copy.gold.labels}
        for claim in claims[copy.answer_id]:
            if claim.position in gold:
                out.append(
                    GoldDecision(
                        copy.reviewer_id,
                        copy.reviewer.get_username(),
                        copy.pk,
                        copy.gold.answer_id,
                        copy.answer_id,
                        claim.position,
                        claim.cid,
                        claim.category,
                        claim.label,
                        gold[claim.position],
                        claim.human_label,
                        claim.decision_mode,
                        claim.decided_at,
                        copy.scored_at,
                    )
                )
    return out


def _table(decisions: list[GoldDecision]) -> agreement.Table:
    return agreement.table([("reviewer", d.label), (GOLD, d.gold_label)] for d in decisions)


def accuracy(decisions: list[GoldDecision]) -> float | None:
    return sum(d.correct for d in decisions) / len(decisions) if decisions else None


@dataclass(frozen=True)
class GoldQuality:
    reviewer_id: int
    reviewer: str
    claims: int
    correct: int
    accuracy: Figure
    kappa: Figure
    by_label: list[tuple[str, int, Figure]]  # (label, gold claims with it, accuracy on them)
    by_category: list[tuple[str, int, Figure]]
    pause: ReviewerPause | None


def _accuracy_figure(decisions: list[GoldDecision], resamples: int) -> Figure:
    return agreement.figures(_table(decisions), [agreement.percent_agreement], resamples=resamples)[
        0
    ]


def gold_quality(*, resamples: int | None = None) -> list[GoldQuality]:
    """What /reviewers/ shows of gold: each reviewer's accuracy and kappa against the gold labels,
    and their accuracy on the gold claims of each label and each category."""
    resamples = settings.AGREEMENT_RESAMPLES if resamples is None else resamples
    mine: dict[int, list[GoldDecision]] = defaultdict(list)
    for d in gold_decisions():
        mine[d.reviewer_id].append(d)
    pauses = {p.reviewer_id: p for p in ReviewerPause.objects.filter(resumed_at__isnull=True)}
    out = []
    for reviewer_id, ds in mine.items():
        percent, kappa = agreement.figures(
            _table(ds),
            [agreement.percent_agreement, agreement.two_rater_kappa],
            resamples=resamples,
        )
        by_label = [
            (label, len(of), _accuracy_figure(of, resamples))
            for label in LABELS
            if (of := [d for d in ds if d.gold_label == label])
        ]
        by_category = [
            (category, len(of), _accuracy_figure(of, resamples))
            for category in sorted({d.category for d in ds})
            if (of := [d for d in ds if d.category == category])
        ]
        out.append(
            GoldQuality(
                reviewer_id,
                ds[0].reviewer,
                len(ds),
                sum(d.correct for d in ds),
                percent,
                kappa,
                by_label,
                by_category,
                pauses.get(reviewer_id),
            )
        )
    return sorted(out, key=lambda q: q.reviewer)


def second_look(pause: ReviewerPause) -> QuerySet[Review]:
    """The paused reviewer's live decisions since their last good window (their current ones:
    undone decisions are not listed), newest first, for a lead to look at again."""
    rows = (
        Review.objects.filter(reviewer_id=pause.reviewer_id, created_at__gt=pause.since)
        .exclude(decision=Review.Decision.UNDO)
        .filter(undone_by__isnull=True)
    )
    rows = rows.exclude(Exists(GoldCopy.objects.filter(answer=OuterRef("answer_id"))))
    return rows.select_related("claim", "answer").order_by("-created_at", "-id")


def gold_answer_ids() -> set[int]:
    return set(GoldAnswer.objects.filter(active=True).values_list("answer_id", flat=True))
