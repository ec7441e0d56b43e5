"""Issue 9's closing table: each fault, trials, lost, doubled, wrong, time to recover.

Real processes: a private Postgres and a private Valkey from the wheels (reviewapp/embedded.py) in
a temp dir on free ports (no other server is touched), celery worker subprocesses, the fake LLM over
HTTP. The scenarios are tests/faultkit.py's, the same the suite runs at smaller sizes.

    python bench/faults.py            # full sizes: 20 kills, 3 x 20 whole-worker kills,
                                      # 200 answers across each restart, 500 in the LLM storm
    python bench/faults.py --quick    # the suite's sizes
    python bench/faults.py --only storm,redis

Prints the table and a JSON line per scenario; records the figures with bench/results.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import record  # noqa: E402
from tests import faultkit  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402

FULL = {"child": 20, "whole": (3, 20), "redis": 200, "postgres": 200, "storm": 500}
QUICK = {"child": 5, "whole": (1, 8), "redis": 50, "postgres": 50, "storm": 100}


def run(only: set[str], sizes: dict) -> list[dict]:
    rows = []
    with FakeOpenAI() as llm, faultkit.Rig(llm.base_url) as rig:
        if "child" in only:
            rows.append(faultkit.kill_child_during_llm_call(rig, llm, sizes["child"]))
        if "whole" in only:
            trials, answers = sizes["whole"]
            runs = [faultkit.kill_whole_worker(rig, llm, answers) for _ in range(trials)]
            rows.append(_combine(runs))
        if "redis" in only:
            rows.append(
                faultkit.restart_mid_run(rig, llm, sizes["redis"], server="redis", during_outage=10)
            )
        if "postgres" in only:
            rows.append(faultkit.restart_mid_run(rig, llm, sizes["postgres"], server="postgres"))
        if "storm" in only:
            rows.append(faultkit.llm_storm(rig, llm, sizes["storm"]))
        if "canary" in only:
            rows.append(faultkit.canary_liveness(rig, llm))
    return rows


def _combine(runs: list[dict]) -> dict:
    row = dict(runs[0])
    for key in (
        "answers",
        "judged",
        "failed",
        "lost",
        "doubled",
        "wrong",
        "in_flight_at_kill",
        "sweeps",
    ):
        row[key] = sum(r[key] for r in runs)
    row["trials"] = len(runs)
    row["recover_s"] = max(r["recover_s"] for r in runs)
    for key in ("lost_ids", "doubled_ids", "wrong_ids"):
        row[key] = [i for r in runs for i in r[key]]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the suite's sizes")
    parser.add_argument("--only", default="child,whole,redis,postgres,storm,canary")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    started = time.monotonic()
    rows = run(set(args.only.split(",")), sizes)
    command = "python bench/faults.py" + (" --quick" if args.quick else "") + (
        f" --only {args.only}" if args.only != parser.get_default("only") else "")

    print(f"\n{'fault':<52} {'trials':>6} {'answers':>7} {'lost':>5} {'doubled':>7} {'wrong':>5} "
          f"{'judged':>6} {'failed':>6} {'recover s':>9}")
    for r in rows:
        print(
            f"{r['fault']:<52} {r['trials']:>6} {r['answers']:>7} {r['lost']:>5} {r['doubled']:>7} "
            f"{r['wrong']:>5} {r['judged']:>6} {r['failed']:>6} {r['recover_s']:>9}"
        )
    print(
        f"\n({time.monotonic() - started:.0f} s in all; 'recover s' is kill/outage to every answer"
        " settled, or for the storm the whole run, or for the canary the Redis restart to canaries"
        " consumed again)"
    )
    for r in rows:
        print(json.dumps(r, default=str))
        bad = r["lost"] + r["doubled"] + r["wrong"]
        record(
            f"faults: {r['fault']}: lost+doubled+wrong",
            bad,
            "answers",
            target=0,
            higher_is_better=False,
            command=command,
            trials=r["trials"],
            answers=r["answers"],
            lost=r["lost"],
            doubled=r["doubled"],
            wrong=r["wrong"],
            judged=r["judged"],
            failed=r["failed"],
        )
        record(
            f"faults: {r['fault']}: time to recover",
            r["recover_s"],
            "s",
            higher_is_better=False,
            command=command,
            trials=r["trials"],
            answers=r["answers"],
        )


if __name__ == "__main__":
    main()
