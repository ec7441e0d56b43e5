"""Webhook delivery: throughput, the cost of a send, no double sends under racing workers, and the
span of the default retry schedule.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk python bench/webhook_delivery.py
    [--deliveries 400]

It makes its own throwaway database (`<name>_webhook_bench`, dropped at the end) and a local
receiver (stdlib ThreadingHTTPServer on 127.0.0.1), and calls the delivery service the Celery task
calls, from threads standing in for a worker's thread pool.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.results import record  # noqa: E402
from tests.webhook_receiver import Receiver  # noqa: E402

logging.getLogger("httpx2").setLevel(logging.WARNING)  # one INFO line per request otherwise

COMMAND = "python bench/webhook_delivery.py"


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def make_deliveries(endpoint, n: int) -> list[int]:
    from reviewapp.models import Answer, WebhookDelivery

    answers = Answer.objects.bulk_create(
        Answer(client=endpoint.client, answer=f"answer {i}") for i in range(n)
    )
    payload = {
        "data": {"answer": {"claims": [{"id": f"c{i}", "text": "x" * 200} for i in range(5)]}}
    }
    rows = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            endpoint=endpoint,
            answer=a,
            event="answer.judged",
            event_id=f"evt_bench_{a.pk}",
            next_attempt_at=timezone.now(),
            payload=payload | {"id": f"evt_bench_{a.pk}"},
        )
        for a in answers
    )
    return [row.pk for row in rows]


def run_threads(target, ids: list[int], threads: int) -> float:
    queue = list(ids)
    lock = threading.Lock()

    def work():
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    delivery_id = queue.pop()
                target(delivery_id)
        finally:
            connection.close()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    started = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.perf_counter() - started


def throughput(endpoint, receiver, n: int, threads: int, label: str) -> None:
    from reviewapp.models import WebhookAttempt
    from reviewapp.webhooks.service import delivery_send

    ids = make_deliveries(endpoint, n)
    timings: list[float] = []

    def send(delivery_id):
        started = time.perf_counter()
        assert delivery_send(delivery_id=delivery_id).status == "delivered"
        timings.append((time.perf_counter() - started) * 1000)

    receiver.received.clear()
    seconds = run_threads(send, ids, threads)
    http_ms = list(
        WebhookAttempt.objects.filter(delivery_id__in=ids).values_list("latency_ms", flat=True)
    )
    rate = n / seconds
    unverified = sum(1 for r in receiver.received if not r.verified)
    print(
        f"{label}: {n} deliveries, {threads} thread(s): {rate:.0f}/s; per send p50"
        f" {pct(timings, 50):.1f} ms, p95 {pct(timings, 95):.1f} ms (of which the HTTP round trip"
        f" p50 {statistics.median(http_ms):.1f} ms); signatures the receiver could not verify:"
        f" {unverified}"
    )
    record(
        f"webhook deliveries/s ({label}, {threads} threads)", rate, "deliveries/s", command=COMMAND
    )
    record(
        f"webhook send p95 ({label}, {threads} threads)",
        pct(timings, 95),
        "ms",
        higher_is_better=False,
        command=COMMAND,
    )


def race(endpoint, receiver, n: int, racers: int) -> None:
    """Every delivery handed to `racers` threads at the same moment: each must be POSTed once."""
    from reviewapp.models import WebhookAttempt
    from reviewapp.webhooks.service import delivery_send

    ids = make_deliveries(endpoint, n)
    receiver.received.clear()
    outcomes: Counter = Counter()
    lock = threading.Lock()
    for delivery_id in ids:
        barrier = threading.Barrier(racers)

        def go(delivery_id=delivery_id, barrier=barrier):
            try:
                barrier.wait()
                status = delivery_send(delivery_id=delivery_id).status
                with lock:
                    outcomes[status] += 1
            finally:
                connection.close()

        threads = [threading.Thread(target=go) for _ in range(racers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    per_event = Counter(r.headers.get("ClaimDesk-Delivery") for r in receiver.received)
    doubles = sum(1 for count in per_event.values() if count > 1)
    attempts = WebhookAttempt.objects.filter(delivery_id__in=ids).count()
    print(
        f"race: {n} deliveries x {racers} simultaneous senders: {dict(outcomes)}; receiver got"
        f" {len(receiver.received)} POSTs for {len(per_event)} events; sent twice: {doubles};"
        f" attempt rows {attempts}"
    )
    record("webhook deliveries sent twice under racing senders", doubles, "deliveries", target=0,
           higher_is_better=False, command=COMMAND, deliveries=n, racers=racers)


def schedule(trials: int = 20000) -> None:
    """How long a dead endpoint is retried for, with the default settings (jitter included)."""
    from reviewapp.webhooks.service import backoff_seconds

    attempts = settings.WEBHOOK_MAX_ATTEMPTS
    spans = sorted(
        sum(backoff_seconds(a) for a in range(1, attempts)) / 3600 for _ in range(trials)
    )
    print(
        f"retry schedule: {attempts} attempts, backoff {settings.WEBHOOK_BACKOFF_SECONDS:g} s"
        f" doubling, capped at {settings.WEBHOOK_BACKOFF_MAX_SECONDS:g} s: first to last attempt"
        f" min {spans[0]:.2f} h, median {statistics.median(spans):.2f} h, max {spans[-1]:.2f} h"
    )
    record(
        "webhook retry span (default schedule, median)",
        statistics.median(spans),
        "h",
        command=COMMAND,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deliveries", type=int, default=400)
    parser.add_argument("--race", type=int, default=100, help="deliveries in the race test")
    args = parser.parse_args()
    settings.DATABASES["default"]["TEST"]["NAME"] = (
        settings.DATABASES["default"]["NAME"] + "_webhook_bench"
    )
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    old = setup_databases(verbosity=0, interactive=False)
    try:
        from reviewapp.models import ApiClient, WebhookEndpoint

        client = ApiClient.objects.create(name="bench", token_hash="b" * 64, token_prefix="cdk_b")
        with Receiver() as fast, Receiver(delay=0.05) as slow:
            endpoint = WebhookEndpoint.objects.create(
                client=client, url=fast.url, secret=WebhookEndpoint.new_secret()
            )
            fast.secret = slow.secret = endpoint.secret
            throughput(endpoint, fast, args.deliveries, 1, "instant receiver")
            throughput(endpoint, fast, args.deliveries, 4, "instant receiver")
            WebhookEndpoint.objects.filter(pk=endpoint.pk).update(url=slow.url)
            endpoint.refresh_from_db()
            throughput(endpoint, slow, args.deliveries // 4, 1, "50 ms receiver")
            throughput(endpoint, slow, args.deliveries // 4, 8, "50 ms receiver")
            WebhookEndpoint.objects.filter(pk=endpoint.pk).update(url=fast.url)
            endpoint.refresh_from_db()
            race(endpoint, fast, args.race, 4)
        schedule()
        print(f"({os.cpu_count()} cores, shared; the receivers run in this process too)")
    finally:
        connection.close()
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
