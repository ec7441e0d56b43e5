"""Writes of comparisons: starting one (its items, sides shuffled) and recording a choice."""

from __future__ import annotations

import secrets

from django.db import transaction
from django.db.models import Max

from reviewapp.audit import audit_record
from reviewapp.models import Answer, Comparison, ComparisonChoice, ComparisonItem, JudgeRun
from reviewapp.pairwise import selectors

MAX_ITEMS = 200
SIDES = {"left", "right", "both_right", "both_wrong"}


class ComparisonError(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


def _current_runs(config_key: str) -> dict[int, JudgeRun]:
    runs = JudgeRun.objects.filter(
        config_key=config_key, is_current=True, status=JudgeRun.Status.SUCCEEDED
    )
    return {run.answer_id: run for run in runs}


@transaction.atomic
def comparison_start(*, user, kind: str, name: str, side_a: str, side_b: str,
                     limit: int = MAX_ITEMS) -> Comparison:
    """Judges: the answers both configurations (run config keys) judged, newest first; pipelines:
    per (client, question), the newest answer tagged metadata.variant side_a and side_b."""
    if side_a == side_b:
        raise ComparisonError("side_b", "must differ from side_a")
    if kind == Comparison.Kind.JUDGES:
        runs_a, runs_b = _current_runs(side_a), _current_runs(side_b)
        shared = sorted(set(runs_a) & set(runs_b), reverse=True)[:limit]
        pairs = [
            (answer_id, answer_id, runs_a[answer_id], runs_b[answer_id]) for answer_id in shared
        ]
    elif kind == Comparison.Kind.PIPELINES:
        pairs = [(a, b, None, None) for a, b in _variant_pairs(side_a, side_b)[:limit]]
    else:
        raise ComparisonError("kind", "must be judges or pipelines")
    if not pairs:
        raise ComparisonError(
            "side_a", "no answers to compare: nothing both sides judged or answered"
        )
    comparison = Comparison.objects.create(kind=kind, name=name[:200], side_a=side_a, side_b=side_b,
                                           created_by=user)
    ComparisonItem.objects.bulk_create(
        ComparisonItem(
            comparison=comparison,
            position=n,
            answer_a_id=a,
            answer_b_id=b,
            run_a=run_a,
            run_b=run_b,
            a_on_left=secrets.randbelow(2) == 1,
        )
        for n, (a, b, run_a, run_b) in enumerate(pairs)
    )
    audit_record(
        actor=user,
        actor_label=user.get_username(),
        action="comparison.started",
        obj=comparison,
        after={"kind": kind, "side_a": side_a, "side_b": side_b, "items": len(pairs)},
    )
    return comparison


def _variant_pairs(variant_a: str, variant_b: str) -> list[tuple[int, int]]:
    newest = (Answer.objects.filter(metadata__variant__in=[variant_a, variant_b])
              .values("client_id", "question", "metadata__variant").annotate(latest=Max("id")))
    by_question: dict[tuple, dict[str, int]] = {}
    for row in newest:
        by_question.setdefault((row["client_id"], row["question"]), {})[
            row["metadata__variant"]
        ] = row["latest"]
    pairs = [(sides[variant_a], sides[variant_b]) for sides in by_question.values()
             if variant_a in sides and variant_b in sides]
    return sorted(pairs, reverse=True)


def choice_record(*, user, item: ComparisonItem, unit: str, side: str) -> ComparisonChoice:
    """The reviewer's choice on a unit, given as they saw it (left, right, both_right, both_wrong)
    and stored as A / B: the shuffle stays on the page."""
    if side not in SIDES:
        raise ComparisonError("choice", "must be left, right, both_right or both_wrong")
    by_key = {u.key: u for u in selectors.units(item)}
    if unit not in by_key or not by_key[unit].differs:
        raise ComparisonError("unit", "not a unit of this item that needs a choice")
    if side in ("left", "right"):
        choice = "A" if (side == "left") == item.a_on_left else "B"
    else:
        choice = side
    row, _ = ComparisonChoice.objects.update_or_create(
        item=item,
        unit=unit,
        reviewer=user,
        defaults={"choice": choice, "category": by_key[unit].category},
    )
    return row
