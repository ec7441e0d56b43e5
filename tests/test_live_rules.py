"""The two liveness rules, each stated once in reviewapp/models.py: a reviewer's lease on a pass
(ReviewPassQuerySet.live, ReviewPass.live_lease) and a worker's hold on an answer
(Answer.live_hold, which store.py compiles into its take-over). Each is read at its boundary:
a lease or a hold that ends exactly at `now` is still live."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from reviewapp import store
from reviewapp.models import Answer, ReviewPass
from tests import factories as make

TICK = timedelta(microseconds=1)  # Postgres keeps microseconds, so this is the smallest step
DEAD_HOLDER = uuid.uuid4()  # the token of a delivery whose worker died


@pytest.fixture
def now():
    return timezone.now()


@pytest.fixture
def passes(now):
    """One pass per case, each on its own answer, named by what it is at `now`."""
    cases = {
        "live": {"lease_expires_at": now + timedelta(minutes=5)},
        "ends now": {"lease_expires_at": now},
        "expired": {"lease_expires_at": now - TICK},
        "released": {"lease_expires_at": None},
        "finished": {
            "lease_expires_at": now + timedelta(minutes=5),
            "status": ReviewPass.Status.FINISHED,
        },
        "skipped": {
            "lease_expires_at": now + timedelta(minutes=5),
            "status": ReviewPass.Status.SKIPPED,
        },
        "assigned": {"lease_expires_at": None, "assigned_by": make.user("lead", "lead")},
    }
    rita = make.user("rita", "reviewer")
    return {
        name: ReviewPass.objects.create(
            answer=make.answer(review_status="in_review"), reviewer=rita, **fields
        )
        for name, fields in cases.items()
    }


@pytest.mark.django_db
def test_a_pass_is_live_while_open_with_a_lease_that_ends_at_now_or_later(passes, now):
    live = set(ReviewPass.objects.live(now).values_list("pk", flat=True))
    assert {name for name, row in passes.items() if row.pk in live} == {"live", "ends now"}


@pytest.mark.django_db
def test_a_pass_read_in_memory_is_live_exactly_when_the_query_says_so(passes, now):
    live = set(ReviewPass.objects.live(now).values_list("pk", flat=True))
    for name, row in passes.items():
        row.refresh_from_db()
        assert row.is_live(now) == (row.pk in live), name


@pytest.mark.django_db
def test_a_pass_holds_a_place_with_a_live_lease_or_an_assignment(passes, now):
    holding = set(ReviewPass.objects.holding_place(now).values_list("pk", flat=True))
    assert {name for name, row in passes.items() if row.pk in holding} == {
        "live",
        "ends now",
        "assigned",
    }
    for name, row in passes.items():
        row.refresh_from_db()
        assert row.holds_place(now) == (row.pk in holding), name


@pytest.mark.django_db
def test_an_answer_is_leased_while_its_holder_has_a_lease_ending_at_now_or_later(now):
    rita = make.user("rita", "reviewer")
    cases = {
        "live": (rita, now + timedelta(minutes=5)),
        "ends now": (rita, now),
        "expired": (rita, now - TICK),
        "released": (None, None),
    }
    answers = {
        name: make.answer(review_status="in_review", lease_holder=holder, lease_expires_at=until)
        for name, (holder, until) in cases.items()
    }
    leased = set(Answer.objects.leased(now).values_list("pk", flat=True))
    assert {name for name, row in answers.items() if row.pk in leased} == {"live", "ends now"}
    for name, row in answers.items():
        assert row.lease_live(now) == (row.pk in leased), name


def _judging(until) -> Answer:
    row = make.ingested()
    Answer.objects.filter(pk=row.pk).update(
        status="judging", judging_token=DEAD_HOLDER, judging_until=until
    )
    return row


@pytest.mark.django_db
def test_a_hold_ending_at_now_is_live_and_is_not_taken_over(now):
    cases = {
        "live": now + timedelta(minutes=5),
        "ends now": now,
        "expired": now - TICK,
        "never set": None,
    }
    answers = {name: _judging(until) for name, until in cases.items()}
    held = set(Answer.objects.filter(Answer.live_hold(now)).values_list("pk", flat=True))
    assert {name for name, row in answers.items() if row.pk in held} == {"live", "ends now"}
    # store.py's take-over reads the same rule: a hold that is not live is taken over.
    taken = {
        name
        for name, row in answers.items()
        if store.answer_hold(row.pk, uuid.uuid4(), now, now + timedelta(minutes=5)) is not None
    }
    assert taken == {"expired", "never set"}


@pytest.mark.django_db
def test_a_live_hold_is_taken_over_by_a_delivery_carrying_its_own_token(now):
    row = _judging(now + timedelta(minutes=5))
    held = store.answer_hold(row.pk, DEAD_HOLDER, now, now + timedelta(minutes=5))
    assert held is not None and held.taken_over
