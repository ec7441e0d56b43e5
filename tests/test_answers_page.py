"""/answers/: every posted answer, filtered by the queue's filters, paged both ways with a total."""

from datetime import timedelta
from urllib.parse import quote

import pytest
from django.utils import timezone

from reviewapp.db import counts

from reviewapp.review import selectors
from reviewapp.models import Answer
from reviewapp.api.clients import api_client_create
from tests import factories as make

pytestmark = pytest.mark.django_db
FLAGGED = "Riders aged 65 and older pay a reduced fare of $1.50 per ride."
GROUNDED = "Riders aged 65 and older pay a reduced fare of $1.00 per ride."


def shown_ids(response) -> list[int]:
    return [a.pk for a in response.context["answers"]]


def test_each_filter_narrows_the_list_and_the_human_verdict_has_its_column(client, reviewer):
    bot = api_client_create(name="fares-bot")[0]
    flagged = make.judged(FLAGGED, client=bot)
    grounded = make.judged(GROUNDED, question="Is there a bicycle rule?")
    Answer.objects.filter(pk=grounded.pk).update(
        review_status="adjudicated", adjudicated_verdict="UNGROUNDED"
    )
    old = make.judged(GROUNDED)
    # auto_passed whatever the 5% audit sample drew: the routing cases below count on it.
    Answer.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - timedelta(days=3), review_status="auto_passed"
    )
    assert flagged.review_status == "in_review" and flagged.verdict != "GROUNDED"
    today = timezone.localdate().isoformat()
    cases = {
        "": [grounded.pk, flagged.pk, old.pk],
        "review_status=in_review": [flagged.pk],
        "review_status=adjudicated": [grounded.pk],
        f"verdict={flagged.verdict}": [flagged.pk],
        "status=failed": [],
        "client=fares-bot": [flagged.pk],
        f"since={today}": [grounded.pk, flagged.pk],
        f"until={(timezone.localdate() - timedelta(days=1)).isoformat()}": [old.pk],
        "q=bicycle": [grounded.pk],
    }
    for query, expected in cases.items():
        response = client.get(f"/answers/?{query}")
        assert response.status_code == 200
        assert sorted(shown_ids(response)) == sorted(expected), query
        assert f"<b>{len(expected)}</b> answer" in response.content.decode()
    row = (
        client.get("/answers/?review_status=adjudicated")
        .content.decode()
        .split('class="human-verdict"')[1]
    )
    assert row.split("</td>")[0].endswith("Ungrounded</span>")


def test_pages_go_both_ways_newest_first_with_the_total(client, reviewer, monkeypatch):
    monkeypatch.setattr(selectors, "ANSWERS_PAGE_SIZE", 2)
    made = [make.judged(GROUNDED).pk for _ in range(5)][::-1]  # newest first
    first = client.get("/answers/")
    # (The client's query strings are as the page's links write them: quoted, "+" as %2B.)
    assert (
        shown_ids(first) == made[:2]
        and first.context["page"].total == 5
        and not first.context["page"].previous
    )
    second = client.get(f"/answers/?after={quote(first.context['page'].following)}")
    third = client.get(f"/answers/?after={quote(second.context['page'].following)}")
    assert (
        shown_ids(second) == made[2:4]
        and shown_ids(third) == made[4:]
        and not third.context["page"].following
    )
    back = client.get(f"/answers/?before={quote(third.context['page'].previous)}")
    assert shown_ids(back) == made[2:4]
    start = client.get(f"/answers/?before={quote(back.context['page'].previous)}")
    assert (
        shown_ids(start) == made[:2]
        and not start.context["page"].previous
        and start.context["page"].following
    )
    page = second.content.decode()
    assert 'rel="prev"' in page and 'rel="next"' in page and "<b>5</b> answers" in page
    # a bad cursor: the first page
    assert shown_ids(client.get("/answers/?after=not-a-cursor")) == made[:2]


def test_past_the_exact_count_limit_the_total_is_the_planners_estimate(
    client, reviewer, monkeypatch
):
    make.judged(GROUNDED)
    monkeypatch.setattr(counts, "EXACT_COUNTS_BELOW", 0)
    response = client.get("/answers/?review_status=auto_passed")
    page = response.context["page"]
    assert page.estimated and page.total >= 0
    assert f"About <b>{page.total}</b>" in response.content.decode()


@pytest.mark.parametrize("query, message", [
    ("status=exploded", "status: Select a valid choice"),
    ("verdict=%00", "verdict: Select a valid choice"),
    ("since=yesterday", "since: Enter a valid date"),
    ("q=%00", "q: Null characters are not allowed"),
])
def test_bad_filters_are_a_readable_400(client, reviewer, query, message):
    response = client.get(f"/answers/?{query}")
    assert response.status_code == 400 and message in response.content.decode()


def test_the_queue_counters_follow_the_active_filters(client, reviewer):
    make.judged(FLAGGED)
    make.judged(FLAGGED, question="Is there a bicycle rule?")
    everything = client.get("/queue/").context["counts"]
    searched = client.get("/queue/?q=bicycle").context["counts"]
    assert (everything["in_review"], searched["in_review"]) == (2, 1)
    assert client.get("/queue/?until=2000-01-01").context["counts"].get("in_review", 0) == 0


def test_golden_set_answers_are_not_listed(client, reviewer):
    golden = make.judged(GROUNDED)
    Answer.objects.filter(pk=golden.pk).update(metadata={"golden": "fares"})
    posted = make.judged(GROUNDED)
    assert shown_ids(client.get("/answers/")) == [posted.pk]
