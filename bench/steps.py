"""The benchmark runs `make bench` and `make bench-quick` make, written once: the Makefile and
bench/compare.py both run these lists.

    python bench/steps.py quick|full [--only NAME[,NAME]] [--tree DIR] [--results FILE]

Each step is a script of bench/ with its arguments. `db` steps run in a database and a Redis
database of their own on the servers of DATABASE_URL / CELERY_BROKER_URL (BENCH_DB, default
`claimdesk_bench`, must contain "bench"; BENCH_REDIS_DB, default 12). `scale` steps read the scale
database, which is created and filled first and dropped afterwards, even when a step fails.
`--only` runs the named scripts (`export_labels`, `queue_pages`, ...; the scale load comes with any
scale step). `--tree` runs another checkout's scripts with these arguments (bench/compare.py: a
worktree of an older commit), with this venv's Python. A step that fails is reported and the rest
still run; the exit status says whether any failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Step:
    script: str
    args: tuple[str, ...] = ()
    db: bool = False
    scale: bool = False

    @property
    def name(self) -> str:
        return self.script.removesuffix(".py")


def _step(script: str, *args: str, db: bool = False, scale: bool = False) -> Step:
    return Step(script, args, db=db or scale, scale=scale)


QUICK = [
    _step("offline_judge.py", "--answers", "50", "--sized-answers", "8"),
    _step("locator.py", "--quick"),
    _step("judge_throughput.py", "--quick", db=True),
    _step("answer_cost.py", "--quick", db=True),
    _step("rate_limit.py", "--quick", db=True),
    _step("guardrail_wait.py", "--quick", db=True),
    _step("scale_data.py", "--answers", "10000", scale=True),
    _step("queue_pages.py", "--quick", scale=True),
    _step("export_labels.py", scale=True),
    _step("ingest_load.py", "--quick", scale=True),
]

FULL = [
    _step("offline_judge.py"),
    _step("locator.py"),
    _step("judge_faults.py"),
    _step("redteam.py"),
    _step("judge_throughput.py", db=True),
    _step("answer_cost.py", db=True),
    _step("rate_limit.py", db=True),
    _step("guardrail_wait.py", db=True),
    _step("wait_flood.py", db=True),
    _step("scale_data.py", "--answers", "100000", scale=True),
    _step("queue_pages.py", scale=True),
    _step("policy_preview.py", scale=True),
    _step("export_labels.py", scale=True),
    _step("ingest_load.py", scale=True),
]

PLANS = {"quick": QUICK, "full": FULL}


def select(plan: list[Step], only: list[str] | None) -> list[Step]:
    """The plan's steps named in `only` (all when None), the scale load before any scale step."""
    if not only:
        return list(plan)
    unknown = set(only) - {step.name for step in plan}
    if unknown:
        names = ", ".join(step.name for step in plan)
        raise SystemExit(f"no such step: {', '.join(sorted(unknown))} (steps: {names})")
    wanted = set(only)
    if any(step.scale for step in plan if step.name in wanted):
        wanted.add("scale_data")
    return [step for step in plan if step.name in wanted]


def bench_env(environ: dict[str, str]) -> dict[str, str]:
    """DATABASE_URL and CELERY_BROKER_URL pointed at the benchmarks' own databases, same servers."""
    database = environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/claimdesk")
    broker = environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
    name = environ.get("BENCH_DB", "claimdesk_bench")
    if "bench" not in name:
        raise SystemExit(f"BENCH_DB must contain 'bench', not {name!r}")
    redis_db = environ.get("BENCH_REDIS_DB", "12")
    return {"DATABASE_URL": urlunsplit(urlsplit(database)._replace(path="/" + name)),
            "CELERY_BROKER_URL": urlunsplit(urlsplit(broker)._replace(path="/" + redis_db))}


def run(steps: list[Step], *, tree: Path = ROOT, results: Path | None = None,
        python: str = sys.executable) -> list[str]:
    """Run the steps in `tree`; returns the names of those that failed."""
    base = os.environ | {"PYTHONPATH": str(tree), "PYTHONUNBUFFERED": "1"}
    if results is not None:
        base["BENCH_RESULTS"] = str(results)
    scaled = bench_env(os.environ)
    failed: list[str] = []

    def call(script: str, *args: str, env: dict[str, str]) -> bool:
        print(f"== {tree.name}: {script} {' '.join(args)}", flush=True)
        return subprocess.run([python, f"bench/{script}", *args], cwd=tree, env=env).returncode == 0

    scale_ready = None  # None: not loaded yet; False: the load failed, skip what reads it
    try:
        for step in steps:
            env = base | scaled if step.db else base
            if step.scale and scale_ready is None:
                scale_ready = call("bench_db.py", "create", env=env)
            if step.scale and not scale_ready:
                failed.append(step.name)
                continue
            ok = call(step.script, *step.args, env=env)
            if not ok:
                failed.append(step.name)
                if step.name == "scale_data":
                    scale_ready = False
    finally:
        if scale_ready is not None:
            call("bench_db.py", "drop", env=base | scaled)
    return failed


def names(text: str) -> list[str]:
    """--only's value: script names, comma-separated, with or without .py."""
    return [name.removesuffix(".py") for name in text.split(",") if name]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", choices=sorted(PLANS))
    parser.add_argument("--only", type=names)
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    steps = select(PLANS[args.plan], args.only)
    failed = run(steps, tree=args.tree.resolve(), results=args.results)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
