"""Bounded work: how much of an answer the judge and the checks read, so that one request's cost
stays bounded in its size however it is built (issue 16, item 6).

The rule: an answer is read from its start up to the first place where it passes one of these
caps -- MAX_PIECES sentence-like pieces (`rough_pieces`, finer than sentences), MAX_VALUES distinct
quantity values, MAX_QUOTATIONS quotations, MAX_CITATIONS citation markers, MAX_CLAIMS claims --
and the rest is not checked. What is not checked is never passed: it is one UNSUPPORTED claim
(the offline judge) or one finding over it (`check_extent`, run after every backend), whose
explanation says which cap was passed and where reading stopped, so such an answer goes to a
human. Each cap is far above what a real answer holds (the shared dev answers hold at most 13
sentences, 12 distinct values, 2 quotations and 12 citation markers), so it only bites on
requests built to be expensive. The reading stops at the start of the sentence-like piece that
passes a cap, or inside the first one when that one alone passes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from judges.checks.citations import CITATION_MARKER
from judges.checks.findings import Finding
from judges.checks.quoted import quotations
from judges.text import quantities, rough_pieces
from judges.types import Claim

MAX_PIECES = 300
MAX_VALUES = 300
MAX_QUOTATIONS = 60
MAX_CITATIONS = 300
MAX_CLAIMS = 400  # claims of a backend's result that the checks read; the rest are not checked
# (passage unit, claim term) pairs the offline judge scores for one answer: a claim's cost is the
# number of passage sentences holding its words, which long passages of the same words make tens
# of thousands. The dev answers score at most ~800, the offline judge bench's against ten
# passages of 20,000 characters ~18,000.
MAX_SCORED = 2_000_000


@dataclass(frozen=True)
class Extent:
    """How much of an answer is read: `text[:end]`; `reason` says why no more ("" when all)."""

    end: int
    reason: str = ""

    @property
    def complete(self) -> bool:
        return not self.reason


def checked_extent(text: str) -> Extent:
    """The part of `text` the judge and the checks read (the module's rule). Each scan here is
    one pass over the text."""
    pieces = rough_pieces(text)
    stops: list[tuple[int, str]] = []
    if len(pieces) > MAX_PIECES:
        stops.append(
            (pieces[MAX_PIECES][0], f"more than {MAX_PIECES:,} sentences ({len(pieces):,} pieces)")
        )
    values: set[str] = set()
    found = quantities(text)
    for quantity in found:
        values.add(quantity.value)
        if len(values) > MAX_VALUES:
            distinct = len({q.value for q in found})
            stops.append(
                (quantity.span[0], f"more than {MAX_VALUES:,} distinct numbers ({distinct:,})")
            )
            break
    quoted = quotations(text)
    if len(quoted) > MAX_QUOTATIONS:
        stops.append((quoted[MAX_QUOTATIONS].span[0],
                      f"more than {MAX_QUOTATIONS:,} quotations ({len(quoted):,})"))
    markers = [match.start() for match in CITATION_MARKER.finditer(text)]
    if len(markers) > MAX_CITATIONS:
        stops.append(
            (
                markers[MAX_CITATIONS],
                f"more than {MAX_CITATIONS:,} citation markers ({len(markers):,})",
            )
        )
    if not stops:
        return Extent(len(text))
    stop, reason = min(stops)
    opening = [start for start, _ in pieces if start <= stop]
    if len(opening) > 1:
        stop = opening[-1]  # the start of the piece that passes the cap
    return Extent(stop, reason)


def unchecked_note(extent: Extent) -> str:
    return (f"Not checked: the answer has {extent.reason}; the judge and the checks read it up to "
            f"character {extent.end:,} and no further, so this text is unverified.")


def check_extent(text: str, extent: Extent) -> list[Finding]:
    """One finding over the text beyond the extent, when there is any."""
    if extent.complete or not text[extent.end:].strip():
        return []
    start = extent.end + len(text[extent.end:]) - len(text[extent.end:].lstrip())
    end = len(text.rstrip())
    return [
        Finding(
            check="bounds",
            span=(start, end),
            note=unchecked_note(extent),
            lower_to="UNSUPPORTED",
            category="other",
        )
    ]


def unchecked_claim(claim_id: str, text: str, extent: Extent) -> Claim | None:
    """The claim for the text beyond the extent (the offline judge's), or None when there is
    none."""
    found = check_extent(text, extent)
    if not found:
        return None
    span = found[0].span
    return Claim(
        id=claim_id,
        text=text[slice(*span)],
        answer_span=span,
        label="UNSUPPORTED",
        category="other",
        evidence=[],
        explanation=found[0].note,
        confidence=0.0,
    )
