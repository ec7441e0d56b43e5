"""/metrics: Prometheus series read from Postgres, behind METRICS_TOKEN, the same from any web
process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest
from django.contrib.auth.models import User
from prometheus_client.parser import text_string_to_metric_families

from reviewapp.models import Answer, JudgeRun, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from reviewapp.review import service as review_service
from reviewapp.api.clients import api_client_create
from tests import factories as make
from tests.conftest import _test_database_url
from tests.faultkit import free_port, wait_until

TOKEN = "metrics-token-for-tests"
ROOT = Path(__file__).resolve().parent.parent


def _series(text: str) -> dict[tuple[str, tuple], float]:
    """Every sample, keyed by its name and its sorted labels."""
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def _scrape(client) -> dict:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200 and response["Content-Type"].startswith(
        "text/plain; version=0.0.4"
    )
    return _series(response.content.decode())


def _world():
    """Two judged answers of one client (one flagged and decided), a failed run, a webhook
    attempt."""
    client = api_client_create(name="acme")[0]
    answers = []
    for external_id in ("a-1", "a-2"):
        answer = make.judged(client=client, external_id=external_id)
        answers.append(Answer.objects.get(pk=answer.pk))
    JudgeRun.objects.create(
        answer=answers[1],
        profile="claim_audit",
        prompt_version="v1",
        backend="openai",
        model="gpt-4o-mini",
        config_key="k",
        status="failed",
        prompt_tokens=120,
        completion_tokens=30,
        error="judge timed out (soft time limit)",
    )
    reviewer = make.user("rita", "reviewer")
    flagged = answers[0].claims.exclude(label="SUPPORTED").first()
    Answer.objects.filter(pk=answers[0].pk).update(review_status="in_review")
    assert review_service.lease_take(user=reviewer, answer=Answer.objects.get(pk=answers[0].pk))
    review_service.claim_decide(
        user=reviewer,
        claim=flagged,
        decision="confirm",
        label=None,
        note="",
        expected_version=flagged.version,
    )
    # held, not decided yet
    Answer.objects.filter(pk=answers[1].pk).update(review_status="in_review")
    assert review_service.lease_take(user=reviewer, answer=Answer.objects.get(pk=answers[1].pk))
    endpoint = WebhookEndpoint.objects.create(
        client=client, url="https://hooks.example.com/h", secret="whsec_x"
    )
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint,
        answer=answers[0],
        event="answer.judged",
        event_id="evt_1",
        payload={},
        status="failed",
    )
    WebhookAttempt.objects.create(delivery=delivery, number=1, http_status=503, error="HTTP 503")
    return answers


@pytest.mark.django_db
def test_metrics_are_off_without_a_token_and_refuse_a_wrong_one_even_to_a_signed_in_admin(
    client, settings
):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404
    settings.METRICS_TOKEN = TOKEN
    admin = User.objects.create_user("ada", password="pw-ada-123", is_staff=True, is_superuser=True)
    client.force_login(admin)
    for header in (
        {},
        {"HTTP_AUTHORIZATION": "Bearer wrong"},
        {"HTTP_AUTHORIZATION": "Bearer " + TOKEN + "é"},
    ):
        response = client.get("/metrics", **header)
        assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Bearer")
    assert client.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 405


@pytest.mark.django_db
def test_metrics_count_what_the_database_holds(client, settings):
    settings.METRICS_TOKEN = TOKEN
    answers = _world()
    series = _scrape(client)

    assert series[("claimdesk_answers_ingested_total", (("client", "acme"),))] == 2
    assert series[("claimdesk_answers", (("status", "judged"),))] == 2
    assert (
        series[("claimdesk_judge_runs_total", (("backend", "offline"), ("status", "succeeded")))]
        == 2
    )
    assert (
        series[
            ("claimdesk_judge_failures_total", (("reason", "judge timed out (soft time limit)"),))
        ]
        == 1
    )
    assert (
        series[("claimdesk_llm_tokens_total", (("kind", "prompt"), ("model", "gpt-4o-mini")))]
        == 120
    )
    latency = JudgeRun.objects.filter(status="succeeded").values_list("latency_ms", flat=True)
    assert series[("claimdesk_judge_latency_seconds_count", (("backend", "offline"),))] == 2
    assert series[
        ("claimdesk_judge_latency_seconds_sum", (("backend", "offline"),))
    ] == pytest.approx(sum(latency) / 1000)
    assert (
        series[("claimdesk_judge_latency_seconds_bucket", (("backend", "offline"), ("le", "+Inf")))]
        == 2
    )
    assert (
        series[
            ("claimdesk_review_decisions_total", (("decision", "confirm"), ("mode", "explicit")))
        ]
        == 1
    )
    # one decided but not finished, one only taken
    assert series[("claimdesk_leases_held", ())] == 2
    waiting = Answer.objects.filter(review_status="in_review").count()
    assert series[("claimdesk_review_queue_depth", ())] == waiting >= 1
    assert series[("claimdesk_review_queue_oldest_age_seconds", ())] > 0
    assert series[("claimdesk_webhook_deliveries", (("status", "failed"),))] == 1
    assert series[("claimdesk_webhook_attempts_total", (("outcome", "refused"),))] == 1
    assert series[("claimdesk_workers", (("state", "live"),))] == 0
    assert answers[0].client.name == "acme"


@pytest.mark.django_db(transaction=True)
def test_two_gunicorn_workers_serve_the_same_series(tmp_path, settings):
    settings.METRICS_TOKEN = TOKEN
    _world()
    port = free_port()
    access_log = tmp_path / "access.log"
    env = os.environ | {
        "DATABASE_URL": _test_database_url(),
        "METRICS_TOKEN": TOKEN,
        "DEBUG": "false",
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "reviewapp.wsgi",
            "--workers",
            "2",
            "--bind",
            f"127.0.0.1:{port}",
            "--access-logfile",
            str(access_log),
            "--access-logformat",
            "%(p)s",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        wait_until(lambda: _answers(url), timeout=30, what="gunicorn to serve")
        bodies = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until both workers have answered at least once
            bodies.append(
                _without_clock(httpx.get(url, headers={"Authorization": f"Bearer {TOKEN}"}).text)
            )
            if len(set(re.findall(r"<(\d+)>", access_log.read_text()))) >= 2:
                break
        pids = set(re.findall(r"<(\d+)>", access_log.read_text()))
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert len(pids) == 2, f"one worker served every scrape: {pids}"
    assert len(set(bodies)) == 1 and "claimdesk_answers_ingested_total" in bodies[0]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    except httpx.HTTPError:
        return False


def _without_clock(text: str) -> str:
    """The exposition without the series that move with the clock alone."""
    return "\n".join(line for line in text.splitlines() if "oldest_age_seconds" not in line)


@pytest.mark.django_db
def test_waits_for_a_fleet_limit_are_counted_across_the_fleet(client, settings):
    import redis

    from judges.ratelimit import WAITS_KEY, RateLimiter

    settings.METRICS_TOKEN = TOKEN
    settings.JUDGE_RATE_LIMIT_REDIS_URL = settings.CELERY_BROKER_URL
    store = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    store.delete(WAITS_KEY)
    limiter = RateLimiter(
        settings.CELERY_BROKER_URL, key="judges:llm-rate:test|model", rpm=1, window_s=0.3
    )
    limiter.reset()
    limiter.acquire()  # admitted at once: not a wait
    limiter.acquire()  # waits for the window to move
    series = _scrape(client)
    store.delete(WAITS_KEY)
    assert series[("claimdesk_limit_waits_total", (("limit", "judges:llm-rate:test|model"),))] == 1
    assert (
        0.1
        < series[("claimdesk_limit_wait_seconds_total", (("limit", "judges:llm-rate:test|model"),))]
        < 5
    )
