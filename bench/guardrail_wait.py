"""Guardrail mode's added latency (issue 20, item 1): `POST /api/v1/answers?wait=S` returns the
judged result in the reply; how much later than the judge's own time does it arrive? Target: p50
and p95 <= 50 ms over the judge's own time. A benchmark, not a test.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk
    CELERY_BROKER_URL=redis://127.0.0.1:6379/12 \\
        python bench/guardrail_wait.py [--quick] [--answers 200] [--clients 8] [--llm-latency 0.3]

Real processes: gunicorn (2 workers; uvicorn's, serving the ASGI app as docker-compose.yml does,
unless --worker-class says sync or gthread) serving the app on a free port, one Celery worker
subprocess (thread pool, on a connection pool of --pool-size as compose's worker), and for the
`openai` backend the fake LLM (tests/fake_openai.py) answering after a fixed latency; the database
is one of the bench's own (DATABASE_URL's server, database `<name>_guardrail_bench`, or
BENCH_DATABASE_URL), created, migrated and dropped at the end.

For each backend (offline, then openai against the fake LLM), answers are posted over HTTP one at a
time and from --clients concurrent clients, each mode on fresh answers:
* wait:   `POST ?wait=10`; added latency = the request's wall time - the stored JudgeRun.latency_ms
          of the run the answer shows. That is what "the judge's own time" covers here: the
          backend's call (the LLM request with its retries, or the offline judge), nothing else.
          The checks `judges.judge` runs on every result (judges.checks), the claim, the run's rows,
          the hops between processes and the reply all count as added: the strict reading.
          The wide reading takes the judge's own time as all of `judges.judge` (the backend and
          the checks it runs on every result): the checks' time is re-timed per answer in the
          bench's process, on the answer's request and the same backend (cold, as in the worker);
* poll:   `POST` without wait, then `GET` every 100 ms until judged; added latency the same way, to
          the reply of the GET that first shows it judged;
* ingest: `POST` without wait, its wall time only (the 202).
Where the added time of a waited answer goes is read from the rows, the worker's log and a Redis
subscriber of the bench's own to the judged announcements: ingest (send -> the answer row's
created_at), to worker (-> the worker's "received" log line: the web's insert and commit, the
enqueue, the broker's delivery), task start (-> the run's started_at: Celery's hand-off to a pool
thread, and the claim's timestamp, taken as the claim starts its run), outside backend (started_at
-> finished_at, minus latency_ms: the claim's statement, the request built, checks, span checks,
routing), store + publish (finished_at -> the announcement seen: the result's statement, the API
state built from it, commit, publish), reply (-> the response read: the web's wake on the message,
which carries the state, and serialisation). The log splits the pickup only where one task was
received in that window. Every answer of a mode is judged before the next mode starts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.judge_throughput import cpu_seconds, start_fake_llm, stop  # noqa: E402
from bench.results import record  # noqa: E402
from bench.web import PROXY_HEADERS, start_gunicorn, stop_gunicorn  # noqa: E402
from bench.workload import admin_sql, bench_database_url, claim_audit_reply, payload  # noqa: E402
from reviewapp.embedded import free_port  # noqa: E402
from tests.faultkit import Worker  # noqa: E402

TARGET_MS = 50
POLL_SECONDS = 0.1
STAGES = ("ingest", "to worker", "task start", "outside backend", "store + publish", "reply")
RECEIVED = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*judge_answer\[[0-9a-f-]+\] received$"
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


class Announcements:
    """Subscribes to every answer's judged channel (as the waiting web request does to its own) and
    notes when each announcement arrived: where store + publish ends and the web's reply begins."""

    def __init__(self, broker: str):
        import redis

        from reviewapp.judging.waiting import channel

        self.seen: dict[int, list[float]] = {}
        self._pubsub = redis.Redis.from_url(broker).pubsub(ignore_subscribe_messages=True)
        self._pubsub.psubscribe(**{channel("*"): self._note})
        self._thread = self._pubsub.run_in_thread(sleep_time=0.5, daemon=True)

    def _note(self, message: dict) -> None:
        self.seen.setdefault(int(message["channel"].rsplit(b":", 1)[1]), []).append(time.time())

    def first_after(self, pk: int, moment: float) -> float | None:
        # The bench's own deployment only (its database names it), but an announcement from an
        # earlier run of the bench on the same database is not this one's.
        return next((t for t in self.seen.get(pk, ()) if t >= moment), None)

    def close(self) -> None:
        self._thread.stop()
        # it stops within sleep_time; closing under it would raise there
        self._thread.join(timeout=5)
        self._pubsub.close()


class Api:
    """One client of the API over plain HTTP/1.1 (gunicorn's sync workers close every
    connection)."""

    def __init__(self, port: int, token: str):
        self.port = port
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        } | PROXY_HEADERS

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, dict]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=self.headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()


def one_answer(api: Api, body: dict, mode: str, wait: int) -> dict:
    data = json.dumps(body | {"external_id": f"guardrail-{uuid.uuid4().hex}"}).encode()
    sent, started = time.time(), time.perf_counter()
    status, reply = api.call(
        "POST", f"/api/v1/answers?wait={wait}" if mode == "wait" else "/api/v1/answers", data
    )
    if status not in (200, 202):
        raise SystemExit(f"POST answered {status}: {reply}")
    polls, get_ms = 0, None
    if mode == "poll":
        while (
            reply.get("status") not in ("judged", "failed") and time.perf_counter() - started < 60
        ):
            time.sleep(POLL_SECONDS)
            polls += 1
            asked = time.perf_counter()
            status, reply = api.call("GET", f"/api/v1/answers/{reply['id']}")
            get_ms = (time.perf_counter() - asked) * 1000
    wall = (time.perf_counter() - started) * 1000
    return {"id": reply["id"], "status": status, "state": reply.get("status"), "sent": sent,
            "done": sent + wall / 1000, "wall_ms": wall, "polls": polls,
            "get_ms": get_ms}


def settle(public_ids: list[str], timeout: float = 120) -> None:
    """Until every answer of a mode is judged or failed, so that the next mode finds an idle
    worker."""
    from reviewapp.models import Answer

    deadline = time.monotonic() + timeout
    while (
        Answer.objects.filter(public_id__in=public_ids)
        .exclude(status__in=("judged", "failed"))
        .exists()
    ):
        if time.monotonic() > deadline:
            raise SystemExit(f"answers still not judged after {timeout:.0f} s")
        time.sleep(0.1)


def received_times(log: Path) -> list[float]:
    """When the worker received each judge task (its log's lines, to the millisecond)."""
    times = []
    for line in log.read_text().splitlines():
        if match := RECEIVED.match(line):
            times.append(datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp())
    return times


def with_runs(results: list[dict], watcher: Announcements, worker_log: Path) -> None:
    """Add each answer's stored run (latency_ms, started/finished) and its stage times."""
    from reviewapp.models import Answer

    answers = {str(a.public_id): a for a in Answer.objects.select_related("judged_by")
               .filter(public_id__in=[r["id"] for r in results])}
    received = received_times(worker_log)
    for result in results:
        answer, run = answers[result["id"]], answers[result["id"]].judged_by
        result["judge_ms"] = run.latency_ms if run and run.latency_ms is not None else None
        if run is None or answer.status != "judged":
            continue
        created, begun, finished = (
            answer.created_at.timestamp(),
            run.started_at.timestamp(),
            run.finished_at.timestamp(),
        )
        seen = watcher.first_after(answer.pk, finished)
        # Each event causes the next, but they are read on different clocks and threads (the
        # worker's log has millisecond stamps; the subscriber may wake after the client's read):
        # bound each reading by its neighbours so a stage is never shorter than zero.
        if seen:
            seen = min(seen, result["done"])
        # The task received between the row's creation and its run's start: its own, unless several
        # were (concurrent clients), when the split of the pickup is left out.
        between = [t for t in received if created - 0.001 <= t <= begun + 0.001]
        got = min(max(between[0], created), begun) if len(between) == 1 else None
        result["stages"] = {
            "ingest": (created - result["sent"]) * 1000,
            "to worker": (got - created) * 1000 if got else None,
            "task start": (begun - got) * 1000 if got else None,
            "outside backend": (finished - begun) * 1000 - run.latency_ms,
            "store + publish": (seen - finished) * 1000 if seen else None,
            "reply": (result["done"] - seen) * 1000 if seen else None,
        }


def with_checks_times(results: list[dict], backend: str, llm_url: str) -> None:
    """Add each judged answer's `checks_ms`: judges.judge's time beyond its backend's, re-timed in
    this process on the answer's stored request (the wide reading's part of the judge's own time).
    The openai backend's answers are one request with one canned reply: timed three times, the
    median taken, the same for every answer (its caches are as warm as the worker's)."""
    import judges
    from judges import JudgeConfig
    from reviewapp.judging.service import judge_request_for
    from reviewapp.models import Answer

    config = JudgeConfig(
        backend=backend,
        profile="claim_audit",
        model="fake-judge",
        base_url=llm_url,
        api_key="bench",
        max_attempts=1,
    )

    def checks_ms(request) -> float:
        started = time.perf_counter()
        output = judges.judge(request, config)
        return max(0.0, (time.perf_counter() - started) * 1000 - output.result.judge.latency_ms)

    judged = [r for r in results if r.get("judge_ms") is not None]
    answers = {
        str(a.public_id): a for a in Answer.objects.filter(public_id__in=[r["id"] for r in judged])
    }
    if backend == "openai" and judged:
        request = judge_request_for(answers[judged[0]["id"]])
        same = statistics.median(checks_ms(request) for _ in range(3))
    for result in judged:
        result["checks_ms"] = (
            same if backend == "openai" else checks_ms(judge_request_for(answers[result["id"]]))
        )


def server_cpu(processes: list[int]) -> dict[int, float]:
    """CPU seconds so far of the app's processes (gunicorn's workers, the Celery worker) and of the
    Postgres backends serving the bench's database (a local server; this process's own excluded)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <>"
            " pg_backend_pid()"
        )
        pids = processes + [row[0] for row in cursor.fetchall()]
    seconds = {}
    for pid in pids:
        try:
            seconds[pid] = cpu_seconds(pid)
        except OSError:  # gone, or not on this machine
            continue
    return seconds


def app_processes(server, worker) -> list[int]:
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    return [int(pid) for pid in children] + [worker.proc.pid]


def measure(
    api: Api,
    bodies,
    *,
    mode: str,
    backend: str,
    llm_url: str,
    clients: int,
    count: int,
    wait: int,
    watcher: Announcements,
    worker_log: Path,
    processes: list[int],
) -> list[dict]:
    before = server_cpu(processes)
    if clients == 1:
        results = [one_answer(api, next(bodies), mode, wait) for _ in range(count)]
    else:
        lock = threading.Lock()

        def body():
            with lock:
                return next(bodies)

        with ThreadPoolExecutor(clients) as pool:
            results = list(pool.map(lambda _: one_answer(api, body(), mode, wait), range(count)))
    settle([r["id"] for r in results])
    cpu = sum(now - before.get(pid, 0.0) for pid, now in server_cpu(processes).items())
    time.sleep(0.2)  # the last announcements
    results[0]["cpu_ms_per_answer"] = cpu * 1000 / len(results)
    with_runs(results, watcher, worker_log)
    if mode != "ingest":
        with_checks_times(results, backend, llm_url)
    return results


def report(
    backend: str, mode: str, clients: int, results: list[dict], *, command: str, setup: dict
) -> None:
    # uvicorn, as compose runs the web, is the figure of record; the others are named.
    web = "" if setup["gunicorn"].startswith("uvicorn") else f", gunicorn {setup['gunicorn']}"
    label = f"guardrail {mode} ({backend}, {clients} client{'s' if clients > 1 else ''}{web})"
    wall = [r["wall_ms"] for r in results]
    cpu = results[0]["cpu_ms_per_answer"]
    extra = setup | {
        "backend": backend,
        "mode": mode,
        "clients": clients,
        "answers": len(results),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "server_cpu_ms_per_answer": round(cpu, 1),
    }
    line = f"{label:44} wall p50 {percentile(wall, 50):7.1f} p95 {percentile(wall, 95):7.1f} ms"
    # All of it on the answer's path when one client posts at a time: what an idle box would wait.
    record(
        f"{label} server CPU per answer",
        cpu,
        "ms",
        higher_is_better=False,
        command=command,
        **extra,
    )
    if mode == "ingest":
        for q in (50, 95):
            record(
                f"{label} latency p{q}",
                percentile(wall, q),
                "ms",
                higher_is_better=False,
                command=command,
                **extra,
            )
        record(
            f"{label} latency max",
            max(wall),
            "ms",
            higher_is_better=False,
            command=command,
            **extra,
        )
        print(line + f" | server CPU {cpu:.1f} ms/answer", flush=True)
        return
    judged = [r for r in results if r["state"] == "judged" and r["judge_ms"] is not None]
    late = len(results) - len(judged)
    added = [r["wall_ms"] - r["judge_ms"] for r in judged]
    judge = [r["judge_ms"] for r in judged]
    checks = [r["checks_ms"] for r in judged]
    # The wide reading: over the backend and the checks judges.judge runs on every result. The
    # checks' time is an estimate from another process: it may exceed a fast answer's whole added
    # time.
    added_wide = [max(0.0, a - c) for a, c in zip(added, checks)]
    extra |= {"not_judged_in_reply": late, "judge_ms_p50": percentile(judge, 50),
              "checks_ms_p50": round(percentile(checks, 50), 1)}
    target = TARGET_MS if mode == "wait" else None
    for q in (50, 95):
        record(f"{label} added latency p{q}", percentile(added, q), "ms", higher_is_better=False,
               command=command, **extra)
        record(
            f"{label} added over judge with checks p{q}",
            percentile(added_wide, q),
            "ms",
            target,
            higher_is_better=False,
            command=command,
            **extra,
        )
    record(
        f"{label} added latency max",
        max(added),
        "ms",
        higher_is_better=False,
        command=command,
        **extra,
    )
    line += (
        f" | judge p50 {percentile(judge, 50):6.1f} | added p50 {percentile(added, 50):6.1f} p95"
        f" {percentile(added, 95):6.1f} max {max(added):7.1f} ms | checks p50"
        f" {percentile(checks, 50):5.1f}, added over both p50 {percentile(added_wide, 50):6.1f} p95"
        f" {percentile(added_wide, 95):6.1f} ms | not judged in reply {late} | server CPU {cpu:.1f}"
        " ms/answer"
    )
    if mode == "poll" and (reads := [r["get_ms"] for r in judged if r["get_ms"] is not None]):
        # What the web's re-read and reply of a judged answer cost on their own: the last GET's.
        line += f"\n      the GET that found it judged: p50 {statistics.median(reads):.1f} ms"
        record(f"{label} judged GET p50", statistics.median(reads), "ms", higher_is_better=False,
               command=command, **extra)
    if mode == "wait":
        stages = []
        for stage in STAGES:
            values = [
                r["stages"][stage] for r in judged if r.get("stages", {}).get(stage) is not None
            ]
            if values:
                stages.append(
                    f"{stage} {statistics.median(values):.1f}/{percentile(values, 95):.1f}"
                )
                record(
                    f"{label} stage {stage} p50",
                    statistics.median(values),
                    "ms",
                    higher_is_better=False,
                    command=command,
                    **extra,
                )
        line += "\n      where it goes, p50/p95 ms: " + ", ".join(stages)
    print(line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--answers", type=int, default=None, help="answers per mode and client count (default 200)"
    )
    parser.add_argument("--quick", action="store_true", help="12 answers a mode, 4 clients")
    parser.add_argument(
        "--clients", type=int, default=None, help="concurrent clients of the second run (default 8)"
    )
    parser.add_argument("--wait", type=int, default=10, help="S of ?wait=S")
    parser.add_argument(
        "--llm-latency", type=float, default=0.3, help="the fake LLM's seconds per request"
    )
    parser.add_argument("--backend", action="append", choices=("offline", "openai"),
                        help="repeatable; default both")
    parser.add_argument(
        "--worker-class",
        default="uvicorn",
        choices=("uvicorn", "sync", "gthread"),
        help="gunicorn's (2 workers): uvicorn serves the ASGI app as compose does (the wait "
        "an async view); sync, as compose did before; gthread, 4 threads each",
    )
    parser.add_argument(
        "--worker-threads", type=int, default=8, help="the Celery worker's thread pool"
    )
    parser.add_argument(
        "--pool-size",
        type=int,
        default=8,
        help=(
            "the worker's DATABASE_POOL_SIZE, as compose's has one (0: Celery reconnects every"
            " task)"
        ),
    )
    parser.add_argument(
        "--warmup", type=int, default=3, help="answers waited for before each backend's figures"
    )
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    count = args.answers or (12 if args.quick else 200)
    clients = args.clients or (4 if args.quick else 8)
    backends = args.backend or ["offline", "openai"]
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis"):
        sys.exit(
            "guardrail_wait needs a Redis broker (the waiting requests hear of results on it): "
            "set CELERY_BROKER_URL=redis://..."
        )

    database_url = bench_database_url("_guardrail_bench")
    name = urlsplit(database_url).path[1:]
    rng = random.Random(args.seed)
    fixed = payload(rng)  # the openai backend's: the fake LLM's canned reply is for this one answer
    workdir = Path(tempfile.mkdtemp(prefix="guardrail-wait-"))
    queue = f"bench-guardrail-{os.getpid()}"
    fake, llm_url = start_fake_llm(claim_audit_reply(fixed), args.llm_latency, 64, workdir)
    env = {"DATABASE_URL": database_url, "CELERY_BROKER_URL": broker, "CELERY_QUEUE": queue,
           "OPENAI_BASE_URL": llm_url, "OPENAI_API_KEY": "bench", "JUDGE_MODEL": "fake-judge",
           "JUDGE_BACKEND": "offline", "JUDGE_PROFILE": "claim_audit", "DEBUG": "false"}
    os.environ.update(env)
    processes, server, watcher = [fake], None, None
    admin_sql(database_url, f'DROP DATABASE IF EXISTS "{name}"')
    admin_sql(database_url, f'CREATE DATABASE "{name}"')
    try:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
        django.setup()
        from django.core.management import call_command

        from reviewapp.models import Policy
        from reviewapp.api.clients import api_client_create

        call_command("migrate", verbosity=0)
        _, token = api_client_create(name="guardrail bench")
        port = free_port()
        with ThreadPoolExecutor(
            1
        ) as starting:  # both start in seconds, mostly waiting: side by side
            web = starting.submit(start_gunicorn, port, args.worker_class, env)
            try:
                # The pool on the worker only, as compose runs it: the web keeps a connection a
                # thread.
                worker_env = os.environ | env | {"DATABASE_POOL_SIZE": str(args.pool_size)}
                worker = Worker(worker_env, workdir / "worker.log", pool="threads",
                                concurrency=args.worker_threads, name="guardrail").start()
                processes.insert(0, worker.proc)
            finally:
                server = web.result()
        watcher = Announcements(broker)
        api = Api(port, token)
        processes_cpu = app_processes(server, worker)
        command = " ".join(["python", "bench/guardrail_wait.py", *sys.argv[1:]])
        setup = {
            "wait_s": args.wait,
            "gunicorn": f"{args.worker_class} x 2",
            "celery_threads": args.worker_threads,
            "worker_pool_size": args.pool_size,
            "llm_latency_s": args.llm_latency,
        }
        print(
            f"{count} answers a mode; gunicorn {args.worker_class} x 2, Celery 1 x"
            f" {args.worker_threads} threads, {os.cpu_count()} cores (shared), load average"
            f" {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        for backend in backends:
            Policy.objects.create(version=Policy.current().version + 1, judge_backend=backend,
                                  judge_profile="claim_audit", note=f"guardrail bench ({backend})")
            if backend == "openai":
                bodies = iter(lambda: fixed, None)
            else:  # new passages every time: the offline judge's caches do not make it look faster
                bodies = iter(lambda: payload(rng), None)
            # warm-up
            measure(
                api,
                bodies,
                mode="wait",
                backend=backend,
                llm_url=llm_url,
                clients=1,
                count=max(1, args.warmup),
                wait=args.wait,
                watcher=watcher,
                worker_log=worker.log,
                processes=processes_cpu,
            )
            for mode, n in (
                ("wait", 1),
                ("wait", clients),
                ("poll", 1),
                ("poll", clients),
                ("ingest", 1),
            ):
                results = measure(
                    api,
                    bodies,
                    mode=mode,
                    backend=backend,
                    llm_url=llm_url,
                    clients=n,
                    count=count,
                    wait=args.wait,
                    watcher=watcher,
                    worker_log=worker.log,
                    processes=processes_cpu,
                )
                report(backend, mode, n, results, command=command,
                       setup=setup if backend == "openai" else setup | {"llm_latency_s": None})
        return 0
    finally:
        if watcher:
            watcher.close()
        if server:
            stop_gunicorn(server)
        for process in processes:
            if process is not fake:
                process.terminate()
        stop(processes)
        try:
            import redis

            redis.Redis.from_url(broker).delete(
                queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}"
            )
        except Exception as exc:  # cleanup only: say so, do not hide the figures
            print(f"could not delete the queue: {exc}", file=sys.stderr)
        from django.db import connections

        connections.close_all()
        admin_sql(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())
