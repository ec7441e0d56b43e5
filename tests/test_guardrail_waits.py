"""Guardrail waits must not freeze the web tier (issue 28, item 1): the web server started exactly
as docker-compose.yml starts it, with no judge worker running (a paused or backlogged judge), so
every `POST /api/v1/answers?wait=S` waits its whole S seconds."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2 as httpx
import pytest
import redis
import yaml
from django.test import Client

from reviewapp.api.clients import api_client_create
from tests import factories as make
from tests.conftest import _test_database_url
from tests.faultkit import free_port, wait_until

ROOT = Path(__file__).resolve().parent.parent
QUEUE = f"nobody-consumes-{os.getpid()}"  # the judge tasks the server sends wait here, unjudged
pytestmark = pytest.mark.django_db(transaction=True)


def compose_web_argv(port: int, workers: int | None = None) -> list[str]:
    """The gunicorn step of compose's web command, bound to a loopback port (and with `workers`)."""
    command = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"][
        "command"
    ]
    steps = (
        [shlex.split(part) for part in command[2].split("&&")] if command[0] == "sh" else [command]
    )
    argv = next(step for step in steps if Path(step[0]).name == "gunicorn")
    for i, arg in enumerate(argv):
        if arg in ("--bind", "-b"):
            argv[i + 1] = f"127.0.0.1:{port}"
        if arg in ("--workers", "-w") and workers:
            argv[i + 1] = str(workers)
    return [sys.executable, "-m", "gunicorn", *argv[1:]]


def start_web(tmp_path, workers: int | None = None, **env) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = open(tmp_path / f"web-{port}.log", "w")
    server = subprocess.Popen(
        compose_web_argv(port, workers),
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=os.environ
        | {
            "DATABASE_URL": _test_database_url(),
            "DEBUG": "false",
            "SECURE_SSL_REDIRECT": "false",
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATABASE_POOL_SIZE": "4",
            "CELERY_QUEUE": QUEUE,
        }
        | env,
    )
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        try:
            return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(answers, timeout=40, what="the compose web command to serve")
    return server, base


def stop_web(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    from django.conf import settings

    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(QUEUE)


def post_waiting(base: str, token: str, wait: float) -> tuple[int, float]:
    started = time.monotonic()
    response = httpx.post(
        f"{base}/api/v1/answers?wait={wait}",
        headers={"Authorization": f"Bearer {token}"},
        content=json.dumps(make.fare_payload(external_id=uuid.uuid4().hex)),
        timeout=wait + 20,
    )
    return response.status_code, time.monotonic() - started


def reviewer_cookies(name: str) -> dict[str, str]:
    signed_in = Client()
    signed_in.force_login(make.user(name, "reviewer"))
    return {"sessionid": signed_in.cookies["sessionid"].value}


def test_two_waiting_clients_do_not_slow_the_queue(tmp_path):
    _, token = api_client_create(name="guardrail")
    cookies = reviewer_cookies("rita")
    server, base = start_web(tmp_path)
    try:
        idle = httpx.get(f"{base}/queue/", cookies=cookies, timeout=30)
        assert idle.status_code == 200
        with ThreadPoolExecutor(2) as pool:
            waits = [pool.submit(post_waiting, base, token, 8) for _ in range(2)]
            time.sleep(1.0)  # both are waiting now (their ingest takes milliseconds)
            started = time.monotonic()
            queue = httpx.get(f"{base}/queue/", cookies=cookies, timeout=30)
            took = time.monotonic() - started
            replies = [wait.result() for wait in waits]
    finally:
        stop_web(server)
    assert queue.status_code == 200
    assert took < 2.0, f"/queue/ took {took:.1f} s behind two waiting clients"
    # Nothing judges them: each waited its time and got the 202.
    assert [status for status, _ in replies] == [202, 202] and all(
        s >= 7.5 for _, s in replies
    ), replies


def test_waits_past_the_process_and_token_caps_are_answered_202_at_once(tmp_path):
    _, first = api_client_create(name="first")
    _, second = api_client_create(name="second")
    _, third = api_client_create(name="third")
    server, base = start_web(
        tmp_path, workers=1, API_WAITS_PER_PROCESS="2", API_WAITS_PER_TOKEN="1"
    )
    try:
        with ThreadPoolExecutor(4) as pool:
            held = pool.submit(post_waiting, base, first, 6)
            time.sleep(1.0)
            token_over = post_waiting(base, first, 6)  # the token's one wait is taken
            other = pool.submit(post_waiting, base, second, 6)
            time.sleep(1.0)
            process_over = post_waiting(base, third, 6)  # the process's two are taken
            held, other = held.result(), other.result()
    finally:
        stop_web(server)
    assert token_over[0] == 202 and token_over[1] < 1.5, token_over
    assert process_over[0] == 202 and process_over[1] < 1.5, process_over
    assert held[0] == other[0] == 202 and held[1] >= 5.5 and other[1] >= 5.5, (held, other)


def test_a_chunked_body_past_the_cap_is_refused_as_it_arrives_under_asgi():
    # Django's ASGI handler spools the whole body before middleware runs: without the cap a body
    # of unknown length would be read to disk without end.
    from asgiref.sync import async_to_sync
    from django.conf import settings

    from reviewapp.asgi import application

    chunk, sent, replies = b"x" * 65536, [0], []

    async def receive():
        sent[0] += 1
        # 655 MB offered
        return {
            "type": "http.request",
            "body": chunk,
            "more_body": sent[0] < 10_000,
        }

    async def send(message):
        replies.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/v1/answers",
        "raw_path": b"/api/v1/answers",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"transfer-encoding", b"chunked")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    async_to_sync(application)(scope, receive, send)
    assert replies[0]["status"] == 413
    # stopped reading at the cap
    assert sent[0] * len(chunk) <= settings.API_MAX_BODY_BYTES + 2 * len(chunk)
