"""Server time of the reviewer's pages at scale (issue 8, item 5), with the query plans.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench python bench/scale_data.py --answers 100000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench python bench/queue_pages.py

Uses Django's test client in-process (no network), so the figures are the view's own time.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Group  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from reviewapp import selectors  # noqa: E402
from reviewapp.models import Answer  # noqa: E402


def timed(client: Client, url: str, repeats: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main(repeats: int = 20) -> None:
    user, _ = get_user_model().objects.get_or_create(username="bench-reviewer")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    client = Client()
    client.force_login(user)
    rows, cursor = selectors.queue_page(selectors.queue_answers(filters=selectors.QueueFilters(), user=user))
    deep = cursor
    for _ in range(20):  # 21 pages in
        _, deep = selectors.queue_page(selectors.queue_answers(filters=selectors.QueueFilters(), user=user), after=deep)
    waiting = Answer.objects.filter(review_status="in_review").order_by("-priority", "created_at").first()
    urls = {
        "queue default": "/queue/",
        "queue label=CONTRADICTED": "/queue/?label=CONTRADICTED",
        "queue category=price": "/queue/?category=price",
        "queue client": "/queue/?client=nobody",
        "queue profile": "/queue/?profile=offline@v2",
        "queue mine": "/queue/?mine=1",
        "queue search": "/queue/?q=ride+4242",
        "queue page 22 (keyset)": f"/queue/?after={deep}",
        "review page": f"/review/{waiting.pk}/",
    }
    print(f"{Answer.objects.count()} answers; {os.cpu_count()} cores; {repeats} requests each")
    for name, url in urls.items():
        p50, p95 = timed(client, url, repeats)
        print(f"{name:28} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms")
    with connection.cursor() as cur:
        sql, params = selectors.queue_answers(filters=selectors.QueueFilters(), user=user).order_by(
            "-priority", "created_at", "id").values("id")[:51].query.sql_with_params()
        cur.execute("EXPLAIN " + sql, params)
        print("\nEXPLAIN queue default:\n" + "\n".join(row[0] for row in cur.fetchall()))


if __name__ == "__main__":
    main()
