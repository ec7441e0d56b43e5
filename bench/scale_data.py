"""Fill a Postgres database with many judged answers, fast (COPY), for the scale benchmarks.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench python bench/scale_data.py --answers 100000

Each answer gets 10 passages' worth of text in 2 passages, one succeeded JudgeRun and 5-15
claims with mixed labels and categories; about 40% are routed to review. Deterministic (seeded).
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
from django.db import connection  # noqa: E402

from judges.types import CATEGORIES  # noqa: E402
from reviewapp.models import Answer, Policy  # noqa: E402

LABELS = ["SUPPORTED"] * 6 + ["PARTIALLY_SUPPORTED", "UNSUPPORTED", "UNSUPPORTED", "CONTRADICTED"]
SENTENCE = "Riders aged {age} and older pay a reduced fare of ${price}.00 per ride with a valid card. "


def generate(answers: int, claims_range: tuple[int, int], seed: int = 7) -> dict[str, float]:
    rng = random.Random(seed)
    call_command("migrate", verbosity=0)
    policy = Policy.current()
    started = time.monotonic()
    now = datetime.now(timezone.utc)
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM reviewapp_answer")
        first_id = cursor.fetchone()[0] + 1
        cursor.execute("SELECT coalesce(max(id), 0) FROM reviewapp_judgerun")
        first_run = cursor.fetchone()[0] + 1
    answer_rows, passage_rows, run_rows, claim_rows = [], [], [], []
    for i in range(answers):
        answer_id, run_id = first_id + i, first_run + i
        sentences = [SENTENCE.format(age=rng.randint(50, 70), price=rng.randint(1, 99)) for _ in range(rng.randint(*claims_range))]
        text = "".join(sentences).strip()
        labels = [rng.choice(LABELS) for _ in sentences]
        supported = labels.count("SUPPORTED") / len(labels)
        verdict = "GROUNDED" if supported == 1 else ("UNGROUNDED" if "CONTRADICTED" in labels or supported < 0.5 else "MOSTLY_GROUNDED")
        in_review = supported < policy.score_threshold
        created = now - timedelta(minutes=rng.randint(0, 60 * 24 * 6))
        answer_rows.append((
            answer_id, f"How much does ride {i} cost?", text, "[]", "{}", "", "judged", verdict, round(supported, 4),
            run_id, "in_review" if in_review else "auto_passed", "bench" if in_review else "passed policy",
            max((300 if "CONTRADICTED" in labels else 200 if "UNSUPPORTED" in labels else 100) if in_review else 0, 0),
            policy.pk, "", created, created, created,
        ))
        passage_rows.append((answer_id, "P1", 0, SENTENCE.format(age=65, price=1) * 12, "fares", "Metro", "Fare Policy", "4.2", "https://example.org", "2026-08-16"))
        passage_rows.append((answer_id, "P2", 1, SENTENCE.format(age=62, price=2) * 12, "fares", "Metro", "Fare Policy", "4.3", "https://example.org", "2026-08-16"))
        run_rows.append((run_id, answer_id, "offline", "v2", "offline", "rules", "offline@v2/offline/rules", True, "succeeded",
                         created, created, 5, 0, 0, 1, "", "", False, verdict, round(supported, 4), "{}"))
        position = 0
        for sentence, label in zip(sentences, labels):
            start = text.find(sentence.strip(), position)
            end = start + len(sentence.strip())
            position = end
            claim_rows.append((run_id, answer_id, len(claim_rows), f"c{len(claim_rows)}", sentence.strip(), start, end, label,
                               rng.choice(CATEGORIES), "bench claim", None, "judge", "", "", 0, ""))
    # Claim positions and ids count per run.
    fixed, per_run = [], {}
    for row in claim_rows:
        n = per_run.get(row[0], 0)
        per_run[row[0]] = n + 1
        fixed.append(row[:2] + (n, f"c{n + 1}") + row[4:])
    built = time.monotonic()
    with connection.cursor() as cursor:
        _copy(cursor, "reviewapp_answer", ["id", "question", "answer", "prior_turns", "metadata", "requested_profile", "status",
              "verdict", "grounding_score", "judged_by_id", "review_status", "routing_reason", "priority", "policy_id",
              "adjudicated_verdict", "created_at", "updated_at", "judged_at"], [r[:9] + (None,) + r[10:] for r in answer_rows])
        _copy(cursor, "reviewapp_passage", ["answer_id", "pid", "position", "text", "tag", "agency", "title", "section",
              "source_url", "fetched_at"], passage_rows)
        _copy(cursor, "reviewapp_judgerun", ["id", "answer_id", "profile", "prompt_version", "backend", "model", "config_key",
              "is_current", "status", "started_at", "finished_at", "latency_ms", "prompt_tokens", "completion_tokens", "attempts",
              "raw_output", "error", "error_is_transient", "verdict", "grounding_score", "findings"], run_rows)
        _copy(cursor, "reviewapp_claim", ["run_id", "answer_id", "position", "cid", "text", "answer_start", "answer_end", "label",
              "category", "explanation", "confidence", "origin", "human_label", "decision", "version", "note"], fixed)
        cursor.execute(
            "UPDATE reviewapp_answer a SET judged_by_id = r.id FROM reviewapp_judgerun r "
            "WHERE r.answer_id = a.id AND a.id >= %s", [first_id])
        for table in ("answer", "judgerun", "claim", "passage"):
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('reviewapp_{table}', 'id'), "
                           f"(SELECT max(id) FROM reviewapp_{table}))")
        cursor.execute("ANALYZE")
    return {"answers": answers, "claims": len(fixed), "build_s": built - started, "copy_s": time.monotonic() - built}


def _copy(cursor, table: str, columns: list[str], rows: list[tuple]) -> None:
    with cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--claims", default="5-15", help="claims per answer, a range")
    args = parser.parse_args()
    low, high = (int(x) for x in args.claims.split("-"))
    call_command("migrate", verbosity=0)
    if Answer.objects.count() >= args.answers:
        print(f"already {Answer.objects.count()} answers; nothing generated")
    else:
        print(generate(args.answers, (low, high)))
