"""Values pages read from a request that used to make them 500 (a NUL, which Postgres cannot
hold; a date whose next day does not exist): each is now a 400 with its message on the page, and
nothing is stored."""

from __future__ import annotations

import pytest

from reviewapp.models import Claim, Policy
from tests import factories as make

pytestmark = pytest.mark.django_db


@pytest.fixture
def ada(db):
    return make.admin()


@pytest.mark.parametrize(
    "query, field",
    [
        ("q=%00", "q"),
        ("client=%00", "client"),
        ("profile=%00", "profile"),
        ("until=9999-12-31", "until"),
        ("since=9999-12-31", "since"),
    ],
)
def test_a_queue_filter_the_database_cannot_take_is_a_400_saying_which(client, ada, query, field):
    make.in_review()
    client.force_login(ada)
    response = client.get(f"/queue/?{query}")
    assert response.status_code == 400
    assert f"{field}:" in response.content.decode()


def test_starting_to_review_with_such_a_filter_is_a_400_too(client, ada):
    client.force_login(ada)
    assert client.post("/queue/next?q=%00").status_code == 400


def test_ordinary_queue_filters_still_work(client, ada):
    make.in_review()
    client.force_login(ada)
    assert client.get("/queue/?q=fare&until=2099-01-01&profile=claim_audit").status_code == 200


@pytest.mark.parametrize("url", ["/exports/?profile=%00", "/examples/?profile=%00"])
def test_a_nul_profile_filter_on_admin_pages_is_a_400_saying_so(client, ada, url):
    client.force_login(ada)
    response = client.get(url)
    assert response.status_code == 400
    assert "profile:" in response.content.decode()


@pytest.mark.parametrize("htmx", [False, True])
def test_a_nul_in_a_decision_note_is_a_400_and_decides_nothing(client, htmx):
    answer = make.in_review()
    claim = make.flagged(answer)
    client.force_login(make.user("rita", "reviewer"))
    client.get(f"/review/{answer.pk}/")
    response = client.post(f"/review/{answer.pk}/claims/{claim.pk}/decide",
                           {"decision": "confirm", "version": 0, "note": "right\x00"},
                           headers={"HX-Request": "true"} if htmx else {})
    assert response.status_code == 400
    assert "Note not saved: note:" in response.content.decode()
    claim.refresh_from_db()
    assert claim.decision == ""


def test_a_nul_in_an_added_claims_note_is_a_400_and_adds_nothing(client):
    answer = make.in_review()
    claims = answer.claims.count()
    client.force_login(make.user("rita", "reviewer"))
    client.get(f"/review/{answer.pk}/")
    response = client.post(f"/review/{answer.pk}/add-claim",
                           {"start": 0, "end": 10, "label": "UNSUPPORTED", "note": "missed\x00"})
    assert response.status_code == 400
    assert Claim.objects.filter(answer=answer).count() == claims


def test_a_nul_in_a_rollback_note_is_a_400_and_makes_no_version(client, ada):
    Policy.current()
    versions = Policy.objects.count()
    client.force_login(ada)
    response = client.post("/policy/1/rollback", {"note": "too lax\x00"})
    assert response.status_code == 400
    assert "note:" in response.content.decode()
    assert Policy.objects.count() == versions
