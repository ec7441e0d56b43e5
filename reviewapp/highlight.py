"""Split a text into segments by character offsets, for highlighting.

Spans may overlap (a clause-level claim inside a sentence-level one) or touch. The text is cut
at every span boundary; each segment lists every mark covering it. Templates render each segment
with autoescaping, so untrusted text is never marked safe and highlights land exactly on offsets.
A `Differs` mark (words the judge found differing) sits inside another mark's span and is drawn
inside that highlight.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Differs:
    """A mark for words the judge found differing between `claim` and its closest text: drawn
    inside the claim's highlight in the answer and inside its evidence's in the passage."""

    claim: Any
    kind: str  # offline/align's kind of difference: number, entity, negation_added, swap, ...


@dataclass(frozen=True)
class Segment:
    text: str
    start: int
    marks: tuple[Any, ...] = ()  # what covers this segment (claims, evidence), in span order

    @property
    def highlights(self) -> tuple[Any, ...]:
        """The marks that highlight the segment (claims), without the differing-word marks."""
        return tuple(mark for mark in self.marks if not isinstance(mark, Differs))

    @property
    def differs(self) -> tuple[Differs, ...]:
        return tuple(mark for mark in self.marks if isinstance(mark, Differs))


def segments(text: str, spans: Iterable[tuple[int, int, Any]]) -> list[Segment]:
    spans = sorted(
        ((max(0, start), min(end, len(text)), mark) for start, end, mark in spans if start < end),
        key=lambda span: (span[0], span[1]),
    )
    cuts = sorted({0, len(text)} | {s for s, _, _ in spans} | {e for _, e, _ in spans})
    result = []
    for start, end in zip(cuts, cuts[1:]):
        if start >= end:
            continue
        marks = tuple(mark for s, e, mark in spans if s <= start and end <= e)
        result.append(Segment(text[start:end], start, marks))
    return result
