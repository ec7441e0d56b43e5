"""manage.py finds the running demo's servers (their ports are chosen when the demo starts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reviewapp import embedded

ROOT = Path(__file__).resolve().parent.parent
DEMO_DB = "postgres://postgres@127.0.0.1:54999/claimdesk"
SHOW = (
    "from django.conf import settings; print(settings.DATABASES['default']['PORT'],"
    " settings.CELERY_BROKER_URL)"
)


def _manage(state: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")
    }
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", SHOW],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environ | {"DEMO_STATE_DIR": str(state)} | env,
        timeout=60,
    )


def test_manage_py_uses_the_running_demos_database_when_database_url_is_unset(tmp_path):
    embedded.demo_servers_write(
        {"DATABASE_URL": DEMO_DB, "CELERY_BROKER_URL": "redis://127.0.0.1:54998/0"}, tmp_path
    )
    shown = _manage(tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["54999", "redis://127.0.0.1:54998/0"]
    assert f"Using the running demo's database: {DEMO_DB}" in shown.stderr
    # A DATABASE_URL given wins over the demo's.
    given = _manage(tmp_path, DATABASE_URL="postgres://postgres@127.0.0.1:5432/elsewhere")
    assert given.stdout.split()[0] == "5432" and "demo" not in given.stderr


def test_a_demo_that_is_gone_leaves_the_default(tmp_path):
    (tmp_path / embedded.DEMO_SERVERS_FILE).write_text(
        json.dumps(
            {
                "DATABASE_URL": DEMO_DB,
                "CELERY_BROKER_URL": "redis://127.0.0.1:54998/0",
                "pid": 2**22 + 7,
            }
        )
    )
    assert embedded.demo_servers_read(tmp_path) is None
    shown = _manage(tmp_path)
    assert shown.stdout.split()[0] == "5432" and "demo" not in shown.stderr
