"""Spans of an answer: which characters some span covers, which spans overlap a stretch, and
text with spans blanked out (offsets kept)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from judges.types import Span


def overlaps(first: Span, second: Span) -> bool:
    return first[0] < second[1] and second[0] < first[1]


class Mask:
    """Which characters of a text some span covers."""

    def __init__(self, length: int, spans: Sequence[Span] = ()):
        self.bits = bytearray(length + 1)
        for span in spans:
            self.add(span)

    def add(self, span: Span) -> None:
        self.bits[span[0]:span[1]] = b"\x01" * (span[1] - span[0])

    def touches(self, span: Span) -> bool:
        return self.bits.find(1, span[0], span[1]) >= 0

    def covers(self, span: Span) -> bool:
        return span[0] < span[1] and self.bits.find(0, span[0], span[1]) < 0


class SpanIndex:
    """Spans (with a value each) found by overlap without scanning them all."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, int, int]] = []  # (start, end, value), sorted
        self.longest = 0

    def add(self, span: Span, value: int) -> None:
        bisect.insort(self.entries, (span[0], span[1], value))
        self.longest = max(self.longest, span[1] - span[0])

    def overlapping(self, span: Span) -> list[int]:
        first = bisect.bisect_left(self.entries, (span[0] - self.longest,))
        last = bisect.bisect_left(self.entries, (span[1],))
        return sorted(v for s, e, v in self.entries[first:last] if s < span[1] and span[0] < e)

    def spans_overlapping(self, span: Span) -> list[Span]:
        first = bisect.bisect_left(self.entries, (span[0] - self.longest,))
        last = bisect.bisect_left(self.entries, (span[1],))
        return [(s, e) for s, e, _ in self.entries[first:last] if s < span[1] and span[0] < e]


def blank(text: str, spans: list[Span]) -> str:
    """`text` with each span replaced by spaces, so offsets stay valid."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
