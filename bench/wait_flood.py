"""Guardrail waits against the review queue (issue 28, item 1): do clients waiting on
`POST /api/v1/answers?wait=S` slow a reviewer's `/queue/`? Target: the reviewer's p95 under the
flood within 2x of idle, and every waiting client gets its verdict or a 202 (no error, no timeout).

    DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... python bench/wait_flood.py \\
        [--clients 200] [--wait 10] [--worker-class uvicorn|sync] [--loads 40]

gunicorn (2 workers) serves the app on a free port, `uvicorn` as docker-compose.yml runs it (ASGI),
`sync` as it ran before; no judge worker runs (a paused judge: every wait lasts its S seconds, the
worst case). The database is the bench's own (`<name>_wait_flood_bench`), with a reviewer and 50
answers in review, created, migrated and dropped at the end. The reviewer loads /queue/ --loads
times one after another, idle, then while --clients clients each post one waiting answer at once.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.guardrail_wait import percentile  # noqa: E402
from bench.results import record  # noqa: E402
from bench.web import PROXY_HEADERS, start_gunicorn, stop_gunicorn  # noqa: E402
from bench.workload import admin_sql, bench_database_url  # noqa: E402
from reviewapp.embedded import free_port  # noqa: E402


def load_queue(port: int, cookie: str) -> float:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", "/queue/", headers=PROXY_HEADERS | {"Cookie": f"sessionid={cookie}"})
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status == 200, response.status
    return (time.perf_counter() - started) * 1000


def post_waiting(port: int, token: str, body: dict, wait: int) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=wait + 60)
    try:
        conn.request(
            "POST",
            f"/api/v1/answers?wait={wait}",
            body=json.dumps(body | {"external_id": uuid.uuid4().hex}),
            headers=PROXY_HEADERS
            | {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        response.read()
        return str(response.status)
    except OSError as exc:
        return type(exc).__name__
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--wait", type=int, default=10)
    parser.add_argument(
        "--loads", type=int, default=40, help="/queue/ loads, idle and under the flood"
    )
    parser.add_argument("--worker-class", default="uvicorn", choices=("uvicorn", "sync"))
    args = parser.parse_args()
    database_url = bench_database_url("_wait_flood_bench")
    name = urlsplit(database_url).path[1:]
    # A wait per client: the per-token cap is raised past the flood (one token posts it all).
    env = {
        "DATABASE_URL": database_url,
        "CELERY_QUEUE": f"bench-wait-flood-{os.getpid()}",
        "DEBUG": "false",
        "API_WAITS_PER_TOKEN": str(args.clients),
        "API_WAITS_PER_PROCESS": str(args.clients),
    }
    os.environ.update(env)
    admin_sql(database_url, f'DROP DATABASE IF EXISTS "{name}"')
    admin_sql(database_url, f'CREATE DATABASE "{name}"')
    server = None
    try:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
        django.setup()
        from django.core.management import call_command
        from django.test import Client

        from reviewapp.api.clients import api_client_create
        from tests import factories as make

        call_command("migrate", verbosity=0)
        _, token = api_client_create(name="wait flood")
        for i in range(50):
            make.in_review(external_id=f"queued-{i}")
        signed_in = Client()
        signed_in.force_login(make.user("rita", "reviewer"))
        cookie = signed_in.cookies["sessionid"].value
        port = free_port()
        server = start_gunicorn(port, args.worker_class, env)
        for _ in range(3):
            load_queue(port, cookie)  # warm both workers
        idle = [load_queue(port, cookie) for _ in range(args.loads)]
        body = make.fare_payload()
        with ThreadPoolExecutor(args.clients) as pool:
            started = time.monotonic()
            waits = [
                pool.submit(post_waiting, port, token, body, args.wait) for _ in range(args.clients)
            ]
            time.sleep(1.0)  # the flood is in: every client is waiting
            loaded = [load_queue(port, cookie) for _ in range(args.loads)]
            outcomes = [wait.result() for wait in waits]
            flood_s = time.monotonic() - started
    finally:
        if server is not None:
            stop_gunicorn(server)
        from django.db import connections

        connections.close_all()
        admin_sql(database_url, f'DROP DATABASE IF EXISTS "{name}"')
    counts = {status: outcomes.count(status) for status in sorted(set(outcomes))}
    idle_p50, idle_p95 = percentile(idle, 50), percentile(idle, 95)
    loaded_p50, loaded_p95 = percentile(loaded, 50), percentile(loaded, 95)
    print(
        f"gunicorn 2 x {args.worker_class}, {args.clients} clients waiting {args.wait} s, no judge"
        " running"
    )
    print(f"/queue/ idle    p50 {idle_p50:7.1f} ms  p95 {idle_p95:7.1f} ms  ({args.loads} loads)")
    print(
        f"/queue/ flooded p50 {loaded_p50:7.1f} ms  p95 {loaded_p95:7.1f} ms  ratio p95"
        f" {loaded_p95 / idle_p95:.2f}"
    )
    print(f"waiting clients: {counts} (flood over in {flood_s:.1f} s)")
    good = sum(counts.get(status, 0) for status in ("200", "202"))
    command = (
        f"python bench/wait_flood.py --clients {args.clients} --wait {args.wait} --worker-class"
        f" {args.worker_class}"
    )
    record(
        f"wait_flood_queue_p95_ratio_{args.worker_class}",
        loaded_p95 / idle_p95,
        "x",
        2.0,
        higher_is_better=False,
        command=command,
        idle_p95_ms=round(idle_p95, 1),
        loaded_p95_ms=round(loaded_p95, 1),
        clients=args.clients,
        outcomes=counts,
    )
    record(
        f"wait_flood_clients_answered_{args.worker_class}",
        good / args.clients,
        "share",
        1.0,
        command=command,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
