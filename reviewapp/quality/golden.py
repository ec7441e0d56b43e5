"""Gold answers from a golden set (`manage.py import_golden FILE --gold`).

A golden record's truth is answer- and span-level (reviewapp.labels.golden keeps it in the answer's
metadata), not per claim. To hand one out as gold, the judge in force judges it (a side run, reused
when one exists: reviewapp.labels.evaluation.run_or_reuse, as `manage.py evaluate` does) and each
judge claim takes its gold label from the record: a claim whose answer span overlaps a labelled span
takes that span's label read back as ClaimDesk's (the inverse of the label export's; any other
hallucination label is UNSUPPORTED), the worst when it overlaps several; every other claim is
SUPPORTED. A record hallucinated at answer level only (no spans) cannot say which claim is wrong,
and a claim without an answer span cannot be placed: such records and claims are skipped, with
reasons.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import judges
from judges.types import worse_label
from reviewapp.labels.evaluation import evaluation_config, run_or_reuse
from reviewapp.labels.exports import HUMAN_SPAN_LABELS
from reviewapp.labels.golden import golden_answers
from reviewapp.models import Answer, Claim, GoldAnswer, JudgeRun
from reviewapp.quality.service import gold_store

SPAN_LABELS = {span_label: label for label, span_label in HUMAN_SPAN_LABELS.items()}


@dataclass
class GoldFromGolden:
    marked: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (record id, why)


def claim_gold_label(start: int, end: int, spans: list[dict]) -> str:
    """The gold label of a claim covering answer[start:end], from the record's labelled spans."""
    hits = [
        SPAN_LABELS.get(s["label"], "UNSUPPORTED")
        for s in spans
        if s["start"] < end and start < s["end"]
    ]
    return worse_label(*hits) if hits else "SUPPORTED"


def golden_gold_labels(answer: Answer, run: JudgeRun) -> tuple[list[dict], str]:
    """(gold labels by claim, "") or ([], why the record cannot be gold)."""
    spans = answer.metadata.get("spans") or []
    if answer.metadata.get("hallucinated") and not spans:
        return [], "hallucinated at answer level only: no span says which claim is wrong"
    claims = Claim.objects.filter(
        run=run, origin=Claim.Origin.JUDGE, answer_start__isnull=False
    ).order_by("position")
    labels = [
        {
            "position": c.position,
            "cid": c.cid,
            "category": c.category,
            "label": claim_gold_label(c.answer_start, c.answer_end, spans),
        }
        for c in claims
    ]
    return (labels, "") if labels else ([], "the judge found no claim with an answer span")


def gold_from_golden(
    *, name: str, profile: str | None = None, backend: str | None = None
) -> GoldFromGolden:
    """Mark every record of the golden set `name` gold, judged by the judge in force (or named)."""
    config = evaluation_config(profile=profile, backend=backend)
    identity = judges.identify(config)
    result = GoldFromGolden()
    for answer in golden_answers(name).order_by("pk"):
        run, error = run_or_reuse(answer, config, identity)
        labels, why = (
            golden_gold_labels(answer, run) if run is not None else ([], f"judging failed: {error}")
        )
        if not labels:
            result.skipped.append((answer.external_id or str(answer.pk), why))
            continue
        gold_store(
            answer=answer, run=run, labels=labels, source=GoldAnswer.Source.IMPORT, user=None
        )
        result.marked += 1
    return result
