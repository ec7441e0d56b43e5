"""pytest plugin (pyproject.toml: `-p tests.servers`): the Postgres and Redis the suite talks to.

DATABASE_URL / CELERY_BROKER_URL when set; else the servers answering on 127.0.0.1:5432 / 6379;
else throwaway ones from the wheels, started here for the run and removed after it
(reviewapp/embedded.py). It runs before pytest-django reads the settings, and the URLs go into
the environment, so worker and manage.py subprocesses of the tests use the same servers.

Under pytest-xdist (`make test` runs two processes) the controller picks the servers and its
processes inherit them; each process then takes a Redis database of its own (its broker queue,
cache and rate-limit counters) and a deployment name of its own (pub/sub channels are server-wide),
while pytest-django gives each its own test database (test_<name>_gw<N>).
"""

from __future__ import annotations

import contextlib
import os
from urllib.parse import urlsplit

import pytest

from reviewapp import embedded

_servers = contextlib.ExitStack()
# Redis database 14 and down: a shared local Redis may hold other data in the low ones.
_BROKER_DB = 14


def _own_redis_database(url: str, process: int) -> str:
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    return parts._replace(path=f"/{(base - process) % 16}").geturl()


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    _servers.enter_context(embedded.servers_in_environment(use_local=True, broker_db=_BROKER_DB))
    # The test process and the worker subprocesses it starts (on the test database) must hear the
    # same channels, which by default would be named after two different databases.
    os.environ.setdefault("DEPLOYMENT_NAME", f"tests-{os.getpid()}")
    process = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1, ... in xdist's processes
    if process:
        os.environ["CELERY_BROKER_URL"] = _own_redis_database(
            os.environ["CELERY_BROKER_URL"], int(process[2:])
        )
        os.environ["DEPLOYMENT_NAME"] += f"-{process}"


def pytest_unconfigure(config):
    _servers.close()
