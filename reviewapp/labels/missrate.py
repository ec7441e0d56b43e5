"""The miss rate and the load-versus-catch curve (reads, for /calibration/ and /policy/).

Gold copies (reviewapp.quality) are no one's answers: left out of every figure here.

Miss rate: of the answers the policy passed, the share that hold a claim a human flagged
(calibration.human_flagged_claims), estimated from the adjudicated audit sample of the last
WINDOW_DAYS days, each audited answer weighed by the inverse of its inclusion probability
(Answer.audit_probability; for answers audited before it was stored, their policy's
audit_sample_rate, which was then every answer's). The figures and their intervals are
reviewapp.labels.sampling's; docs/miss-rate.md explains them.

Curve: every adjudicated answer of the window that has a score, weighed by the inverse of its
chance of having been reviewed (1 when the policy sent it to review, its inclusion probability when
the audit sample drew it), so the figures stand for all judged answers, not only the reviewed ones.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Exists, F, OuterRef, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from judges.types import CATEGORIES
from reviewapp.db.counts import counted
from reviewapp.labels.calibration import _judge_name, human_flagged_claims, line_chart
from reviewapp.labels.sampling import (
    CurvePoint, Estimate, Reviewed, curve_point, load_catch_curve, threshold_for_catch,
    weighted_share,
)
from reviewapp.models import Answer, Claim, Policy, ReviewPass
from reviewapp.policy.routing import AUDIT_REASON, IN_REVIEW, decide_route
from reviewapp.quality.selectors import live

# Recent enough to follow the policy in force, long enough for a few hundred audits.
WINDOW_DAYS = 90
THRESHOLDS = [step / 100 for step in range(0, 101, 2)]
DURATIONS = 2000  # the newest finished reviews whose median time is "seconds per answer"
# The curve reads each answer's claims through the routing code itself (one definition of the
# rules), so the page reads the newest this many adjudicated answers, not all of them.
CURVE_ANSWERS = 5000


@dataclass(frozen=True)
class Audited:
    client: str
    judge: str
    probability: float
    missed: bool
    categories: frozenset[str]  # of its human-flagged claims


def _since(now: datetime | None) -> datetime:
    return (now or timezone.now()) - timedelta(days=WINDOW_DAYS)


def audited_answers(since: datetime) -> list[Audited]:
    """Adjudicated answers of the audit sample judged since `since`, with their inclusion
    probability."""
    answers = live(Answer.objects.filter(routing_reason=AUDIT_REASON, judged_at__gte=since,
                                         review_status=Answer.ReviewStatus.ADJUDICATED))
    missed = Exists(human_flagged_claims().filter(answer=OuterRef("pk")))
    probability = Coalesce("audit_probability", "policy__audit_sample_rate")
    rows = list(answers.annotate(missed=missed, probability=probability).values_list(
        "pk", "client__name", "judged_by__profile", "judged_by__prompt_version", "judged_by__model",
        "probability", "missed"))
    categories: dict[int, set[str]] = defaultdict(set)
    # By the ids (a few per cent of the answers): the claims' answer index, not a scan of them all.
    flagged = human_flagged_claims().filter(answer_id__in=[row[0] for row in rows if row[-1]])
    for answer_id, category in flagged.values_list("answer_id", "category").distinct():
        categories[answer_id].add(category)
    return [Audited(client or "(no client)",
                    _judge_name(profile, version, model) if profile else "(no run)",
                    probability or 0.0, missed, frozenset(categories.get(pk, ())))
            for pk, client, profile, version, model, probability, missed in rows]


@dataclass(frozen=True)
class MissRateRow:
    name: str
    estimate: Estimate
    above: bool  # its upper bound passes the target


def _rows(answers: list[Audited], key: Callable[[Audited], str],
          target: float | None) -> list[MissRateRow]:
    groups: dict[str, list[Audited]] = defaultdict(list)
    for answer in answers:
        groups[key(answer)].append(answer)
    rows = [(name, weighted_share((a.missed, a.probability) for a in group))
            for name, group in groups.items()]
    return [MissRateRow(name, estimate, estimate.above(target)) for name, estimate in sorted(rows)]


def miss_rates(*, target: float | None, now: datetime | None = None) -> dict[str, Any]:
    """The miss rate overall and per client, judge and category (for a category: the share of
    passed answers holding a human-flagged claim of that category), against the target."""
    since = _since(now)
    answers = audited_answers(since)
    overall = weighted_share((a.missed, a.probability) for a in answers)
    present = sorted({c for a in answers for c in a.categories},
                     key=lambda c: (c not in CATEGORIES, c))
    by_category = [(c, weighted_share((c in a.categories, a.probability) for a in answers))
                   for c in present]
    passed = live(Answer.objects.filter(judged_at__gte=since)).filter(
        Q(review_status=Answer.ReviewStatus.AUTO_PASSED) | Q(routing_reason=AUDIT_REASON)).count()
    return {
        "days": WINDOW_DAYS, "passed": passed, "target": target, "overall": overall,
        "above": overall.above(target),
        "by_client": _rows(answers, lambda a: a.client, target),
        "by_judge": _rows(answers, lambda a: a.judge, target),
        "by_category": [MissRateRow(c, e, e.above(target)) for c, e in by_category],
    }


# --- load versus catch -------------------------------------------------------------------------


def _other_rules(policy: Policy) -> Policy:
    """The policy without its score rule and its audit sample: what sends an answer to review
    whatever the threshold."""
    values = {f.attname: getattr(policy, f.attname)
              for f in Policy._meta.concrete_fields if f.attname != "id"}
    off = {"score_threshold": 0.0, "audit_sample_rate": 0.0, "audit_near_rate": 0.0}
    return Policy(**values | off)


def reviewed_answers(policy: Policy, since: datetime) -> list[Reviewed]:
    """The newest adjudicated answers judged since `since` (up to CURVE_ANSWERS), as the curve
    reads them under `policy`'s other rules."""
    answers = list(
        live(Answer.objects.filter(review_status=Answer.ReviewStatus.ADJUDICATED,
                                   judged_at__gte=since, grounding_score__isnull=False,
                                   judged_by__isnull=False))
        .annotate(human=Exists(human_flagged_claims().filter(answer=OuterRef("pk"))),
                  sample_rate=F("policy__audit_sample_rate"))
        .order_by("-judged_at")
        .values_list("pk", "judged_by_id", "grounding_score", "routing_reason", "audit_probability",
                     "sample_rate", "human")[:CURVE_ANSWERS])
    claims: dict[int, list[tuple]] = defaultdict(list)
    for run_id, label, category, confidence in Claim.objects.filter(
            run_id__in=[row[1] for row in answers], origin=Claim.Origin.JUDGE).values_list(
            "run_id", "label", "category", "confidence"):
        claims[run_id].append((label, category, confidence))
    others = _other_rules(policy)
    out = []
    for pk, run_id, score, reason, probability, sample_rate, human in answers:
        audited = reason == AUDIT_REASON
        chance = (probability or sample_rate or 0.0) if audited else 1.0
        route = decide_route(policy=others, answer_id=pk, grounding_score=score,
                             claims=claims[run_id])
        out.append(Reviewed(score, route.review_status == IN_REVIEW, human, chance))
    return out


def seconds_per_answer() -> float | None:
    """The median time a reviewer spent on an answer: from taking it to finishing it, over the
    newest finished reviews."""
    rows = (ReviewPass.objects.filter(status=ReviewPass.Status.FINISHED, finished_at__isnull=False)
            .order_by("-finished_at").values_list("started_at", "finished_at")[:DURATIONS])
    seconds = [(finished - started).total_seconds() for started, finished in rows]
    return statistics.median(seconds) if seconds else None


@dataclass(frozen=True)
class Choice:
    catch: float  # the catch asked for
    point: CurvePoint | None  # the lowest threshold reaching it; None if none does
    hours: float | None


def curve_figures(policy: Policy, *, now: datetime | None = None) -> dict[str, Any]:
    """What the curve is drawn from: its points, the threshold in force's point, how many answers
    it read, and what review hours are computed with."""
    since = _since(now)
    reviewed = reviewed_answers(policy, since)
    return {
        "points": load_catch_curve(reviewed, THRESHOLDS),
        "current": curve_point(reviewed, policy.score_threshold),
        "reviewed": len(reviewed), "flagged": sum(a.human_flagged for a in reviewed),
        "judged": live(Answer.objects.filter(judged_at__gte=since, status=Answer.Status.JUDGED))
        .count(),
        "seconds": seconds_per_answer(),
    }


def load_catch(policy: Policy, *, catch: float | None = None,
               now: datetime | None = None) -> dict[str, Any]:
    """The curve of `policy` with its threshold varied (its other rules kept), review hours per 30
    days at the measured seconds per answer, and the threshold to choose for a catch of at least
    `catch`. Its figures are reused for a few seconds on big tables (db.counts.counted): they read
    every recent adjudicated answer."""
    figures = counted(f"load_catch:{policy.pk}", lambda: curve_figures(policy, now=now))
    points, judged, seconds = figures["points"], figures["judged"], figures["seconds"]

    def hours(point: CurvePoint | None) -> float | None:
        if point is None or point.load is None or seconds is None:
            return None
        return point.load * judged * 30 / WINDOW_DAYS * seconds / 3600

    chosen = None
    if catch is not None:
        point = threshold_for_catch(points, catch)
        chosen = Choice(catch, point, hours(point))
    return figures | {
        "days": WINDOW_DAYS, "chosen": chosen,
        "rows": [(p, hours(p)) for p in points if round(p.threshold * 100) % 10 == 0],
        "chart": line_chart("Load, catch and precision by threshold",
                            [f"{p.threshold:.2f}" for p in points],
                            [("load (share sent to review)", [p.load for p in points]),
                             ("catch (flagged answers sent)", [p.catch for p in points]),
                             ("precision (sent and flagged)", [p.precision for p in points])]),
    }


def shown_miss_rates(policy: Policy) -> dict[str, Any]:
    """miss_rates() for the pages, reused for a few seconds on big tables (the alert's evaluation
    always reads them fresh)."""
    return counted(f"miss_rates:{policy.pk}", lambda: miss_rates(target=policy.miss_rate_target))
