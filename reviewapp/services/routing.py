"""Routing: after a judge run, an answer is auto-passed or sent to review with a reason."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from reviewapp.models import Answer, Policy

# Worse labels are reviewed first (DESIGN.md: CONTRADICTED before UNSUPPORTED before PARTIAL).
LABEL_PRIORITY = {"CONTRADICTED": 300, "UNSUPPORTED": 200, "PARTIALLY_SUPPORTED": 100, "SUPPORTED": 0}
CRITICAL_BONUS = 50
JUDGE_FAILED_PRIORITY = 250


@dataclass(frozen=True)
class Route:
    review_status: str
    reason: str
    priority: int


def in_audit_sample(answer_id: int, rate: float) -> bool:
    """Deterministic per answer, so re-running the judge routes the same answer the same way."""
    digest = hashlib.sha256(f"audit:{answer_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def decide_route(*, policy: Policy, answer_id: int, grounding_score: float, claims: Iterable[tuple[str, str]]) -> Route:
    """claims: (label, category) pairs of the run that judged the answer."""
    claims = list(claims)
    reasons = []
    if grounding_score < policy.score_threshold:
        reasons.append(f"score {grounding_score:.2f} < {policy.score_threshold:.2f}")
    blocking = Counter(label for label, _ in claims if label in policy.blocking_labels)
    for label, count in sorted(blocking.items(), key=lambda item: -LABEL_PRIORITY[item[0]]):
        reasons.append(f"{count} {label} claim{'s' if count > 1 else ''}")
    critical = sorted(
        {(label, category) for label, category in claims if label != "SUPPORTED" and category in policy.critical_categories}
    )
    if policy.critical_single_claim_blocks:
        reasons.extend(f"{label} {category} claim" for label, category in critical)

    worst = max((LABEL_PRIORITY[label] for label, _ in claims), default=0)
    priority = worst + (CRITICAL_BONUS if critical else 0)
    if reasons:
        return Route(Answer.ReviewStatus.IN_REVIEW, "; ".join(reasons), priority)
    if in_audit_sample(answer_id, policy.audit_sample_rate):
        return Route(Answer.ReviewStatus.IN_REVIEW, "audit sample", 0)
    return Route(Answer.ReviewStatus.AUTO_PASSED, "passed policy", 0)


def judge_failed_route() -> Route:
    # A failed judge never auto-passes: a human must look at an answer nobody has checked.
    return Route(Answer.ReviewStatus.IN_REVIEW, "judge failed", JUDGE_FAILED_PRIORITY)
