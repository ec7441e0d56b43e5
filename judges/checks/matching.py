"""Text matching for the checks: whether a passage contains a piece of answer text, where a claim's
text stands in the answer, and whether two texts overlap.

The rule: the checks have no normalization of their own. "The same text" is what judges.locate
says it is (Unicode NFKC, case, whitespace runs, every quotation mark and dash, invisible
characters, no space before closing punctuation), so a quotation the quotation check accepts is
one the evidence locator finds, and the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence

from judges.locate import find_in_text, find_whole_words, fold
from judges.types import Claim, Passage, Span


def find_in_passages(needle: str, passages: Sequence[Passage]) -> str | None:
    """The id of the first passage whose text contains `needle` after normalization, on whole
    words, its outer punctuation ignored and an ellipsis in it a gap (judges.locate's
    `find_whole_words`); None when no passage does."""
    for passage in passages:
        if find_whole_words(needle, passage.text) is not None:
            return passage.id
    return None


def locate_in_answer(text: str, answer: str) -> Span | None:
    """Where a claim's text stands in the answer: verbatim, else after normalization (no fuzzy
    step: a claim the backend did not place is placed only where the answer says it)."""
    needle = text.strip()
    if not needle:
        return None
    found = find_in_text(needle, answer, fuzzy=False)
    return found.span if found else None


def claim_span(claim: Claim, answer: str) -> Span | None:
    span = claim.answer_span
    if span is not None and 0 <= span[0] < span[1] <= len(answer):
        return span
    return locate_in_answer(claim.text, answer)


def texts_overlap(first: str, second: str) -> bool:
    first, second = fold(first), fold(second)
    return bool(first and second) and (first in second or second in first)
