"""Settings come from the environment; a malformed value stops start-up naming the variable."""

import os
import secrets
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _start(*args, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in env}
    return subprocess.run(
        [sys.executable, "manage.py", "check", *args],
        cwd=ROOT,
        env=clean | {k: v for k, v in env.items() if v is not None},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "variable, value",
    [
        ("DEBUG", "maybe"),
        ("DATABASE_URL", "mysql://root@localhost/x"),
        ("DATABASE_URL", "not a url"),
        ("CELERY_BROKER_URL", "http://127.0.0.1:6379"),
        ("OPENAI_BASE_URL", "127.0.0.1:8080/v1"),
        ("JUDGE_BACKEND", "gpt"),
        ("JUDGE_TASK_TIME_LIMIT", "ten"),
        ("ALLOWED_HOSTS", "a,,b"),
        ("JUDGE_TIMEOUT_SECONDS", "0"),
        ("JUDGE_RATE_LIMIT_RPM", "lots"),
        ("JUDGE_MAX_IN_FLIGHT", "-1"),
        ("JUDGE_RATE_LIMIT_REDIS_URL", "http://127.0.0.1:6379"),
        ("API_RATE_LIMIT", "lots"),
        ("API_AUTH_FAILURE_LIMIT", "many"),
        ("API_RATE_LIMIT_REDIS_URL", "http://127.0.0.1:6379"),
        ("API_MAX_BODY_BYTES", "2MB"),
        ("CACHE_URL", "memcached://127.0.0.1:11211"),
    ],
)
def test_a_malformed_value_stops_start_up_naming_the_variable(variable, value):
    result = _start(**{variable: value})
    assert result.returncode != 0
    assert variable in result.stderr
    assert "ImproperlyConfigured" in result.stderr


def test_the_openai_backend_without_an_endpoint_stops_start_up():
    result = _start(JUDGE_BACKEND="openai", OPENAI_BASE_URL=None)
    assert result.returncode != 0
    assert "OPENAI_BASE_URL" in result.stderr


@pytest.mark.parametrize("limit", [{"JUDGE_RATE_LIMIT_RPM": "600"}, {"JUDGE_MAX_IN_FLIGHT": "64"}])
def test_a_fleet_limit_without_redis_stops_start_up(limit):
    # Kept per process, a limit would let every worker send the whole limit.
    result = _start(**limit, CELERY_BROKER_URL="memory://", JUDGE_RATE_LIMIT_REDIS_URL=None)
    assert result.returncode != 0
    assert "JUDGE_RATE_LIMIT_REDIS_URL" in result.stderr


def test_a_renamed_variable_still_works_under_its_old_name_with_a_warning():
    shown = (
        "import django; django.setup(); from django.conf import settings;"
        " print(settings.JUDGE_HOLD_SECONDS)"
    )
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("JUDGE_HOLD_MARGIN_SECONDS", "JUDGE_TASK_TIME_LIMIT")
    }
    result = subprocess.run(
        [sys.executable, "-c", shown],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean
        | {"DJANGO_SETTINGS_MODULE": "reviewapp.settings", "JUDGE_CLAIM_MARGIN_SECONDS": "45"},
    )
    assert result.returncode == 0, result.stderr
    assert "JUDGE_CLAIM_MARGIN_SECONDS is now called JUDGE_HOLD_MARGIN_SECONDS" in result.stderr
    default = subprocess.run(
        [sys.executable, "-c", shown],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean | {"DJANGO_SETTINGS_MODULE": "reviewapp.settings"},
    )
    assert int(result.stdout.split()[-1]) - int(default.stdout.split()[-1]) == 45 - 30


def test_well_formed_values_start():
    result = _start(
        DEBUG="yes", ALLOWED_HOSTS="claimdesk.example.org,localhost", JUDGE_TASK_TIME_LIMIT="400"
    )
    assert result.returncode == 0, result.stderr


def test_the_visibility_timeout_outlasts_the_hard_time_limit(settings):
    # Otherwise Redis would hand a slow but healthy task to a second worker.
    assert (
        settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
        > settings.CELERY_TASK_TIME_LIMIT
    )
    assert settings.JUDGE_HOLD_SECONDS > settings.CELERY_TASK_TIME_LIMIT


def test_the_celery_app_is_configured_for_at_least_once_delivery():
    from reviewapp.celery import app

    conf = app.conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_soft_time_limit < conf.task_time_limit


# Production: DEBUG off and nothing else about HTTPS said, so the secure defaults apply (the test
# run's own pyproject env turns them off; None removes a variable).
PRODUCTION = {
    "DEBUG": "false",
    "ALLOWED_HOSTS": "claimdesk.example.org",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "SECURE_SSL_REDIRECT": None,
    "SECURE_COOKIES": None,
    "SECURE_HSTS_SECONDS": None,
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": None,
    "SECURE_HSTS_PRELOAD": None,
    # set while the browser tests' Chromium runs; never in production
    "DJANGO_ALLOW_ASYNC_UNSAFE": (None),
}


def test_the_deploy_check_passes_under_production_settings():
    result = _start("--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize(
    "variable, value, warning",
    [
        ("SECRET_KEY", None, "security.W009"),  # the demo key
        ("SECURE_SSL_REDIRECT", "false", "security.W008"),
        ("SECURE_COOKIES", "false", "security.W012"),
        ("SECURE_HSTS_SECONDS", "0", "security.W004"),
        ("DEBUG", "true", "security.W018"),
    ],
)
def test_the_deploy_check_fails_when_a_production_setting_is_weakened(variable, value, warning):
    result = _start("--deploy", "--fail-level", "WARNING", **(PRODUCTION | {variable: value}))
    assert result.returncode != 0
    assert warning in result.stderr


def test_healthz_stays_on_http_while_everything_else_redirects_to_https(client, settings, db):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code == 200
    response = client.get("/queue/")
    assert response.status_code == 301 and response["Location"] == "https://testserver/queue/"


def test_an_empty_value_is_unset_so_a_secure_default_stays(monkeypatch):
    from reviewapp.env import env_bool

    monkeypatch.setenv("SECURE_SSL_REDIRECT", "")
    assert env_bool("SECURE_SSL_REDIRECT", True) is True
    monkeypatch.setenv("SECURE_SSL_REDIRECT", "off")
    assert env_bool("SECURE_SSL_REDIRECT", True) is False


def test_a_visibility_timeout_not_above_the_hard_time_limit_stops_start_up():
    result = _start(CELERY_BROKER_URL="redis://127.0.0.1:6379/13", JUDGE_TASK_TIME_LIMIT="300",
                    CELERY_VISIBILITY_TIMEOUT="300")
    assert result.returncode != 0
    assert (
        "CELERY_VISIBILITY_TIMEOUT=300 must be greater than JUDGE_TASK_TIME_LIMIT=300"
        in result.stderr
    )


def test_the_default_visibility_timeout_is_above_the_hard_time_limit():
    from django.conf import settings

    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert visibility > settings.CELERY_TASK_TIME_LIMIT > settings.CELERY_TASK_SOFT_TIME_LIMIT
    assert settings.CELERY_TASK_SOFT_TIME_LIMIT > settings.JUDGE_RETRY_BUDGET_SECONDS
    assert settings.JUDGE_HOLD_SECONDS > settings.CELERY_TASK_TIME_LIMIT
