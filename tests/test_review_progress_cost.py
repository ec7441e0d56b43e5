"""What the queue's progress line costs: the day's decisions read once, and "not undone" asked
of the undo rows only (the unique index on undoes_id), never by hashing the whole review table."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewapp.models import Review
from reviewapp.review import selectors
from reviewapp.review import service as review_service
from tests import factories as make


@pytest.mark.django_db
def test_mine_and_everyones_decisions_today_come_from_one_query_and_leave_out_undone_ones():
    rita, remy = make.user("rita", "reviewer"), make.user("remy", "reviewer")
    answer = make.answer()
    first, second = make.claim(answer, "SUPPORTED"), make.claim(answer, "UNSUPPORTED")
    kept = Review.objects.create(claim=first, answer=answer, reviewer=rita, decision="confirm",
                                 final_label="SUPPORTED", claim_version=1)
    taken_back = Review.objects.create(
        claim=second,
        answer=answer,
        reviewer=rita,
        decision="confirm",
        final_label="UNSUPPORTED",
        claim_version=1,
    )
    Review.objects.create(
        claim=second,
        answer=answer,
        reviewer=rita,
        decision="undo",
        final_label="",
        claim_version=2,
        undoes=taken_back,
    )
    Review.objects.create(claim=second, answer=answer, reviewer=remy, decision="overturn",
                          final_label="SUPPORTED", claim_version=3)

    with CaptureQueriesContext(connection) as queries:
        progress = review_service.review_progress(user=rita)
    assert (progress.mine_today, progress.everyone_today) == (1, 2)
    decisions = [q["sql"] for q in queries if Review._meta.db_table in q["sql"]]
    assert len(decisions) == 1 and "LEFT OUTER JOIN" not in decisions[0]
    assert list(selectors.standing_reviews(Review.objects.filter(reviewer=rita))) == [kept]


@pytest.mark.django_db
def test_the_undone_check_reads_the_undo_rows_index_not_the_review_table():
    sql = str(selectors.standing_reviews(Review.objects.filter(claim_id__in=[1, 2])).query)
    assert "NOT EXISTS" in sql and '"undoes_id" IS NOT NULL' in sql


@pytest.mark.django_db
def test_filtered_queue_counters_come_from_one_query_with_the_unfiltered_meaning():
    from datetime import timedelta

    from django.utils import timezone

    from reviewapp.models import Answer

    reviewer = make.user("rita", "reviewer")
    flagged = [make.answer(review_status="in_review") for _ in range(3)]
    for answer in flagged:
        make.claim(answer, "UNSUPPORTED")
    make.claim(make.answer(review_status="in_review"), "SUPPORTED")  # not matched by the filter
    make.claim(make.answer(review_status="adjudicated"), "UNSUPPORTED")
    Answer.objects.filter(pk=flagged[0].pk).update(
        lease_holder=reviewer, lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    filters = selectors.QueueFilters(label="UNSUPPORTED")
    with CaptureQueriesContext(connection) as queries:
        counts = selectors.queue_counts(filters, reviewer)
    assert counts == {"in_review": 3, "adjudicated": 1, "leased": 1, "failed": 0, "not_judged": 0}
    assert sum(f'FROM "{Answer._meta.db_table}"' in q["sql"] for q in queries) == 1
