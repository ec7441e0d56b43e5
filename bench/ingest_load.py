"""Ingest under load (issue 8, item 4): `POST /api/v1/answers` served by gunicorn with 2 workers,
driven by wrk on loopback. Target: >= 300 answers/s with p95 <= 50 ms.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench \
    CELERY_BROKER_URL=redis://127.0.0.1:6379/12 python bench/ingest_load.py [--quick]

wrk (C, one thread here) is the load generator because it costs a fraction of a core: a Python
generator would eat the cores the server is measured on. Install it with `apt-get install wrk`.
Every request posts a fresh external_id (a Lua counter per wrk thread), so each one stores an
answer with 3 passages and enqueues a judge task on commit, as a real client's would.

Runs, each for --seconds after a short warm-up:
* gunicorn sync workers, broker Redis (the production shape; this is the figure against the target);
* gunicorn gthread workers (4 threads each), broker Redis (full run only);
* sync workers with the in-memory broker (full run only): the difference from the first run is
  what enqueueing on Redis costs per request.
It also times `judge_answer.delay()` on Redis in-process (median microseconds per enqueue).
Tasks go to a queue of their own (`bench-ingest`) that is purged afterwards; no worker runs.
The answers it stored stay in the bench database (the Makefile drops that database).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
BENCH_QUEUE = "bench-ingest"
os.environ["CELERY_QUEUE"] = BENCH_QUEUE

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from bench.results import record  # noqa: E402
from bench.web import PROXY_HEADERS, start_gunicorn, stop_gunicorn  # noqa: E402
from reviewapp.models import Answer  # noqa: E402
from reviewapp.api.clients import api_client_create  # noqa: E402

COMMAND = "python bench/ingest_load.py"
PASSAGE = (
    "Riders aged 65 and older pay a reduced fare of $1.00 per ride with a valid Senior ID card. "
    "Proof of age must be shown when boarding. "
)
PAYLOAD = {
    "external_id": "EXTERNAL_ID",
    "question": "How much is a senior fare, and what does a monthly pass cost?",
    "passages": [
        {
            "id": f"P{n}",
            "text": PASSAGE * 3,
            "agency": "Lakeshore Regional Transit",
            "title": "Fare Policy",
            "section": f"4.{n}",
            "source_url": "https://example.org/fares",
            "fetched_at": "2026-08-16",
        }
        for n in range(1, 4)
    ],
    "answer": (
        "Riders aged 65 and older pay a reduced fare of $1.00 per ride. A 30-day pass costs $75.00."
    ),
}

# wrk's script: a unique external_id per request (run prefix, thread number, counter); done()
# prints the figures as one JSON line (latencies in microseconds).
LUA = r"""
local threads = {}
local next_thread = 0
function setup(thread)
  next_thread = next_thread + 1
  thread:set("tid", next_thread)
  table.insert(threads, thread)
end
local counter = 0
function request()
  counter = counter + 1
  local body = string.gsub(BODY, "EXTERNAL_ID", PREFIX .. "-" .. tid .. "-" .. counter, 1)
  return wrk.format("POST", "/api/v1/answers", HEADERS, body)
end
local statuses = {}
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests": %d, "duration_us": %d, "p50": %d, "p95": %d, "p99": %d, "max": %d, ' ..
    '"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    latency:percentile(99), latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def workers_cpu_seconds(master: int) -> float:
    """CPU time (user + system) used so far by gunicorn's worker processes: per answer, a figure the
    other tenants of a shared machine disturb far less than the answers per second."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    with open(f"/proc/{master}/task/{master}/children") as f:
        children = f.read().split()
    for pid in children:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def postgres_cpu_seconds() -> dict[int, float]:
    """CPU seconds so far of each Postgres backend serving this database (the web workers' own
    connections; this process's too, idle during a run), read from /proc: a local server only."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <>"
            " pg_backend_pid()"
        )
        pids = [row[0] for row in cursor.fetchall()]
    tick, seconds = os.sysconf("SC_CLK_TCK"), {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # not on this machine, or gone
            continue
        seconds[pid] = (int(fields[11]) + int(fields[12])) / tick
    return seconds


def run_wrk(port: int, token: str, prefix: str, seconds: int, connections: int) -> dict:
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
    } | PROXY_HEADERS
    script = (
        f"BODY = {json.dumps(json.dumps(PAYLOAD))}\nPREFIX = {json.dumps(prefix)}\nHEADERS ="
        f" {{{', '.join(f'[{json.dumps(k)}] = {json.dumps(v)}' for k, v in headers.items())}}}\n"
        + LUA
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
    try:
        out = subprocess.run(
            [
                "wrk",
                "-t1",
                f"-c{connections}",
                f"-d{seconds}s",
                "--timeout",
                "5s",
                "-s",
                f.name,
                f"http://127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        os.unlink(f.name)
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def one_run(
    name: str, *, worker_class: str, broker: str, token: str, seconds: int, connections: int
) -> dict:
    port = free_port()
    server = start_gunicorn(
        port, worker_class, {"CELERY_BROKER_URL": broker, "CELERY_QUEUE": BENCH_QUEUE}
    )
    try:
        # imports, connections, caches
        run_wrk(port, token, f"warm-{name}-{time.time_ns()}", 2, connections)
        before, cpu_before, pg_before = (
            Answer.objects.count(),
            workers_cpu_seconds(server.pid),
            postgres_cpu_seconds(),
        )
        figures = run_wrk(port, token, f"{name}-{time.time_ns()}", seconds, connections)
        stored, cpu = Answer.objects.count() - before, workers_cpu_seconds(server.pid) - cpu_before
        pg_cpu = sum(now - pg_before.get(pid, 0.0) for pid, now in postgres_cpu_seconds().items())
    finally:
        stop_gunicorn(server)
    secs = figures["duration_us"] / 1e6
    errors = sum(figures[k] for k in ("connect", "read", "write", "status", "timeout"))
    run = {"rate": stored / secs,  # answers the database holds, not merely responses
           "p50": figures["p50"] / 1000, "p95": figures["p95"] / 1000, "p99": figures["p99"] / 1000,
           "errors": errors, "requests": figures["requests"], "cpu_ms": cpu * 1000 / max(stored, 1),
           "pg_cpu_ms": pg_cpu * 1000 / max(stored, 1)}
    print(
        f"  {name:22} {run['rate']:7.1f} answers/s  p50 {run['p50']:6.1f} ms  p95 {run['p95']:6.1f}"
        f" ms  p99 {run['p99']:6.1f} ms  errors {errors}  web CPU {run['cpu_ms']:.1f} ms/answer "
        f" Postgres CPU {run['pg_cpu_ms']:.1f} ms/answer  ({figures['requests']} requests, {stored}"
        f" stored, {connections} connections, {secs:.0f} s, load average {os.getloadavg()[0]:.1f})",
        flush=True,
    )
    return run


def summarize(name: str, runs: list[dict], *, connections: int, target: bool) -> None:
    """Medians over the repeats (the machine is shared); errors are summed."""
    def med(key: str) -> float:
        return statistics.median(run[key] for run in runs)

    errors = sum(run["errors"] for run in runs)
    print(
        f"{name:24} median of {len(runs)}: {med('rate'):7.1f} answers/s  p50 {med('p50'):6.1f} ms "
        f" p95 {med('p95'):6.1f} ms  p99 {med('p99'):6.1f} ms  errors {errors}  web CPU"
        f" {med('cpu_ms'):.1f} ms/answer  Postgres CPU {med('pg_cpu_ms'):.1f} ms/answer  (load"
        f" average {os.getloadavg()[0]:.1f})"
    )
    extra = {"command": COMMAND, "connections": connections, "repeats": len(runs),
             "runs": [round(run["rate"], 1) for run in runs]}
    record(f"ingest {name} answers/s", med("rate"), "answers/s", 300 if target else None, **extra)
    record(f"ingest {name} p50", med("p50"), "ms", None, higher_is_better=False, **extra)
    record(
        f"ingest {name} p95",
        med("p95"),
        "ms",
        50 if target else None,
        higher_is_better=False,
        **extra,
    )
    record(f"ingest {name} p99", med("p99"), "ms", None, higher_is_better=False, **extra)
    record(
        f"ingest {name} errors",
        errors,
        "requests",
        0 if target else None,
        higher_is_better=False,
        **extra,
    )
    record(
        f"ingest {name} web CPU per answer",
        med("cpu_ms"),
        "ms",
        None,
        higher_is_better=False,
        **extra,
    )
    record(
        f"ingest {name} Postgres CPU per answer",
        med("pg_cpu_ms"),
        "ms",
        None,
        higher_is_better=False,
        **extra,
    )


def enqueue_cost(count: int) -> float:
    """Median microseconds of one judge_answer.delay() on the configured (Redis) broker."""
    from reviewapp.judging.tasks import judge_answer

    judge_answer.delay(0)  # connect first
    samples = []
    for n in range(count):
        started = time.perf_counter()
        judge_answer.delay(n)
        samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples)


def purge_queue() -> None:
    from reviewapp.celery import app

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge(BENCH_QUEUE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one 8 s run (sync workers, Redis)")
    parser.add_argument("--seconds", type=int, default=None)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument(
        "--repeats", type=int, default=None, help="runs per configuration (default 3, quick 1)"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is not installed (apt-get install wrk): ingest load not measured")
        return 0
    broker = settings.CELERY_BROKER_URL
    if not broker.startswith("redis"):
        print("needs CELERY_BROKER_URL=redis://...: ingest load not measured")
        return 0
    seconds = args.seconds or (8 if args.quick else 12)
    call_command("migrate", verbosity=0)
    _, token = api_client_create(name=f"bench-{time.time_ns()}")
    configs = [("sync redis", "sync", broker, args.connections, True)]
    if not args.quick:
        configs += [("gthread redis", "gthread", broker, args.connections * 2, False),
                    ("sync memory-broker", "sync", "memory://", args.connections, False)]
    repeats = args.repeats or (1 if args.quick else 3)
    print(
        f"POST /api/v1/answers, gunicorn 2 workers, wrk 1 thread, {os.cpu_count()} cores (shared); "
        f"{repeats} x {seconds} s per configuration, interleaved"
    )
    try:
        runs: dict[str, list[dict]] = {name: [] for name, *_ in configs}
        for _ in range(repeats):
            for name, worker_class, url, connections, _target in configs:
                runs[name].append(one_run(name, worker_class=worker_class, broker=url, token=token,
                                          seconds=seconds, connections=connections))
        for name, _, _, connections, target in configs:
            summarize(name, runs[name], connections=connections, target=target)
        cost = enqueue_cost(300 if args.quick else 2000)
        print(f"judge_answer.delay() on Redis: median {cost:.0f} us")
        record(
            "ingest celery enqueue (redis) median",
            cost,
            "us",
            None,
            higher_is_better=False,
            command=COMMAND,
        )
    finally:
        purge_queue()
    return 0


if __name__ == "__main__":
    sys.exit(main())
