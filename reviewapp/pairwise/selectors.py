"""Reads of a comparison: an item's units (claims aligned across the two sides), the next item a
reviewer has left to decide, and the results with their intervals."""

from __future__ import annotations

import math
from dataclasses import dataclass

from reviewapp.models import Claim, Comparison, ComparisonChoice, ComparisonItem


@dataclass(frozen=True)
class Unit:
    """What a reviewer decides: a claim of side A beside the claim of side B on the same answer
    text (either may be missing), or, for pipelines, the two answers whole ("answer")."""

    key: str
    category: str
    a: Claim | None
    b: Claim | None

    @property
    def differs(self) -> bool:
        return (
            self.key == "answer" or self.a is None or self.b is None or self.a.label != self.b.label
        )


def _overlap(a: Claim, b: Claim) -> int:
    if a.answer_start is None or b.answer_start is None:
        return 1 if a.text == b.text else 0
    return min(a.answer_end, b.answer_end) - max(a.answer_start, b.answer_start)


def units(item: ComparisonItem) -> list[Unit]:
    """Judges: each claim of run A paired with the unpaired claim of run B that overlaps it most in
    the answer, then B's claims left alone; pipelines: one unit, the answer."""
    if item.run_a_id is None:
        return [Unit(key="answer", category="", a=None, b=None)]
    a_claims = list(Claim.objects.filter(run_id=item.run_a_id).prefetch_related("evidence"))
    b_claims = list(Claim.objects.filter(run_id=item.run_b_id).prefetch_related("evidence"))
    found, free = [], list(b_claims)
    for claim in a_claims:
        best = max(free, key=lambda other: _overlap(claim, other), default=None)
        partner = best if best is not None and _overlap(claim, best) > 0 else None
        if partner is not None:
            free.remove(partner)
        found.append(Unit(key=f"a{claim.position}", category=claim.category, a=claim, b=partner))
    found.extend(
        Unit(key=f"b{claim.position}", category=claim.category, a=None, b=claim) for claim in free
    )
    return found


def decided_units(item: ComparisonItem, reviewer) -> dict[str, str]:
    """unit key -> the reviewer's stored choice (A, B, both_right, both_wrong)."""
    return dict(
        ComparisonChoice.objects.filter(item=item, reviewer=reviewer).values_list("unit", "choice")
    )


def next_item(comparison: Comparison, reviewer) -> ComparisonItem | None:
    """The first item with a differing unit this reviewer has not decided."""
    for item in comparison.items.select_related("answer_a", "answer_b", "run_a", "run_b"):
        decided = decided_units(item, reviewer)
        if any(unit.differs and unit.key not in decided for unit in units(item)):
            return item
    return None


def wilson(successes: int, total: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (95% by default); None without trials."""
    if not total:
        return None
    share = successes / total
    centre = (share + z * z / (2 * total)) / (1 + z * z / total)
    half = (
        z
        * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total))
        / (1 + z * z / total)
    )
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Tally:
    label: str
    a: int
    b: int
    both_right: int
    both_wrong: int

    @property
    def decisive(self) -> int:
        return self.a + self.b

    @property
    def a_rate(self) -> float | None:
        return self.a / self.decisive if self.decisive else None

    @property
    def a_interval(self) -> tuple[float, float] | None:
        return wilson(self.a, self.decisive)

    @property
    def b_interval(self) -> tuple[float, float] | None:
        return wilson(self.b, self.decisive)


def _tally(label: str, choices: list[str]) -> Tally:
    return Tally(label=label, a=choices.count("A"), b=choices.count("B"),
                 both_right=choices.count("both_right"), both_wrong=choices.count("both_wrong"))


def results(comparison: Comparison) -> list[Tally]:
    """All choices, then per category (claims' categories; pipelines' answers have none): A's win
    rate among the decisive choices (A or B) with its 95% Wilson interval, and the ties."""
    rows = list(
        ComparisonChoice.objects.filter(item__comparison=comparison).values_list(
            "category", "choice"
        )
    )
    tallies = [_tally("all", [choice for _, choice in rows])]
    for category in sorted({category for category, _ in rows if category}):
        tallies.append(_tally(category, [choice for cat, choice in rows if cat == category]))
    return tallies


def export_rows(comparison: Comparison):
    """One row per choice, unblinded, for the export."""
    return (
        ComparisonChoice.objects.filter(item__comparison=comparison)
        .select_related("item", "reviewer")
        .order_by("item__position", "unit", "reviewer__username")
    )
