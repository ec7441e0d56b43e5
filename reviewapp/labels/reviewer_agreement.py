"""Agreement between reviewers, and of each reviewer with the final label, read from Review rows
(reads only; the statistics are reviewapp.labels.agreement's).

A reviewer's decision on a claim is their latest `stage=review` Review row on it (a blank final
label: undecided again, so none); a lead's `adjudication` rows settle a disagreement and are no
reviewer's vote. Judge claims only: a claim a reviewer added was labelled by its author alone.
Agreement is over explicit decisions; those accepted in bulk by finishing were not looked at, so
they are left out (counted as agreement they would inflate it, most are SUPPORTED claims nobody
read) and their number is shown beside, as on the judge-versus-human table.

Every figure here comes from one query (every_current_decision), whatever the number of reviewers.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from django.conf import settings

from judges.types import LABELS
from reviewapp.review import selectors
from reviewapp.labels import agreement
from reviewapp.labels.agreement import Agreement, Figure
from reviewapp.models import Claim, ConsensusMethod, DecisionMode, Review

# Final labels several reviewers reached (agreeing, by majority, or settled by a lead). Where one
# reviewer alone decided, the final label is that reviewer's: agreement with it says nothing.
CONSENSUS = (ConsensusMethod.UNANIMOUS, ConsensusMethod.MAJORITY, ConsensusMethod.LEAD)
FINAL = " final label"  # the rater name of the final label: no user name has a space


@dataclass(frozen=True)
class Decision:
    """One reviewer's current decision on one judge claim."""

    claim_id: int
    reviewer_id: int
    reviewer: str
    label: str
    bulk: bool
    category: str
    final_label: str
    consensus_method: str


def every_current_decision() -> list[Decision]:
    """Every reviewer's current decision on every judge claim, in one query (DISTINCT ON)."""
    # Gold copies are scored against gold labels (reviewapp.quality), not against each other.
    judge_claims = Review.objects.filter(
        stage=Review.Stage.REVIEW, claim__origin=Claim.Origin.JUDGE, answer__gold_copy__isnull=True
    )
    rows = selectors.current_reviews(judge_claims).values_list(
        "claim_id",
        "reviewer_id",
        "reviewer__username",
        "final_label",
        "decision_mode",
        "claim__category",
        "claim__human_label",
        "claim__consensus_method",
    )
    return [
        Decision(
            claim, reviewer_id, name, label, mode == DecisionMode.BULK, category, final, method
        )
        for claim, reviewer_id, name, label, mode, category, final, method in rows
        if label
    ]


def _by_claim(decisions: list[Decision]) -> dict[int, list[Decision]]:
    claims: dict[int, list[Decision]] = defaultdict(list)
    for d in decisions:
        claims[d.claim_id].append(d)
    return claims


def _table(claims: dict[int, list[Decision]], include_bulk: bool) -> agreement.Table:
    return agreement.table([(d.reviewer, d.label) for d in ds if include_bulk or not d.bulk]
                           for ds in claims.values())


@dataclass(frozen=True)
class Bulk:
    """Decisions left out of a figure because they were accepted in bulk."""

    left_out: int
    of: int

    @property
    def share(self) -> float | None:
        return self.left_out / self.of if self.of else None


def _bulk(decisions: list[Decision], include_bulk: bool) -> Bulk:
    return Bulk(0 if include_bulk else sum(d.bulk for d in decisions), len(decisions))


def reviewers_agreement(
    *, include_bulk: bool = False, resamples: int | None = None
) -> dict[str, Any]:
    """What /calibration/ shows of reviewers: overall, per pair, per label (that label or not) and
    per category; and each reviewer against the final label."""
    resamples = settings.AGREEMENT_RESAMPLES if resamples is None else resamples
    decisions = every_current_decision()
    claims = _by_claim(decisions)
    shared = {claim: ds for claim, ds in claims.items() if len(ds) >= 2}
    t = _table(shared, include_bulk)
    by_category: dict[str, dict[int, list[Decision]]] = defaultdict(dict)
    for claim, ds in shared.items():
        by_category[ds[0].category][claim] = ds
    return {
        "overall": agreement.agreement(t, resamples=resamples),
        "bulk": _bulk([d for ds in shared.values() for d in ds], include_bulk),
        "include_bulk": include_bulk,
        "pairs": _pairs(shared, include_bulk, resamples),
        "by_label": [
            (label, agreement.agreement(agreement.binarized(t, label), resamples=resamples))
            for label in LABELS
        ],
        "by_category": [
            (category, agreement.agreement(_table(cs, include_bulk), resamples=resamples))
            for category, cs in sorted(by_category.items())
        ],
        "reviewers": sorted(
            reviewer_agreement(
                decisions=decisions, include_bulk=include_bulk, resamples=resamples
            ).values(),
            key=lambda r: r.reviewer,
        ),
        "resamples": resamples,
    }


@dataclass(frozen=True)
class PairAgreement:
    first: str
    second: str
    shared: int  # claims both decided, however
    bulk: Bulk  # of those, claims left out because one of the two decisions was in bulk
    figures: Agreement


def _pairs(
    shared: dict[int, list[Decision]], include_bulk: bool, resamples: int
) -> list[PairAgreement]:
    together: dict[tuple[str, str], list[list[Decision]]] = defaultdict(list)
    for ds in shared.values():
        for a, b in combinations(sorted(ds, key=lambda d: d.reviewer), 2):
            together[a.reviewer, b.reviewer].append([a, b])
    rows = []
    for (first, second), pairs in sorted(together.items()):
        kept = [p for p in pairs if include_bulk or not (p[0].bulk or p[1].bulk)]
        t = agreement.table([(d.reviewer, d.label) for d in p] for p in kept)
        figures = agreement.agreement(t, kappa=agreement.two_rater_kappa, resamples=resamples)
        rows.append(
            PairAgreement(
                first, second, len(pairs), Bulk(len(pairs) - len(kept), len(pairs)), figures
            )
        )
    return rows


@dataclass(frozen=True)
class ReviewerAgreement:
    """One reviewer against the final label, on claims whose final label several reviewers
    reached."""

    reviewer_id: int
    reviewer: str
    claims: int  # compared (explicit decisions on claims with a consensus final label)
    agreed: int
    bulk: Bulk
    percent: Figure
    kappa: Figure


def reviewer_agreement(
    *,
    reviewer_ids: list[int] | None = None,
    decisions: list[Decision] | None = None,
    include_bulk: bool = False,
    resamples: int | None = None,
) -> dict[int, ReviewerAgreement]:
    """Each reviewer's agreement with the final label, by user id: the share of their decisions
    the final label kept, and Cohen's kappa of reviewer against final label, with intervals.
    Counted on claims whose final label came from several reviewers (unanimous, majority, lead);
    explicit decisions only unless `include_bulk`. One query (none with `decisions` given)."""
    resamples = settings.AGREEMENT_RESAMPLES if resamples is None else resamples
    decisions = every_current_decision() if decisions is None else decisions
    mine: dict[int, list[Decision]] = defaultdict(list)
    for d in decisions:
        wanted = reviewer_ids is None or d.reviewer_id in reviewer_ids
        if wanted and d.final_label and d.consensus_method in CONSENSUS:
            mine[d.reviewer_id].append(d)
    out = {}
    for reviewer_id, ds in mine.items():
        kept = [d for d in ds if include_bulk or not d.bulk]
        t = agreement.table([(d.reviewer, d.label), (FINAL, d.final_label)] for d in kept)
        percent, kappa = agreement.figures(
            t, [agreement.percent_agreement, agreement.two_rater_kappa], resamples=resamples
        )
        out[reviewer_id] = ReviewerAgreement(
            reviewer_id=reviewer_id, reviewer=ds[0].reviewer, claims=len(kept),
            agreed=sum(d.label == d.final_label for d in kept), bulk=_bulk(ds, include_bulk),
            percent=percent, kappa=kappa)
    return out
