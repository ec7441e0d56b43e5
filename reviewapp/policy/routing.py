"""Routing: after a judge run, an answer is auto-passed or sent to review with a reason.

`decide_route` is a pure function of a policy and a judged answer's score and claims, so the
policy page can preview a new policy on recent answers with exactly the code that will route them.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Protocol

from judges.types import LABEL_SEVERITY

# Worse labels are reviewed first: CONTRADICTED 300, UNSUPPORTED 200, PARTIALLY_SUPPORTED 100.
LABEL_PRIORITY = {label: 100 * severity for label, severity in LABEL_SEVERITY.items()}
CRITICAL_BONUS = 50
JUDGE_FAILED_PRIORITY = 250
IN_REVIEW, AUTO_PASSED = "in_review", "auto_passed"
ROUTING_REASON_MAX = 300  # Answer.routing_reason's length
AUDIT_REASON = "audit sample"  # the routing reason of a passed answer drawn for the audit sample


class RoutingPolicy(Protocol):
    score_threshold: float
    blocking_labels: list[str]
    critical_categories: list[str]
    critical_single_claim_blocks: bool
    audit_sample_rate: float
    audit_near_rate: float
    audit_near_margin: float
    audit_confidence_below: float
    reviewers_per_answer: int
    multi_review_scope: str
    multi_review_share: float
    supported_confidence_floor: float
    escalation_margin: float


@dataclass(frozen=True)
class Route:
    review_status: str
    reasons: tuple[str, ...]  # human-readable: "score 0.62 < 0.95", "UNSUPPORTED price claim"
    # for counting: "score", "label:UNSUPPORTED", "critical:price", "audit", "failed"
    kinds: tuple[str, ...]
    priority: int
    reviews: int = 1  # how many different reviewers must review it (Answer.reviews_required)
    audit_probability: float | None = None  # its chance of the audit sample, when drawn for it

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons) if self.reasons else "passed policy"

    def answer_fields(
        self, *, policy_id: int, blind: bool, reason: str | None = None
    ) -> dict[str, Any]:
        """The answer's fields this route sets, by name: the one mapping the worker's SQL
        (store.Judged), its in-memory answer, a failed answer and the re-route job all write.
        `reason`: another wording of the route's reason (an escalation's); cut to the column."""
        return {
            "review_status": self.review_status,
            "routing_reason": (reason or self.reason)[:ROUTING_REASON_MAX],
            "priority": self.priority,
            "policy_id": policy_id,
            "reviews_required": self.reviews,
            "reviews_blind": blind,
            "audit_probability": self.audit_probability,
        }


def in_audit_sample(answer_id: int, rate: float) -> bool:
    """Deterministic per answer, so re-running the judge routes the same answer the same way."""
    digest = hashlib.sha256(f"audit:{answer_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def audit_probability(policy: RoutingPolicy, grounding_score: float,
                      claims: Iterable[tuple[str, str] | tuple[str, str, float | None]]) -> float:
    """A passed answer's chance of the audit sample: higher near the threshold, where the judge's
    misses sit, or with a claim the judge is unsure of (audit_near_rate, when above the base
    rate); audit_sample_rate elsewhere. Stored on each audited answer, since the miss rate weighs
    it by the inverse (reviewapp.labels.sampling)."""
    base = policy.audit_sample_rate
    near_rate = policy.audit_near_rate or 0.0
    if near_rate <= base:
        return base
    near = grounding_score < policy.score_threshold + (policy.audit_near_margin or 0.0)
    below = policy.audit_confidence_below or 0.0
    unsure = any(rest and rest[0] is not None and rest[0] < below for _, _, *rest in claims)
    return near_rate if near or unsure else base


def _in_share(answer_id: int, share: float) -> bool:
    # Its own salt: which answers get several reviewers must not follow which are audited.
    digest = hashlib.sha256(f"multi-review:{answer_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def reviews_required(*, policy: RoutingPolicy, answer_id: int, critical: bool, audit: bool) -> int:
    """How many reviewers an answer routed to review needs: the policy's reviewers_per_answer when
    the answer is in its scope (every answer, critical ones, the audit sample) and in its share
    (deterministic per answer, like the audit sample), else one."""
    scope = policy.multi_review_scope
    in_scope = scope == "all" or (scope == "critical" and critical) or (scope == "audit" and audit)
    if (
        policy.reviewers_per_answer <= 1
        or not in_scope
        or not _in_share(answer_id, policy.multi_review_share)
    ):
        return 1
    return policy.reviewers_per_answer


def decide_route(
    *, policy: RoutingPolicy, answer_id: int, grounding_score: float,
    claims: Iterable[tuple[str, str] | tuple[str, str, float | None]],
) -> Route:
    """claims: (label, category) or (label, category, confidence) of the run that judged the
    answer."""
    claims = list(claims)
    probability = audit_probability(policy, grounding_score, claims)
    reasons, kinds = [], []
    if grounding_score < policy.score_threshold:
        reasons.append(f"score {grounding_score:.2f} < {policy.score_threshold:.2f}")
        kinds.append("score")
    unsure = unsure_claims(policy, claims)
    if unsure:
        reasons.append(f"{unsure} SUPPORTED claim{'s' if unsure > 1 else ''} below confidence "
                       f"{policy.supported_confidence_floor:.2f}")
        kinds.append("confidence")
    claims = [claim[:2] for claim in claims]
    blocking = Counter(label for label, _ in claims if label in policy.blocking_labels)
    for label, count in sorted(blocking.items(), key=lambda item: -LABEL_PRIORITY[item[0]]):
        reasons.append(f"{count} {label} claim{'s' if count > 1 else ''}")
        kinds.append(f"label:{label}")
    critical = sorted(
        {
            (label, category)
            for label, category in claims
            if label != "SUPPORTED" and category in policy.critical_categories
        }
    )
    if policy.critical_single_claim_blocks:
        for label, category in critical:
            reasons.append(f"{label} {category} claim")
            kinds.append(f"critical:{category}")

    worst = max((LABEL_PRIORITY[label] for label, _ in claims), default=0)
    priority = worst + (CRITICAL_BONUS if critical else 0)
    if reasons:
        reviews = reviews_required(
            policy=policy, answer_id=answer_id, critical=bool(critical), audit=False
        )
        return Route(IN_REVIEW, tuple(reasons), tuple(dict.fromkeys(kinds)), priority, reviews)
    if in_audit_sample(answer_id, probability):
        reviews = reviews_required(policy=policy, answer_id=answer_id, critical=False, audit=True)
        return Route(IN_REVIEW, (AUDIT_REASON,), ("audit",), 0, reviews,
                     audit_probability=probability)
    return Route(AUTO_PASSED, (), (), 0)


def escalation_due(*, policy: RoutingPolicy, answer_id: int, grounding_score: float,
                   claims: Iterable[tuple[str, str] | tuple[str, str, float | None]]) -> bool:
    """Whether a second judge looks before a human: the first judge's result would go to review
    (an audit draw aside), or it scored within the escalation margin of the threshold."""
    route = decide_route(
        policy=policy, answer_id=answer_id, grounding_score=grounding_score, claims=claims
    )
    flagged = route.review_status == IN_REVIEW and route.kinds != ("audit",)
    return flagged or abs(grounding_score - policy.score_threshold) <= policy.escalation_margin


def unsure_claims(policy: RoutingPolicy, claims: Iterable[tuple]) -> int:
    """How many SUPPORTED claims have a confidence below the policy's floor (a claim without one,
    as most LLM profiles give, is not counted)."""
    floor = policy.supported_confidence_floor or 0.0
    return sum(1 for label, _, *rest in claims
               if label == "SUPPORTED" and rest and rest[0] is not None and rest[0] < floor)


def judge_failed_route(policy: RoutingPolicy | None = None, answer_id: int = 0) -> Route:
    # A failed judge never auto-passes: a human must look at an answer nobody has checked.
    reviews = (
        1
        if policy is None
        else reviews_required(policy=policy, answer_id=answer_id, critical=False, audit=False)
    )
    return Route(IN_REVIEW, ("judge failed",), ("failed",), JUDGE_FAILED_PRIORITY, reviews)
