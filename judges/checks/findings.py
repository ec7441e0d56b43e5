"""What a check found, and where: one Finding per place in the answer that a check faults.

A finding lowers the claims over its span to `lower_to` (never raises them) and may carry the
fabrication to report (judges.checks.apply lands them)."""

from __future__ import annotations

from dataclasses import dataclass

from judges.types import Fabrication, Span


@dataclass(frozen=True)
class Finding:
    """What one check found at one place in the answer."""

    check: str  # "quote" | "number" | "citation" | "provenance"
    span: Span  # the answer text the finding is about; claims overlapping it are affected
    note: str  # appended to the explanation of each affected claim
    lower_to: str  # "UNSUPPORTED" or "PARTIALLY_SUPPORTED"
    category: str  # the category of a claim added for answer text no claim covers
    fabrication: Fabrication | None = None
