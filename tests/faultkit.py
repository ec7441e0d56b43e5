"""Real processes to break, for tests/test_faults.py and bench/faults.py.

A PRIVATE Postgres and a PRIVATE Valkey (reviewapp/embedded.py: the wheels' servers in a temp dir,
on free ports), so restarting or killing them never touches the servers the suite uses; celery
worker subprocesses on them; answers posted through the ingest service in a subprocess (`python -m
tests.faultkit ingest`); and `tally`, which counts lost, doubled and wrong answers straight from the
database.

    lost     not judged or failed at the end
    doubled  more than one current JudgeRun for a configuration, more than one succeeded run,
             or claims besides those of the run the answer shows
    wrong    judged with other labels than the judge's reply says, or failed without a reason
             or without being routed to review
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from reviewapp import embedded
from reviewapp.embedded import free_port  # noqa: F401  (tests import it from here)
from tests.judges.factories import GOOD, GOOD_ANSWER, GOOD_PASSAGE

ROOT = Path(__file__).resolve().parent.parent

# The labels the fake LLM's GOOD reply (claim_verification profile) gives GOOD_ANSWER.
EXPECTED_LABELS = ["SUPPORTED", "UNSUPPORTED"]

# Short limits, so a lost worker is noticed in seconds, not minutes. The relations production
# relies on hold here too: visibility timeout > hard limit > soft limit > retry budget.
FAST_LIMITS = {
    "JUDGE_TASK_SOFT_TIME_LIMIT": "8",
    "JUDGE_TASK_TIME_LIMIT": "10",
    "JUDGE_RETRY_BUDGET_SECONDS": "6",
    "JUDGE_TIMEOUT_SECONDS": "4",
    "JUDGE_MAX_ATTEMPTS": "4",
    "JUDGE_HOLD_MARGIN_SECONDS": "2",
    "JUDGE_MAX_RETRIES": "3",
    "JUDGE_RETRY_BACKOFF_SECONDS": "0.5",
    "JUDGE_SWEEP_AFTER_SECONDS": "4",
    "JUDGE_SWEEP_INTERVAL_SECONDS": "1",
    "CANARY_INTERVAL_SECONDS": "1",
}


def wait_until(condition, timeout: float, interval: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not met within {timeout}s (last value: {value!r})")
        time.sleep(interval)


@dataclass
class Worker:
    """A `celery worker` subprocess in its own session (so kill -9 of the whole worker is one
    call)."""

    env: dict
    log: Path
    pool: str = "prefork"
    concurrency: int = 2
    beat: bool = False
    name: str = "fault"
    proc: subprocess.Popen | None = None
    starts: int = field(default=0)

    def start(self) -> Worker:
        self.starts += 1
        command = [sys.executable, "-m", "celery", "-A", "reviewapp", "worker", "-P", self.pool,
                   "-c", str(self.concurrency), "-Q", self.env["CELERY_QUEUE"], "--without-gossip",
                   "--without-mingle", "-l", "info", "-n", f"{self.name}-{os.getpid()}@%h"]
        if self.beat:
            command += ["-B", "-s", str(self.log.parent / f"beat-{self.name}")]
        offset = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "a") as out:
            self.proc = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        def ready():
            if self.proc.poll() is not None:
                raise RuntimeError(f"celery worker exited:\n{self.log.read_text()[-3000:]}")
            with open(self.log) as f:
                f.seek(offset)
                return "ready." in f.read()

        wait_until(ready, 60, 0.2, what="celery worker ready")
        return self

    @property
    def hostname(self) -> str:
        return f"{self.name}-{os.getpid()}@{socket.gethostname()}"

    def children(self) -> list[int]:
        return [
            int(p)
            for p in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
            .read_text()
            .split()
        ]

    def child_with_socket(self, local_port: int) -> int | None:
        """The pool child owning the TCP connection from local_port (the one waiting on the LLM:
        the fake server records each request's client port)."""
        inodes = _tcp_inodes_from(local_port)
        for pid in self.children():
            try:
                fds = list(Path(f"/proc/{pid}/fd").iterdir())
            except OSError:
                continue
            for fd in fds:
                try:
                    target = os.readlink(fd)
                except OSError:
                    continue
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    return pid
        return None

    def kill9_all(self) -> None:
        """kill -9 the whole worker: its main process and every pool child at once."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                pass
        if self.proc:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # children left behind by a warm shutdown
            except ProcessLookupError:
                pass


def _tcp_inodes_from(port: int) -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            local_port = int(cols[1].split(":")[1], 16)
            if local_port == port and cols[3] == "01":  # ESTABLISHED
                inodes.add(cols[9])
    return inodes


def app_env(
    *, database_url: str, broker_url: str, llm_url: str, queue: str = "claimdesk-faults", **extra
) -> dict:
    env = dict(os.environ)
    for name in list(env):
        if name.startswith(("JUDGE_", "CELERY_", "OPENAI_")):
            del env[name]
    return env | FAST_LIMITS | {
        "DJANGO_SETTINGS_MODULE": "reviewapp.settings",
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker_url,
        "CELERY_QUEUE": queue,
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": "test-key",
        "JUDGE_BACKEND": "openai",
        "JUDGE_PROFILE": "claim_verification",
        "JUDGE_MODEL": "fake-judge",
        "DEBUG": "false",
        "PYTHONUNBUFFERED": "1",
    } | {k: str(v) for k, v in extra.items()}


def manage(env: dict, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    if result.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def ingest(env: dict, n: int, prefix: str) -> list[int]:
    """Post n answers through the ingest service in a subprocess; their ids (None where it
    failed)."""
    result = subprocess.run(
        [sys.executable, "-m", "tests.faultkit", "ingest", str(n), prefix],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode:
        raise RuntimeError(f"ingest failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


@dataclass
class Tally:
    answers: int
    judged: int
    failed: int
    lost: list[int]
    doubled: list[int]
    wrong: list[int]
    failed_reasons: dict[str, int]


def tally(conn, ids: list[int]) -> Tally:
    rows = conn.execute(
        """
        select a.id, a.status, a.review_status, a.routing_reason, a.judged_by_id,
          (select count(*) from reviewapp_judgerun r where r.answer_id = a.id and r.is_current) as
              current_runs,
          (select count(*) from reviewapp_judgerun r where r.answer_id = a.id and r.status =
              'succeeded') as ok_runs,
          (select count(*) from reviewapp_claim c where c.answer_id = a.id) as claims,
          (select count(*) from reviewapp_claim c where c.run_id = a.judged_by_id) as shown_claims,
          (select array_agg(c.label order by c.position) from reviewapp_claim c where c.run_id =
              a.judged_by_id) as labels,
          (select r.error from reviewapp_judgerun r where r.answer_id = a.id and r.status = 'failed'
             order by r.started_at desc, r.id desc limit 1) as error
        from reviewapp_answer a where a.id = any(%s)
        """,
        (ids,),
    ).fetchall()
    lost, doubled, wrong, reasons = [], [], [], {}
    judged = failed = 0
    missing = set(ids) - {r[0] for r in rows}
    lost.extend(sorted(missing))
    for (
        answer_id,
        status,
        review_status,
        reason,
        judged_by,
        current_runs,
        ok_runs,
        claims,
        shown,
        labels,
        error,
    ) in rows:
        if status not in ("judged", "failed"):
            lost.append(answer_id)
        if current_runs > 1 or ok_runs > 1 or claims != shown:
            doubled.append(answer_id)
        if status == "judged":
            judged += 1
            if list(labels or []) != EXPECTED_LABELS or current_runs != 1:
                wrong.append(answer_id)
        elif status == "failed":
            failed += 1
            if not error or review_status != "in_review" or reason != "judge failed" or claims:
                wrong.append(answer_id)
            key = (error or "").split(":")[0][:60]
            reasons[key] = reasons.get(key, 0) + 1
    return Tally(len(ids), judged, failed, lost, doubled, wrong, reasons)


def settled(conn, ids: list[int]) -> bool:
    (pending,) = conn.execute(
        "select count(*) from reviewapp_answer where id = any(%s) and status in ('queued',"
        " 'judging')",
        (ids,),
    ).fetchone()
    return pending == 0


class Rig:
    """A private Postgres + Redis, migrated, with the fake LLM's URL: one per test module or
    bench."""

    def __init__(self, llm_url: str, root: Path | None = None):
        self.root = Path(root or tempfile.mkdtemp(prefix="claimdesk-faults-"))
        # Postgres' user (as root: nobody) must get through to its folder
        os.chmod(self.root, 0o755)
        self.pg = embedded.Postgres(self.root / "pg", durable=False)
        # Append-only, as in docker-compose.yml: queued tasks survive a restart.
        self.redis = embedded.Valkey(self.root / "redis", append_only=True)
        self.llm_url = llm_url
        self.workers: list[Worker] = []

    def __enter__(self) -> Rig:
        try:
            self.pg.start().createdb("claimdesk")
            self.redis.start()
            manage(self.env(), "migrate", "--noinput")
            self.conn = self.connect()
        except BaseException:
            self.__exit__()
            raise
        return self

    def env(self, **extra) -> dict:
        return app_env(
            database_url=self.pg.url(), broker_url=self.redis.url(), llm_url=self.llm_url, **extra
        )

    def connect(self):
        import psycopg

        return psycopg.connect(self.pg.url(), autocommit=True)

    def worker(self, name: str, *, pool="prefork", concurrency=2, beat=False, **extra) -> Worker:
        worker = Worker(
            self.env(**extra), self.root / f"worker-{name}.log", pool, concurrency, beat, name
        )
        self.workers.append(worker)
        return worker

    def purge(self) -> None:
        """Between scenarios: drop queued messages, so one scenario's leftovers do not feed the
        next."""
        import redis

        redis.Redis(port=self.redis.port).flushall()

    def __exit__(self, *exc) -> None:
        for worker in self.workers:
            worker.stop()
        if getattr(self, "conn", None) is not None:
            self.conn.close()
        self.redis.stop()
        self.pg.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _ingest_main(n: int, prefix: str) -> None:
    import django

    django.setup()
    from judges import JudgeRequest
    from reviewapp.api.ingest import answer_ingest

    ids = []
    for i in range(n):
        request = JudgeRequest.model_validate({
            "external_id": f"{prefix}-{i}", "question": "Senior fare?",
            "passages": [{"text": GOOD_PASSAGE}], "answer": GOOD_ANSWER,
        })
        ids.append(answer_ingest(client=None, request=request).answer.pk)
    print(json.dumps(ids))


def _health_main() -> None:
    import django

    django.setup()
    from reviewapp.judging.liveness import worker_status

    print(json.dumps(worker_status(), default=str))


def health(env: dict) -> dict:
    """What /health/ says (the same selector), read in a subprocess on the rig's database."""
    result = subprocess.run([sys.executable, "-m", "tests.faultkit", "health"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    if result.returncode:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def canary_liveness(rig: Rig, llm) -> dict:
    """A worker that stops consuming is flagged stale by its canary; after a Redis restart the
    canary shows whether it resumed consuming."""
    llm.reset()
    llm.default = good_reply()
    rig.purge()
    worker = rig.worker("canary", pool="threads", concurrency=2, beat=True).start()
    interval = float(FAST_LIMITS["CANARY_INTERVAL_SECONDS"])

    def consumed() -> int:
        row = rig.conn.execute("select consumed from reviewapp_workerheartbeat where hostname = %s",
                               (worker.hostname,)).fetchone()
        return row[0] if row else 0

    try:
        wait_until(consumed, 30, 0.2, what="a first canary consumed")
        assert worker.hostname not in health(rig.env())["stale_workers"]
        os.killpg(worker.proc.pid, signal.SIGSTOP)  # up, but consuming nothing
        stopped_at = time.monotonic()
        time.sleep(2 * interval + 1)
        frozen = health(rig.env())
        detect_s = time.monotonic() - stopped_at
        os.killpg(worker.proc.pid, signal.SIGCONT)
        wait_until(lambda: worker.hostname not in health(rig.env())["stale_workers"], 30, 0.5,
                   what="the worker fresh again")

        before = consumed()
        rig.redis.kill()
        time.sleep(1)
        rig.redis.start()
        restarted_at = time.monotonic()
        wait_until(
            lambda: consumed() > before + 1,
            60,
            0.2,
            what="canaries consumed after the Redis restart",
        )
        resumed_s = time.monotonic() - restarted_at
        ids = ingest(rig.env(), 1, f"canary-{os.getpid()}-{time.time()}")
        wait_until(
            lambda: settled(rig.conn, ids), 60, 0.2, what="an answer judged after the Redis restart"
        )
        t = tally(rig.conn, ids)
    finally:
        try:
            os.killpg(worker.proc.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        worker.stop()
    return _row("worker stops consuming (SIGSTOP) / Redis reconnect", 1, t, resumed_s,
                # Beat runs inside this worker, so a frozen worker is a frozen beat too: /health/
                # names one of them to restart (beat, as nothing sent the worker a canary since).
                named_for_restart=bool({worker.hostname, "beat"} & set(frozen["restart"])),
                health_ok_while_frozen=frozen["ok"],
                detect_s=round(detect_s, 1), resumed_consuming_s=round(resumed_s, 1))


if __name__ == "__main__":
    if sys.argv[1] == "ingest":
        _ingest_main(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "health":
        _health_main()


# --- scenarios: each returns a row of the closing table --------------------------------------


def _row(fault: str, trials: int, t: Tally, recover_s: float, **extra) -> dict:
    return {
        "fault": fault,
        "trials": trials,
        "answers": t.answers,
        "judged": t.judged,
        "failed": t.failed,
        "lost": len(t.lost),
        "doubled": len(t.doubled),
        "wrong": len(t.wrong),
        "recover_s": round(recover_s, 1),
        "lost_ids": t.lost,
        "doubled_ids": t.doubled,
        "wrong_ids": t.wrong,
        "failed_reasons": t.failed_reasons,
        **extra,
    }


def _merge(tallies: list[Tally]) -> Tally:
    reasons: dict[str, int] = {}
    for t in tallies:
        for k, v in t.failed_reasons.items():
            reasons[k] = reasons.get(k, 0) + v
    return Tally(
        sum(t.answers for t in tallies),
        sum(t.judged for t in tallies),
        sum(t.failed for t in tallies),
        [i for t in tallies for i in t.lost],
        [i for t in tallies for i in t.doubled],
        [i for t in tallies for i in t.wrong],
        reasons,
    )


def good_reply():
    from tests.fake_openai import Reply

    return Reply.ok(GOOD)


def kill_child_during_llm_call(rig: Rig, llm, trials: int, *, slow_s: float = 3.0) -> dict:
    """kill -9 the pool child that waits on a slow LLM reply; the message is redelivered."""
    from tests.fake_openai import Reply

    worker = rig.worker("child", pool="prefork", concurrency=2).start()
    tallies, recoveries, abandoned = [], [], 0
    try:
        for trial in range(trials):
            llm.reset()
            llm.default = good_reply()
            llm.enqueue(Reply.slow(slow_s, good_reply()))
            ids = ingest(rig.env(), 1, f"kill-child-{os.getpid()}-{trial}-{time.time()}")
            wait_until(lambda: llm.request_peers, 30, 0.05, what="the LLM call")
            pid = wait_until(lambda: worker.child_with_socket(llm.request_peers[0][1]), 10, 0.05,
                             what="the child calling the LLM")
            os.kill(pid, signal.SIGKILL)
            killed_at = time.monotonic()
            wait_until(
                lambda: settled(rig.conn, ids), 60, what="answer settled after kill -9 of its child"
            )
            recoveries.append(time.monotonic() - killed_at)
            tallies.append(tally(rig.conn, ids))
            (n,) = rig.conn.execute(
                "select count(*) from reviewapp_judgerun where answer_id = any(%s) and "
                "error like 'abandoned%%'",
                (ids,),
            ).fetchone()
            abandoned += n
    finally:
        worker.stop()
    return _row(
        "kill -9 pool child waiting on the LLM",
        trials,
        _merge(tallies),
        max(recoveries),
        abandoned_runs=abandoned,
        recover_median_s=round(sorted(recoveries)[len(recoveries) // 2], 1),
    )


def kill_whole_worker(rig: Rig, llm, answers: int, *, latency_s: float = 1.0) -> dict:
    """kill -9 the worker (main process and children) with answers queued and in flight; restart
    it."""
    from tests.fake_openai import Reply

    llm.reset()
    llm.default = Reply.slow(latency_s, good_reply())
    rig.purge()
    worker = rig.worker("whole", pool="prefork", concurrency=2, beat=True).start()
    try:
        ids = ingest(rig.env(), answers, f"kill-whole-{os.getpid()}-{time.time()}")
        wait_until(lambda: len(llm.requests) >= 2, 30, 0.05, what="two LLM calls in flight")
        (in_flight,) = rig.conn.execute(
            "select count(*) from reviewapp_answer where id = any(%s) and " "status = 'judging'",
            (ids,),
        ).fetchone()
        worker.kill9_all()
        killed_at = time.monotonic()
        worker.start()
        wait_until(
            lambda: settled(rig.conn, ids), 120, 0.2, what="all answers settled after the restart"
        )
        recover = time.monotonic() - killed_at
        t = tally(rig.conn, ids)
        (swept,) = rig.conn.execute(
            "select coalesce(sum(sweep_count), 0) from reviewapp_answer where id = any(%s)", (ids,)
        ).fetchone()
    finally:
        worker.stop()
    return _row(
        "kill -9 whole worker, restart",
        1,
        t,
        recover,
        in_flight_at_kill=in_flight,
        sweeps=int(swept),
    )


def restart_mid_run(rig: Rig, llm, answers: int, *, server: str, during_outage: int = 0,
                    latency_s: float = 0.3, concurrency: int = 4) -> dict:
    """Restart Redis or Postgres while `answers` are being judged; `during_outage` more are posted
    while Redis is down (their enqueue fails: the sweeper must find them)."""
    from tests.fake_openai import Reply

    llm.reset()
    llm.default = Reply.slow(latency_s, good_reply())
    rig.purge()
    worker = rig.worker(
        f"restart-{server}", pool="threads", concurrency=concurrency, beat=True
    ).start()
    prefix = f"restart-{server}-{os.getpid()}-{time.time()}"
    try:
        ids = ingest(rig.env(), answers - during_outage, prefix)
        wait_until(
            lambda: len(llm.requests) >= max(2, answers // 5),
            60,
            0.05,
            what="a fifth of the run judged",
        )
        outage_started = time.monotonic()
        if server == "redis":
            rig.redis.kill()
            if during_outage:
                ids += ingest(rig.env(), during_outage, prefix + "-outage")
            else:
                time.sleep(2)
            rig.redis.start()
        else:
            rig.pg.restart_immediate()
            rig.conn.close()
            rig.conn = rig.connect()  # ours was cut too
        wait_until(
            lambda: settled(rig.conn, ids),
            240,
            0.2,
            what=f"all answers settled after the {server} restart",
        )
        recover = time.monotonic() - outage_started
        t = tally(rig.conn, ids)
        (swept,) = rig.conn.execute(
            "select coalesce(sum(sweep_count), 0) from reviewapp_answer where id = any(%s)", (ids,)
        ).fetchone()
        (enqueued_in_outage_swept,) = rig.conn.execute(
            "select count(*) from reviewapp_answer where external_id like %s and sweep_count > 0",
            (prefix + "-outage-%",)).fetchone()
    finally:
        worker.stop()
    return _row(
        f"restart {server} mid-run",
        1,
        t,
        recover,
        sweeps=int(swept),
        posted_during_outage=during_outage,
        outage_posts_swept=enqueued_in_outage_swept,
    )


STORM_MIX = (  # (share, kind) of LLM replies in the storm
    (0.20, "429"), (0.10, "500"), (0.05, "hang"), (0.10, "malformed"), (0.05, "truncated"),
    (0.04, "refusal"), (0.46, "ok"),
)


def storm_reply(rng, timeout_s: float):
    from tests.fake_openai import Reply

    roll, acc = rng.random(), 0.0
    for share, kind in STORM_MIX:
        acc += share
        if roll < acc:
            break
    return {
        "429": lambda: Reply.status(429, retry_after=0.2),
        "500": lambda: Reply.status(500),
        "hang": lambda: Reply.slow(timeout_s + 1.0, Reply.ok(GOOD)),
        "malformed": lambda: Reply.ok('{"claims": [{"claim_id": "c1", '),
        "truncated": lambda: Reply.truncated(GOOD),
        "refusal": lambda: Reply.refusal("I cannot evaluate this content."),
        "ok": lambda: Reply.ok(GOOD),
    }[kind]()


def llm_storm(rig: Rig, llm, answers: int, *, seed: int = 9, concurrency: int = 8) -> dict:
    """429 storms, 500s, hangs past the timeout, malformed and truncated JSON, refusals."""
    import random
    import threading

    rng, lock = random.Random(seed), threading.Lock()

    def reply(_request):
        with lock:  # the fake serves requests on several threads
            return storm_reply(rng, float(FAST_LIMITS["JUDGE_TIMEOUT_SECONDS"]))

    llm.reset()
    llm.default = reply
    rig.purge()
    worker = rig.worker("storm", pool="threads", concurrency=concurrency, beat=True).start()
    try:
        started = time.monotonic()
        ids = ingest(rig.env(), answers, f"storm-{os.getpid()}-{time.time()}")
        wait_until(
            lambda: settled(rig.conn, ids),
            600,
            0.5,
            what="every answer judged or failed in the storm",
        )
        elapsed = time.monotonic() - started
        t = tally(rig.conn, ids)
        (slowest,) = rig.conn.execute(
            "select coalesce(max(extract(epoch from greatest(judged_at, updated_at) - created_at)),"
            " 0) from reviewapp_answer where id = any(%s)",
            (ids,),
        ).fetchone()
        # From an answer's first judge run to its verdict or failure: the retry time the bound is
        # about.
        (longest,) = rig.conn.execute(
            "select coalesce(max(extract(epoch from a.updated_at - r.first)), 0) from"
            " reviewapp_answer a join (select answer_id, min(started_at) as first from"
            " reviewapp_judgerun group by answer_id) r on r.answer_id = a.id where a.id = any(%s)",
            (ids,),
        ).fetchone()
    finally:
        worker.stop()
        llm.default = good_reply()
    return _row(
        "LLM faults storm",
        1,
        t,
        elapsed,
        llm_requests=len(llm.requests),
        slowest_answer_s=round(float(slowest), 1),
        longest_judging_s=round(float(longest), 1),
    )


def storm_retry_bound_s() -> float:
    """The longest an answer may take from its first judge run to verdict or failure: every try
    spends at most the retry budget, and the backoffs between tries are at most 1.2x nominal."""
    limits = FAST_LIMITS
    tries = int(limits["JUDGE_MAX_RETRIES"]) + 1
    backoffs = sum(
        float(limits["JUDGE_RETRY_BACKOFF_SECONDS"]) * 2**i * 1.2 for i in range(tries - 1)
    )
    return tries * float(limits["JUDGE_RETRY_BUDGET_SECONDS"]) + backoffs
