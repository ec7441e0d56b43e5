"""claim_verification: claim-by-claim verification with passage ids (seed 002).

The model lists the answer's factual claims, each with a verification_status (SUPPORTED,
PARTIALLY_SUPPORTED, UNSUPPORTED, CONTRADICTED; the seed's schema names three, its prose the
fourth), the id and exact text of the passage that supports or contradicts it, and an explanation,
plus a grounding score and counts. The output schema is the seed's, key for key.

Normalization:
* claim ids are the model's claim_id (c1, c2, ... when any is missing or repeated); claim_text is
  placed in the answer where it can be (judges.locate: exact, normalized or fuzzy; answer_span
  None otherwise);
* source_passage_id + source_text become one Evidence via locate_quote (named passage first, then
  the others; exact, normalized or fuzzy; "not_found" is kept as a finding). A passage named with
  no text quoted gives no evidence, and the explanation notes the citation;
* a SUPPORTED claim whose source_text is null, or not found in any passage, becomes
  PARTIALLY_SUPPORTED with an "Unverified quote: ..." explanation
  (judges.locate.distrust_unverified_quotes): the judge's own quote is not trusted;
* grounding_score is RECOMPUTED as the share of claims labelled SUPPORTED after that downgrade
  (judges.scoring.grounding_score; 1.0 with no claims). The model's grounding_score and counts are
  kept in the raw output only and never cause a rejection: models get arithmetic wrong;
* verdict is judges.scoring.verdict_for(claims); categories come from keywords.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from judges.categories import category_for
from judges.locate import distrust_unverified_quotes
from judges.profiles.base import Normalized
from judges.profiles.common import TemplateProfile, claim_ids, place_claims
from judges.profiles.locate import locate_quote
from judges.profiles.parsing import NonBlank, RawModel, array, enum, strict_object, string
from judges.scoring import grounding_score, verdict_for
from judges.types import Claim, JudgeRequest

STATUSES = ("SUPPORTED", "PARTIALLY_SUPPORTED", "UNSUPPORTED", "CONTRADICTED")


class VerifiedClaim(RawModel):
    claim_id: str
    claim_text: NonBlank
    verification_status: Literal["SUPPORTED", "PARTIALLY_SUPPORTED", "UNSUPPORTED", "CONTRADICTED"]
    source_passage_id: str | None
    source_text: str | None
    explanation: str


class ClaimVerificationOutput(RawModel):
    claims: list[VerifiedClaim]
    grounding_score: float
    total_claims: float
    supported_claims: float
    unsupported_claims: float
    contradicted_claims: float


OUTPUT_SCHEMA = strict_object(
    {
        "claims": array(
            strict_object(
                {
                    "claim_id": string("c1, c2, ... in answer order"),
                    "claim_text": string(),
                    "verification_status": enum(STATUSES),
                    "source_passage_id": string(
                        "id of the supporting or contradicting passage, e.g. P1", nullable=True
                    ),
                    "source_text": string("text copied exactly from that passage", nullable=True),
                    "explanation": string(),
                }
            )
        ),
        "grounding_score": {
            "type": "number",
            "description": "fraction of claims that are SUPPORTED, 0 to 1",
        },
        "total_claims": {"type": "number"},
        "supported_claims": {"type": "number"},
        "unsupported_claims": {"type": "number"},
        "contradicted_claims": {"type": "number"},
    }
)


class ClaimVerification(TemplateProfile):
    name = "claim_verification"
    versions = ("v1",)
    folder = Path(__file__).parent
    raw_model = ClaimVerificationOutput
    output_schema = OUTPUT_SCHEMA

    def normalize(self, raw, request: JudgeRequest) -> Normalized:
        raw = self.coerce(raw)
        answer = request.answer
        claims: list[Claim] = []
        placed = place_claims([c.claim_text for c in raw.claims], answer)
        for claim_id, item, (span, text) in zip(
            claim_ids([c.claim_id for c in raw.claims]), raw.claims, placed
        ):
            evidence = []
            explanation = item.explanation
            if item.source_text and item.source_text.strip():
                evidence.append(
                    locate_quote(item.source_text, request.passages, item.source_passage_id)
                )
            elif item.source_passage_id and item.source_passage_id.strip():
                note = f"(The judge cited {item.source_passage_id} without quoting it.)"
                explanation = f"{explanation} {note}".strip()
            claims.append(Claim(
                id=claim_id, text=text, answer_span=span, label=item.verification_status,
                category=category_for(text), evidence=evidence, explanation=explanation,
            ))
        # SUPPORTED needs the exact supporting text: none quoted, or a quote that is in no passage,
        # leaves the claim unverified, so PARTIALLY_SUPPORTED.
        claims = distrust_unverified_quotes(claims, require_evidence=True)
        return Normalized(
            verdict=verdict_for(claims), grounding_score=grounding_score(claims), claims=claims
        )


PROFILES = [ClaimVerification(version) for version in ClaimVerification.versions]
