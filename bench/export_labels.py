"""Benchmark of `export_labels` (not a test): rows per second and peak memory (issue 8, item 6).
Target: 1,000,000 claim rows as JSONL and as CSV at >= 50,000 rows/s, peak RSS <= 300 MB.

Exports every decided claim in the database (DATABASE_URL; default `claimdesk_export_bench` on the
local Postgres, created if missing) by running `manage.py export_labels --format F > /dev/null` in a
child process, timed, with the child's own peak resident set size (VmHWM, read by the child as it
ends): the whole process, Django, the driver and the buffers included, not only Python's own
allocations. (Not wait4()'s ru_maxrss: that also counts the parent's pages the child carried
between fork and exec.)

`make bench` runs it on the scale database (bench/scale_data.py: ~1M decided claims, one quote
each, two passages of ~1,000 characters per answer, so each row carries ~2,000 characters of
passage text). Standalone, `--rows N` first fills the database up to N decided claims with the
ORM (2 claims per answer; fine up to ~100k).

Run from the repo root: `python bench/export_labels.py [--rows N] [--formats jsonl,csv]`.
Prints figures, exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/claimdesk_export_bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.results import record  # noqa: E402
from bench import peak_rss  # noqa: E402
from reviewapp.labels import exports  # noqa: E402
from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Passage, Policy  # noqa: E402

PASSAGE = (
    "Riders aged 65 and older pay a reduced fare of $1.00 per ride with a Senior ID card. " * 12
)[:1000]
ANSWER = "Seniors pay $1.00 per ride. A monthly pass costs $75.00 and covers buses."
CHUNK = 2000  # answers per insert round
COMMAND = "python bench/export_labels.py"


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
            Answer(
                question=f"Question {have + i}?",
                answer=ANSWER,
                status="judged",
                review_status="adjudicated",
                judged_at=now,
                policy=policy,
            )
            for i in range(n)
        )
        passages = Passage.objects.bulk_create(
            Passage(answer=a, pid=f"P{p + 1}", position=p, text=PASSAGE, agency="Metro")
            for a in answers
            for p in range(2)
        )
        first_passage = {p.answer_id: p for p in passages if p.pid == "P1"}
        runs = JudgeRun.objects.bulk_create(
            JudgeRun(
                answer=a,
                profile="claim_audit",
                prompt_version="v1",
                backend="openai",
                model="gpt-4o-mini",
                config_key="claim_audit@v1/openai/gpt-4o-mini",
                is_current=True,
                status="succeeded",
            )
            for a in answers
        )
        claims = Claim.objects.bulk_create(
            Claim(
                run=r,
                answer=a,
                position=c,
                cid=f"c{c + 1}",
                text=ANSWER[:26] if c == 0 else ANSWER[27:],
                answer_start=0 if c == 0 else 27,
                answer_end=26 if c == 0 else len(ANSWER),
                label="SUPPORTED" if c == 0 else "UNSUPPORTED",
                human_label="SUPPORTED" if c == 0 else "CONTRADICTED",
                decision="confirm" if c == 0 else "overturn",
                decision_mode="bulk" if c == 0 else "explicit",
                decided_by=reviewer,
                decided_at=now,
                version=1,
                explanation="The passage states the senior fare.",
                category="price",
            )
            for a, r in zip(answers, runs)
            for c in range(2)
        )
        Evidence.objects.bulk_create(
            Evidence(
                claim=c,
                passage=first_passage[c.answer_id],
                passage_pid="P1",
                position=0,
                quote="$1.00",
                start=47,
                end=52,
                match="exact",
            )
            for c in claims
        )
        print(f"  filled {have + 2 * n} decided claims", file=sys.stderr, flush=True)
    with (
        connection.cursor() as cursor
    ):  # as autovacuum would in time: planner statistics for the new rows
        cursor.execute("ANALYZE")


def measure(fmt: str) -> dict:
    """`manage.py export_labels --format FMT` in a process of its own, its output to /dev/null (the
    manifest, with the row count, comes on stderr): wall time, CPU time (wait4) and the peak
    resident set size of that process (what the machine must have free)."""
    started = time.perf_counter()
    child = subprocess.Popen(peak_rss.command_line("export_labels", "--format", fmt),
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = child.stderr.read().decode()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"export_labels --format {fmt} failed: {stderr[-2000:]}")
    manifest, _ = json.JSONDecoder().raw_decode(stderr[stderr.index("{"):])
    return {"rows": manifest["rows"], "seconds": seconds, "rss_mb": peak_rss.peak_kb(stderr) / 1024,
            "cpu_seconds": usage.ru_utime + usage.ru_stime}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows",
        type=int,
        default=None,
        help="fill the database up to this many decided claims first (slow above 100k: use "
        "bench/scale_data.py, which makes every claim decided)",
    )
    parser.add_argument("--formats", default="jsonl,csv")
    args = parser.parse_args()
    ensure_database()
    if args.rows:
        fill(args.rows)
    print(f"database {connection.settings_dict['NAME']}, batch {exports.BATCH} claims per query, "
          f"{os.cpu_count()} cores (shared)")
    for fmt in args.formats.split(","):
        m = measure(fmt)
        rate = m["rows"] / m["seconds"]
        # Rows per CPU-second of the exporting process (Python's share; Postgres works beside it):
        # what a shared, busy machine disturbs least.
        per_cpu = m["rows"] / m["cpu_seconds"]
        print(
            f"{fmt:<6} {m['rows']:>9,} rows  {m['seconds']:7.2f} s  {rate:>9,.0f} rows/s  peak RSS"
            f" {m['rss_mb']:6.1f} MB  ({per_cpu:,.0f} rows per CPU-second of the exporter)",
            flush=True,
        )
        extra = {"command": COMMAND, "rows": m["rows"], "seconds": round(m["seconds"], 1),
                 "cpu_seconds": round(m["cpu_seconds"], 1), "rows_per_cpu_second": round(per_cpu)}
        record(f"export {fmt} rows/s ({m['rows']:,} rows)", rate, "rows/s", 50_000, **extra)
        record(
            f"export {fmt} peak RSS ({m['rows']:,} rows)",
            m["rss_mb"],
            "MB",
            300,
            higher_is_better=False,
            **extra,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
