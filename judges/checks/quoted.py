"""The quotations in a text (`quotations`): text in quotation marks that is not a title (check 1,
judges/checks/quotes.py, says which must stand in a passage)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from judges.checks.spans import Mask
from judges.types import Span


QUOTE_MIN_WORDS = 3
QUOTE_MIN_CHARS = 15


@dataclass(frozen=True)
class Quotation:
    span: Span  # with the quotation marks
    inner: Span  # without them


_DOUBLE_QUOTED = re.compile(r"[\"“„](?P<body>[^\"“”„\n]+)[\"”]")


# An opening single quote follows a space, a bracket or the start and is followed by a non-space;
# a closing one follows a non-space and is followed by no letter. "don't" and "riders' cards" are
# neither, so apostrophes are not read as quotation marks.
_SINGLE_QUOTED = re.compile(
    r"(?<![\w'‘’])['‘](?P<body>[^\s'‘’](?:[^\n]*?[^\s'‘’])?)['’](?![\w'‘’])"
)


def quotations(text: str) -> list[Quotation]:
    """Quotations long enough to check: QUOTE_MIN_WORDS words or QUOTE_MIN_CHARS characters."""
    found: list[Quotation] = []
    taken = Mask(len(text))
    for pattern in (_DOUBLE_QUOTED, _SINGLE_QUOTED):
        for match in pattern.finditer(text):
            body = match.group("body").strip()
            if len(body.split()) < QUOTE_MIN_WORDS and len(body) < QUOTE_MIN_CHARS:
                continue
            if _is_title(body):
                continue
            if taken.touches(match.span()):
                continue
            found.append(Quotation(span=match.span(), inner=match.span("body")))
            taken.add(match.span())
    return sorted(found, key=lambda q: q.span)


_TITLE_SMALL_WORDS = frozenset(
    "a an and as at but by for from in into of on or the to vs via with".split()
)


_TITLE_MAX_WORDS = 10


def _is_title(body: str) -> bool:
    """A name or title in quotation marks ("Beauty and the Beast", "Ride to Learn"), not a
    quotation: at most _TITLE_MAX_WORDS words, every one capitalized but small connecting words."""
    words = re.findall(r"[^\W_][\w'’-]*", body)
    if not words or len(words) > _TITLE_MAX_WORDS:
        return False
    significant = [w for w in words if w.lower() not in _TITLE_SMALL_WORDS or w is words[0]]
    return all(w[0].isupper() or w[0].isdigit() for w in significant)
