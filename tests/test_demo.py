"""The README's run command with nothing configured: the demo starts its own Postgres and Valkey
(reviewapp/embedded.py), judges its answers with a real worker, and leaves no server running."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.fixture
def state_dir():
    # Not pytest's tmp_path: as root, Postgres runs as nobody, who cannot enter a 0700 folder.
    folder = Path(tempfile.mkdtemp(prefix="claimdesk-demo-test-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _servers_running_in(folder: Path) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(folder) in text:
            found.append(text)
    return found


def _demo(state_dir: Path) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL")
    }
    env |= {
        "DEBUG": "true",
        "DEMO_STATE_DIR": str(state_dir),
        "CELERY_QUEUE": "claimdesk-demo-test",
    }
    return subprocess.run([sys.executable, "manage.py", "demo", "--no-server"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)


@pytest.mark.worker
@pytest.mark.timeout(600)
def test_the_demo_brings_its_own_servers_judges_its_answers_and_stops_them(state_dir):
    result = _demo(state_dir)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Judged 12/12" in result.stdout
    assert "admin    / " in result.stdout and "API token" in result.stdout
    assert (state_dir / "pg" / "data" / "PG_VERSION").read_text().strip() == "18"
    made = (state_dir / "pg" / "data" / "PG_VERSION").stat().st_mtime
    assert _servers_running_in(state_dir) == []

    # Run again: the same data folder (no second initdb), nothing loaded twice.
    again = _demo(state_dir)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "12 demo answers already loaded" in again.stdout
    assert (state_dir / "pg" / "data" / "PG_VERSION").stat().st_mtime == made
    assert _servers_running_in(state_dir) == []
