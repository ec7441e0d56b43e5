"""pytest plugin (pyproject.toml: `-p tests.servers`): the Postgres and Redis the suite talks to.

DATABASE_URL / CELERY_BROKER_URL when set; else the servers answering on 127.0.0.1:5432 / 6379;
else throwaway ones from the wheels, started here for the run and removed after it
(reviewapp/embedded.py). It runs before pytest-django reads the settings, and the URLs go into
the environment, so worker and manage.py subprocesses of the tests use the same servers.
"""

from __future__ import annotations

import contextlib

import pytest

from reviewapp import embedded

_servers = contextlib.ExitStack()


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # Redis database 14: a shared local Redis may hold other data in the low ones.
    _servers.enter_context(embedded.servers_in_environment(use_local=True, broker_db=14))


def pytest_unconfigure(config):
    _servers.close()
