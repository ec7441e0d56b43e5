"""CPU per answer outside the LLM (issue 8, item 2). A benchmark, not a test.

Each answer (5 claims, 10 passages of ~1,500 characters; a different one each time) goes through
the real code on a real Postgres and a real Redis broker:

* ingest: the payload validated and stored by the ingest service, its task enqueued on Redis;
* task: the Celery task body (`judge_answer`) with everything but the LLM: claim the answer, load
  it, record the run, render the prompt, then
  * parse: the canned reply a careful model would give, parsed and normalized by the `claim_audit`
    profile (claims and quotes located in the answer and passages),
  * checks: the deterministic checks (judges.checks),
  * store: the result written (run, claims and evidence in bulk, routing, the answer marked judged);
  "task" is the whole body; "task other" is what remains of it besides those three.

The LLM request is replaced by its reply (no network): `_complete` is the only function swapped.
CPU is `time.process_time()` of this one-thread process (the database's own CPU is not in it);
medians and p95 over the answers (after `--warmup` answers on which the SQL queries are counted,
with CaptureQueriesContext).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_perf
    CELERY_BROKER_URL=redis://127.0.0.1:6379/11 \\
        python bench/answer_cost.py [--quick] [--answers 500] [--show-queries]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from contextlib import nullcontext
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.results import record  # noqa: E402
from bench.workload import admin_sql, bench_database_url, claim_audit_reply, payload  # noqa: E402

STAGES = ("ingest", "task", "parse", "checks", "store", "task other", "total")


class Timer:
    """Adds the CPU time of every call of a function to a per-answer counter."""

    def __init__(self, spent: dict, stage: str, function):
        self.spent, self.stage, self.function = spent, stage, function

    def __call__(self, *args, **kwargs):
        started = time.process_time()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.spent[self.stage] += time.process_time() - started


def percentile(values: list[float], share: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(share * len(values)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="100 answers")
    parser.add_argument("--warmup", type=int, default=20, help="answers run first and not counted")
    parser.add_argument(
        "--show-queries", action="store_true", help="print the SQL of the last answer"
    )
    args = parser.parse_args()
    answers = 100 if args.quick else args.answers
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis"):
        sys.exit("answer_cost needs a Redis broker: set CELERY_BROKER_URL=redis://...")
    database_url = bench_database_url("_bench_cost")
    name = urlsplit(database_url).path[1:]
    queue = f"bench-cost-{os.getpid()}"
    os.environ.update(
        {
            "DATABASE_URL": database_url,
            "CELERY_QUEUE": queue,
            "DJANGO_SETTINGS_MODULE": "reviewapp.settings",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
            "JUDGE_BACKEND": "openai",
            "JUDGE_PROFILE": "claim_audit",
            "JUDGE_MODEL": "canned",
            "DEBUG": "false",
        }
    )
    admin_sql(database_url, f'DROP DATABASE IF EXISTS "{name}"')
    admin_sql(database_url, f'CREATE DATABASE "{name}"')
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        import judges.checks
        from judges import JudgeRequest
        from judges.backends import openai_chat
        from reviewapp.models import Answer
        from reviewapp.judging import service as judging
        from reviewapp.api.ingest import answer_ingest
        from reviewapp.judging.tasks import judge_answer

        call_command("migrate", verbosity=0)
        rng = random.Random(2)
        bodies = [payload(rng) for _ in range(answers + args.warmup)]
        replies = {body["answer"]: claim_audit_reply(body) for body in bodies}

        # The one swap: the LLM request returns the canned reply for the answer being judged (the
        # loop below names it; checked to be in the prompt). Searching every reply's answer in the
        # prompt instead cost up to a few ms per answer, counted in "task other" though no worker
        # does it.
        judging_now: dict[str, str] = {}

        def canned(config, profile, messages, *, temperature, call):
            call.attempts += 1
            answer = judging_now["answer"]
            assert answer in messages[-1]["content"], "the prompt lacks the answer being judged"
            return openai_chat._Reply(replies[answer], truncated=False)

        spent: dict[str, float] = defaultdict(float)
        openai_chat._complete = canned
        openai_chat._parse = Timer(spent, "parse", openai_chat._parse)
        judges.checks.apply_checks = Timer(spent, "checks", judges.checks.apply_checks)
        judging._succeed = Timer(spent, "store", judging._succeed)

        figures: dict[str, list[float]] = defaultdict(list)
        queries: dict[str, list[int]] = defaultdict(list)
        for number, body in enumerate(bodies):
            spent.clear()
            judging_now["answer"] = body["answer"]
            # Queries are counted on the warm-up answers only: capturing them puts Django's debug
            # cursor (which formats every query) into the CPU being measured.
            counting = number < args.warmup
            ingest_queries, task_queries = CaptureQueriesContext(connection), CaptureQueriesContext(
                connection
            )
            with ingest_queries if counting else nullcontext():
                started = time.process_time()
                answer = answer_ingest(
                    client=None, request=JudgeRequest.model_validate(body)
                ).answer
                spent["ingest"] = time.process_time() - started
            with task_queries if counting else nullcontext():
                started = time.process_time()
                judge_answer(answer.pk)
                spent["task"] = time.process_time() - started
            if counting:
                queries["ingest"].append(len(ingest_queries.captured_queries))
                queries["task"].append(len(task_queries.captured_queries))
                shown = ingest_queries.captured_queries + task_queries.captured_queries
                continue
            spent["task other"] = spent["task"] - spent["parse"] - spent["checks"] - spent["store"]
            spent["total"] = spent["ingest"] + spent["task"]
            for stage in STAGES:
                figures[stage].append(spent[stage] * 1000)
        judged = Answer.objects.filter(status=Answer.Status.JUDGED).count()
        assert judged == len(bodies), f"only {judged} of {len(bodies)} answers were judged"
        if args.show_queries:
            for query in shown:
                print("   ", query["sql"][:160])

        command = " ".join(["python", "bench/answer_cost.py", *sys.argv[1:]])
        print(
            f"CPU ms per answer over {answers} answers (5 claims, 10 passages of ~1,500 chars), one"
            " thread:"
        )
        print(f"{'stage':12} {'median':>8} {'p95':>8}")
        for stage in STAGES:
            median, p95 = statistics.median(figures[stage]), percentile(figures[stage], 0.95)
            print(f"{stage:12} {median:8.2f} {p95:8.2f}")
            target = 10.0 if stage == "total" else None
            record(
                f"answer CPU {stage} median",
                median,
                "ms",
                target=target,
                higher_is_better=False,
                command=command,
                p95_ms=round(p95, 3),
                answers=answers,
            )
        for stage in ("ingest", "task"):
            counts = sorted(set(queries[stage]))
            print(f"SQL queries per answer, {stage}: {counts if len(counts) > 1 else counts[0]}")
            record(f"answer SQL queries {stage}", max(counts), "queries", higher_is_better=False,
                   command=command, answers=answers)
        return 0
    finally:
        try:
            import redis

            redis.Redis.from_url(broker).delete(
                queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}"
            )
        except Exception as exc:  # cleanup only
            print(f"could not delete the queue: {exc}", file=sys.stderr)
        from django.db import connections

        connections.close_all()
        admin_sql(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())
