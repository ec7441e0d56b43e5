"""How claim labels roll up into a grounding score and a verdict.

This is the definition for every profile unless a profile documents otherwise: backends and
prompts decide the labels, this module decides what the labels add up to.
"""

from __future__ import annotations

from collections.abc import Sequence

from judges.types import Claim

# Below this share of SUPPORTED claims an answer is UNGROUNDED even if nothing is contradicted.
UNGROUNDED_BELOW = 0.5


# How far the judge's doubt about its SUPPORTED claims (1 - confidence) lowers the score within one
# share of SUPPORTED claims: enough to order answers of the same share by risk, too little to cross
# the seeds' threshold: an answer whose claims are all SUPPORTED scores at least 0.96, over 0.95.
CONFIDENCE_SPREAD = 0.04


def grounding_score(claims: Sequence[Claim]) -> float:
    """Share of claims labelled SUPPORTED, lowered by at most CONFIDENCE_SPREAD of itself by the
    mean doubt of those claims (a claim without a confidence, as most LLM profiles give, has none),
    rounded to 4 places; 1.0 when there are no claims.

    The share is the seeds' definition; the confidence orders answers of one share by risk (a
    paraphrase the checks could not read word for word, a claim the offline judge found spread
    over sentences), so the score ranks answers (docs/accuracy.md: AUROC on the dev halves).
    An answer with no factual claims (only hedges and redirects) asserts nothing that could be
    wrong, so it counts as fully grounded.
    """
    if not claims:
        return 1.0
    supported = [claim for claim in claims if claim.label == "SUPPORTED"]
    if not supported:
        return 0.0
    # Labels alone (a human's final labels, say) carry no confidence: no doubt.
    doubt = sum(
        1.0 - confidence
        for claim in supported
        if (confidence := getattr(claim, "confidence", None)) is not None
    )
    share = len(supported) / len(claims)
    return round(share * (1 - CONFIDENCE_SPREAD * doubt / len(supported)), 4)


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
