"""The README's run command on the embedded default: SQLite, the folder broker, a real worker."""

import os
import subprocess
import sys

from tests.conftest import ROOT


def test_the_demo_loads_and_judges_its_answers_with_a_real_worker(tmp_path):
    env = os.environ | {
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        "CELERY_BROKER_URL": "filesystem://",
        "CELERY_BROKER_DIR": str(tmp_path / "broker"),
        "CELERY_QUEUE": "claimdesk-demo-test",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "demo", "--no-server"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Judged 12/12" in result.stdout
    assert "admin    / " in result.stdout and "API token" in result.stdout

    # Run again: the data is already there and nothing is loaded twice.
    again = subprocess.run(
        [sys.executable, "manage.py", "demo", "--no-server"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "12 demo answers already loaded" in again.stdout
