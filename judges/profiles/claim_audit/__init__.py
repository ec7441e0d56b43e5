"""claim_audit: a per-claim grounding audit (seed 000).

The model decomposes the answer into claims (including those in subordinate clauses and framing),
labels each SUPPORTED / PARTIALLY_SUPPORTED / CONTRADICTED / UNSUPPORTED with verbatim passage
quotes, checks attributions (a quotation not verbatim in a source is a fabrication), lists material
omissions, and gives a verdict and a rewrite note. Doubt resolves to PARTIALLY_SUPPORTED.

Normalization:
* claims keep the model's ids (c1, c2, ... when any is missing or repeated); a claim's text is
  placed in the answer where it can be (judges.locate: exact, normalized or fuzzy; answer_span,
  else None) and each quote becomes Evidence located in its passage (match "exact",
  "normalized", "fuzzy" or "not_found": an unfound quote stays, as a finding about the judge);
* a claim the model calls SUPPORTED with no quote, or whose quotes are all not_found, becomes
  PARTIALLY_SUPPORTED with an "Unverified quote: ..." explanation
  (judges.locate.distrust_unverified_quotes): the judge's own quote is not trusted;
* fabrications are placed in the answer the same way; omissions carry the span of their quote in
  the passage, and a quote that cannot be found is kept in the omission's text;
* grounding_score is the share of claims labelled SUPPORTED after that downgrade
  (judges.scoring.grounding_score; 1.0 when the model lists no claims). The model's own counts
  stay in the raw output only;
* verdict is the less grounded of the model's verdict and judges.scoring.verdict_for(claims): the
  model may see an omission or fabrication the labels do not show, but cannot call an answer
  GROUNDED while labelling one of its claims CONTRADICTED.
"""

from __future__ import annotations

from pathlib import Path

from judges.locate import distrust_unverified_quotes
from judges.profiles.base import Normalized
from judges.profiles.common import TemplateProfile, claim_ids, place_claims
from judges.profiles.locate import locate_in_answer, locate_quote, resolve_passage_id
from judges.profiles.parsing import NonBlank, RawModel, array, enum, strict_object, string
from judges.scoring import grounding_score, verdict_for
from judges.types import (
    CATEGORIES, FABRICATION_KINDS, LABELS, VERDICTS, Category, Claim, Fabrication, FabricationKind,
    JudgeRequest, Label, Omission, Verdict, worse_verdict,
)


class Quote(RawModel):
    passage_id: str
    quote: NonBlank


class AuditClaim(RawModel):
    id: str
    text: NonBlank
    label: Label
    category: Category
    quotes: list[Quote]
    explanation: str


class AuditFabrication(RawModel):
    kind: FabricationKind
    text: NonBlank
    reason: str


class AuditOmission(RawModel):
    text: NonBlank
    passage_id: str
    quote: str


class Counts(RawModel):
    total: int
    supported: int
    partially_supported: int
    contradicted: int
    unsupported: int


class ClaimAuditOutput(RawModel):
    claims: list[AuditClaim]
    fabrications: list[AuditFabrication]
    omissions: list[AuditOmission]
    counts: Counts
    verdict: Verdict
    rewrite_note: str


_QUOTE = strict_object({
    "passage_id": string("id of the passage quoted, e.g. P1"),
    "quote": string("text copied exactly from that passage"),
})

OUTPUT_SCHEMA = strict_object({
    "claims": array(strict_object({
        "id": string("c1, c2, ... in answer order"),
        "text": string("the claim, in the answer's own words where possible"),
        "label": enum(LABELS),
        "category": enum(CATEGORIES),
        "quotes": array(_QUOTE),
        "explanation": string("why; for PARTIALLY_SUPPORTED, how the answer overreaches"),
    })),
    "fabrications": array(strict_object({
        "kind": enum(FABRICATION_KINDS),
        "text": string("the answer's exact words"),
        "reason": string(),
    })),
    "omissions": array(strict_object({
        "text": string("what the answer left out"),
        "passage_id": string(),
        "quote": string("text copied exactly from that passage"),
    })),
    "counts": strict_object({
        key: {"type": "integer"}
        for key in ("total", "supported", "partially_supported", "contradicted", "unsupported")
    }),
    "verdict": enum(VERDICTS),
    "rewrite_note": string("the smallest change that would make the answer fully grounded"),
})


class ClaimAudit(TemplateProfile):
    name = "claim_audit"
    versions = ("v1",)
    folder = Path(__file__).parent
    raw_model = ClaimAuditOutput
    output_schema = OUTPUT_SCHEMA

    def normalize(self, raw, request: JudgeRequest) -> Normalized:
        raw = self.coerce(raw)
        answer = request.answer
        claims: list[Claim] = []
        placed = place_claims([c.text for c in raw.claims], answer)
        for claim_id, item, (span, text) in zip(
            claim_ids([c.id for c in raw.claims]), raw.claims, placed
        ):
            claims.append(
                Claim(
                    id=claim_id,
                    text=text,
                    answer_span=span,
                    label=item.label,
                    category=item.category,
                    evidence=[
                        locate_quote(q.quote, request.passages, q.passage_id) for q in item.quotes
                    ],
                    explanation=item.explanation,
                )
            )
        # The seed asks for a verbatim quote behind every SUPPORTED claim: one with no quote, or
        # whose quotes are in no passage, is only PARTIALLY_SUPPORTED (the judge hallucinated).
        claims = distrust_unverified_quotes(claims, require_evidence=True)
        fabrications = []
        for item in raw.fabrications:
            span = locate_in_answer(item.text, answer)
            fabrications.append(Fabrication(
                kind=item.kind, text=answer[span[0]:span[1]] if span else item.text,
                answer_span=span, reason=item.reason,
            ))
        omissions = [self._omission(item, request) for item in raw.omissions]
        return Normalized(
            verdict=worse_verdict(raw.verdict, verdict_for(claims)),
            grounding_score=grounding_score(claims),
            claims=claims,
            fabrications=fabrications,
            omissions=omissions,
            rewrite_note=raw.rewrite_note,
        )

    @staticmethod
    def _omission(item: AuditOmission, request: JudgeRequest) -> Omission:
        pid = resolve_passage_id(item.passage_id, request.passages)
        if not item.quote.strip():
            return Omission(text=item.text, passage_id=pid)
        evidence = locate_quote(item.quote, request.passages, pid)
        if evidence.match == "not_found":
            where = f" in {pid}" if pid else ""
            text = (
                f'{item.text} (the judge quoted "{item.quote}"{where}, which is not in the'
                ' passages)'
            )
            return Omission(text=text, passage_id=pid)
        return Omission(text=item.text, passage_id=evidence.passage_id, span=evidence.span)


PROFILES = [ClaimAudit(version) for version in ClaimAudit.versions]
