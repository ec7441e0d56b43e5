"""fare_policy: binary groundedness for a transit fare-policy assistant (seed 001), v1 to v3.

See CHANGELOG.md for what each version changed. v1 shows passages as id and text; v2 adds the
rider's prior turns (context only); v3 also shows each passage's header and provenance lines and
states how provenance is scored. Only v2 and later render prior turns; only v3 renders headers
(the judge of v1 and v2 never saw them, which is what v3 fixed).

The model answers `{"grounded": bool, "unsupported_claims": [str], "reasoning": str}` and
reports no quotes. A reply is rejected when the flag and the list disagree (grounded with
unsupported claims, or not grounded with none).

Normalization:
* each unsupported claim becomes a claim labelled UNSUPPORTED, placed in the answer where its text
  is verbatim (answer_span None otherwise, and the explanation says so);
* every answer sentence (judges.text.split_sentences) that overlaps no placed unsupported claim
  becomes a SUPPORTED claim spanning the sentence, without evidence: the judge found no unsupported
  claim in it;
* claims are ordered by position in the answer (unplaced ones last) and numbered c1, c2, ...;
  categories come from keywords (judges.backends.offline.judge's rules);
* grounding_score is the share of those claims that are SUPPORTED, i.e. of the sentences left
  standing plus the unsupported claims (judges.scoring.grounding_score), and the verdict is
  judges.scoring.verdict_for(claims). A not-grounded reply always yields at least one UNSUPPORTED
  claim, so it is never GROUNDED.
"""

from __future__ import annotations

from pathlib import Path

from judges.categories import category_for
from judges.examples import WorkedExamples
from judges.profiles.base import Normalized, OutputError, RenderedPrompt
from judges.profiles.common import TemplateProfile
from judges.profiles.locate import locate_in_answer
from judges.profiles.parsing import NonBlank, RawModel, array, strict_object, string
from judges.profiles.render import render_prompt
from judges.scoring import grounding_score, verdict_for
from judges.text import Span, split_sentences
from judges.types import Claim, JudgeRequest

NO_UNSUPPORTED_CLAIM = "judge found no unsupported claim in this sentence"


class FarePolicyOutput(RawModel):
    grounded: bool
    unsupported_claims: list[NonBlank]
    reasoning: str


OUTPUT_SCHEMA = strict_object(
    {
        "grounded": {"type": "boolean"},
        "unsupported_claims": array(
            string("an unsupported claim, copied word for word from the answer")
        ),
        "reasoning": string("one to three sentences"),
    }
)


class FarePolicy(TemplateProfile):
    name = "fare_policy"
    versions = ("v1", "v2", "v3")
    folder = Path(__file__).parent
    raw_model = FarePolicyOutput
    output_schema = OUTPUT_SCHEMA

    @property
    def shows_prior_turns(self) -> bool:
        return self.version != "v1"

    @property
    def shows_headers(self) -> bool:
        return self.version not in ("v1", "v2")

    def render(
        self, request: JudgeRequest, examples: WorkedExamples | None = None
    ) -> RenderedPrompt:
        return render_prompt(
            self.template, request, prior_turns=self.shows_prior_turns, headers=self.shows_headers,
            examples=examples,
        )

    def check(self, raw: FarePolicyOutput, request: JudgeRequest | None) -> None:
        count = len(raw.unsupported_claims)
        if raw.grounded and count:
            raise OutputError(
                f"inconsistent output: grounded is true but unsupported_claims lists {count}"
                f" claim{'s' if count > 1 else ''}; grounded must be false when any claim is"
                " unsupported"
            )
        if not raw.grounded and not count:
            raise OutputError(
                "inconsistent output: grounded is false but unsupported_claims is empty; "
                "list the unsupported claims, or set grounded to true"
            )

    def normalize(self, raw, request: JudgeRequest) -> Normalized:
        raw = self.coerce(raw)
        self.check(raw, request)
        answer = request.answer
        reasoning = (
            f" The judge's reasoning: {raw.reasoning.strip()}" if raw.reasoning.strip() else ""
        )

        placed: list[tuple[Span | None, Claim]] = []
        hint = 0
        for text in raw.unsupported_claims:
            span = locate_in_answer(text, answer, hint)
            if span:
                hint = span[1]
                explanation = (
                    "The judge listed this claim as not supported by the passages." + reasoning
                )
            else:
                explanation = (
                    "The judge listed this claim as not supported by the passages; its wording is"
                    " not verbatim in the answer, so it could not be placed there."
                    + reasoning
                )
            claim_text = answer[span[0]:span[1]] if span else text
            placed.append((span, Claim(
                id="", text=claim_text, answer_span=span, label="UNSUPPORTED",
                category=category_for(claim_text), explanation=explanation,
            )))

        flagged = [span for span, _ in placed if span]
        unplaced = len(placed) - len(flagged)
        caveat = ""
        if unplaced:
            caveat = (
                f"; {unplaced} unsupported claim{'s' if unplaced > 1 else ''} could not be placed"
                " in the answer and may be in this sentence"
            )
        for span in split_sentences(answer):
            if any(span[0] < end and start < span[1] for start, end in flagged):
                continue
            text = answer[span[0]:span[1]]
            placed.append((span, Claim(
                id="", text=text, answer_span=span, label="SUPPORTED",
                category=category_for(text), explanation=NO_UNSUPPORTED_CLAIM + caveat,
            )))

        # Stable: unplaced claims go last in the judge's order.
        placed.sort(key=lambda item: (item[0] is None, item[0][0] if item[0] else 0))
        claims = [claim.model_copy(update={"id": f"c{number}"})
                  for number, (_, claim) in enumerate(placed, start=1)]
        return Normalized(
            verdict=verdict_for(claims), grounding_score=grounding_score(claims), claims=claims
        )


PROFILES = [FarePolicy(version) for version in FarePolicy.versions]
