"""The policy and jobs pages' reads: the judge in force, the routing preview, the re-judge jobs."""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta
from typing import Any

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Count, F, Min, Q, QuerySet, Value
from django.db.models.functions import JSONObject
from django.conf import settings
from django.utils import timezone

import judges
from reviewapp.models import Answer, Claim, Job, JudgeRun, Policy
from reviewapp.review.selectors import day_start, posted_answers


def rejudge_answer_ids(*, since: date | None, until: date | None, review_status: str, limit: int,
                       include_golden: bool) -> list[int]:
    """The answers a re-judge job takes, newest first: judged or failed ones in the date range."""
    answers = Answer.objects.all() if include_golden else posted_answers()
    answers = answers.filter(status__in=[Answer.Status.JUDGED, Answer.Status.FAILED])
    if since:
        answers = answers.filter(created_at__gte=day_start(since))
    if until:
        answers = answers.filter(created_at__lt=day_start(until + timedelta(days=1)))
    if review_status:
        answers = answers.filter(review_status=review_status)
    return list(answers.order_by("-created_at").values_list("pk", flat=True)[:limit])


def judge_in_force(policy) -> str:
    """How the policy judges new answers, as the pages name a run: "offline@v4 (offline)", or
    "claim_audit@v1 (openai, gpt-4o-mini)" (a client may still ask for another profile)."""
    profile = policy.judge_profile or settings.JUDGE_PROFILE
    config = judges.JudgeConfig(
        backend=policy.judge_backend or settings.JUDGE_BACKEND,
        profile=profile,
        model=policy.judge_model or settings.JUDGE_MODEL,
    )
    try:
        judge = judges.identify(config)
    except judges.JudgeError as exc:
        return f"{profile} ({exc})"
    if judge.backend == "offline":  # the offline judge reads no profile and calls no model
        return f"{judge.profile}@{judge.prompt_version} (offline)"
    return f"{judge.profile}@{judge.prompt_version} ({judge.backend}, {judge.model})"


def jobs() -> QuerySet[Job]:
    """Admin jobs, newest first, each with `failed_runs`: the re-judge runs that failed, and
    `answer_runs`: {answer, run} for each run a re-judge made, by answer, for the job's row to link
    to the answer and to its two runs side by side."""
    return Job.objects.select_related("created_by").annotate(
        failed_runs=Count("runs", filter=Q(runs__status=JudgeRun.Status.FAILED)),
        answer_runs=ArrayAgg(
            JSONObject(answer="runs__answer_id", run="runs__id"),
            filter=Q(runs__isnull=False),
            order_by=("runs__answer_id", "runs__id"),
            default=Value([]),
        ),
    )


def routed_under_older_policy(current: Policy) -> int:
    """Answers waiting for review or auto-passed under an older policy version than `current`:
    what "Re-route now" would look at again (a policy change routes new judge runs only)."""
    waiting = (Answer.ReviewStatus.IN_REVIEW, Answer.ReviewStatus.AUTO_PASSED)
    return Answer.objects.filter(
        review_status__in=waiting, policy__version__lt=current.version
    ).count()


PREVIEW_LIMIT = (
    200_000  # the newest judged answers in the window (bench: 100k in about a second or two)
)


def routing_preview(*, current, candidate, days: int) -> dict[str, Any]:
    """How many recently judged answers each policy would send to review, by reason, and some
    answers that would change lane. Uses the routing code itself (decide_route).

    Only flagged claims can change a route, so only they are read, already grouped by the database.
    """
    from reviewapp.policy.routing import decide_route

    since = timezone.now() - timedelta(days=days)
    window = Answer.objects.filter(
        status=Answer.Status.JUDGED, judged_at__gte=since, judged_by__isnull=False
    )
    scores = dict(
        window.order_by("-judged_at").values_list("pk", "grounding_score")[:PREVIEW_LIMIT]
    )
    claims: dict[int, list[tuple[str, str]]] = {}
    flagged = (
        Claim.objects.filter(
            answer__in=window, run_id=F("answer__judged_by_id"), origin=Claim.Origin.JUDGE
        )
        .exclude(label="SUPPORTED")
        .values_list("answer_id", "label", "category")
        .annotate(n=Count("id"))
        .order_by()
    )
    for answer_id, label, category, n in flagged:
        claims.setdefault(answer_id, []).extend([(label, category)] * n)
    # SUPPORTED claims matter only below a confidence floor: those are read, one per answer at its
    # lowest confidence (enough to route it; the preview counts answers, not claims).
    floor = max(
        current.supported_confidence_floor or 0.0, candidate.supported_confidence_floor or 0.0
    )
    if floor > 0:
        unsure = (
            Claim.objects.filter(
                answer__in=window,
                run_id=F("answer__judged_by_id"),
                origin=Claim.Origin.JUDGE,
                label="SUPPORTED",
                confidence__lt=floor,
            )
            .values_list("answer_id")
            .annotate(lowest=Min("confidence"))
            .order_by()
        )
        for answer_id, lowest in unsure:
            claims.setdefault(answer_id, []).append(("SUPPORTED", "other", lowest))
    sides = {"current": Counter(), "candidate": Counter()}
    totals, several = Counter(), Counter()
    to_review, to_pass = [], []
    for pk, score in scores.items():
        routes = {
            name: decide_route(
                policy=policy, answer_id=pk, grounding_score=score or 0.0, claims=claims.get(pk, ())
            )
            for name, policy in (("current", current), ("candidate", candidate))
        }
        for name, route in routes.items():
            if route.review_status == "in_review":
                totals[name] += 1
                sides[name].update(route.kinds)
                several[name] += route.reviews > 1
        lanes = (routes["current"].review_status, routes["candidate"].review_status)
        if lanes == ("auto_passed", "in_review"):
            to_review.append((pk, routes["candidate"].reason))
        elif lanes == ("in_review", "auto_passed"):
            to_pass.append((pk, routes["current"].reason))
    examples = to_review[:5] + to_pass[:5]
    questions = dict(
        Answer.objects.filter(pk__in=[pk for pk, _ in examples]).values_list("pk", "question")
    )
    kinds = sorted(set(sides["current"]) | set(sides["candidate"]))
    return {
        "days": days,
        "judged": len(scores),
        "capped": len(scores) == PREVIEW_LIMIT,
        "review_current": totals["current"],
        "review_candidate": totals["candidate"],
        # of those, how many several reviewers would review (Policy.reviewers_per_answer)
        "several_current": several["current"],
        "several_candidate": several["candidate"],
        "by_kind": [(kind, sides["current"][kind], sides["candidate"][kind]) for kind in kinds],
        "to_review": [(pk, questions.get(pk, ""), reason) for pk, reason in to_review[:5]],
        "to_review_count": len(to_review),
        "to_pass": [(pk, questions.get(pk, ""), reason) for pk, reason in to_pass[:5]],
        "to_pass_count": len(to_pass),
    }
