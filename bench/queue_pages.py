"""Server time of the reviewer's pages at scale (issue 8, item 5), with the query plans.
Target: p95 <= 100 ms for each page.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench python bench/scale_data.py
    --answers 100000 DATABASE_URL=postgres://postgres@127.0.0.1:5432/claimdesk_bench python
    bench/queue_pages.py [--quick]

Uses Django's test client in-process (no network), so the figures are the view's own time: the
queue's default view, each filter, search, a deep page by keyset cursor, /answers/ (first page,
filters, search, deep pages both ways, its htmx table), the review page of an
answer with 20 passages of 2,000 characters and 15 claims, "Start reviewing" (the lease of the
next free answer and its review page, as reviewers start a shift one after another), and
/calibration/ (its figures cached for CALIBRATION_CACHE_SECONDS; the uncached computation is timed
separately). Prints the EXPLAIN (ANALYZE) of the queue's main queries, so the indexes they use are
on record.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")
# The test client speaks plain http in-process: no redirect to https (the production default).
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Group  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.exceptions import EmptyResultSet  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.results import record  # noqa: E402
from reviewapp.review import selectors  # noqa: E402
from reviewapp.labels import calibration
from reviewapp.models import (  # noqa: E402
    Answer,
    ApiClient,
    Claim,
    Evidence,
    JudgeRun,
    Passage,
    Policy,
)

COMMAND = "python bench/queue_pages.py"
TARGET_MS = 100
SENTENCE = (
    "Riders aged {n} and older pay a reduced fare of ${n}.25 per ride with a valid card, as Sec."
    " {n}.2 says. "
)


def timed(
    client: Client, url: str, repeats: int, headers: dict | None = None
) -> tuple[float, float, float]:
    """p50 and p95 of the wall time, and the median CPU time of this process (Python's share of the
    work, which other tenants of a shared machine disturb less than the wall time)."""
    samples, cpu = [], []
    client.get(url, headers=headers or {})  # warm-up: template loading, first plans, connection
    for _ in range(repeats):
        started, cpu_started = time.perf_counter(), time.process_time()
        response = client.get(url, headers=headers or {})
        samples.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        # 286: an htmx table with nothing left to refresh says so (htmx stops polling).
        assert response.status_code in (200, 286), (url, response.status_code)
    return percentiles(samples, cpu)


def percentiles(samples: list[float], cpu: list[float]) -> tuple[float, float, float]:
    """p50 and p95 of the wall times, median of the CPU times."""
    return (
        statistics.median(samples),
        statistics.quantiles(samples, n=20)[-1],
        statistics.median(cpu),
    )


def page_figure(name: str, figures: tuple[float, float, float], answers: int, repeats: int) -> bool:
    """Print and record a page's (p50, p95, CPU); whether its p95 is over the target."""
    p50, p95, cpu = figures
    print(f"{name:52} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   CPU {cpu:6.1f} ms")
    record(
        f"page p95 {name}",
        p95,
        "ms",
        TARGET_MS,
        higher_is_better=False,
        command=COMMAND,
        answers=answers,
        requests=repeats,
        p50_ms=round(p50, 1),
        cpu_median_ms=round(cpu, 1),
    )
    return p95 > TARGET_MS


def review_shaped_answer() -> Answer:
    """An answer in review with 20 passages of 2,000 characters and 15 claims, each with a quote."""
    existing = Answer.objects.filter(external_id="bench-review-shape").first()
    if existing:
        return existing
    client, _ = ApiClient.objects.get_or_create(
        name="bench-review", defaults={"token_hash": "0" * 64}
    )
    sentences = [SENTENCE.format(n=n + 10) for n in range(15)]
    text = "".join(sentences).strip()
    with transaction.atomic():
        answer = Answer.objects.create(
            client=client,
            external_id="bench-review-shape",
            question="What are the fares?",
            answer=text,
            status="judged",
            review_status="in_review",
            priority=300,
            routing_reason="bench",
            judged_at=timezone.now(),
            policy=Policy.current(),
        )
        passages = Passage.objects.bulk_create(
            Passage(answer=answer, pid=f"P{p + 1}", position=p, agency="Metro", title="Fare Policy",
                    text=(SENTENCE.format(n=p + 10) * 30)[:2000]) for p in range(20))
        run = JudgeRun.objects.create(
            answer=answer,
            profile="claim_audit",
            prompt_version="v1",
            backend="offline",
            model="rules",
            config_key="claim_audit@v1/offline/rules",
            is_current=True,
            status="succeeded",
            verdict="UNGROUNDED",
            grounding_score=0.4,
        )
        position = 0
        for n, sentence in enumerate(sentences):
            start = text.index(sentence.strip(), position)
            position = start + len(sentence.strip())
            claim = Claim.objects.create(
                run=run,
                answer=answer,
                position=n,
                cid=f"c{n + 1}",
                text=sentence.strip(),
                answer_start=start,
                answer_end=position,
                label=("SUPPORTED", "UNSUPPORTED", "CONTRADICTED")[n % 3],
                category="price",
                explanation="The passage states the fare.",
            )
            passage = passages[n % 20]
            quote = passage.text[30:90]
            Evidence.objects.create(
                claim=claim,
                passage=passage,
                passage_pid=passage.pid,
                position=0,
                quote=quote,
                start=30,
                end=90,
                match="exact",
            )
        Answer.objects.filter(pk=answer.pk).update(judged_by=run)
    answer.judged_by = run
    return answer


def explain(name: str, qs) -> None:
    try:
        sql, params = qs.query.sql_with_params()
    except EmptyResultSet:  # e.g. a search whose whole words no answer holds: no query is sent
        print(f"\nEXPLAIN {name}:\n  (no query: nothing can match)")
        return
    with connection.cursor() as cur:
        cur.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) " + sql, params)
        print(f"\nEXPLAIN {name}:\n" + "\n".join("  " + row[0] for row in cur.fetchall()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats", type=int, default=None, help="requests per page (default 30, quick 10)"
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--only", default="", help="time only the pages whose name starts with this, e.g. 'answers'"
    )
    args = parser.parse_args()
    repeats = args.repeats or (10 if args.quick else 30)
    user, _ = get_user_model().objects.get_or_create(username="bench-reviewer")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    admin, _ = get_user_model().objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True}
    )
    admin.groups.add(Group.objects.get_or_create(name="admin")[0])
    reviewer, admin_client = Client(), Client()
    reviewer.force_login(user)
    admin_client.force_login(admin)
    shaped = review_shaped_answer()
    default = selectors.queue_answers(filters=selectors.QueueFilters(), user=user)
    rows, deep = selectors.queue_page(default)
    for _ in range(20):  # 21 pages in
        _, deep = selectors.queue_page(default, after=deep)
    searched = selectors.queue_answers(filters=selectors.QueueFilters(q="reduced fare"), user=user)
    _, deep_search = selectors.queue_page(searched)
    for _ in range(20):
        _, deep_search = selectors.queue_page(searched, after=deep_search)
    posted = selectors.posted_answers()
    answers_deep = answers_back = ""
    for _ in range(21):  # 22 pages in, and the cursor back to page 21 from there
        page = selectors.answers_page(posted, after=answers_deep)
        answers_back, answers_deep = page.previous, page.following
    some = (
        Answer.objects.filter(review_status="in_review")
        .exclude(pk=shaped.pk)
        .order_by("-id")
        .first()
    )
    client_name = (
        ApiClient.objects.order_by("id").values_list("name", flat=True).first() or "nobody"
    )
    today = timezone.now().date()
    urls = {
        "queue default": "/queue/",
        "queue label=CONTRADICTED": "/queue/?label=CONTRADICTED",
        "queue label=UNSUPPORTED": "/queue/?label=UNSUPPORTED",
        "queue label=PARTIALLY_SUPPORTED": "/queue/?label=PARTIALLY_SUPPORTED",
        "queue label=SUPPORTED": "/queue/?label=SUPPORTED",
        "queue category=price": "/queue/?category=price",
        "queue category=eligibility": "/queue/?category=eligibility",
        f"queue client={client_name}": f"/queue/?client={client_name}",
        "queue since today": f"/queue/?since={today}",
        "queue until (3 days ago)": f"/queue/?until={today.fromordinal(today.toordinal() - 3)}",
        "queue profile=offline@v2": "/queue/?profile=offline@v2",
        "queue profile=claim_audit": "/queue/?profile=claim_audit",
        "queue mine": "/queue/?mine=1",
        "queue search (rare)": f"/queue/?q=ride+{some.pk % 100000 if some else 4242}+cost",
        "queue search (common)": "/queue/?q=reduced+fare",
        # Words in every answer but in the other order, and a word in none (the trigram index had
        # to recheck every row for the first and the whole queue was walked for the second).
        "queue search (common words, other order)": "/queue/?q=fare+reduced",
        "queue search (no match)": "/queue/?q=bicycle",
        # One in ten answers: a number's start (ride 12, 120-129, 1200-..., $12.00).
        "queue search (prefix, ~10%)": "/queue/?q=ride+12",
        "queue search (one letter)": "/queue/?q=r",
        "queue search page 22 (keyset)": f"/queue/?q=reduced+fare&after={deep_search}",
        "queue label+category+search": "/queue/?label=UNSUPPORTED&category=price&q=How+much",
        "queue page 22 (keyset)": f"/queue/?after={deep}",
        "queue htmx table": "/queue/",
        "review page (20 passages x 2,000 chars, 15 claims)": f"/review/{shaped.pk}/",
        # /answers/: everything posted, newest first, with a total (estimated past 20,000 answers).
        "answers first page": "/answers/",
        "answers status=failed (none)": "/answers/?status=failed",
        "answers verdict=GROUNDED (~2%)": "/answers/?verdict=GROUNDED",
        "answers routing=auto_passed (~2%)": "/answers/?review_status=auto_passed",
        "answers verdict=UNGROUNDED": "/answers/?verdict=UNGROUNDED",
        "answers label=CONTRADICTED": "/answers/?label=CONTRADICTED",
        "answers category=price": "/answers/?category=price",
        "answers since today": f"/answers/?since={today}",
        "answers search (rare)": f"/answers/?q=ride+{some.pk % 100000 if some else 4242}+cost",
        "answers search (common)": "/answers/?q=reduced+fare",
        "answers search (no match)": "/answers/?q=bicycle",
        "answers status+verdict+search": (
            "/answers/?status=judged&verdict=MOSTLY_GROUNDED&q=How+much"
        ),
        "answers page 22 (keyset)": f"/answers/?after={answers_deep}",
        "answers page 21 (keyset, backwards)": f"/answers/?before={answers_back}",
        "answers htmx table": "/answers/",
    }
    urls = {name: url for name, url in urls.items() if name.startswith(args.only)}
    answers = Answer.objects.count()
    claims_estimate = _estimate("reviewapp_claim")
    print(f"{answers} answers, ~{claims_estimate} claims; {os.cpu_count()} cores (shared); "
          f"{repeats} requests each; load average {os.getloadavg()[0]:.2f}")
    failures = 0
    for name, url in urls.items():
        # The htmx request asks for the table alone, as when a filter changes.
        headers = (
            {"HX-Request": "true", "HX-Target": "queue-table"}
            if name == "queue htmx table"
            else (
                {"HX-Request": "true", "HX-Target": "answer-table"}
                if name == "answers htmx table"
                else None
            )
        )
        failures += page_figure(name, timed(reviewer, url, repeats, headers), answers, repeats)

    if args.only:
        print(
            f"\n{failures} of {len(urls)} pages above {TARGET_MS} ms at p95; load average now"
            f" {os.getloadavg()[0]:.2f}"
        )
        return 0
    # "Start reviewing": the lease of the next free answer and the review page it redirects to.
    failures += page_figure(
        "next answer (lease + review page)", next_answer_times(repeats), answers, repeats
    )

    # /calibration/: the page as served (figures cached), and the computation it caches.
    cache.delete(calibration.CACHE_KEY)
    admin_client.get("/calibration/")  # fills the cache, as the first view after a TTL does
    page_figure(
        "calibration (cached figures)",
        timed(admin_client, "/calibration/", repeats),
        answers,
        repeats,
    )
    # /exports/ counts the decided claims its filters match: cached briefly on big tables.
    admin_client.get("/exports/")
    page_figure(
        "exports page (row count cached)",
        timed(admin_client, "/exports/", repeats),
        answers,
        repeats,
    )
    uncached = []
    for _ in range(1 if args.quick else 3):
        started = time.perf_counter()
        calibration.calibration_page()
        uncached.append((time.perf_counter() - started) * 1000)
    print(
        f"{f'calibration computation (uncached, {len(uncached)} runs)':52} median"
        f" {statistics.median(uncached):7.1f} ms"
    )
    record("calibration computation uncached median", statistics.median(uncached), "ms", None,
           higher_is_better=False, command=COMMAND, answers=answers)

    explain("queue default (ids of the first page)",
            default.in_queue_order().values("id")[:51])
    explain("queue label=CONTRADICTED", selectors.queue_answers(
        filters=selectors.QueueFilters(label="CONTRADICTED"), user=user).in_queue_order()
        .values("id")[:51])
    rare = urls["queue search (rare)"].split("q=", 1)[1].replace("+", " ")
    explain(
        f"queue search '{rare}' (rare words: the few answers holding them)", _searched(rare, user)
    )
    explain("queue since today", selectors.queue_answers(
        filters=selectors.QueueFilters(since=today), user=user).in_queue_order()
        .values("id")[:51])
    explain(
        "queue search 'reduced fare' (common words: queue order)", _searched("reduced fare", user)
    )
    explain("queue search 'bicycle' (no match)", _searched("bicycle", user))
    explain("queue search 'ride 12' (prefix, ~10%)", _searched("ride 12", user))
    explain("queue deep page (keyset)", _after(default, deep).in_queue_order().values("id")[:51])
    explain(
        "review page claims", Claim.objects.filter(run_id=shaped.judged_by_id).order_by("position")
    )
    print(f"\n{failures} of {len(urls) + 1} pages above {TARGET_MS} ms at p95; "
          f"load average now {os.getloadavg()[0]:.2f}")
    return 0


def next_answer_times(repeats: int) -> tuple[float, float, float]:
    """"Start reviewing" (POST /queue/next, following its redirect) by `repeats` reviewers in turn,
    as at the start of a shift: each leases the first free answer of the queue, walking past those
    the earlier ones hold, and opens it. The leases are given back afterwards. p50, p95, CPU."""
    reviewers = []
    group = Group.objects.get_or_create(name="reviewer")[0]
    repeats = min(
        repeats, Answer.objects.filter(review_status="in_review", lease_holder=None).count() - 1
    )
    for n in range(repeats + 1):  # the first one warms up
        user, _ = get_user_model().objects.get_or_create(username=f"bench-next-{n}")
        user.groups.add(group)
        client = Client()
        client.force_login(user)
        reviewers.append(client)
    samples, cpu = [], []
    try:
        for n, client in enumerate(reviewers):
            started, cpu_started = time.perf_counter(), time.process_time()
            response = client.post("/queue/next", follow=True)
            if n:
                samples.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - cpu_started) * 1000)
            assert (
                response.status_code == 200 and "/review/" in response.redirect_chain[-1][0]
            ), response.redirect_chain
    finally:
        Answer.objects.filter(lease_holder__username__startswith="bench-next-").update(
            lease_holder=None, lease_expires_at=None)
    return percentiles(samples, cpu)


def _searched(text: str, user):
    """The ids of the first page of a search, as queue_page asks for them."""
    query = selectors.queue_answers(filters=selectors.QueueFilters(q=text), user=user)
    return query.in_queue_order().values("id")[:51]


def _after(qs, cursor: str):
    key = selectors.QUEUE_ORDER.decoded(cursor) if cursor else None  # "": the queue fits one page
    return qs.filter(selectors.QUEUE_ORDER.beyond(key)) if key else qs


def _estimate(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE relname = %s", [table])
        row = cursor.fetchone()
        return row[0] if row else 0


if __name__ == "__main__":
    sys.exit(main())
