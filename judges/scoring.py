"""How claim labels roll up into a grounding score and a verdict.

This is the definition for every profile unless a profile documents otherwise: backends and
prompts decide the labels, this module decides what the labels add up to.
"""

from __future__ import annotations

from collections.abc import Sequence

from judges.types import Claim

# Below this share of SUPPORTED claims an answer is UNGROUNDED even if nothing is contradicted.
UNGROUNDED_BELOW = 0.5


def grounding_score(claims: Sequence[Claim]) -> float:
    """Share of claims labelled SUPPORTED, rounded to 4 places; 1.0 when there are no claims.

    An answer with no factual claims (only hedges and redirects) asserts nothing that could be
    wrong, so it counts as fully grounded.
    """
    if not claims:
        return 1.0
    supported = sum(1 for claim in claims if claim.label == "SUPPORTED")
    return round(supported / len(claims), 4)


def verdict_for(claims: Sequence[Claim]) -> str:
    """GROUNDED when every claim is SUPPORTED; UNGROUNDED when any claim is CONTRADICTED or fewer
    than half are SUPPORTED; MOSTLY_GROUNDED otherwise."""
    if all(claim.label == "SUPPORTED" for claim in claims):
        return "GROUNDED"
    if any(claim.label == "CONTRADICTED" for claim in claims):
        return "UNGROUNDED"
    if grounding_score(claims) < UNGROUNDED_BELOW:
        return "UNGROUNDED"
    return "MOSTLY_GROUNDED"
