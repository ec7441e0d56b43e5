"""Prometheus metrics, read from Postgres at scrape time.

Every figure is computed from the rows the app already keeps (answers, judge runs, reviews,
webhook deliveries, heartbeats; the fleet limits' waits from their Redis) rather than counted in
process memory: web processes under gunicorn and Celery workers on other hosts all write the same
database, so any web process serves the same series, with no multiprocess directory to share and
nothing lost when a process restarts. Totals are `_total` counters over the rows kept; they drop
only when rows are deleted.
"""

from __future__ import annotations

from collections.abc import Iterator

import redis
from django.conf import settings
from django.db.models import Count, Min, Q, Sum
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from judges.ratelimit import waits_recorded
from reviewapp.models import Answer, JudgeRun, Review, WebhookAttempt, WebhookDelivery
from reviewapp.judging.liveness import worker_status

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
ATTEMPT_BUCKETS = (1, 2, 3, 5, 8)
# A failed run's reason is free text (it may quote a model's message): the part before its first
# colon names the kind of failure; the commonest kinds are listed, the rest summed as "other".
FAILURE_REASONS_SHOWN = 20


def _answers() -> Iterator[Metric]:
    ingested = CounterMetricFamily(
        "claimdesk_answers_ingested", "Answers posted by clients", labels=["client"]
    )
    for client, n in (Answer.objects.exclude(client=None).values_list("client__name")
                      .annotate(n=Count("*")).order_by("client__name")):
        ingested.add_metric([client], n)
    yield ingested
    by_status = GaugeMetricFamily(
        "claimdesk_answers", "Answers by judging status", labels=["status"]
    )
    counts = dict(
        Answer.objects.exclude(client=None).values_list("status").annotate(n=Count("*")).order_by()
    )
    for status in Answer.Status.values:
        by_status.add_metric([status], counts.get(status, 0))
    yield by_status
    totals = Answer.objects.aggregate(requeued=Sum("sweep_count"), lost=Sum("lost_count"))
    yield CounterMetricFamily(
        "claimdesk_sweeper_requeues",
        "Answers the sweeper queued again after a lost " "or stalled judging",
        value=totals["requeued"] or 0,
    )
    yield CounterMetricFamily("claimdesk_workers_lost", "Times a worker judging an answer was lost",
                              value=totals["lost"] or 0)


def _judge_runs() -> Iterator[Metric]:
    runs = CounterMetricFamily(
        "claimdesk_judge_runs", "Judge runs by outcome", labels=["backend", "status"]
    )
    for backend, status, n in (
        JudgeRun.objects.values_list("backend", "status")
        .annotate(n=Count("*"))
        .order_by("backend", "status")
    ):
        runs.add_metric([backend, status], n)
    yield runs

    failures = CounterMetricFamily(
        "claimdesk_judge_failures", "Failed judge runs by kind of reason", labels=["reason"]
    )
    kinds: dict[str, int] = {}
    for error, n in (
        JudgeRun.objects.filter(status=JudgeRun.Status.FAILED)
        .values_list("error")
        .annotate(n=Count("*"))
        .order_by()
    ):
        kind = (error or "unknown").partition(":")[0].strip()[:80] or "unknown"
        kinds[kind] = kinds.get(kind, 0) + n
    ranked = sorted(kinds.items(), key=lambda item: (-item[1], item[0]))
    for kind, n in ranked[:FAILURE_REASONS_SHOWN]:
        failures.add_metric([kind], n)
    if rest := sum(n for _, n in ranked[FAILURE_REASONS_SHOWN:]):
        failures.add_metric(["other"], rest)
    yield failures

    succeeded = JudgeRun.objects.filter(status=JudgeRun.Status.SUCCEEDED)
    yield _histogram(
        "claimdesk_judge_latency_seconds",
        "Judge latency of succeeded runs",
        succeeded,
        "latency_ms",
        [(bound, bound * 1000) for bound in LATENCY_BUCKETS_S],
        scale=1000,
    )
    yield _histogram(
        "claimdesk_judge_attempts",
        "LLM calls per succeeded run (1 = no retry)",
        succeeded,
        "attempts",
        [(bound, bound) for bound in ATTEMPT_BUCKETS],
    )

    tokens = CounterMetricFamily(
        "claimdesk_llm_tokens", "LLM tokens used by judge runs", labels=["model", "kind"]
    )
    for model, prompt, completion in (
        JudgeRun.objects.exclude(backend="offline")
        .values_list("model")
        .annotate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
        .order_by("model")
    ):
        tokens.add_metric([model, "prompt"], prompt or 0)
        tokens.add_metric([model, "completion"], completion or 0)
    yield tokens


def _histogram(name: str, documentation: str, runs, field: str, buckets: list[tuple[float, float]],
               scale: float = 1) -> Metric:
    """One query per histogram: a count per bucket bound (cumulative, as Prometheus wants), by
    backend."""
    family = HistogramMetricFamily(name, documentation, labels=["backend"])
    measured = runs.exclude(**{f"{field}__isnull": True})
    aggregates = {
        f"le{i}": Count("pk", filter=Q(**{f"{field}__lte": raw}))
        for i, (_, raw) in enumerate(buckets)
    }
    for row in (
        measured.values("backend")
        .annotate(total=Sum(field), n=Count("*"), **aggregates)
        .order_by("backend")
    ):
        counts = [(str(bound), row[f"le{i}"]) for i, (bound, _) in enumerate(buckets)] + [
            ("+Inf", row["n"])
        ]
        family.add_metric([row["backend"]], counts, sum_value=(row["total"] or 0) / scale)
    return family


def _review() -> Iterator[Metric]:
    now = timezone.now()
    waiting = Answer.objects.filter(review_status=Answer.ReviewStatus.IN_REVIEW)
    figures = waiting.aggregate(n=Count("*"), oldest=Min("created_at"),
                                leased=Count("pk", filter=Answer.live_lease(now)))
    yield GaugeMetricFamily(
        "claimdesk_review_queue_depth", "Answers waiting for review", value=figures["n"]
    )
    oldest = (now - figures["oldest"]).total_seconds() if figures["oldest"] else 0
    yield GaugeMetricFamily(
        "claimdesk_review_queue_oldest_age_seconds",
        "Age of the oldest answer waiting for review (0 when none waits)",
        value=oldest,
    )
    yield GaugeMetricFamily(
        "claimdesk_leases_held", "Answers a reviewer holds a live lease on", value=figures["leased"]
    )
    decisions = CounterMetricFamily(
        "claimdesk_review_decisions",
        "Reviewers' decisions on claims, made on the "
        "claim (explicit) or accepted by finishing (bulk)",
        labels=["decision", "mode"],
    )
    for decision, mode, n in (
        Review.objects.values_list("decision", "decision_mode")
        .annotate(n=Count("*"))
        .order_by("decision", "decision_mode")
    ):
        decisions.add_metric([decision, mode], n)
    yield decisions


def _webhooks() -> Iterator[Metric]:
    deliveries = GaugeMetricFamily(
        "claimdesk_webhook_deliveries", "Webhook deliveries by state", labels=["status"]
    )
    counts = dict(WebhookDelivery.objects.values_list("status").annotate(n=Count("*")).order_by())
    for status in WebhookDelivery.Status.values:
        deliveries.add_metric([status], counts.get(status, 0))
    yield deliveries
    attempts = CounterMetricFamily(
        "claimdesk_webhook_attempts", "Webhook POSTs by outcome", labels=["outcome"]
    )
    outcome = WebhookAttempt.objects.aggregate(
        delivered=Count("pk", filter=Q(http_status__gte=200, http_status__lt=300)),
        refused=Count(
            "pk",
            filter=Q(http_status__isnull=False) & ~Q(http_status__gte=200, http_status__lt=300),
        ),
        not_connected=Count("pk", filter=Q(http_status__isnull=True, finished_at__isnull=False)),
    )
    for name, n in outcome.items():
        attempts.add_metric([name], n)
    yield attempts


def _fleet() -> Iterator[Metric]:
    status = worker_status()
    workers = GaugeMetricFamily(
        "claimdesk_workers",
        "Workers by liveness (canary consumed in time or not)",
        labels=["state"],
    )
    stale = len(status["stale_workers"])
    workers.add_metric(["live"], len(status["workers"]) - stale)
    workers.add_metric(["stale"], stale)
    yield workers
    yield GaugeMetricFamily(
        "claimdesk_beat_stale",
        "1 when beat has not dispatched for two canary intervals",
        value=int(status["beat"]["stale"]),
    )
    yield GaugeMetricFamily(
        "claimdesk_answers_stuck", "Answers judging past their hold", value=status["stuck_answers"]
    )


def _limit_waits() -> Iterator[Metric]:
    """The fleet's rate and in-flight limits keep their waits in Redis, beside the limits."""
    if not settings.JUDGE_RATE_LIMIT_REDIS_URL:
        return
    try:
        waits = waits_recorded(
            redis.Redis.from_url(settings.JUDGE_RATE_LIMIT_REDIS_URL, socket_timeout=2)
        )
    except redis.RedisError:
        return
    count = CounterMetricFamily(
        "claimdesk_limit_waits",
        "Judgings that waited for a fleet limit (LLM rate, " "LLM in flight, per client)",
        labels=["limit"],
    )
    seconds = CounterMetricFamily(
        "claimdesk_limit_wait_seconds", "Seconds spent waiting for a fleet limit", labels=["limit"]
    )
    for key, (n, waited) in waits.items():
        count.add_metric([key], n)
        seconds.add_metric([key], waited)
    yield count
    yield seconds


class DatabaseCollector:
    def collect(self) -> Iterator[Metric]:
        for part in (_answers, _judge_runs, _review, _webhooks, _fleet, _limit_waits):
            yield from part()


_registry = CollectorRegistry(auto_describe=False)
_registry.register(DatabaseCollector())


def exposition() -> bytes:
    """The Prometheus text exposition of every series, computed now."""
    return generate_latest(_registry)
