"""The fleet-wide LLM limits (judges.ratelimit) against the real Redis: several processes with
their own clients share one limit (requests per minute, or requests in flight); the openai backend
waits for them against the fake server."""

from __future__ import annotations

import multiprocessing
import threading
import time
import uuid

import pytest
import redis

from judges import JudgeConfig, JudgeError, JudgeRequest, judge
from judges.ratelimit import InFlightLimit, RateLimiter, RateLimitTimeout, RateLimitUnavailable
from tests.fake_openai import FakeOpenAI, Reply
from tests.judges.factories import GOOD, GOOD_ANSWER, GOOD_PASSAGE


@pytest.fixture
def redis_url(settings):
    return settings.CELERY_BROKER_URL


@pytest.fixture
def key(redis_url):
    name = f"test:ratelimit:{uuid.uuid4().hex}"
    yield name
    redis.Redis.from_url(redis_url).delete(name)


def most_in_any_window(times: list[float], window: float) -> int:
    times = sorted(times)
    most, start = 0, 0
    for end, t in enumerate(times):
        while times[start] <= t - window:
            start += 1
        most = max(most, end - start + 1)
    return most


def hammer(redis_url: str, key: str, rpm: int, window_s: float, seconds: float) -> list[float]:
    """One process with its own client: take every slot it can for `seconds`; admission times."""
    limiter = RateLimiter(redis_url, key=key, rpm=rpm, window_s=window_s)
    stop = time.monotonic() + seconds
    admitted = []
    while time.monotonic() < stop:
        ticket, wait = limiter.try_acquire()
        if ticket is None:
            time.sleep(min(wait, 0.02))
        else:
            admitted.append(ticket.admitted_at)
    return admitted


def test_processes_hammering_one_limit_never_exceed_it_in_any_window(redis_url, key):
    rpm, window = 20, 1.0  # 20 per second-long window: the same algorithm as 20/min, 60x faster
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        runs = pool.starmap(hammer, [(redis_url, key, rpm, window, 3.5)] * 3)
    admitted = [t for run in runs for t in run]
    assert most_in_any_window(admitted, window) == rpm  # saturated, and never above the limit
    assert sum(1 for run in runs if run) >= 2  # the processes really shared the limit
    # Saturated, too: each of the first three windows of the run admitted the whole limit.
    first = min(admitted)
    assert sum(t < first + 3 * window for t in admitted) == 3 * rpm


def test_a_token_limit_counts_estimates_and_settles_to_real_usage(redis_url, key):
    limiter = RateLimiter(redis_url, key=key, tpm=1000, window_s=30)
    first = limiter.acquire(400)
    limiter.acquire(400)
    ticket, wait = limiter.try_acquire(400)  # 1,200 estimated tokens would exceed 1,000
    assert ticket is None and 29 < wait <= 30
    limiter.settle(first, 100)  # the first request really used 100 tokens: 500 in the window now
    assert limiter.try_acquire(400)[0] is not None


def test_a_request_larger_than_the_token_limit_still_goes_when_the_window_is_empty(redis_url, key):
    limiter = RateLimiter(redis_url, key=key, tpm=100, window_s=30)
    assert limiter.try_acquire(5000)[0] is not None
    assert limiter.try_acquire(1)[0] is None


def test_waiting_never_passes_the_callers_deadline(redis_url, key):
    limiter = RateLimiter(redis_url, key=key, rpm=1, window_s=30)
    limiter.acquire()
    started = time.monotonic()
    with pytest.raises(RateLimitTimeout, match="slot frees up only in"):
        limiter.acquire(deadline=time.monotonic() + 2)
    assert time.monotonic() - started < 0.5  # it knew the wait was too long, without sleeping it


def test_an_unreachable_redis_is_an_error_not_an_unlimited_request(key):
    limiter = RateLimiter("redis://127.0.0.1:1/0", key=key, rpm=10)
    with pytest.raises(RateLimitUnavailable, match="Redis unavailable"):
        limiter.try_acquire()


# --- requests in flight -------------------------------------------------------------------------


def hold_slots(redis_url: str, key: str, limit: int, seconds: float) -> list[int]:
    """One process, 4 threads with their own client: take a slot, hold it 20 ms, give it back, for
    `seconds`; each holder notes how many holders there were (a shared Redis counter)."""
    client = redis.Redis.from_url(redis_url)
    limiter = InFlightLimit(redis_url, key=key, limit=limit, lease_s=10)
    seen: list[int] = []

    def loop():
        stop = time.monotonic() + seconds
        while time.monotonic() < stop:
            slot = limiter.acquire()
            seen.append(client.incr(f"{key}:holders"))
            time.sleep(0.02)
            client.decr(f"{key}:holders")
            limiter.release(slot)

    threads = [threading.Thread(target=loop) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return seen


def test_processes_sharing_an_in_flight_limit_never_hold_more_slots_than_it(redis_url, key):
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        runs = pool.starmap(hold_slots, [(redis_url, key, 5, 2.0)] * 3)
    redis.Redis.from_url(redis_url).delete(f"{key}:holders", f"{key}:freed")
    seen = [count for run in runs for count in run]
    assert max(seen) == 5  # 12 threads wanting slots: all 5 in use, never a 6th
    assert all(run for run in runs)
    # Kept full: 5 slots of 20 ms for 2 s is ~500 holds at most; waking by polling would give far
    # fewer.
    assert len(seen) > 250


def test_a_freed_slot_wakes_a_waiter_at_once(redis_url, key):
    limit = InFlightLimit(redis_url, key=key, limit=1, lease_s=10)
    held = limit.acquire()
    taken = []
    waiter = threading.Thread(target=lambda: taken.append((limit.acquire(), time.monotonic())))
    waiter.start()
    time.sleep(0.3)
    assert not taken
    freed = time.monotonic()
    limit.release(held)
    waiter.join(timeout=5)
    limit.reset()
    assert taken and taken[0][1] - freed < 0.1  # woken by the release, not by a poll


def test_a_slot_whose_holder_died_frees_when_its_lease_ends(redis_url, key):
    limit = InFlightLimit(redis_url, key=key, limit=1, lease_s=0.5)
    limit.acquire()  # never released: its worker was killed mid-request
    started = time.monotonic()
    limit.acquire(deadline=started + 5)
    limit.reset()
    assert 0.3 < time.monotonic() - started < 1.5


def test_waiting_for_a_slot_stops_at_the_callers_deadline(redis_url, key):
    limit = InFlightLimit(redis_url, key=key, limit=1, lease_s=30)
    limit.acquire()
    started = time.monotonic()
    with pytest.raises(
        RateLimitTimeout, match=r"in-flight limit: waited 0\.\ds and all 1 slots are still in use"
    ):
        limit.acquire(deadline=started + 0.4)
    limit.reset()
    assert 0.35 < time.monotonic() - started < 1.0


def test_an_unreachable_redis_is_an_error_not_an_unlimited_flight(key):
    limit = InFlightLimit("redis://127.0.0.1:1/0", key=key, limit=2, lease_s=5)
    with pytest.raises(RateLimitUnavailable, match="in-flight limit: Redis unavailable"):
        limit.acquire()


# --- the openai backend -------------------------------------------------------------------------


def _config(fake, redis_url, **overrides) -> JudgeConfig:
    values = dict(
        backend="openai",
        profile="claim_verification",
        model=f"fake-{uuid.uuid4().hex[:8]}",
        base_url=fake.base_url,
        api_key="test",
        timeout_s=5.0,
        retry_budget_s=30.0,
        max_attempts=3,
        backoff_cap_s=0.05,
        rate_limit_rpm=120,
        rate_limit_redis_url=redis_url,
    )
    return JudgeConfig(**(values | overrides))


def _window_key(config: JudgeConfig) -> str:
    return f"judges:llm-rate:{config.base_url}|{config.model}"


def _fill_window(redis_url: str, key: str, count: int, span: float) -> list[float]:
    """`count` requests admitted evenly over the last `span` seconds (by the Redis clock), as if
    other workers had been judging at the limit for a minute already; returns when each was."""
    client = redis.Redis.from_url(redis_url)
    seconds, micros = client.time()
    now = seconds + micros / 1e6
    times = [now - span + i * span / count for i in range(count)]
    client.zadd(key, {f"earlier{i}:0": t for i, t in enumerate(times)})
    client.expire(key, 120)
    return times


def test_the_openai_backend_keeps_to_the_fleet_limit(redis_url):
    seen = []
    with FakeOpenAI(default=lambda body: seen.append(time.time()) or Reply.ok(GOOD)) as fake:
        config = _config(fake, redis_url)
        key = _window_key(config)
        try:
            # Other workers used 116 of the 120 requests/min, 2 per second, over the last 58 s.
            earlier = _fill_window(redis_url, key, 116, 58.0)
            request = JudgeRequest.model_validate(
                {"passages": [{"text": GOOD_PASSAGE}], "answer": GOOD_ANSWER}
            )
            threads = [threading.Thread(target=judge, args=(request, config)) for _ in range(10)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=30)
        finally:
            redis.Redis.from_url(redis_url).delete(key)
    assert len(seen) == 10
    # 4 free slots at once; each of the other 6 goes only when one of the earlier requests leaves
    # the window (60 s after it was made: 2 per second), and soon after (the waiters poll).
    seen.sort()
    frees = [t + 60 for t in earlier[:6]]
    assert seen[3] < frees[0]
    for request, free in zip(seen[4:], frees):
        assert free - 0.05 <= request <= free + 1.0, (request - free)


def test_the_openai_backend_gives_up_transiently_when_the_limit_outlasts_its_budget(redis_url):
    with FakeOpenAI(default=Reply.ok(GOOD)) as fake:
        config = _config(fake, redis_url, rate_limit_rpm=1, retry_budget_s=2.0)
        request = JudgeRequest.model_validate(
            {"passages": [{"text": GOOD_PASSAGE}], "answer": GOOD_ANSWER}
        )
        try:
            judge(request, config)  # takes the one slot of this minute
            started = time.monotonic()
            with pytest.raises(JudgeError, match="fleet rate limit") as failure:
                judge(request, config)
        finally:
            redis.Redis.from_url(redis_url).delete(_window_key(config))
        assert failure.value.transient
        assert time.monotonic() - started < 2.0
        assert len(fake.requests) == 1


def test_without_a_limit_no_redis_is_needed(redis_url):
    with FakeOpenAI(default=Reply.ok(GOOD)) as fake:
        config = _config(fake, None, rate_limit_rpm=0, rate_limit_redis_url="redis://127.0.0.1:1/0")
        request = JudgeRequest.model_validate(
            {"passages": [{"text": GOOD_PASSAGE}], "answer": GOOD_ANSWER}
        )
        assert judge(request, config).result.claims


def _judge_in_threads(config: JudgeConfig, count: int) -> list:
    request = JudgeRequest.model_validate(
        {"passages": [{"text": GOOD_PASSAGE}], "answer": GOOD_ANSWER}
    )
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(judge(request, config)))
        for _ in range(count)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_the_openai_backend_keeps_an_endpoint_at_its_concurrency_without_a_429(redis_url):
    # The endpoint serves 3 at once and refuses the 4th with a 429; 8 threads judge at once.
    with FakeOpenAI(default=Reply.ok(GOOD), latency=0.2, max_concurrency=3) as fake:
        config = _config(fake, redis_url, rate_limit_rpm=0, max_in_flight=3)
        try:
            results = _judge_in_threads(config, 8)
        finally:
            redis.Redis.from_url(redis_url).delete(
                f"judges:llm-in-flight:{config.base_url}|{config.model}",
                f"judges:llm-in-flight:{config.base_url}|{config.model}:freed",
            )
        assert len(results) == 8 and all(output.result.judge.attempts == 1 for output in results)
        assert fake.concurrency_rejections == 0
        assert fake.peak_concurrency == 3  # and kept at it
    # Without the limit the same threads are refused and wait out Retry-After.
    with FakeOpenAI(default=Reply.ok(GOOD), latency=0.2, max_concurrency=3) as fake:
        _judge_in_threads(_config(fake, redis_url, rate_limit_rpm=0), 8)
        assert fake.concurrency_rejections > 0
