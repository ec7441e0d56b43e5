"""What a check found, and where: one Finding per place in the answer that a check faults.

A finding lowers the claims over its span to `lower_to` (never raises them) and may carry the
fabrication to report (judges.checks.apply lands them). A finding that is no evidence against the
claim, only a reason for less certainty (words of the claim its quote does not have), leaves the
label as it is (`lower_to` SUPPORTED) and lowers the claim's `confidence` to its own."""

from __future__ import annotations

from dataclasses import dataclass

from judges.types import Fabrication, Span


@dataclass(frozen=True)
class Finding:
    """What one check found at one place in the answer."""

    check: str  # "quote" | "number" | "citation" | "provenance"
    span: Span  # the answer text the finding is about; claims overlapping it are affected
    note: str  # appended to the explanation of each affected claim
    lower_to: (
        str  # "UNSUPPORTED", "PARTIALLY_SUPPORTED", or "SUPPORTED" (a note, never a lowered label)
    )
    category: str  # the category of a claim added for answer text no claim covers
    fabrication: Fabrication | None = None
    confidence: float | None = None  # the claims' confidence is lowered to this, when given
    # A statement of its own inside a sentence (a provenance statement): it lowers only the claims
    # that state nothing besides it, and a claim of its own is added for it when none is there.
    alone: bool = False
