"""`manage.py demo`: ClaimDesk with demo data, one command, no servers to install.

With DATABASE_URL / CELERY_BROKER_URL unset, manage.py first starts an embedded Postgres (data
kept in .claimdesk/pg) and Valkey for it (reviewapp/embedded.py). This migrates the database,
creates a demo admin, reviewer and API client, starts a real Celery worker process (with beat),
posts the demo answers through the ingest service so the worker judges them live, and serves the
web app until Ctrl-C, which stops the worker, then the servers.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import BaseCommand

from judges import JudgeRequest
from reviewapp.access import ADMIN, REVIEWER
from reviewapp.models import Answer, ApiClient
from reviewapp.api.clients import api_client_create, api_client_rotate_token
from reviewapp.api.ingest import answer_ingest

DEMO_DATA = Path(__file__).resolve().parents[2] / "demo_data" / "answers.json"
# The same twelve answers with their intended ground truth (demo_data/README.md) as a golden set,
# so `manage.py evaluate --golden demo` has something to measure from the first run.
DEMO_GOLDEN = DEMO_DATA.with_name("golden.jsonl")


class Command(BaseCommand):
    help = "Run ClaimDesk with demo data: web server and a real Celery worker (Ctrl-C stops both)."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8000)))
        parser.add_argument(
            "--no-server", action="store_true", help="load data, judge it, then exit"
        )

    def handle(self, *args, port: int, no_server: bool, **options):
        # Ctrl-C or a plain `kill` stops both processes, even when started from a script that
        # ignores SIGINT (background jobs of a non-interactive shell do).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        call_command("migrate", interactive=False, verbosity=0)
        passwords = {
            name: self._demo_user(name, admin=(name == "admin")) for name in ("admin", "reviewer")
        }
        token = self._demo_token()
        call_command(
            "import_golden", str(DEMO_GOLDEN), "--name", "demo", verbosity=0, stdout=self.stdout
        )
        worker = self._start_worker()
        try:
            self._load_and_wait()
            self._print_welcome(port, passwords, token)
            if no_server:
                return
            call_command("runserver", f"127.0.0.1:{port}", use_reloader=False, use_threading=True)
        except KeyboardInterrupt:
            pass
        finally:
            self.stdout.write("Stopping the worker...")
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                worker.kill()

    def _demo_user(self, name: str, *, admin: bool) -> str:
        # A fresh password on every start: the demo prints it, and nothing else knows it.
        password = secrets.token_urlsafe(9)
        user, _ = get_user_model().objects.get_or_create(username=name)
        user.is_staff = user.is_superuser = admin
        user.set_password(password)
        user.save()
        user.groups.add(Group.objects.get_or_create(name=ADMIN if admin else REVIEWER)[0])
        return password

    def _demo_token(self) -> str:
        client = ApiClient.objects.filter(name="demo").first()
        if client is None:
            return api_client_create(name="demo", actor_label="demo")[1]
        # the old one was shown once
        return api_client_rotate_token(client=client, actor_label="demo")

    def _start_worker(self) -> subprocess.Popen:
        # -B: the worker also runs beat (the sweeper and the canary); production runs one beat
        # service.
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "reviewapp",
            "worker",
            "-P",
            "threads",
            "-c",
            "2",
            "-l",
            "warning",
            "-n",
            "demo@%h",
            "-B",
            "-s",
            str(settings.DEMO_STATE_DIR / "celerybeat-schedule"),
        ]
        settings.DEMO_STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.stdout.write(f"Starting a Celery worker on {settings.CELERY_BROKER_URL} ...")
        # A connection pool, as compose's worker has: without one Celery reconnects for every task.
        env = {"DATABASE_POOL_SIZE": "4"} | os.environ
        # Its own session: the terminal's Ctrl-C reaches only us, and we stop it in order.
        return subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, start_new_session=True)

    def _load_and_wait(self) -> None:
        client = ApiClient.objects.get(name="demo")
        payloads = json.loads(DEMO_DATA.read_text())
        new = [
            ingested.answer.pk
            for payload in payloads
            if (
                ingested := answer_ingest(
                    client=client, request=JudgeRequest.model_validate(payload)
                )
            ).created
        ]
        if not new:
            self.stdout.write(f"{len(payloads)} demo answers already loaded.")
            return
        self.stdout.write(f"Posted {len(new)} demo answers; the worker is judging them...")
        deadline = time.monotonic() + 120
        pending = Answer.objects.filter(pk__in=new, status__in=["queued", "judging"])
        while pending.exists() and time.monotonic() < deadline:
            time.sleep(0.25)
        done = Answer.objects.filter(pk__in=new, judged_at__isnull=False)
        waits = [(a.judged_at - a.created_at).total_seconds() * 1000 for a in done]
        if waits:
            self.stdout.write(
                f"Judged {len(waits)}/{len(new)}: POST to judged median"
                f" {statistics.median(waits):.0f} ms, max {max(waits):.0f} ms (this includes the"
                " worker's start-up)."
            )
        if pending.exists():
            self.stdout.write(
                self.style.WARNING(
                    f"{pending.count()} still waiting; they will finish in the background."
                )
            )

    def _print_welcome(self, port: int, passwords: dict[str, str], token: str) -> None:
        url = f"http://127.0.0.1:{port}"
        self.stdout.write(self.style.SUCCESS(f"""
ClaimDesk demo is ready.

  Review queue   {url}/queue/     (sign in as reviewer; press ? on a review page for keys)
  All answers    {url}/answers/
  API docs       {url}/api/v1/docs
  Django admin   {url}/admin/

  admin    / {passwords['admin']}
  reviewer / {passwords['reviewer']}
  API token (client "demo"): {token}
  Golden set "demo": python manage.py evaluate --golden demo

  Database  DATABASE_URL={os.environ.get("DATABASE_URL", "")}
  (while the demo runs, every manage.py command here uses it:
   make manage ARGS="create_reviewer bob")

  Try:  curl -s -X POST {url}/api/v1/answers -H 'Authorization: Bearer {token}' \\
          -H 'Content-Type: application/json' \\
          -d '{{"passages": [{{"text": "Seniors aged 65 and older ride for $1.00."}}],
               "answer": "Seniors ride for $1.50."}}'

Press Ctrl-C to stop the web server, the worker and the servers the demo started.
"""))
