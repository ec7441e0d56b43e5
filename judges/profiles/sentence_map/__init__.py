"""sentence_map: a per-sentence grounding map (seed 004).

The answer is split with judges.text.split_sentences BEFORE the call; the prompt lists the
sentences as `[index] sentence` (from 0) and the model returns one verdict per index (GROUNDED,
PARTIALLY_GROUNDED, UNSUPPORTED, CONTRADICTED) with a reason, plus a summary. The output schema is
the seed's, key for key.

A reply must cover every sentence index exactly once: parse(text, request) checks this, and
normalize() checks it again for callers that parsed without the request. Missing, repeated or
unknown indices are an OutputError naming them.

Normalization:
* one claim per sentence, in index order, ids c1, c2, ...; answer_span is the pre-split span
  (never relocated from the model's text, which is ignored) and text is the answer's own slice;
* GROUNDED -> SUPPORTED, PARTIALLY_GROUNDED -> PARTIALLY_SUPPORTED, the others keep their names;
  reason -> explanation; no evidence (quotes inside a reason are not located);
* grounding_score is the share of sentences judged GROUNDED (judges.scoring.grounding_score; 1.0
  for an answer with no sentences), the verdict judges.scoring.verdict_for(claims). The model's
  summary counts stay in the raw output only.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

from judges.categories import category_for
from judges.examples import WorkedExamples
from judges.profiles.base import Normalized, OutputError, RenderedPrompt
from judges.profiles.common import TemplateProfile
from judges.profiles.parsing import RawModel, array, enum, strict_object, string
from judges.profiles.render import render_prompt
from judges.scoring import grounding_score, verdict_for
from judges.text import split_sentences
from judges.types import Claim, JudgeRequest

VERDICTS = ("GROUNDED", "PARTIALLY_GROUNDED", "UNSUPPORTED", "CONTRADICTED")
LABEL_FOR = {
    "GROUNDED": "SUPPORTED",
    "PARTIALLY_GROUNDED": "PARTIALLY_SUPPORTED",
    "UNSUPPORTED": "UNSUPPORTED",
    "CONTRADICTED": "CONTRADICTED",
}


class SentenceVerdict(RawModel):
    index: int
    text: str
    verdict: Literal["GROUNDED", "PARTIALLY_GROUNDED", "UNSUPPORTED", "CONTRADICTED"]
    reason: str | None


class Summary(RawModel):
    total_sentences: int
    grounded_count: int
    unsupported_count: int
    contradicted_count: int


class SentenceMapOutput(RawModel):
    sentences: list[SentenceVerdict]
    summary: Summary


OUTPUT_SCHEMA = strict_object({
    "sentences": array(strict_object({
        "index": {"type": "integer"},
        "text": string("the sentence as listed"),
        "verdict": enum(VERDICTS),
        "reason": string("what is missing or wrong; null for a GROUNDED sentence", nullable=True),
    })),
    "summary": strict_object({
        "total_sentences": {"type": "integer"},
        "grounded_count": {"type": "integer"},
        "unsupported_count": {"type": "integer"},
        "contradicted_count": {"type": "integer"},
    }),
})


def check_coverage(raw: SentenceMapOutput, sentence_count: int) -> None:
    """Every index 0..sentence_count-1 exactly once, or OutputError naming what is wrong."""
    seen = Counter(item.index for item in raw.sentences)
    expected = set(range(sentence_count))
    problems = []
    duplicates = sorted(index for index, count in seen.items() if count > 1)
    if duplicates:
        listed = ", ".join(map(str, duplicates))
        problems.append(f"duplicate index {listed} (each sentence must appear exactly once)")
    missing = sorted(expected - set(seen))
    if missing:
        problems.append(f"missing sentence indices {missing}")
    unknown = sorted(set(seen) - expected)
    if unknown:
        problems.append(f"unknown sentence indices {unknown}")
    if problems:
        described = f"indices 0 to {sentence_count - 1}" if sentence_count else "no sentences"
        raise OutputError(f"sentences: {'; '.join(problems)}; the answer has {sentence_count} "
                          f"sentence{'' if sentence_count == 1 else 's'} ({described})")


class SentenceMap(TemplateProfile):
    name = "sentence_map"
    versions = ("v1",)
    folder = Path(__file__).parent
    raw_model = SentenceMapOutput
    output_schema = OUTPUT_SCHEMA

    def render(
        self, request: JudgeRequest, examples: WorkedExamples | None = None
    ) -> RenderedPrompt:
        spans = split_sentences(request.answer)
        index_range = f"0 to {len(spans) - 1}" if spans else "none"
        return render_prompt(
            self.template,
            request,
            sentences=spans,
            values={"sentence_count": str(len(spans)), "index_range": index_range},
            examples=examples,
        )

    def check(self, raw: SentenceMapOutput, request: JudgeRequest | None) -> None:
        if request is not None:
            check_coverage(raw, len(split_sentences(request.answer)))

    def normalize(self, raw, request: JudgeRequest) -> Normalized:
        raw = self.coerce(raw)
        spans = split_sentences(request.answer)
        check_coverage(raw, len(spans))
        by_index = {item.index: item for item in raw.sentences}
        claims = []
        for index, span in enumerate(spans):
            item = by_index[index]
            text = request.answer[span[0]:span[1]]
            claims.append(Claim(
                id=f"c{index + 1}", text=text, answer_span=span, label=LABEL_FOR[item.verdict],
                category=category_for(text), explanation=item.reason or "",
            ))
        return Normalized(
            verdict=verdict_for(claims), grounding_score=grounding_score(claims), claims=claims
        )


PROFILES = [SentenceMap(version) for version in SentenceMap.versions]
