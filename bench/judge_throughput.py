"""Judge fleet throughput against its limit (issue 8, item 1). A benchmark, not a test.

The LLM is the fake OpenAI server (tests/fake_openai.py, its own process) answering every request
after a fixed latency, with at most C requests in flight (more get a 429): the fleet can never
judge faster than C / latency answers per second. Real Celery worker subprocesses (thread pool:
the work waits on the LLM) judge into a Postgres database of their own with the `openai` backend
and the `claim_audit` profile; the answers (5 claims, 10 passages of ~1,500 characters) are stored
through the ingest service in one transaction, so all their tasks are enqueued at its commit.
Measured: answers judged per second from that commit to the last `judged_at`, as a fraction of
C / latency, and the workers' CPU time (per answer, and as % of one core).

The fleet runs more threads (2 x 40) than C with a fleet-wide in-flight limit of C
(JUDGE_MAX_IN_FLIGHT, judges.ratelimit.InFlightLimit): with exactly C threads every slot stays
empty while its thread stores a result and fetches its next task (about 7% of each 1 s cycle
here, plus gaps between tasks); the extra threads wait with their request ready instead.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_perf
    CELERY_BROKER_URL=redis://127.0.0.1:6379/11 \\
        python bench/judge_throughput.py [--quick] [--answers 2000] [--workers 2 --threads 40]
        [--max-in-flight 64]

The database named by BENCH_DATABASE_URL (default: DATABASE_URL's server, database
`<name>_bench`) is created, migrated and dropped at the end; the queue is a fresh name.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.results import record  # noqa: E402
from bench.workload import admin_sql, bench_database_url, claim_audit_reply, payload  # noqa: E402
from tests.faultkit import Worker  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_fake_llm(
    reply: str, latency: float, concurrency: int, workdir: Path
) -> tuple[subprocess.Popen, str]:
    content = workdir / "reply.json"
    content.write_text(reply)
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_openai", "--port", "0", "--latency", str(latency),
         "--max-concurrency", str(concurrency), "--content-file", str(content)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=open(workdir / "fake.log", "w"), text=True,
    )
    line = server.stdout.readline()
    if not line.startswith("listening on "):
        server.kill()
        sys.exit(f"the fake LLM did not start: {line!r}")
    return server, line.split()[-1]


def refused_by(fake: subprocess.Popen, workdir: Path) -> int:
    """Stop the fake LLM and read how many requests it refused over its concurrency (its last
    words)."""
    stop([fake])
    match = re.search(
        r"(\d+) refused over the concurrency limit", (workdir / "fake.log").read_text()
    )
    return int(match.group(1)) if match else -1


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="300 answers")
    parser.add_argument(
        "--concurrency", type=int, default=64, help="C: requests the fake LLM serves at once"
    )
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per LLM request")
    parser.add_argument(
        "--workers", type=int, default=2, help="celery worker processes (compose runs 2)"
    )
    parser.add_argument("--threads", type=int, default=40, help="threads per worker (compose: 40)")
    parser.add_argument("--max-in-flight", type=int, default=None,
                        help="JUDGE_MAX_IN_FLIGHT of the workers (default: C; 0: no fleet limit)")
    parser.add_argument("--pool-size", type=int, default=16,
                        help="DATABASE_POOL_SIZE of the workers (0: a connection per thread)")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument(
        "--py-spy", metavar="FILE", help="profile worker 0 with py-spy (collapsed stacks to FILE)"
    )
    args = parser.parse_args()
    answers = 300 if args.quick else args.answers
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis"):
        sys.exit("judge_throughput needs a Redis broker: set CELERY_BROKER_URL=redis://...")

    in_flight = args.concurrency if args.max_in_flight is None else args.max_in_flight
    database_url = bench_database_url("_bench")
    body = payload(random.Random(args.seed))
    workdir = Path(tempfile.mkdtemp(prefix="judge-throughput-"))
    fake, base_url = start_fake_llm(
        claim_audit_reply(body), args.latency, args.concurrency, workdir
    )
    env = os.environ | {
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker,
        "CELERY_QUEUE": f"bench-throughput-{os.getpid()}",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "bench",
        "JUDGE_MODEL": "fake-judge",
        "JUDGE_BACKEND": "openai",
        "JUDGE_PROFILE": "claim_audit",
        "DEBUG": "false",
        "DATABASE_POOL_SIZE": str(args.pool_size),
        "JUDGE_MAX_IN_FLIGHT": str(in_flight),
    }
    os.environ.update(env)
    processes = [fake]
    admin_sql(database_url, f'DROP DATABASE IF EXISTS "{urlsplit(database_url).path[1:]}"')
    admin_sql(database_url, f'CREATE DATABASE "{urlsplit(database_url).path[1:]}"')
    try:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
        django.setup()
        from django.core.management import call_command
        from django.db import connection, transaction
        from django.db.models import Max

        from judges import JudgeRequest
        from reviewapp.models import Answer, Policy
        from reviewapp.api.ingest import answer_ingest

        call_command("migrate", verbosity=0)
        Policy.objects.create(version=Policy.current().version + 1, judge_backend="openai",
                              judge_profile="claim_audit", note="judge throughput benchmark")
        # The tests' worker subprocess (tests/faultkit.py), on threads: processes of their own.
        workers = [
            Worker(
                env,
                workdir / f"worker{number}.log",
                pool="threads",
                concurrency=args.threads,
                name=f"bench{number}",
            )
            .start()
            .proc
            for number in range(args.workers)
        ]
        processes = workers + [fake]
        request = JudgeRequest.model_validate(body)
        if args.py_spy:  # py-spy is a dev tool, not a dependency: `pip install py-spy`
            processes.insert(
                0,
                subprocess.Popen(
                    # PYSPY_FLAGS=--idle samples the threads that wait too (default: those holding
                    # the GIL).
                    [
                        "py-spy",
                        "record",
                        "--pid",
                        str(workers[0].pid),
                        "--rate",
                        "200",
                        "--format",
                        "raw",
                        *os.environ.get("PYSPY_FLAGS", "--gil").split(),
                        "--nonblocking",
                        "-o",
                        args.py_spy,
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                ),
            )
        cpu_before = {w.pid: cpu_seconds(w.pid) for w in workers} | {
            fake.pid: cpu_seconds(fake.pid)
        }

        with transaction.atomic():
            for _ in range(answers):
                answer_ingest(client=None, request=request)
            started = time.time()  # the tasks are enqueued as this transaction commits
        print(
            f"{answers} answers stored; enqueued in {time.time() - started:.2f}s; judging ...",
            flush=True,
        )

        limit = args.concurrency / args.latency
        deadline = time.monotonic() + answers / limit * 4 + 60
        done = peak_connections = 0
        while time.monotonic() < deadline:
            done = Answer.objects.filter(
                status__in=(Answer.Status.JUDGED, Answer.Status.FAILED)
            ).count()
            with connection.cursor() as cursor:  # the workers' connections (ours not counted)
                cursor.execute(
                    "SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = current_database()"
                )
                peak_connections = max(peak_connections, cursor.fetchone()[0])
            if done == answers:
                break
            time.sleep(0.5)
        finished = Answer.objects.aggregate(last=Max("judged_at"))["last"]
        failed = Answer.objects.filter(status=Answer.Status.FAILED).count()
        cpu_after = {w.pid: cpu_seconds(w.pid) for w in workers} | {fake.pid: cpu_seconds(fake.pid)}
        connection.close()
        refused = refused_by(fake, workdir)
        if done < answers or finished is None:
            print(f"gave up: {done} of {answers} judged", flush=True)
            return 1
        seconds = finished.timestamp() - started
        rate = (answers - failed) / seconds
        worker_cpu = sum(cpu_after[w.pid] - cpu_before[w.pid] for w in workers)
        fake_cpu = cpu_after[fake.pid] - cpu_before[fake.pid]
        command = " ".join(["python", "bench/judge_throughput.py", *sys.argv[1:]])
        setup = {
            "answers": answers,
            "workers": args.workers,
            "threads": args.threads,
            "pool_size": args.pool_size,
            "concurrency": args.concurrency,
            "latency_s": args.latency,
            "max_in_flight": in_flight,
            "refused_429": refused,
        }
        print(
            f"judged {answers - failed} ({failed} failed) in {seconds:.1f}s: {rate:.1f} answers/s; "
            f"limit C/latency = {limit:.0f}/s; fraction {rate / limit:.3f}"
        )
        print(
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
            f"workers: {worker_cpu:.1f} CPU s = {worker_cpu / seconds * 100:.0f}% of one core, "
            f"{worker_cpu / answers * 1000:.1f} ms CPU per answer; fake LLM {fake_cpu:.1f} CPU s; "
            f"peak Postgres connections of the workers {peak_connections}; "
            f"{refused} requests refused by the LLM over its concurrency (429)"
        )
        layout = (
            f"C={args.concurrency}, {args.latency:g} s, {args.workers}x{args.threads} threads"
            + (f", fleet in-flight limit {in_flight}" if in_flight else ", no in-flight limit")
        )
        setup["load_average_1m"] = os.getloadavg()[0]  # the box is shared: how busy it was
        record(f"judge throughput ({layout})", rate, "answers/s", command=command, **setup)
        record(
            f"judge throughput / limit ({layout})",
            rate / limit,
            "fraction",
            target=0.9,
            command=command,
            **setup,
        )
        record(
            f"judge worker CPU per answer ({layout})",
            worker_cpu / answers * 1000,
            "ms",
            command=command,
            **setup,
        )
        record(
            f"judge worker CPU ({layout})",
            worker_cpu / seconds * 100,
            "% of one core",
            command=command,
            **setup,
        )
        record(
            f"judge worker Postgres connections, peak ({layout}, pool {args.pool_size})",
            peak_connections,
            "connections",
            command=command,
            **setup,
        )
        return 0
    finally:
        if args.py_spy and processes[0].args[0] == "py-spy":
            processes[0].send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
            processes[0].wait(timeout=60)
        stop(processes)
        try:
            import redis

            queue = env["CELERY_QUEUE"]  # and kombu's bindings of it: the name is never used again
            redis.Redis.from_url(broker).delete(
                queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}"
            )
        except Exception as exc:  # cleanup only: say so, do not hide the figures
            print(f"could not delete the queue: {exc}", file=sys.stderr)
        from django.db import connections

        connections.close_all()
        admin_sql(
            database_url,
            f'DROP DATABASE IF EXISTS "{urlsplit(database_url).path[1:]}" WITH (FORCE)',
        )


if __name__ == "__main__":
    sys.exit(main())
