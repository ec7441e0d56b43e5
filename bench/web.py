"""The web side of the app as the benchmarks serve it: gunicorn on a free loopback port, with
production settings behind a TLS-terminating proxy (it sets X-Forwarded-Proto, which the
benchmarks' clients send too, so the HTTPS redirect lets plain-http loopback requests through).
The per-token rate limit stays on, raised far above any offered load: its Redis round trips are
part of what a request costs, while the production default (600/minute) would refuse most posts."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROXY_HEADERS = {"X-Forwarded-Proto": "https"}
BENCH_RATE_LIMIT = "1000000/minute"


def start_gunicorn(port: int, worker_class: str, env: dict, *, workers: int = 2, threads: int = 4,
                   start_within: float = 120) -> subprocess.Popen:
    """gunicorn serving the app with `env` over os.environ (CELERY_BROKER_URL, CELERY_QUEUE, ...);
    worker_class "uvicorn" serves reviewapp.asgi as compose does. A start may take `start_within`
    seconds: at load 12-16 (six engineers on 2 cores) a uvicorn worker took more than 30."""
    env = os.environ | {"ALLOWED_HOSTS": "127.0.0.1", "LOG_LEVEL": "WARNING", "DEBUG": "false",
                        "SECURE_PROXY_SSL_HEADER": "true", "API_RATE_LIMIT": BENCH_RATE_LIMIT} | env
    app = "reviewapp.wsgi:application"
    if (
        worker_class == "uvicorn"
    ):  # as docker-compose.yml runs the web: ASGI, threads on a pool each
        app, worker_class = "reviewapp.asgi:application", "uvicorn_worker.UvicornWorker"
        env = {"DATABASE_POOL_SIZE": "8"} | env
    args = [
        str(Path(sys.executable).parent / "gunicorn"),
        app,
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        worker_class,
    ]
    if worker_class == "gthread":
        args += ["--threads", str(threads)]
    server = subprocess.Popen(
        args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + start_within
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited: {server.stderr.read().decode()[-2000:]}")
        try:
            probe = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/v1/openapi.json", headers=PROXY_HEADERS
            )
            urllib.request.urlopen(probe, timeout=1)
            return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit(f"gunicorn did not answer within {start_within:.0f} s")


def stop_gunicorn(server: subprocess.Popen) -> None:
    # gthread workers can sit out gunicorn's 30 s graceful timeout after the run; the figures are
    # in.
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()  # the master; its workers notice it is gone and exit
        server.wait(timeout=30)
