from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
# Modules with tests of these marks run for minutes, on subprocesses and servers.
_SLOW_MARKS = ("faults", "bench", "browser", "worker")


def pytest_collection_modifyitems(config, items):
    """Modules with slow tests first, each module's tests in their own order: under pytest-xdist
    (`make test`, one module per process at a time) the long ones then start at once instead of
    leaving one process busy at the end while the other idles."""
    slow = {item.module.__name__ for item in items
            if any(item.get_closest_marker(mark) for mark in _SLOW_MARKS)}
    items.sort(key=lambda item: item.module.__name__ not in slow)  # sort is stable


@pytest.fixture(scope="session", autouse=True)
def _flush_may_truncate_history():
    """Transactional tests are cleaned up with Django's flush, one TRUNCATE of every table; the
    append-only triggers (migration 0009) refuse that unless the transaction allows it on purpose.
    """
    from django.db.backends.postgresql.operations import DatabaseOperations

    original = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, **kwargs):
        statements = original(self, style, tables, **kwargs)
        return (
            ["SET LOCAL claimdesk.allow_truncate = 'on';", *statements]
            if statements
            else statements
        )

    DatabaseOperations.sql_flush = sql_flush
    yield
    DatabaseOperations.sql_flush = original


@pytest.fixture(autouse=True)
def _empty_cache():
    """Cached figures (calibration, queue counters) must not leak from one test into the next."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _no_stray_worker_takes_this_tests_answers(request):
    """The session's celery worker (started by the first test that asks for `celery_worker`) keeps
    consuming the default queue for the rest of the run. A test whose transactions commit (live
    server, transaction=True) but that judges in-process would race that worker for its own
    answers, so its tasks go to a queue nobody consumes; worker tests keep the real one."""
    marker = request.node.get_closest_marker("django_db")
    commits = "live_server" in request.fixturenames or bool(
        marker and marker.kwargs.get("transaction")
    )
    if (
        not commits
        or "celery_worker" in request.fixturenames
        or request.node.get_closest_marker("worker")
    ):
        yield
        return
    # Through Django's settings, which the Celery app reads on each access: setting app.conf
    # itself would shadow every later test's own queue setting for the rest of the session.
    settings = request.getfixturevalue("settings")
    unconsumed = settings.CELERY_TASK_DEFAULT_QUEUE = (
        f"{settings.CELERY_TASK_DEFAULT_QUEUE}-unconsumed-{os.getpid()}"
    )
    yield
    if settings.CELERY_BROKER_URL.startswith("redis"):
        import redis

        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(unconsumed)


@pytest.fixture(autouse=True)
def _no_wrong_token_counts_from_earlier_tests(settings):
    """Wrong tokens are counted per address in Redis for a minute, and every test client is
    127.0.0.1: one test's wrong tokens must not lock the next test out."""
    # a test may change them
    storage, limit = (
        settings.API_RATE_LIMIT_STORAGE_URL,
        settings.API_AUTH_FAILURE_LIMIT,
    )
    yield
    from limits import parse

    from reviewapp.api import ratelimit

    for used in {limit, settings.API_AUTH_FAILURE_LIMIT} - {None}:
        ratelimit._limiter(storage).clear(parse(used), "auth-failure:127.0.0.1")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def rita(db):
    from tests import factories

    return factories.user("rita", "reviewer")


@pytest.fixture
def ron(db):
    from tests import factories

    return factories.user("ron", "reviewer")


@pytest.fixture
def reviewer(client, rita):
    """rita, signed in on `client`."""
    client.force_login(rita)
    return rita


@pytest.fixture
def private_ok(settings):
    """Webhook receivers in tests listen on 127.0.0.1."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True

@pytest.fixture
def hook_api(client, api_token):
    """A Django test client that registers, shows and deletes the token's webhook."""
    headers = {"Authorization": f"Bearer {api_token}"}

    class HookApi:
        def put(self, **payload):
            return client.put(
                "/api/v1/webhook",
                data=json.dumps(payload),
                content_type="application/json",
                headers=headers,
            )

        def get(self):
            return client.get("/api/v1/webhook", headers=headers)

        def delete(self):
            return client.delete("/api/v1/webhook", headers=headers)

    return HookApi()


@pytest.fixture
def private_refused(settings):
    """Webhook URLs must resolve to public addresses, as in production."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False


@pytest.fixture
def api_token(db):
    from reviewapp.api.clients import api_client_create

    _, token = api_client_create(name="fares-bot")
    return token


@pytest.fixture
def api(client, api_token):
    """A Django test client that speaks to the API with a valid bearer token."""

    class Api:
        def post(self, payload, token=api_token):
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            return client.post(
                "/api/v1/answers",
                data=json.dumps(payload),
                content_type="application/json",
                headers=headers,
            )

        def get(self, answer_id, token=api_token):
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            return client.get(f"/api/v1/answers/{answer_id}", headers=headers)

    return Api()


def _test_database_url() -> str:
    from django.db import connection

    return database_url(connection.settings_dict["NAME"])


def database_url(name: str) -> str:
    """A database of that name on the suite's Postgres (tests/servers.py chose the server)."""
    from django.db import connection

    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{name}"


def redis_url(db: int) -> str:
    """Database `db` of the suite's Redis (tests/servers.py chose the server)."""
    from urllib.parse import urlsplit

    from django.conf import settings

    return urlsplit(settings.CELERY_BROKER_URL)._replace(path=f"/{db}").geturl()


@pytest.fixture(scope="session")
def fake_llm_server():
    """One fake OpenAI-compatible endpoint for the session; the worker subprocess knows its URL."""
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake_llm(fake_llm_server):
    fake_llm_server.reset()
    yield fake_llm_server
    fake_llm_server.reset()


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker, tmp_path_factory, fake_llm_server):
    """A real `celery worker` subprocess on the Redis broker, judging into the test database.

    It judges offline by default; a Policy naming the openai backend sends it to the fake LLM.
    """
    from django.conf import settings

    log = tmp_path_factory.mktemp("worker") / "worker.log"
    env = os.environ | {
        "DATABASE_URL": _test_database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_QUEUE": settings.CELERY_TASK_DEFAULT_QUEUE,
        # Short limits so a test about claims and retries does not wait minutes.
        "JUDGE_TASK_SOFT_TIME_LIMIT": "15",
        "JUDGE_TASK_TIME_LIMIT": "20",
        "JUDGE_RETRY_BUDGET_SECONDS": "10",
        "JUDGE_BACKEND": "offline",
        "OPENAI_BASE_URL": fake_llm_server.base_url,
        "OPENAI_API_KEY": "test-key",
        "JUDGE_MODEL": "fake-judge",
        # Webhook receivers in tests listen on 127.0.0.1; retries come fast and give up soon.
        "WEBHOOK_ALLOW_PRIVATE_URLS": "true",
        "WEBHOOK_MAX_ATTEMPTS": "3",
        "WEBHOOK_BACKOFF_SECONDS": "0.2",
        "WEBHOOK_TIMEOUT_SECONDS": "5",
    }
    from tests.faultkit import Worker

    worker = Worker(env=env, log=log, pool="threads", concurrency=4, name="test")
    try:
        yield worker.start()
    finally:
        worker.stop()
        import redis

        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(settings.CELERY_TASK_DEFAULT_QUEUE)


def wait_for(condition, timeout=30.0, interval=0.1):
    """Poll until condition() is truthy; return its value or fail with what was last seen."""
    from tests.faultkit import wait_until

    try:
        return wait_until(condition, timeout, interval)
    except TimeoutError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per browser test module. Not one for the session: playwright's sync
    API keeps an asyncio loop running in this thread while it is open, and Django's test client
    then cannot call an async view (the guardrail POST) in the modules that follow."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="needs the playwright Python package"
    )
    # Playwright's sync API keeps an asyncio loop running in this thread, and Django refuses ORM
    # calls from a thread with a running loop. The ORM calls here are plain synchronous test code.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_api.sync_playwright() as playwright:
            chromium = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            try:
                yield chromium
            finally:
                chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def run_coroutine(coroutine):
    """asyncio.run in a thread of its own: the browser tests' playwright (its sync API) keeps an
    event loop running in the main thread for the rest of the session, where asyncio.run refuses to
    start."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@contextlib.contextmanager
def private_worker(tmp_path, monkeypatch, *, name: str, threads: int, latency: float, **env):
    """A real thread-pool worker on a queue of its own, beside a fake LLM answering GOOD after
    `latency` s; answers ingested meanwhile go to that queue. `env`: the worker's extra settings."""
    from django.conf import settings

    from reviewapp import enqueue
    from reviewapp.judging.tasks import judge_answer
    from tests.fake_openai import FakeOpenAI, Reply
    from tests.faultkit import Worker
    from tests.judges.factories import GOOD

    queue = f"{name}-test-{os.getpid()}"
    with FakeOpenAI(default=Reply.ok(GOOD), latency=latency) as fake:
        worker_env = (
            os.environ
            | {
                "DATABASE_URL": _test_database_url(),
                "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
                "CELERY_QUEUE": queue,
                "OPENAI_BASE_URL": fake.base_url,
                "OPENAI_API_KEY": "test-key",
                "JUDGE_MODEL": "fake-judge",
                "JUDGE_BACKEND": "offline",
                "JUDGE_RETRY_BUDGET_SECONDS": "20",
            }
            | env
        )
        monkeypatch.setattr(
            enqueue,
            "judge_answer_later",
            lambda answer_id: judge_answer.apply_async((answer_id,), queue=queue),
        )
        worker = Worker(
            env=worker_env,
            log=tmp_path / "worker.log",
            pool="threads",
            concurrency=threads,
            name=name,
        )
        try:
            worker.start()
            yield fake
        finally:
            worker.stop()
            import redis

            redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(
                queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
