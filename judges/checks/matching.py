"""Text matching for the checks: whether a passage contains a piece of answer text, and where a claim's
text stands in the answer, both after the same normalization (Unicode NFKC, case, runs of
whitespace, curly quotes, dashes, spaces before punctuation).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from judges.types import Claim, Passage, Span


_FOLD = str.maketrans({
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "`": "'",
    "“": '"', "”": '"', "„": '"', "‟": '"', "″": '"', "«": '"', "»": '"',
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "\u00ad": "",
})
_SPACES = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\.\.\.+|\[\.\.\.\]")
_EDGE_PUNCTUATION = " .,;:!?\"'"


_CLOSERS = frozenset(",.;:!?)]}")
_OPENERS = frozenset("([{")
_SPACE_BEFORE_CLOSER = re.compile(r" (?=[,.;:!?)\]}])")
_SPACE_AFTER_OPENER = re.compile(r"(?<=[(\[{]) ")


def fold(text: str) -> str:
    """NFKC, case-folded, quotes and dashes unified, whitespace runs as one space, and no space
    before closing punctuation or after an opening bracket (tokenized text writes "Veeram (
    Valour ) , 2014")."""
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).translate(_FOLD).casefold())
    return _SPACE_AFTER_OPENER.sub("", _SPACE_BEFORE_CLOSER.sub("", folded))


@lru_cache(maxsize=1024)
def _folded_passage(text: str) -> str:
    return fold(text)


def find_in_passages(needle: str, passages: Sequence[Passage]) -> str | None:
    """The id of the first passage whose text contains `needle` after normalization, or None.

    Normalization is `fold` on both sides, word boundaries at both ends, the needle's outer
    punctuation ignored, and an ellipsis in the needle ("...", "…", "[...]") matching any gap
    within the same passage. This is the only place the checks match text against passages, so
    it can be replaced by the evidence locator (judges.locate) when that lands.
    """
    pieces = [piece.strip(_EDGE_PUNCTUATION) for piece in _ELLIPSIS.split(fold(needle))]
    pieces = [piece for piece in pieces if piece]
    if not pieces:
        return None
    patterns = [re.compile(r"(?<!\w)" + re.escape(piece) + r"(?!\w)") for piece in pieces]
    for passage in passages:
        haystack = _folded_passage(passage.text)
        position = 0
        for pattern in patterns:
            match = pattern.search(haystack, position)
            if match is None:
                break
            position = match.end()
        else:
            return passage.id
    return None


def locate_in_answer(text: str, answer: str) -> Span | None:
    """Where a claim's text stands in the answer: verbatim, else after normalization."""
    needle = text.strip()
    if not needle:
        return None
    start = answer.find(needle)
    if start >= 0:
        return start, start + len(needle)
    folded, where = _fold_with_offsets(answer)
    target = fold(needle).strip()
    start = folded.find(target) if target else -1
    if start < 0:
        return None
    return where[start], where[start + len(target) - 1] + 1


def _fold_with_offsets(text: str) -> tuple[str, list[int]]:
    """`fold(text)` with, for each character of it, the index in `text` it came from."""
    out: list[str] = []
    where: list[int] = []
    index = 0
    while index < len(text):
        end = index + 1
        while end < len(text) and unicodedata.combining(text[end]):
            end += 1  # a base character and its combining marks normalize together
        for char in unicodedata.normalize("NFKC", text[index:end]).translate(_FOLD).casefold():
            if char.isspace():
                if out and (out[-1] == " " or out[-1] in _OPENERS):
                    continue
                char = " "
            elif char in _CLOSERS and out and out[-1] == " ":
                out.pop()
                where.pop()
            out.append(char)
            where.append(index)
        index = end
    return "".join(out), where


def claim_span(claim: Claim, answer: str) -> Span | None:
    span = claim.answer_span
    if span is not None and 0 <= span[0] < span[1] <= len(answer):
        return span
    return locate_in_answer(claim.text, answer)


def texts_overlap(first: str, second: str) -> bool:
    first, second = fold(first).strip(), fold(second).strip()
    return bool(first and second) and (first in second or second in first)
