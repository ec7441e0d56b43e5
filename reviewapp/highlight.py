"""Split a text into plain and highlighted pieces by character offsets.

Templates render each piece with autoescaping, so untrusted text is never marked safe and
highlights land exactly on the offsets the judge (or the locator) produced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Piece:
    text: str
    mark: Any = None  # what the piece highlights (a claim, evidence), or None for plain text


def pieces(text: str, spans: Iterable[tuple[int, int, Any]]) -> list[Piece]:
    """Spans are (start, end, mark). Overlaps are clipped: the earlier-starting span wins."""
    result: list[Piece] = []
    cursor = 0
    for start, end, mark in sorted(spans, key=lambda s: (s[0], s[1])):
        start, end = max(start, cursor), min(end, len(text))
        if start >= end:
            continue
        if start > cursor:
            result.append(Piece(text[cursor:start]))
        result.append(Piece(text[start:end], mark))
        cursor = end
    if cursor < len(text):
        result.append(Piece(text[cursor:]))
    return result
