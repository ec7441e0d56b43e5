"""The low-severity findings of issue 28's attack run (items 10, 11, 12, 14): each test is named
for the attack and failed on the code before the fix."""

from __future__ import annotations

import pytest

from reviewapp.models import Answer
from tests import factories as make

pytestmark = pytest.mark.django_db


# --- item 10: private pages are not cached
# ----------------------------------------------------------


def test_private_pages_exports_and_the_api_say_private_no_store(client, api_token):
    answer = make.in_review()
    client.force_login(make.admin())
    for url in (f"/review/{answer.pk}/", "/answers/", "/queue/", "/exports/download?format=jsonl"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert {"private", "no-store"} <= {
            part.strip() for part in response["Cache-Control"].split(",")
        }, url
    api = client.get(
        f"/api/v1/answers/{answer.public_id}", headers={"Authorization": f"Bearer {api_token}"}
    )
    assert api["Cache-Control"] == "private, no-store"


# --- item 11: webhook URLs with zone ids or encoded whitespace
# ---------------------------------------


@pytest.mark.parametrize("url", ["http://[fe80::1%25lo]:9999/", "http://127.0.0.1%2509:9999/",
                                 "http://127.0.0.1%20:9999/"])
def test_a_webhook_url_with_a_zone_id_or_encoded_whitespace_is_refused(
    hook_api, private_refused, url
):
    response = hook_api.put(url=url)
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == "url" and "zone id" in error["message"]


# --- item 12: /assign's back= stays on this site
# -----------------------------------------------------


@pytest.mark.parametrize("back", ["//evil.example/", "/\\evil.example/", "https://evil.example/"])
def test_assign_does_not_follow_back_to_another_site(client, back):
    answer = make.in_review()
    make.user("bob", "reviewer")
    client.force_login(make.user("lee", "lead"))
    response = client.post("/assign", {"reviewer": "bob", "answer": answer.pk, "back": back})
    assert response.status_code == 302 and response["Location"] == "/answers/"


def test_assign_still_goes_back_to_a_page_of_this_site(client):
    answer = make.in_review()
    make.user("bob", "reviewer")
    client.force_login(make.user("lee", "lead"))
    response = client.post(
        "/assign", {"reviewer": "bob", "answer": answer.pk, "back": f"/review/{answer.pk}/"}
    )
    assert response["Location"] == f"/review/{answer.pk}/"
    assert Answer.objects.get(pk=answer.pk).passes.count() == 1


# --- item 14: a killed worker's run, and a long note on an added claim
# -------------------------------


def test_a_killed_workers_run_is_closed_as_abandoned_when_the_sweeper_takes_its_answer_over(
    settings,
):
    import uuid
    from datetime import timedelta

    from django.utils import timezone

    from reviewapp.judging.service import judge_config_for, start_run
    from reviewapp.judging.sweeper import answers_sweep
    from reviewapp.models import JudgeRun, Policy

    settings.CELERY_TASK_DEFAULT_QUEUE = (
        f"lost-run-test-{uuid.uuid4().hex[:8]}"  # nobody consumes it
    )
    answer = make.ingested()
    # the worker that then died
    run, _ = start_run(answer, judge_config_for(answer, Policy.current()))
    Answer.objects.filter(pk=answer.pk).update(status="judging", judging_token=uuid.uuid4(),
                                               judging_until=timezone.now() - timedelta(seconds=1))
    assert answers_sweep().requeued == [answer.pk]
    run.refresh_from_db()
    assert (
        run.status == JudgeRun.Status.FAILED
        and run.error.startswith("abandoned")
        and run.finished_at
    )
    assert not JudgeRun.objects.filter(answer=answer, status="running").exists()


def test_an_added_claims_note_over_2000_characters_is_refused_with_a_message_not_cut(client):
    answer = make.in_review()
    client.force_login(make.user("rita", "reviewer"))
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert 'aria-label="Note" maxlength="2000"' in page
    response = client.post(
        f"/review/{answer.pk}/add-claim",
        {"text": "A 30-day pass", "label": "UNSUPPORTED", "note": "x" * 2500},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 400 and "at most 2000 characters" in response.content.decode()
    assert not answer.claims.filter(origin="reviewer").exists()


# --- item 9: the database down
# ---------------------------------------------------------------------


@pytest.fixture
def database_down(monkeypatch):
    """Every query fails as with Postgres stopped (psycopg's error, as Django wraps it)."""
    from django.db import OperationalError
    from django.db.backends import utils

    def refused(*args, **kwargs):
        raise OperationalError(
            "connection to server at 127.0.0.1, port 5432 failed: Connection refused"
        )

    def down():
        for method in ("execute", "executemany"):
            monkeypatch.setattr(utils.CursorWrapper, method, refused)

    return down


def test_a_page_with_the_database_down_is_a_readable_503_with_retry_after(database_down):
    from django.test import Client

    answer = make.in_review()
    client = Client(raise_request_exception=False)
    client.force_login(make.user("rita", "reviewer"))
    database_down()
    for url in ("/queue/", f"/review/{answer.pk}/"):
        response = client.get(url)
        assert response.status_code == 503 and int(response["Retry-After"]) > 0, url
        assert "cannot reach its database" in response.content.decode()
    action = client.post(f"/review/{answer.pk}/undo", headers={"HX-Request": "true"})
    assert action.status_code == 503 and action["Retry-After"]


def test_any_other_error_is_still_djangos_500(monkeypatch):
    from django.test import Client

    from reviewapp.review import views as review_views

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(review_views, "render", broken)
    client = Client(raise_request_exception=False)
    client.force_login(make.user("rita", "reviewer"))
    response = client.get("/queue/")
    assert response.status_code == 500 and "Retry-After" not in response
