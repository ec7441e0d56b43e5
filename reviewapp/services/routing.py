"""Routing: after a judge run, an answer is auto-passed or sent to review with a reason.

`decide_route` is a pure function of a policy and a judged answer's score and claims, so the
policy page can preview a new policy on recent answers with exactly the code that will route them.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Protocol

# Worse labels are reviewed first (DESIGN.md: CONTRADICTED before UNSUPPORTED before PARTIAL).
LABEL_PRIORITY = {"CONTRADICTED": 300, "UNSUPPORTED": 200, "PARTIALLY_SUPPORTED": 100, "SUPPORTED": 0}
CRITICAL_BONUS = 50
JUDGE_FAILED_PRIORITY = 250
IN_REVIEW, AUTO_PASSED = "in_review", "auto_passed"


class RoutingPolicy(Protocol):
    score_threshold: float
    blocking_labels: list[str]
    critical_categories: list[str]
    critical_single_claim_blocks: bool
    audit_sample_rate: float


@dataclass(frozen=True)
class Route:
    review_status: str
    reasons: tuple[str, ...]  # human-readable: "score 0.62 < 0.95", "UNSUPPORTED price claim"
    kinds: tuple[str, ...]  # for counting: "score", "label:UNSUPPORTED", "critical:price", "audit", "failed"
    priority: int

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons) if self.reasons else "passed policy"


def in_audit_sample(answer_id: int, rate: float) -> bool:
    """Deterministic per answer, so re-running the judge routes the same answer the same way."""
    digest = hashlib.sha256(f"audit:{answer_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def decide_route(
    *, policy: RoutingPolicy, answer_id: int, grounding_score: float, claims: Iterable[tuple[str, str]]
) -> Route:
    """claims: (label, category) pairs of the run that judged the answer."""
    claims = list(claims)
    reasons, kinds = [], []
    if grounding_score < policy.score_threshold:
        reasons.append(f"score {grounding_score:.2f} < {policy.score_threshold:.2f}")
        kinds.append("score")
    blocking = Counter(label for label, _ in claims if label in policy.blocking_labels)
    for label, count in sorted(blocking.items(), key=lambda item: -LABEL_PRIORITY[item[0]]):
        reasons.append(f"{count} {label} claim{'s' if count > 1 else ''}")
        kinds.append(f"label:{label}")
    critical = sorted(
        {(label, category) for label, category in claims if label != "SUPPORTED" and category in policy.critical_categories}
    )
    if policy.critical_single_claim_blocks:
        for label, category in critical:
            reasons.append(f"{label} {category} claim")
            kinds.append(f"critical:{category}")

    worst = max((LABEL_PRIORITY[label] for label, _ in claims), default=0)
    priority = worst + (CRITICAL_BONUS if critical else 0)
    if reasons:
        return Route(IN_REVIEW, tuple(reasons), tuple(dict.fromkeys(kinds)), priority)
    if in_audit_sample(answer_id, policy.audit_sample_rate):
        return Route(IN_REVIEW, ("audit sample",), ("audit",), 0)
    return Route(AUTO_PASSED, (), (), 0)


def judge_failed_route() -> Route:
    # A failed judge never auto-passes: a human must look at an answer nobody has checked.
    return Route(IN_REVIEW, ("judge failed",), ("failed",), JUDGE_FAILED_PRIORITY)
