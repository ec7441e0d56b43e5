"""CACHE_URL: the queue counters and /calibration/'s figures computed once for every web process, on
the real Redis; and while that Redis is unreachable the pages still render, computed uncached."""

from __future__ import annotations

import time
import uuid

import pytest
from django.core.cache import cache

from reviewapp import cache as shared_cache

from reviewapp.db import counts
from reviewapp.labels import calibration
from reviewapp.cache import SharedCache
from tests import factories as make
from tests.conftest import redis_url

REDIS = redis_url(10)
UNREACHABLE = "redis://127.0.0.1:1/0"  # nothing listens on port 1: refused at once


def _shared(location: str, prefix: str) -> dict:
    return {
        "default": {
            "BACKEND": "reviewapp.cache.SharedCache",
            "LOCATION": location,
            "KEY_PREFIX": prefix,
        }
    }


@pytest.fixture
def prefix() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


def test_what_one_process_computed_another_reads_without_computing(prefix):
    # as two web processes build it
    one, other = (SharedCache(REDIS, {"KEY_PREFIX": prefix}) for _ in range(2))
    computed = []

    def compute(who):
        computed.append(who)
        return {"needs_review": 7, "who": who}

    assert one.get_or_set("counts", lambda: compute("one"), 15) == {"needs_review": 7, "who": "one"}
    assert other.get_or_set("counts", lambda: compute("other"), 15) == {
        "needs_review": 7,
        "who": "one",
    }
    assert computed == ["one"]
    one.delete("counts")
    assert other.get("counts", "gone") == "gone"


@pytest.mark.django_db
def test_the_calibration_page_is_stored_where_every_web_process_reads_it(
    client, settings, prefix, monkeypatch
):
    settings.CACHES = _shared(REDIS, prefix)
    settings.CALIBRATION_CACHE_SECONDS = 60
    rita = make.user("rita", "reviewer")
    make.claim(make.answer(), "UNSUPPORTED", "UNSUPPORTED", reviewer=rita)
    client.force_login(make.admin())
    first = client.get("/calibration/")
    assert first.status_code == 200
    # Another process's cache (a new client on the same Redis) has the page's figures, so it would
    # not recompute them: computing now fails the test.
    monkeypatch.setattr(calibration, "calibration_page", lambda: pytest.fail("recomputed"))
    stored = SharedCache(REDIS, {"KEY_PREFIX": prefix}).get(calibration.CACHE_KEY)
    assert (
        stored is not None
        and stored["computed_at"] == cache.get(calibration.CACHE_KEY)["computed_at"]
    )
    again = client.get("/calibration/")
    assert again.status_code == 200 and again.context["computed_at"] == stored["computed_at"]


@pytest.mark.django_db
def test_pages_render_uncached_while_the_cache_is_unreachable(
    client, settings, prefix, monkeypatch, caplog
):
    settings.CACHES = _shared(UNREACHABLE, prefix)
    settings.CALIBRATION_CACHE_SECONDS = 60
    monkeypatch.setattr(counts, "EXACT_COUNTS_BELOW", 0)  # the counters go through the cache too
    rita = make.user("rita", "reviewer")
    make.claim(make.answer(), "UNSUPPORTED", "UNSUPPORTED", reviewer=rita)
    client.force_login(make.admin())
    for page in ("/queue/", "/calibration/"):
        assert client.get(page).status_code == 200, page
    assert "cache unreachable" in caplog.text
    # Computed on each view, not cached.
    assert (
        calibration.cached_calibration_page()["computed_at"]
        < calibration.cached_calibration_page()["computed_at"]
    )
    # And for RETRY_AFTER_SECONDS nothing waits on Redis: a miss without a connection attempt.
    started = time.perf_counter()
    assert cache.get("anything", "missed") == "missed"
    assert cache.set("anything", 1) is None and cache.add("anything", 1) is False
    assert time.perf_counter() - started < 0.05


def test_after_the_retry_window_the_cache_is_tried_again(prefix, monkeypatch):
    flaky = SharedCache(REDIS, {"KEY_PREFIX": prefix})
    flaky._went_down(ConnectionError("test"))  # as after a failed call
    flaky.set("k", "v")  # dropped: Redis is taken to be down
    assert SharedCache(REDIS, {"KEY_PREFIX": prefix}).get("k") is None
    monkeypatch.setattr(shared_cache, "RETRY_AFTER_SECONDS", 0.0)
    flaky._down_until = 0.0  # the window is over
    flaky.set("k", "v")
    assert SharedCache(REDIS, {"KEY_PREFIX": prefix}).get("k") == "v"
    flaky.delete("k")
