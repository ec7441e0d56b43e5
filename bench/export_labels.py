"""Benchmark of `export_labels` (not a test): rows per second and peak memory as the export grows.

Fills a database of its own (default `claimdesk_export_bench` on the local Postgres, created if
missing; DATABASE_URL overrides) with synthetic adjudicated answers: 2 decided claims per answer, 2 passages of about
1,000 characters, one quote per claim. Rows already there are reused, so a larger run only adds
the difference. Then, for each size, exports the first N rows (a --since-free export limited by
answer id) to /dev/null, timed; and again under tracemalloc for the peak of Python allocations.
Flat memory means the peak does not grow with N.

Run from the repo root: `python bench/export_labels.py [--sizes 10000,100000] [--format jsonl]`.
Prints figures, exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/claimdesk_export_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from reviewapp import exports  # noqa: E402
from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Passage, Policy  # noqa: E402

PASSAGE = ("Riders aged 65 and older pay a reduced fare of $1.00 per ride with a Senior ID card. " * 12)[:1000]
ANSWER = "Seniors pay $1.00 per ride. A monthly pass costs $75.00 and covers buses."
CHUNK = 2000  # answers per insert round


def ensure_database() -> None:
    from django.db.utils import OperationalError

    try:
        connection.ensure_connection()
    except OperationalError:
        import psycopg

        settings = connection.settings_dict
        with psycopg.connect(host=settings["HOST"], port=settings["PORT"], user=settings["USER"],
                             dbname="postgres", autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{settings["NAME"]}"')
    call_command("migrate", verbosity=0)


def fill(claims_wanted: int) -> None:
    reviewer, _ = get_user_model().objects.get_or_create(username="bench-reviewer")
    policy = Policy.current()
    while (have := Claim.objects.exclude(decision="").count()) < claims_wanted:
        n = min(CHUNK, (claims_wanted - have + 1) // 2)
        now = timezone.now()
        answers = Answer.objects.bulk_create(
            Answer(question=f"Question {have + i}?", answer=ANSWER, status="judged", review_status="adjudicated",
                   judged_at=now, policy=policy) for i in range(n))
        passages = Passage.objects.bulk_create(Passage(answer=a, pid=f"P{p + 1}", position=p, text=PASSAGE,
                                                       agency="Metro") for a in answers for p in range(2))
        first_passage = {p.answer_id: p for p in passages if p.pid == "P1"}
        runs = JudgeRun.objects.bulk_create(
            JudgeRun(answer=a, profile="claim_audit", prompt_version="v1", backend="openai", model="gpt-4o-mini",
                     config_key="claim_audit@v1/openai/gpt-4o-mini", is_current=True, status="succeeded")
            for a in answers)
        claims = Claim.objects.bulk_create(
            Claim(run=r, answer=a, position=c, cid=f"c{c + 1}", text=ANSWER[:26] if c == 0 else ANSWER[27:],
                  answer_start=0 if c == 0 else 27, answer_end=26 if c == 0 else len(ANSWER),
                  label="SUPPORTED" if c == 0 else "UNSUPPORTED", human_label="SUPPORTED" if c == 0 else "CONTRADICTED",
                  decision="confirm" if c == 0 else "overturn", decided_by=reviewer, decided_at=now, version=1,
                  explanation="The passage states the senior fare.", category="price")
            for a, r in zip(answers, runs) for c in range(2))
        Evidence.objects.bulk_create(Evidence(claim=c, passage=first_passage[c.answer_id], passage_pid="P1", position=0,
                                              quote="$1.00", start=47, end=52, match="exact") for c in claims)
        print(f"  filled {have + 2 * n} decided claims", file=sys.stderr, flush=True)
    with connection.cursor() as cursor:  # as autovacuum would in time: planner statistics for the new rows
        cursor.execute("ANALYZE")


class Sink:
    def __init__(self):
        self.bytes = 0

    def write(self, chunk: bytes) -> None:
        self.bytes += len(chunk)


def limited(rows: int):
    """Filters cannot cut at a row count; cutting the queryset at the answer of row `rows` does."""
    last = exports.decided_claims(exports.ExportFilters()).order_by("answer_id", "id").values_list(
        "answer_id", flat=True)[rows - 1]
    original = exports.decided_claims

    def decided_claims(filters):
        return original(filters).filter(answer_id__lte=last)

    exports.decided_claims = decided_claims
    return original


def measure(rows: int, fmt: str) -> None:
    original = limited(rows)
    try:
        sink = Sink()
        started = time.perf_counter()
        manifest = exports.write_export(sink, fmt=fmt, filters=exports.ExportFilters())
        seconds = time.perf_counter() - started
        tracemalloc.start()
        exports.write_export(Sink(), fmt=fmt, filters=exports.ExportFilters())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    finally:
        exports.decided_claims = original
    print(f"{fmt:<6} {manifest['rows']:>9,} rows  {seconds:7.2f} s  {manifest['rows'] / seconds:>9,.0f} rows/s"
          f"  {sink.bytes / seconds / 1e6:6.1f} MB/s  peak Python memory {peak / 1e6:6.1f} MB")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000", help="rows per export, comma-separated")
    parser.add_argument("--format", default="jsonl", choices=("jsonl", "csv", "golden"))
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    ensure_database()
    fill(max(sizes))
    print(f"database {connection.settings_dict['NAME']}, batch {exports.BATCH} claims per query")
    for size in sizes:
        measure(size, args.format)
    return 0


if __name__ == "__main__":
    sys.exit(main())
