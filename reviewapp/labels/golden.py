"""Golden sets in: labelled records (../shared/data/README.md's format) stored as answers.

Records are validated by judges.eval.load_dataset, the very code `python -m judges eval` reads
them with, so a file scores the same here and there. A golden answer has no client; its human
labels live in `metadata` (answer level and spans: they are not claim decisions), and it is
never routed or queued: `manage.py evaluate` judges it, as a side run. Its status is `judged`
(nothing waits on it) with no shown run and no judged_at, so the queue, the routing preview and
the calibration rates leave it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from pydantic import TypeAdapter, ValidationError

from judges.eval import Record, Skipped, describe_validation_error, load_dataset
from judges.types import Turn
from reviewapp.models import Answer, Passage

# A ClaimDesk golden record (labels.exports.golden_record) carries the answer's prior turns in its
# `meta`: the golden format has no field for them and judges.eval reads none.
TURNS = TypeAdapter(list[Turn])

BATCH = 500


@dataclass
class GoldenImport:
    created: int = 0
    existing: int = 0
    skipped: list[Skipped] = field(default_factory=list)


def golden_answers(name: str):
    return Answer.objects.filter(client=None, metadata__golden=name)


def golden_metadata(name: str, record: Record) -> dict:
    answer = record.request.answer
    return {
        "golden": name,
        "dataset": record.dataset,
        "task_type": record.task_type,
        "hallucinated": record.hallucinated,
        "spans": [
            {"start": s.start, "end": s.end, "text": answer[s.start : s.end], "label": s.label}
            for s in record.spans
        ],
        "sentence_labels": (
            None
            if record.sentence_labels is None
            else [
                {"start": s.start, "end": s.end, "label": s.label} for s in record.sentence_labels
            ]
        ),
        # FaithBench ships detector scores here: evaluate reports them as baselines
        "meta": (record.meta),
    }


def golden_import(*, path: str | Path, name: str) -> GoldenImport:
    """Store every valid record not already in the set `name` (idempotent on the record id).

    Raises judges.eval.DatasetError when the file cannot be read at all.
    """
    records, skipped = load_dataset(path)
    known = set(golden_answers(name).values_list("external_id", flat=True))
    new, existing = [], 0
    for record in records:
        try:
            prior_turns(record)
        except ValidationError as error:
            reason = f"meta.prior_turns: {describe_validation_error(error)}"
            skipped.append(Skipped(record.line, record.id, reason))
            continue
        if record.id in known:
            existing += 1
        else:
            new.append(record)
    for start in range(0, len(new), BATCH):
        _store(name, new[start:start + BATCH])
    return GoldenImport(created=len(new), existing=existing, skipped=skipped)


def prior_turns(record: Record) -> list[dict]:
    """The record's prior turns, validated as the ingest API validates them (ValidationError if
    not)."""
    return [
        turn.model_dump() for turn in TURNS.validate_python(record.meta.get("prior_turns") or [])
    ]


@transaction.atomic
def _store(name: str, records: list[Record]) -> None:
    answers = Answer.objects.bulk_create(
        Answer(
            client=None,
            external_id=record.id,
            question=record.request.question,
            answer=record.request.answer,
            prior_turns=prior_turns(record),
            metadata=golden_metadata(name, record),
            status=Answer.Status.JUDGED,
        )
        for record in records
    )
    Passage.objects.bulk_create(
        Passage(
            answer=answer,
            pid=passage.id,
            position=position,
            text=passage.text,
            **{
                f: getattr(passage, f) or ""
                for f in ("tag", "agency", "title", "section", "source_url", "fetched_at")
            },
            score=passage.score,
            metadata=passage.metadata,
        )
        for answer, record in zip(answers, records)
        for position, passage in enumerate(record.request.passages)
    )
