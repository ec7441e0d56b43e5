"""Reviewer-quality data out: one JSON line per gold decision (never in the label exports)."""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from reviewapp.quality.selectors import gold_decisions

SCHEMA_VERSION = "1"


def gold_rows() -> Iterator[dict]:
    for d in gold_decisions():
        yield {
            "schema_version": SCHEMA_VERSION,
            "reviewer": d.reviewer,
            "gold_answer_id": d.gold_answer_id,
            "served_answer_id": d.answer_id,
            "claim_id": d.cid,
            "claim_position": d.position,
            "category": d.category,
            "judge_label": d.judge_label,
            "gold_label": d.gold_label,
            "reviewer_label": d.label,
            "correct": d.correct,
            "decision_mode": d.decision_mode,
            "decided_at": d.decided_at.isoformat() if d.decided_at else None,
            "scored_at": d.scored_at.isoformat(),
        }


def gold_lines() -> Iterator[bytes]:
    for row in gold_rows():
        yield orjson.dumps(row) + b"\n"
