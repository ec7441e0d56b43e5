"""The queue's order is stated once (AnswerQuerySet.in_queue_order): the queue page lists answers
in it, and `n` ("Start reviewing") leases the answer at the top of that list."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from reviewapp.models import Answer
from tests import factories as make

pytestmark = pytest.mark.django_db


def _queue_rows(client, query: str = "") -> list[int]:
    body = client.get(f"/queue/{query}").content.decode()
    return [int(pk) for pk in re.findall(r'<td data-label="#"><a href="/review/(\d+)/">', body)]


@pytest.fixture
def mixed_queue():
    """Five answers whose order needs all three keys: priority, then age, then id."""
    answers = [make.in_review() for _ in range(5)]
    now = timezone.now()
    settings = [
        (100, now),
        (300, now),
        (300, now - timedelta(minutes=5)),
        (100, now - timedelta(minutes=1)),
        (300, now - timedelta(minutes=5)),
    ]
    for answer, (priority, created_at) in zip(answers, settings):
        Answer.objects.filter(pk=answer.pk).update(priority=priority, created_at=created_at)
    return answers


def test_the_queue_page_lists_answers_in_queue_order(client, rita, mixed_queue):
    client.force_login(rita)
    expected = list(
        Answer.objects.filter(review_status="in_review")
        .in_queue_order()
        .values_list("pk", flat=True)
    )
    a = mixed_queue
    # ties on age: the lower id first
    assert expected == [
        a[2].pk,
        a[4].pk,
        a[1].pk,
        a[3].pk,
        a[0].pk,
    ]
    assert _queue_rows(client) == expected


def test_n_leases_the_queues_first_row_every_time(client, rita, mixed_queue):
    client.force_login(rita)
    for _ in mixed_queue:
        top = _queue_rows(client)[0]
        response = client.post("/queue/next", {"leaving": ""})
        assert response["Location"] == f"/review/{top}/"
        # Done with it: it leaves the queue, and the next `n` must take the new top row.
        Answer.objects.filter(pk=top).update(
            review_status="adjudicated", lease_holder=None, lease_expires_at=None
        )
    assert _queue_rows(client) == []


def test_n_within_filters_leases_the_filtered_queues_first_row(client, rita, mixed_queue):
    client.force_login(rita)
    a = mixed_queue
    Answer.objects.filter(pk__in=[a[2].pk, a[4].pk]).update(
        question="How much is the bicycle fare?"
    )
    assert _queue_rows(client, "?q=bicycle") == [a[2].pk, a[4].pk]
    assert client.post("/queue/next?q=bicycle")["Location"] == f"/review/{a[2].pk}/"
