"""ClaimDesk beside Label Studio 1.23 (issue 31, item 4): the same N items, the same four
operations, both served by gunicorn on one Postgres server, measured interleaved. Not a test and
never run in CI (it installs Label Studio from PyPI); `make bench-peers`.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk python bench/peers/label_studio.py \\
        [--items 10000] [--repeats 20] [--exports 2] [--keep]

1. Label Studio 1.23 (and gunicorn) into a venv of its own, .claimdesk/peers/label-studio-1.23
   (reused when it is there).
2. ClaimDesk's data: bench/scale_data.py's N judged answers (5-15 claims each, every claim decided)
   in `<DATABASE_URL's name>_peers_bench`; Label Studio's own database `..._peers_ls_bench` on the
   same server, migrated. Both dropped at the end unless --keep.
3. The same N items into Label Studio through its import API, each a task whose data holds the
   answer's question, answer, passages, the judge's verdict and grounding score, with the judge's
   verdict as its one prediction; a project whose labeling config shows them, one choice each.
4. Both apps under gunicorn, 2 workers each (ClaimDesk's uvicorn ones as compose runs it, Label
   Studio's sync ones as its Dockerfile does), each user signed in by a session made in its
   database.
5. Per operation, A B B A (Label Studio, ClaimDesk), --repeats requests a turn, wall time per
   request from this process over loopback HTTP:
   * list:   LS `GET /api/tasks?project=P&page=1&page_size=50` (what its data manager's table
             loads); CD `GET /queue/` (the queue's first 50 rows, its counters);
   * filter: tasks whose data field `verdict` is UNGROUNDED: LS the data manager's filter
             `filter:tasks:data.verdict` equal; CD `GET /answers/?verdict=UNGROUNDED`;
   * next:   the next task for a reviewer: LS `GET /api/projects/P/next`; CD `POST /queue/next`
             (it leases the next answer and redirects to its page, which is not fetched);
   * export: everything, --exports times each: LS `GET /api/projects/P/export?exportType=JSON`
             (tasks with their predictions), CD `GET /exports/download?format=jsonl` (one row per
             decided claim, 5-15 per item): seconds, and the peak RSS of the gunicorn worker
             that served it (VmHWM).
Prints a table and records p50/p95 per app and operation and the ratios (Label Studio / ClaimDesk)
with bench/results.py; the issue's goals are the ratios' targets: filter ≥ 40, export ≥ 10,
every other ≥ 1 (ClaimDesk not slower).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.results import record  # noqa: E402
from bench.web import PROXY_HEADERS, start_gunicorn, stop_gunicorn  # noqa: E402
from bench.workload import admin_sql  # noqa: E402

VERSION = "1.23"
SECRET_KEY = secrets.token_hex(32)
VENV = ROOT / ".claimdesk" / "peers" / f"label-studio-{VERSION}"
OPERATIONS = ("list", "filter", "next", "export")
TARGETS = {"list": 1, "filter": 40, "next": 1, "export": 10}  # Label Studio / ClaimDesk, at least
LABEL_CONFIG = """<View>
  <Header value="$question"/>
  <Text name="answer" value="$answer"/>
  <Text name="passages" value="$passages_text"/>
  <Header value="Judge: $verdict ($score)"/>
  <Choices name="verdict_choice" toName="answer" choice="single">
    <Choice value="GROUNDED"/><Choice value="MOSTLY_GROUNDED"/><Choice value="UNGROUNDED"/>
  </Choices>
</View>"""


def install() -> Path:
    python = VENV / "bin" / "python"
    if not (VENV / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "--quiet",
                f"label-studio=={VERSION}.*",
                "gunicorn",
            ],
            check=True,
        )
        (VENV / ".installed").touch()
    return python


def ls_package(python: Path) -> Path:
    out = subprocess.run(
        [
            str(python),
            "-c",
            "import label_studio, os; print(os.path.dirname(label_studio.__file__))",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip())


def ls_env(database_url: str, data_dir: Path) -> dict[str, str]:
    parts = urlsplit(database_url)
    return os.environ | {
        "DJANGO_DB": "default",
        "POSTGRE_NAME": parts.path[1:],
        "POSTGRE_USER": parts.username or "postgres",
        "POSTGRE_PASSWORD": parts.password or "",
        "POSTGRE_HOST": parts.hostname or "127.0.0.1",
        "POSTGRE_PORT": str(parts.port or 5432),
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "core.settings.label_studio",
        "DEBUG": "false",
        "LOG_LEVEL": "WARNING",
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
        "SENTRY_DSN": "",
        "FRONTEND_SENTRY_DSN": "",
        "PYTHONPATH": "",
        "SECRET_KEY": SECRET_KEY,  # one key for every process: the session's hash
    }


# Run inside Label Studio's venv (its Django): a user, a project, a session for the user.
LS_SETUP = r"""
import json, os, sys, time
import django
django.setup()
from django.contrib.auth import SESSION_KEY, BACKEND_SESSION_KEY, HASH_SESSION_KEY
from importlib import import_module
from django.conf import settings
SessionStore = import_module(settings.SESSION_ENGINE).SessionStore  # signed cookies in Label Studio
from users.models import User
from organizations.models import Organization
from projects.models import Project
user = User.objects.filter(email="bench@example.org").first()
if user is None:
    user = User.objects.create_user(email="bench@example.org",
                                    password="bench-" + os.urandom(8).hex(), username="bench")
    org = Organization.create_organization(created_by=user, title="bench")
    user.active_organization = org
    user.save(update_fields=["active_organization"])
project = Project.objects.filter(title="claimdesk-peers").first() or Project.objects.create(
    title="claimdesk-peers", created_by=user, organization=user.active_organization,
    label_config=sys.argv[1])
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session["last_login"] = time.time()  # its inactivity middleware logs out a session without it
session.save()
print(json.dumps({"project": project.pk, "session": session.session_key}))
"""


class Http:
    """A signed-in browser, as far as these requests need: the session cookie and a CSRF pair."""

    def __init__(self, port: int, session: str, session_cookie: str = "sessionid"):
        # 32 characters: a CSRF secret Django accepts
        self.port, self.csrf = port, secrets.token_hex(16)
        self.headers = {
            "Cookie": f"{session_cookie}={session}; csrftoken={self.csrf}",
            "X-CSRFToken": self.csrf,
            "Referer": f"https://127.0.0.1:{port}/",
        } | PROXY_HEADERS

    def request(
        self, method: str, path: str, body: bytes | None = None, content_type: str = ""
    ) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=3600)
        headers = self.headers | ({"Content-Type": content_type} if content_type else {})
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def timed(
        self, method: str, path: str, body: bytes | None = None, content_type: str = ""
    ) -> float:
        started = time.perf_counter()
        status, content = self.request(method, path, body, content_type)
        elapsed = (time.perf_counter() - started) * 1000
        self.last_size = len(content)
        if status >= 400:
            raise SystemExit(f"{method} {path}: {status} {content[:300]!r}")
        return elapsed


def claimdesk_items() -> list[dict]:
    """The ClaimDesk answers as Label Studio tasks: data fields and the judge's verdict as a
    prediction."""
    from reviewapp.models import Answer, Passage

    passages: dict[int, list] = {}
    for answer_id, pid, text in Passage.objects.order_by("answer_id", "position").values_list(
        "answer_id", "pid", "text"
    ):
        passages.setdefault(answer_id, []).append({"id": pid, "text": text})
    tasks = []
    for answer_id, question, text, verdict, score in Answer.objects.order_by("id").values_list(
            "id", "question", "answer", "verdict", "grounding_score"):
        shown = passages.get(answer_id, [])
        tasks.append(
            {
                "data": {
                    "claimdesk_id": answer_id,
                    "question": question,
                    "answer": text,
                    "passages": shown,
                    "passages_text": "\n\n".join(f"[{p['id']}] {p['text']}" for p in shown),
                    "verdict": verdict,
                    "score": score,
                },
                "predictions": [
                    {
                        "model_version": "claimdesk-judge",
                        "score": score,
                        "result": [
                            {
                                "from_name": "verdict_choice",
                                "to_name": "answer",
                                "type": "choices",
                                "value": {"choices": [verdict]},
                            }
                        ],
                    }
                ],
            }
        )
    return tasks


def claimdesk_session() -> str:
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )
    from django.contrib.auth.models import Group
    from django.contrib.sessions.backends.db import SessionStore

    user, _ = get_user_model().objects.get_or_create(
        username="peers-admin", defaults={"is_staff": True}
    )
    for role in ("reviewer", "admin"):
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def worker_peak_rss_mb(master: subprocess.Popen) -> float:
    """The largest VmHWM among the gunicorn master's workers."""
    peak = 0
    for child in Path(f"/proc/{master.pid}/task/{master.pid}/children").read_text().split():
        try:
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            continue
    return peak / 1024


def percentile(values: list[float], q: int) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[q - 1]
        if len(values) > 1
        else values[0]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument(
        "--repeats", type=int, default=20, help="requests per app and turn (list, filter, next)"
    )
    parser.add_argument("--exports", type=int, default=2, help="full exports per app")
    parser.add_argument(
        "--keep", action="store_true", help="keep both databases and the data directory"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="use the databases a --keep run left (same --items)"
    )
    args = parser.parse_args()
    base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/claimdesk")
    parts = urlsplit(base)
    cd_url = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "_peers_bench"))
    ls_url = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "_peers_ls_bench"))
    python = install()
    package = ls_package(python)
    data_dir = ROOT / ".claimdesk" / "peers" / "label-studio-data"
    data_dir.mkdir(parents=True, exist_ok=True)
    servers: list[subprocess.Popen] = []
    for url in (cd_url, ls_url) if not args.reuse else ():
        admin_sql(url, f'DROP DATABASE IF EXISTS "{urlsplit(url).path[1:]}" WITH (FORCE)')
        admin_sql(url, f'CREATE DATABASE "{urlsplit(url).path[1:]}"')
    try:
        os.environ.update({"DATABASE_URL": cd_url, "DJANGO_SETTINGS_MODULE": "reviewapp.settings"})
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "bench/scale_data.py", "--answers", str(args.items)],
            cwd=ROOT,
            check=True,
            env=os.environ | {"BENCH_RESULTS": os.devnull},
        )
        print(
            f"ClaimDesk: {args.items} answers loaded in {time.monotonic() - started:.0f} s",
            flush=True,
        )
        import django

        django.setup()
        env = ls_env(ls_url, data_dir)
        started = time.monotonic()
        subprocess.run(
            [str(python), "manage.py", "migrate", "-v0"], cwd=package, env=env, check=True
        )
        made = subprocess.run(
            [str(python), "-c", LS_SETUP, LABEL_CONFIG],
            cwd=package,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        setup = json.loads(made.stdout.strip().splitlines()[-1])
        print(f"Label Studio: migrated in {time.monotonic() - started:.0f} s", flush=True)

        from bench.ingest_load import free_port

        ls_port, cd_port = free_port(), free_port()
        ls_server = subprocess.Popen(
            [
                str(VENV / "bin" / "gunicorn"),
                "core.wsgi:application",
                "--bind",
                f"127.0.0.1:{ls_port}",
                "--workers",
                "2",
                "--timeout",
                "3600",
            ],
            cwd=package,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(data_dir / "gunicorn.log", "w"),
        )
        servers.append(ls_server)
        cd_server = start_gunicorn(cd_port, "uvicorn", {"DATABASE_URL": cd_url})
        servers.append(cd_server)
        ls = Http(ls_port, setup["session"])
        cd = Http(cd_port, claimdesk_session())
        project = setup["project"]
        deadline = time.monotonic() + 120
        while True:
            try:
                if ls.request("GET", f"/api/projects/{project}")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(
                    "Label Studio did not answer:"
                    f" {(data_dir / 'gunicorn.log').read_text()[-2000:]}"
                )
            time.sleep(0.5)

        tasks = claimdesk_items()
        started = time.monotonic()
        have = json.loads(ls.request("GET", f"/api/projects/{project}")[1]).get("task_number", 0)
        for first in range(have, len(tasks), 2000):  # its import API, in bodies of 2,000 tasks
            ls.timed(
                "POST",
                f"/api/projects/{project}/import",
                json.dumps(tasks[first : first + 2000]).encode(),
                "application/json",
            )
        imported = time.monotonic() - started
        print(f"Label Studio: {len(tasks)} tasks imported in {imported:.0f} s", flush=True)

        query = json.dumps(
            {
                "filters": {
                    "conjunction": "and",
                    "items": [
                        {
                            "filter": "filter:tasks:data.verdict",
                            "operator": "equal",
                            "type": "String",
                            "value": "UNGROUNDED",
                        }
                    ],
                }
            }
        )
        calls = {
            "list": {
                "ls": ("GET", f"/api/tasks?project={project}&page=1&page_size=50"),
                "cd": ("GET", "/queue/"),
            },
            "filter": {
                "ls": (
                    "GET",
                    f"/api/tasks?project={project}&page=1&page_size=50&query={quote(query)}",
                ),
                "cd": ("GET", "/answers/?verdict=UNGROUNDED"),
            },
            "next": {"ls": ("GET", f"/api/projects/{project}/next"), "cd": ("POST", "/queue/next")},
            # download_all_tasks: its default exports only the tasks someone annotated (none here)
            "export": {
                "ls": (
                    "GET",
                    f"/api/projects/{project}/export?exportType=JSON&download_all_tasks=true",
                ),
                "cd": ("GET", "/exports/download?format=jsonl"),
            },
        }
        apps = {"ls": ls, "cd": cd}
        # The filter filters: every task it lists is UNGROUNDED, and fewer than all of them match.
        listed = json.loads(ls.request(*calls["list"]["ls"])[1])
        found = json.loads(ls.request(*calls["filter"]["ls"])[1])
        verdicts = {task["data"]["verdict"] for task in found["tasks"]}
        if verdicts != {"UNGROUNDED"} or not 0 < found["total"] < listed["total"]:
            raise SystemExit(
                f"Label Studio's filter did not filter: {verdicts}, {found['total']} of"
                f" {listed['total']}"
            )
        print(f"filter: {found['total']} of {listed['total']} tasks UNGROUNDED", flush=True)
        times: dict[tuple[str, str], list[float]] = {}
        rss: dict[str, float] = {}
        for operation in OPERATIONS:
            repeats = args.exports if operation == "export" else args.repeats
            per_turn = max(1, repeats // 2)
            for app in ("ls", "cd", "cd", "ls"):  # A B B A
                method, path = calls[operation][app]
                apps[app].timed(method, path)  # warm-up: the first plans, templates, caches
                for _ in range(per_turn if operation != "export" else 1):
                    times.setdefault((app, operation), []).append(apps[app].timed(method, path))
            if operation == "export":
                rss = {"ls": worker_peak_rss_mb(ls_server), "cd": worker_peak_rss_mb(cd_server)}
                sizes = {app: apps[app].last_size / 2**20 for app in apps}
                print(
                    f"export: Label Studio {sizes['ls']:.1f} MB, ClaimDesk {sizes['cd']:.1f} MB",
                    flush=True,
                )

        command = " ".join(["python", "bench/peers/label_studio.py", *sys.argv[1:]])
        extra = {
            "items": args.items,
            "label_studio": VERSION,
            "load_average_1m": round(os.getloadavg()[0], 2),
            "label_studio_import_s": round(imported, 1),
        }
        print(
            f"\n{args.items} items; load average {os.getloadavg()[0]:.1f}\n| operation | Label"
            " Studio p50 / p95 | ClaimDesk p50 / p95 | ratio (p95) | goal |\n|---|---|---|---|---|"
        )
        for operation in OPERATIONS:
            unit = "s" if operation == "export" else "ms"
            scale = 1000 if operation == "export" else 1
            figures = {}
            for app, name in (("ls", "label_studio"), ("cd", "claimdesk")):
                values = [t / scale for t in times[(app, operation)]]
                figures[app] = (percentile(values, 50), percentile(values, 95))
                for q, value in zip((50, 95), figures[app]):
                    record(
                        f"peers {name} {operation} p{q} ({args.items} items)",
                        value,
                        unit,
                        higher_is_better=False,
                        command=command,
                        **extra,
                    )
            ratio = figures["ls"][1] / figures["cd"][1]
            record(
                f"peers label_studio / claimdesk {operation} p95 ({args.items} items)",
                ratio,
                "x",
                TARGETS[operation],
                command=command,
                **extra,
            )
            memory = (
                f" (peak RSS {rss['ls']:.0f} / {rss['cd']:.0f} MB; {sizes['ls']:.0f} /"
                f" {sizes['cd']:.0f} MB out)"
                if operation == "export"
                else ""
            )
            if operation == "export":
                for app, name in (("ls", "label_studio"), ("cd", "claimdesk")):
                    record(f"peers {name} export peak RSS ({args.items} items)", rss[app], "MB",
                           higher_is_better=False, command=command, **extra)
            print(
                f"| {operation}{memory} | {figures['ls'][0]:.1f} / {figures['ls'][1]:.1f} {unit} |"
                f" {figures['cd'][0]:.1f} / {figures['cd'][1]:.1f} {unit} | {ratio:.1f}x | ≥"
                f" {TARGETS[operation]}x |"
            )
        return 0
    finally:
        for server in servers:
            stop_gunicorn(server)
        if not args.keep:
            from django.db import connections

            connections.close_all()
            for url in (cd_url, ls_url):
                admin_sql(url, f'DROP DATABASE IF EXISTS "{urlsplit(url).path[1:]}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())
