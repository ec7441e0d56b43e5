"""The guardrail view of a judged answer: the answer with its ungrounded sentences taken out."""

from __future__ import annotations

from collections.abc import Sequence

from judges.text import Span, split_sentences
from judges.types import Claim

# Partially supported sentences stay: they are mostly right and a reviewer decides on them.
REMOVED_LABELS = frozenset({"UNSUPPORTED", "CONTRADICTED"})


def safe_answer(answer: str, claims: Sequence[Claim]) -> str:
    """`answer` without every sentence that overlaps an UNSUPPORTED or CONTRADICTED claim.

    Kept sentences are byte-exact. Where sentences were removed, the kept neighbours are joined by
    one of the original gaps (the one with the most line breaks, so paragraphs and list items stay
    on their own lines) instead of leaving a double gap. Claims without an answer span cannot be
    placed and remove nothing.
    """
    sentences = split_sentences(answer)
    flagged = [claim.answer_span for claim in claims if claim.label in REMOVED_LABELS and claim.answer_span]
    kept = [index for index, span in enumerate(sentences) if not _overlaps_any(span, flagged)]
    if len(kept) == len(sentences):
        return answer
    if not kept:
        return ""
    return _join(answer, sentences, kept)


def _overlaps_any(span: Span, others: Sequence[Span]) -> bool:
    start, end = span
    return any(start < other_end and other_start < end for other_start, other_end in others)


def _join(answer: str, sentences: list[Span], kept: list[int]) -> str:
    # gaps[i] is the text before sentence i; gaps[-1] is what follows the last sentence. The
    # answer's own leading and trailing whitespace is kept whichever sentences go.
    boundaries = [0] + [edge for span in sentences for edge in span] + [len(answer)]
    gaps = [answer[boundaries[i]:boundaries[i + 1]] for i in range(0, len(boundaries), 2)]
    parts = [gaps[0]]
    for previous, current in zip(kept, kept[1:]):
        parts.append(answer[slice(*sentences[previous])])
        skipped_gaps = gaps[previous + 1:current + 1]
        parts.append(max(skipped_gaps, key=lambda gap: gap.count("\n")))
    parts.append(answer[slice(*sentences[kept[-1]])])
    parts.append(gaps[-1])
    return "".join(parts)
