"""The fleet-wide LLM rate limit under load (issue 8, item 3). A benchmark, not a test.

Several worker processes, each with several threads and its own Redis client, ask one limiter
(judges.ratelimit, on the real Redis) for a slot as fast as it lets them: demand far above the cap,
the worst case for a limit. They wait the way the openai backend does (`acquire`: sleeps of at
most 0.25 s while over the limit). Every admission is stamped by the Redis clock. Reported: the most
requests admitted in any window (as a fraction of the cap: must be <= 1) and the mean rate over
the run (as a fraction of the cap: should be > 0.95).

    CELERY_BROKER_URL=redis://127.0.0.1:6379/11 python bench/rate_limit.py            # 600/min, 60
    s windows, 120 s CELERY_BROKER_URL=redis://127.0.0.1:6379/11 python bench/rate_limit.py --quick
    # 100 per 10 s windows, 30 s

--quick keeps the rate (600/min) but shrinks the window to 10 s, so its 30 s hold three whole
windows: a 30 s run of a 60 s window would only show the first window's burst, which says nothing
about the sustained rate. The full run is the production shape: two whole 60 s windows.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.results import record  # noqa: E402
from judges.ratelimit import RateLimiter, RateLimitTimeout  # noqa: E402


def worker(
    redis_url: str, key: str, cap: int, window: float, until: float, threads: int
) -> list[float]:
    """One process: `threads` threads taking every slot they can until the Redis clock says
    `until`."""
    limiter = RateLimiter(redis_url, key=key, rpm=cap, window_s=window)
    admitted: list[float] = []
    lock = threading.Lock()

    def run() -> None:
        # acquire() as the openai backend calls it: short sleeps while over the limit, never past
        # the deadline (here the end of the run).
        deadline = time.monotonic() + (until - time.time())
        while True:
            try:
                ticket = limiter.acquire(deadline=deadline)
            except RateLimitTimeout:
                return
            if ticket.admitted_at >= until:
                return
            with lock:
                admitted.append(ticket.admitted_at)

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return admitted


def most_in_any_window(times: list[float], window: float) -> int:
    times = sorted(times)
    most, start = 0, 0
    for end, t in enumerate(times):
        while times[start] <= t - window:
            start += 1
        most = max(most, end - start + 1)
    return most


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=int, default=600, help="requests per window")
    parser.add_argument("--window", type=float, default=60.0, help="window in seconds")
    parser.add_argument("--seconds", type=float, default=120.0, help="length of the run")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8, help="threads per process")
    parser.add_argument(
        "--quick", action="store_true", help="100 per 10 s window (600/min) for 30 s"
    )
    args = parser.parse_args()
    if args.quick:
        args.cap, args.window, args.seconds = 100, 10.0, 30.0
    redis_url = os.environ.get("JUDGE_RATE_LIMIT_REDIS_URL") or os.environ.get(
        "CELERY_BROKER_URL", ""
    )
    if not redis_url.startswith("redis"):
        sys.exit(
            "rate_limit needs Redis: set CELERY_BROKER_URL or JUDGE_RATE_LIMIT_REDIS_URL to"
            " redis://..."
        )
    import redis

    client = redis.Redis.from_url(redis_url)
    key = f"bench:ratelimit:{uuid.uuid4().hex}"
    seconds, micros = client.time()
    start = seconds + micros / 1e6
    until = start + args.seconds
    try:
        with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
            runs = pool.starmap(
                worker,
                [(redis_url, key, args.cap, args.window, until, args.threads)] * args.processes,
            )
    finally:
        client.delete(key)
    admitted = sorted(t for run in runs for t in run)
    per_minute = args.cap * 60 / args.window
    most = most_in_any_window(admitted, args.window)
    mean_per_minute = len(admitted) / args.seconds * 60
    window_name = f"{args.window:g} s window"
    print(
        f"cap {args.cap} per {window_name} ({per_minute:.0f}/min); {args.processes} processes x"
        f" {args.threads} threads for {args.seconds:g} s; {len(admitted)} admitted (by process:"
        f" {', '.join(str(len(run)) for run in runs)})"
    )
    print(f"most in any {window_name}: {most} = {most / args.cap:.3f} of the cap")
    print(
        f"mean rate over the run: {mean_per_minute:.1f}/min = {mean_per_minute / per_minute:.3f} of"
        " the cap"
    )
    command = " ".join(["python", "bench/rate_limit.py", *sys.argv[1:]])
    setup = {
        "cap": args.cap,
        "window_s": args.window,
        "seconds": args.seconds,
        "processes": args.processes,
        "threads": args.threads,
    }
    record(f"rate limit most in any {window_name} / cap", most / args.cap, "fraction", target=1.0,
           higher_is_better=False, command=command, **setup)
    record(
        f"rate limit mean rate / cap ({window_name})",
        mean_per_minute / per_minute,
        "fraction",
        target=0.95,
        command=command,
        **setup,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
