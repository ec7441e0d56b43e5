"""Where every benchmark writes its figures: `bench/results/latest.json`, a list of
`{"name", "value", "unit", "target", "met", ...}` rows, one per figure.

Benchmarks run as separate scripts (`make bench` runs several), so each call merges its rows into
the file by name instead of overwriting the file: a figure measured again replaces its old row,
and figures from other scripts stay. The machine (cores, RAM) is recorded with every row, because
a figure from a noisy 2-core box means little without it.

    from bench.results import record
    record("queue p95 default view", 42.1, "ms", target=100, higher_is_better=False)
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import platform
import statistics
import time
from pathlib import Path

RESULTS = Path(
    os.environ.get("BENCH_RESULTS", Path(__file__).resolve().parent / "results" / "latest.json")
)


@functools.cache
def machine() -> dict:
    try:
        with open("/proc/meminfo") as f:
            mem_kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    except (OSError, StopIteration, ValueError):
        mem_kb = 0
    return {
        "cores": os.cpu_count(),
        "ram_gib": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
        "reference_loop_ms": reference_loop_ms(),
    }


def reference_loop_ms() -> float:
    """CPU milliseconds of a fixed pure-Python loop (a million additions), the median of five: how
    fast this shared box runs while the bench runs. The same code's figures moved 1.5-2x from one
    machine of this type to the next (the offline judge's 1,500-char cold figure at one commit:
    136-149 answers per CPU-second on one, 58-81 on the next, two hours apart on 2026-11-30), and
    this loop took 37-71 ms within one hour: a figure is comparable with another only beside it."""
    timings = []
    for _ in range(5):
        started, total = time.process_time(), 0
        for number in range(1_000_000):
            total += number
        timings.append((time.process_time() - started) * 1000)
    return round(statistics.median(timings), 1)


def record(
    name: str,
    value: float,
    unit: str,
    target: float | None = None,
    *,
    higher_is_better: bool = True,
    command: str | None = None,
    **extra,
) -> dict:
    """Merge one figure into latest.json and return its row. `met` is None when there is no
    target."""
    if target is None:
        met = None
    else:
        met = value >= target if higher_is_better else value <= target
    row = {
        "name": name,
        "value": round(value, 4) if isinstance(value, float) else value,
        "unit": unit,
        "target": target,
        "met": met,
        "direction": "higher" if higher_is_better else "lower",
        "command": command,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
        **extra,
    }
    if RESULTS.exists() and not RESULTS.is_file():
        # BENCH_RESULTS=/dev/null means "keep no record": renaming a file onto a device would
        # replace the machine's /dev/null with a regular file.
        return row
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    # A lock file, so two benches finishing together cannot lose each other's rows.
    with open(RESULTS.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            rows = json.loads(RESULTS.read_text())
        except (OSError, ValueError):
            rows = []
        rows = [r for r in rows if r.get("name") != name] + [row]
        tmp = RESULTS.with_suffix(".tmp")
        tmp.write_text(json.dumps(rows, indent=2) + "\n")
        tmp.replace(RESULTS)
    return row
