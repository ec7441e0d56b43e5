"""Counts for the pages: exact on small tables, the planner's estimate or a short cache on big
ones."""

from __future__ import annotations

import json

from django.db.models import QuerySet
from django.core.cache import cache
from django.db import connection


def count_of(qs: QuerySet) -> tuple[int, bool]:
    """(rows, estimated): counted on small tables; past EXACT_COUNTS_BELOW answers, the planner's
    estimate, as a count would read every matching row on each page view."""
    if _answer_rows_estimate() < EXACT_COUNTS_BELOW:
        return qs.count(), False
    sql, params = qs.values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return int(plan[0]["Plan"]["Plan Rows"]), True


# Exact counts over a big table cost a scan per page view; past this many answers the queue's
# counters are cached for a few seconds instead (they are for orientation, not bookkeeping).
EXACT_COUNTS_BELOW = 20_000


COUNTS_TTL_SECONDS = 15


def _answer_rows_estimate() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = 'reviewapp_answer'::regclass"
        )
        return max(cursor.fetchone()[0], 0)


def counted(key: str, compute):
    """compute() exactly on small tables; cached for COUNTS_TTL_SECONDS on big ones."""
    if _answer_rows_estimate() < EXACT_COUNTS_BELOW:
        return compute()
    return cache.get_or_set(f"claimdesk:{key}", compute, COUNTS_TTL_SECONDS)
