"""docker-compose.yml and the Dockerfile: the services, their healthchecks and start order, the
settings they pass on, and that every command names an entry point that exists in this project.
No database and no Docker needed: the files are parsed and the entry points imported in-process."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("postgres", "redis", "web", "worker", "beat")
APP_SERVICES = ("web", "worker", "beat")
LLM_VARIABLES = (
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "JUDGE_MODEL",
    "JUDGE_PROFILE",
    "JUDGE_RATE_LIMIT_RPM",
    "JUDGE_RATE_LIMIT_TPM",
    "JUDGE_MAX_IN_FLIGHT",
)
# gunicorn options that take a value, so that their value is not mistaken for the app target.
GUNICORN_VALUE_OPTIONS = {
    "-b",
    "--bind",
    "-w",
    "--workers",
    "-k",
    "--worker-class",
    "-t",
    "--timeout",
    "-c",
    "--config",
    "--threads",
    "--chdir",
    "--access-logfile",
    "--error-logfile",
    "--log-level",
    "--graceful-timeout",
    "--keep-alive",
    "--max-requests",
    "--max-requests-jitter",
    "--pythonpath",
    "-e",
    "--env",
}


@pytest.fixture(scope="module")
def compose() -> dict:
    # safe_load resolves the `<<: *anchor` merge keys the file uses.
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _service(compose: dict, name: str) -> dict:
    return compose["services"][name]


def _argv(command) -> list[str]:
    return list(command) if isinstance(command, list) else shlex.split(command)


def _steps(command) -> list[list[str]]:
    """The commands a service runs, each as argv: `sh -c "a && b"` gives [a, b]."""
    argv = _argv(command)
    if len(argv) >= 3 and Path(argv[0]).name in ("sh", "bash") and argv[1] == "-c":
        return [shlex.split(part) for part in argv[2].split("&&") if part.strip()]
    return [argv]


def _step(command, program: str) -> list[str]:
    found = [argv for argv in _steps(command) if argv and Path(argv[0]).name == program]
    assert found, f"no `{program}` in {command!r}"
    return found[0]


def _gunicorn_target(argv: list[str]) -> str:
    args = iter(argv[1:])
    for arg in args:
        if arg.startswith("-"):
            if arg in GUNICORN_VALUE_OPTIONS:
                next(args, None)
            continue
        return arg
    raise AssertionError(f"no WSGI target in {argv!r}")


def _celery_app_name(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg in ("-A", "--app"):
            return argv[i + 1]
        if arg.startswith("--app="):
            return arg.split("=", 1)[1]
        if arg.startswith("-A") and len(arg) > 2:
            return arg[2:].lstrip("=")
    raise AssertionError(f"no -A/--app in {argv!r}")


def _environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, None) for item in env)
    return env


def _dockerfile_cmd() -> list[str]:
    text = (ROOT / "Dockerfile").read_text()
    logical = re.sub(r"\\\n", " ", text).splitlines()
    cmds = [
        line.strip()[len("CMD") :].strip() for line in logical if re.match(r"\s*CMD\s", line, re.I)
    ]
    assert cmds, "the Dockerfile has no CMD"
    cmd = cmds[-1]  # the last CMD is the one that counts
    return json.loads(cmd) if cmd.startswith("[") else shlex.split(cmd)


def _worker_class(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg in ("-k", "--worker-class"):
            return argv[i + 1]
        if arg.startswith("--worker-class="):
            return arg.split("=", 1)[1]
    return "sync"


def _assert_app(argv: list[str]) -> None:
    """gunicorn's target exists and speaks what its worker class serves: ASGI under uvicorn's."""
    target = _gunicorn_target(argv)
    module_name, _, attr = target.partition(":")
    assert module_name and attr, f"{target!r} is not module:attr"
    app = getattr(importlib.import_module(module_name), attr)
    assert callable(app), f"{target} is not callable"
    worker_class = _worker_class(argv)
    if worker_class.startswith("uvicorn"):
        module_name, _, name = worker_class.rpartition(".")
        assert getattr(importlib.import_module(module_name), name), worker_class
        assert inspect.iscoroutinefunction(type(app).__call__), f"{target} is not an ASGI app"
        inspect.signature(app).bind({}, None, None)  # (scope, receive, send)
    else:
        # (environ, start_response)
        inspect.signature(app).bind({}, lambda status, headers, exc_info=None: None)


def test_compose_defines_postgres_redis_web_and_worker(compose):
    assert set(SERVICES) <= set(compose["services"])


@pytest.mark.parametrize("name", SERVICES)
def test_every_service_has_a_healthcheck(compose, name):
    healthcheck = _service(compose, name).get("healthcheck")
    assert healthcheck and healthcheck.get("test"), f"{name} has no healthcheck"
    assert not healthcheck.get("disable", False)


@pytest.mark.parametrize("name", APP_SERVICES)
def test_the_app_services_wait_for_healthy_postgres_and_redis(compose, name):
    depends_on = _service(compose, name).get("depends_on")
    assert isinstance(
        depends_on, dict
    ), f"{name}: depends_on needs the long form to carry a condition"
    for dependency in ("postgres", "redis"):
        assert depends_on.get(dependency, {}).get("condition") == "service_healthy", (
            name,
            dependency,
        )


@pytest.mark.parametrize("name", APP_SERVICES)
@pytest.mark.parametrize("variable", LLM_VARIABLES)
def test_the_llm_settings_reach_the_app_services_from_the_host(compose, name, variable):
    value = _environment(_service(compose, name)).get(variable)
    assert value is not None, f"{variable} does not reach {name}"
    # ${VAR}, ${VAR:-} or ${VAR-default}: the host's value, an unset one staying empty (offline
    # judge).
    assert re.fullmatch(rf"\$\{{{variable}(:?-[^}}]*)?\}}", value), f"{name}: {variable}={value!r}"


@pytest.mark.parametrize("name", APP_SERVICES)
def test_the_app_services_point_at_the_compose_postgres_and_redis(compose, name):
    env = _environment(_service(compose, name))
    assert re.match(r"postgres(ql)?://[^@]+@postgres:5432/", env["DATABASE_URL"])
    assert env["CELERY_BROKER_URL"].startswith("redis://redis:6379/")
    # The web processes share one cache, in a Redis database of its own (cache.clear() empties a
    # database).
    assert (
        env["CACHE_URL"].startswith("redis://redis:6379/")
        and env["CACHE_URL"] != env["CELERY_BROKER_URL"]
    )
    assert env["SECRET_KEY"].startswith(
        "${SECRET_KEY:?"
    ), "SECRET_KEY must be required, not defaulted"


def test_the_web_command_runs_a_real_management_command_first(compose):
    from django.core.management import get_commands

    steps = _steps(_service(compose, "web")["command"])
    first = steps[0]
    assert Path(first[0]).name.startswith("python") and first[1] == "manage.py", first
    assert (ROOT / "manage.py").is_file()
    assert first[2] == "migrate"
    assert first[2] in get_commands()
    assert Path(steps[-1][0]).name == "gunicorn", "gunicorn starts only after migrate succeeded"


def test_the_web_command_names_a_real_app_for_its_worker_class(compose):
    _assert_app(_step(_service(compose, "web")["command"], "gunicorn"))


def test_the_web_command_serves_asgi_so_a_guardrail_wait_holds_no_worker(compose):
    # tests/test_guardrail_waits.py runs this command and measures what it is for.
    argv = _step(_service(compose, "web")["command"], "gunicorn")
    assert (
        _worker_class(argv) == "uvicorn_worker.UvicornWorker"
        and _gunicorn_target(argv) == "reviewapp.asgi:application"
    )


def test_the_dockerfile_cmd_serves_the_same_app_as_the_web_service(compose):
    cmd = _dockerfile_cmd()
    assert Path(cmd[0]).name == "gunicorn", cmd
    web = _step(_service(compose, "web")["command"], "gunicorn")
    assert (_gunicorn_target(cmd), _worker_class(cmd)) == (
        _gunicorn_target(web),
        _worker_class(web),
    )
    _assert_app(cmd)


def test_the_worker_command_names_a_real_celery_app(compose):
    from celery import Celery
    from celery.app.utils import find_app

    argv = _step(_service(compose, "worker")["command"], "celery")
    assert "worker" in argv
    name = _celery_app_name(argv)
    app = find_app(name)  # how `celery -A name` resolves it
    assert isinstance(app, Celery)
    assert app is importlib.import_module("reviewapp.celery").app


def test_the_worker_healthcheck_pings_the_same_celery_app(compose):
    test = _service(compose, "worker")["healthcheck"]["test"]
    if isinstance(test, list) and test[0] in ("CMD", "CMD-SHELL"):
        test = test[1:] if test[0] == "CMD" else test[1]
    argv = _step(test, "celery")
    assert _celery_app_name(argv) == _celery_app_name(
        _step(_service(compose, "worker")["command"], "celery")
    )
    assert argv[argv.index("inspect") + 1] == "ping"


def _replicas(service: dict) -> int:
    """deploy.replicas with compose's `${VAR:-default}` read as its default (1 when absent)."""
    value = str((service.get("deploy") or {}).get("replicas", 1))
    match = re.fullmatch(r"\$\{\w+:-(\d+)\}", value)
    return int(match.group(1) if match else value)


def test_the_judge_runs_in_several_worker_processes_and_beat_in_exactly_one(compose):
    # One process's GIL caps the CPU spent around LLM calls (bench/judge_throughput.py: 0.52 of the
    # limit with 1 x 64 threads, 0.84 with 2 x 32), so the default is more than one worker.
    worker = _service(compose, "worker")
    assert _replicas(worker) >= 2
    argv = _step(worker["command"], "celery")
    assert argv[argv.index("-P") + 1] == "threads"
    assert _replicas(_service(compose, "beat")) == 1


def test_beat_runs_the_same_celery_app_and_schedules_the_sweeper_the_canary_and_webhook_resends(
    compose,
):
    argv = _step(_service(compose, "beat")["command"], "celery")
    assert "beat" in argv
    assert _celery_app_name(argv) == _celery_app_name(
        _step(_service(compose, "worker")["command"], "celery")
    )
    app = importlib.import_module("reviewapp.celery").app
    tasks = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert tasks == {
        "reviewapp.judging.tasks.sweep_stuck_answers",
        "reviewapp.judging.tasks.canary_dispatch",
        "reviewapp.webhooks.tasks.resend_overdue_webhooks",
    }
    for module in (
        "reviewapp.judging.tasks",
        "reviewapp.webhooks.tasks",
    ):  # what the worker's autodiscovery imports
        importlib.import_module(module)
    assert tasks <= set(app.tasks)


def test_compose_runs_the_postgres_major_of_the_embedded_one(compose):
    # A data folder opens only with the major that made it; the demo, the tests and production
    # should find the same behaviour (reviewapp/embedded.py PG_MAJOR, pinned in pyproject.toml).
    from reviewapp import embedded

    postgres = _service(compose, "postgres")
    assert postgres["image"] == f"postgres:{embedded.PG_MAJOR}"
    assert any(volume.endswith(":/var/lib/postgresql") for volume in postgres["volumes"])
