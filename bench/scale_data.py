"""Fill a Postgres database with many judged answers, fast (COPY), for the scale benchmarks.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench python bench/scale_data.py
    --answers 100000

Each answer gets 10 passages' worth of text in 2 passages, one succeeded JudgeRun and 5-15
claims with mixed labels and categories, each claim with one quote located in P1; about 40% are
routed to review. Every claim carries a reviewer's decision (9 in 10 confirmed, the rest
overturned) and its Review row, so the export and /calibration/ read a million decided claims
with each reviewer's decision, their worst case.
Deterministic (seeded). Records the load time in bench/results/latest.json.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from judges.types import CATEGORIES  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402

from bench.results import record  # noqa: E402
from reviewapp.models import (  # noqa: E402
    Answer,
    Claim,
    Evidence,
    JudgeRun,
    Passage,
    Policy,
    Review,
)
from reviewapp.store import insert_fields  # noqa: E402

LABELS = ["SUPPORTED"] * 6 + ["PARTIALLY_SUPPORTED", "UNSUPPORTED", "UNSUPPORTED", "CONTRADICTED"]
SENTENCE = (
    "Riders aged {age} and older pay a reduced fare of ${price}.00 per ride with a valid card. "
)
P1_TEXT = SENTENCE.format(age=65, price=1) * 12
QUOTE = "reduced fare of $1.00"
QUOTE_START = P1_TEXT.index(QUOTE)


def generate(answers: int, claims_range: tuple[int, int], seed: int = 7) -> dict[str, float]:
    rng = random.Random(seed)
    call_command("migrate", verbosity=0)
    policy = Policy.current()
    started = time.monotonic()
    now = datetime.now(timezone.utc)
    reviewer, _ = get_user_model().objects.get_or_create(username="bench-reviewer")
    with connection.cursor() as cursor:
        first = {}
        for table in ("answer", "judgerun", "passage", "claim"):
            cursor.execute(f"SELECT coalesce(max(id), 0) FROM reviewapp_{table}")
            first[table] = cursor.fetchone()[0] + 1
    first_id, first_run = first["answer"], first["judgerun"]
    answer_rows, passage_rows, run_rows, claim_rows = [], [], [], []
    for i in range(answers):
        answer_id, run_id = first_id + i, first_run + i
        sentences = [
            SENTENCE.format(age=rng.randint(50, 70), price=rng.randint(1, 99))
            for _ in range(rng.randint(*claims_range))
        ]
        text = "".join(sentences).strip()
        labels = [rng.choice(LABELS) for _ in sentences]
        supported = labels.count("SUPPORTED") / len(labels)
        verdict = (
            "GROUNDED"
            if supported == 1
            else (
                "UNGROUNDED" if "CONTRADICTED" in labels or supported < 0.5 else "MOSTLY_GROUNDED"
            )
        )
        in_review = supported < policy.score_threshold
        created = now - timedelta(minutes=rng.randint(0, 60 * 24 * 6))
        answer_rows.append(
            (
                answer_id,
                f"How much does ride {i} cost?",
                text,
                "[]",
                "{}",
                "",
                "judged",
                verdict,
                round(supported, 4),
                run_id,
                "in_review" if in_review else "auto_passed",
                "bench" if in_review else "passed policy",
                max(
                    (
                        (
                            300
                            if "CONTRADICTED" in labels
                            else 200 if "UNSUPPORTED" in labels else 100
                        )
                        if in_review
                        else 0
                    ),
                    0,
                ),
                policy.pk,
                "",
                created,
                created,
                created,
            )
        )
        passage_rows.append(
            (
                first["passage"] + 2 * i,
                answer_id,
                "P1",
                0,
                P1_TEXT,
                "fares",
                "Metro",
                "Fare Policy",
                "4.2",
                "https://example.org",
                "2026-08-16",
            )
        )
        passage_rows.append(
            (
                first["passage"] + 2 * i + 1,
                answer_id,
                "P2",
                1,
                SENTENCE.format(age=62, price=2) * 12,
                "fares",
                "Metro",
                "Fare Policy",
                "4.3",
                "https://example.org",
                "2026-08-16",
            )
        )
        run_rows.append(
            (
                run_id,
                answer_id,
                "offline",
                "v2",
                "offline",
                "rules",
                "offline@v2/offline/rules",
                True,
                "succeeded",
                created,
                created,
                5,
                0,
                0,
                1,
                "",
                "",
                False,
                verdict,
                round(supported, 4),
                "{}",
            )
        )
        position = 0
        for sentence, label in zip(sentences, labels):
            start = text.find(sentence.strip(), position)
            end = start + len(sentence.strip())
            position = end
            human = label if rng.random() < 0.9 else rng.choice(LABELS)
            claim_rows.append(
                (
                    run_id,
                    answer_id,
                    len(claim_rows),
                    f"c{len(claim_rows)}",
                    sentence.strip(),
                    start,
                    end,
                    label,
                    rng.choice(CATEGORIES),
                    "bench claim",
                    None,
                    "judge",
                    human,
                    "confirm" if human == label else "overturn",
                    reviewer.pk,
                    min(created + timedelta(hours=1), now),
                    1,
                    "",
                )
            )
    # Claim ids, positions and cids count per run; one quote per claim, in P1.
    fixed, evidence_rows, review_rows, per_run = [], [], [], {}
    for index, row in enumerate(claim_rows):
        n = per_run.get(row[0], 0)
        per_run[row[0]] = n + 1
        claim_id = first["claim"] + index
        fixed.append((claim_id,) + row[:2] + (n, f"c{n + 1}") + row[4:])
        p1 = first["passage"] + 2 * (row[1] - first_id)
        evidence_rows.append(
            (claim_id, p1, "P1", 0, QUOTE, QUOTE_START, QUOTE_START + len(QUOTE), "exact")
        )
        human, decision, reviewer_id, decided_at = row[12:16]
        review_rows.append(
            (
                claim_id,
                row[1],
                reviewer_id,
                decision,
                human,
                "",
                1,
                "explicit",
                "review",
                "wrong_value" if decision == "overturn" else "",
                rng.randint(2_000, 60_000),
                decided_at,
            )
        )
    built = time.monotonic()
    # One transaction: a load that fails half-way leaves nothing behind for the next run to trust.
    with transaction.atomic(), connection.cursor() as cursor:
        _copy(
            cursor,
            Answer,
            [
                "id",
                "question",
                "answer",
                "prior_turns",
                "metadata",
                "requested_profile",
                "status",
                "verdict",
                "grounding_score",
                "judged_by_id",
                "review_status",
                "routing_reason",
                "priority",
                "policy_id",
                "adjudicated_verdict",
                "created_at",
                "updated_at",
                "judged_at",
            ],
            [r[:9] + (None,) + r[10:] for r in answer_rows],
        )
        _copy(
            cursor,
            Passage,
            [
                "id",
                "answer_id",
                "pid",
                "position",
                "text",
                "tag",
                "agency",
                "title",
                "section",
                "source_url",
                "fetched_at",
            ],
            passage_rows,
        )
        _copy(
            cursor,
            JudgeRun,
            [
                "id",
                "answer_id",
                "profile",
                "prompt_version",
                "backend",
                "model",
                "config_key",
                "is_current",
                "status",
                "started_at",
                "finished_at",
                "latency_ms",
                "prompt_tokens",
                "completion_tokens",
                "attempts",
                "raw_output",
                "error",
                "error_is_transient",
                "verdict",
                "grounding_score",
                "findings",
            ],
            run_rows,
        )
        _copy(
            cursor,
            Claim,
            [
                "id",
                "run_id",
                "answer_id",
                "position",
                "cid",
                "text",
                "answer_start",
                "answer_end",
                "label",
                "category",
                "explanation",
                "confidence",
                "origin",
                "human_label",
                "decision",
                "decided_by_id",
                "decided_at",
                "version",
                "note",
            ],
            fixed,
        )
        _copy(
            cursor,
            Evidence,
            ["claim_id", "passage_id", "passage_pid", "position", "quote", "start", "end", "match"],
            evidence_rows,
        )
        _copy(
            cursor,
            Review,
            [
                "claim_id",
                "answer_id",
                "reviewer_id",
                "decision",
                "final_label",
                "note",
                "claim_version",
                "decision_mode",
                "stage",
                "reason",
                "time_spent_ms",
                "created_at",
            ],
            review_rows,
        )
        cursor.execute(
            "UPDATE reviewapp_answer a SET judged_by_id = r.id FROM reviewapp_judgerun r "
            "WHERE r.answer_id = a.id AND a.id >= %s", [first_id])
        for table in ("answer", "judgerun", "claim", "passage", "evidence", "review"):
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('reviewapp_{table}', 'id'), "
                           f"(SELECT max(id) FROM reviewapp_{table}))")
    with connection.cursor() as cursor:
        # Planner statistics and the visibility map for the new rows, as autovacuum gives them in
        # time: without the map every count reads the table (the queue's counters 22-37 ms against
        # 1.4-4.5 from their indexes at 10k answers), a cost no running deployment pays.
        cursor.execute("VACUUM ANALYZE")
    return {
        "answers": answers,
        "claims": len(fixed),
        "build_s": built - started,
        "copy_s": time.monotonic() - built,
    }


def _copy(cursor, model, names: list[str], rows: list[tuple]) -> None:
    """COPY rows of `model` whose values are the fields `names` (attnames), in that order. The
    columns come from the model, and every field not named must be one the table fills (a
    db_default), as for the hot path's raw INSERTs: a field added without one stops the load here,
    with its name, instead of failing deep in COPY or loading NULLs."""
    fields = {field.attname: field for field in insert_fields(model, names)}
    # "end" is a keyword
    quoted = ", ".join(connection.ops.quote_name(fields[name].column) for name in names)
    with cursor.cursor.copy(f"COPY {model._meta.db_table} ({quoted}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--claims", default="5-15", help="claims per answer, a range")
    args = parser.parse_args()
    low, high = (int(x) for x in args.claims.split("-"))
    call_command("migrate", verbosity=0)
    have = Answer.objects.filter(status="judged").count()
    if have >= args.answers:
        print(f"already {have} judged answers; nothing generated")
    else:
        figures = generate(args.answers - have, (low, high))
        print(figures)
        seconds = figures["build_s"] + figures["copy_s"]
        record(
            f"scale data load ({figures['answers']} answers, {figures['claims']} claims)",
            seconds,
            "s",
            None,
            higher_is_better=False,
            command=f"python bench/scale_data.py --answers {args.answers}",
        )
