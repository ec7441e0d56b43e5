"""The review queue and the review page: roles, leases, decisions, undo, adjudication,
highlights."""

from __future__ import annotations

import html
import re
import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

import judges
from reviewapp.models import (
    Answer,
    AuditEvent,
    Claim,
    Evidence,
    JudgeRun,
    Policy,
    Review,
    ReviewPass,
)
from reviewapp.review import service as review_service
from reviewapp.api import selectors
from reviewapp.judging.service import answer_judge, check_spans
from reviewapp.review.service import DecisionConflict, LeaseHeld
from tests import factories as make
from tests.factories import fare_payload

User = get_user_model()


# --- roles ------------------------------------------------------------------------------------

PAGES = ["/queue/", "/answers/", "/review/{id}/"]
ACTIONS = [
    "/queue/next",
    "/review/{id}/claims/{claim}/decide",
    "/review/{id}/undo",
    "/review/{id}/add-claim",
    "/review/{id}/finish",
    "/review/{id}/lease",
    "/review/{id}/release",
]
EVERY_URL = [("get", url) for url in PAGES] + [("post", url) for url in ACTIONS]


def _call(client, method: str, url: str):
    answer = make.in_review()
    return getattr(client, method)(url.format(id=answer.pk, claim=make.flagged(answer).pk))


@pytest.mark.django_db
@pytest.mark.parametrize("method,url", EVERY_URL)
def test_strangers_get_the_login_page_everywhere(client, method, url):
    response = _call(client, method, url)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
@pytest.mark.parametrize("method,url", EVERY_URL)
def test_a_signed_in_user_without_a_role_gets_403_everywhere(client, method, url):
    client.force_login(make.user("visitor"))
    assert _call(client, method, url).status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize("url", ACTIONS)
def test_actions_refuse_get(client, rita, url):
    client.force_login(rita)
    assert _call(client, "get", url).status_code == 405


@pytest.mark.django_db
@pytest.mark.parametrize("url", PAGES)
def test_reviewers_and_admins_see_every_page(client, url, rita):
    answer = make.in_review()
    for user in (
        rita,
        make.user("ada", "admin"),
        User.objects.create_superuser("root", password="pw-root-123"),
    ):
        client.force_login(user)
        assert client.get(url.format(id=answer.pk)).status_code == 200


@pytest.mark.django_db
def test_reviewers_get_403_on_admin_pages(client, rita):
    client.force_login(rita)
    assert client.get("/admin/").status_code == 302  # Django admin sends non-staff to its login
    assert not rita.is_staff


@pytest.mark.django_db
def test_create_reviewer_prints_a_working_password(client):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("create_reviewer", "paula", "--admin", stdout=out, stderr=StringIO())
    signed_in = client.post(
        "/accounts/login/", {"username": "paula", "password": out.getvalue().strip()}
    )
    assert signed_in.status_code == 302
    assert User.objects.get(username="paula").groups.filter(name="admin").exists()


# --- the queue --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_queue_lists_answers_worst_first_then_oldest(client, rita):
    low = make.in_review(
        answer="Riders aged 65 and older pay a reduced fare of $1.00 per ride, maybe."
    )
    high = make.in_review()
    Answer.objects.filter(pk=low.pk).update(priority=100)
    Answer.objects.filter(pk=high.pk).update(priority=300)
    client.force_login(rita)
    body = client.get("/queue/").content.decode()
    assert body.index(f'/review/{high.pk}/') < body.index(f'/review/{low.pk}/')


@pytest.mark.django_db
def test_the_queue_filters_by_label_search_client_and_mine(client, rita):
    answer = make.in_review(question="Is there a bicycle fare?")
    other = make.in_review()
    client.force_login(rita)
    assert f"/review/{answer.pk}/" in client.get("/queue/?q=bicycle").content.decode()
    assert f"/review/{other.pk}/" not in client.get("/queue/?q=bicycle").content.decode()
    assert f"/review/{answer.pk}/" in client.get("/queue/?label=CONTRADICTED").content.decode()
    assert f"/review/{answer.pk}/" not in client.get("/queue/?label=UNSUPPORTED").content.decode()
    assert f"/review/{answer.pk}/" not in client.get("/queue/?client=nobody").content.decode()
    review_service.lease_take(user=rita, answer=answer)
    mine = client.get("/queue/?mine=1").content.decode()
    assert f"/review/{answer.pk}/" in mine and f"/review/{other.pk}/" not in mine


@pytest.mark.django_db
def test_the_queue_filters_by_creation_day_with_both_bounds_inclusive(client, rita):
    now = timezone.now()
    today = now.replace(hour=0, minute=0, second=1, microsecond=0)
    days = {}
    for days_ago in (0, 1, 3):
        answer = make.in_review()
        Answer.objects.filter(pk=answer.pk).update(created_at=today - timedelta(days=days_ago))
        days[days_ago] = answer.pk
    # yesterday 23:59:59
    Answer.objects.filter(pk=days[1]).update(created_at=today - timedelta(seconds=2))
    client.force_login(rita)

    def listed(query: str) -> set[int]:
        body = client.get(f"/queue/?{query}").content.decode()
        return {pk for pk in days.values() if f"/review/{pk}/" in body}

    yesterday, three_ago = (today - timedelta(days=1)).date(), (today - timedelta(days=3)).date()
    assert listed(f"since={today.date()}") == {days[0]}
    assert listed(f"since={yesterday}&until={yesterday}") == {days[1]}
    assert listed(f"until={yesterday}") == {days[1], days[3]}
    assert listed(f"since={three_ago}") == set(days.values())


@pytest.mark.django_db
def test_queue_pages_by_keyset_without_gaps_or_repeats(client, rita):
    first = make.in_review()
    run = first.judged_by
    clones = [
        Answer(
            question=f"q{i}",
            answer=first.answer,
            status="judged",
            review_status="in_review",
            priority=i % 3 * 100,
            judged_by=run,
        )
        for i in range(120)
    ]
    Answer.objects.bulk_create(clones)
    client.force_login(rita)
    seen, url = [], "/queue/"
    while url:
        body = client.get(url).content.decode()
        seen += [
            int(pk) for pk in re.findall(r'<td data-label="#"><a href="/review/(\d+)/">', body)
        ]
        more = re.search(r'href="\?([^"]*after=[^"]+)">Next 50', body)
        url = f"/queue/?{html.unescape(more.group(1))}" if more else ""
    assert len(seen) == len(set(seen)) == 121


@pytest.mark.django_db
def test_start_reviewing_leases_the_next_free_item(client, rita, ron):
    first, second = make.in_review(), make.in_review()
    client.force_login(rita)
    response = client.post("/queue/next")
    assert response.status_code == 302 and response["Location"] == f"/review/{first.pk}/"
    client.force_login(ron)
    assert client.post("/queue/next")["Location"] == f"/review/{second.pk}/"
    client.force_login(rita)
    assert client.post("/queue/next")["Location"] == f"/review/{first.pk}/"  # mine first


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_racing_for_the_next_item_never_get_the_same_one():
    reviewers = [make.user(f"r{i}", "reviewer") for i in range(6)]
    answers = [make.in_review() for _ in range(6)]
    barrier, got = threading.Barrier(len(reviewers)), []

    def take(user):
        barrier.wait()
        try:
            got.append(review_service.lease_next(user=user).pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=take, args=(user,)) for user in reviewers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got) == sorted(a.pk for a in answers)


@pytest.mark.django_db
def test_a_stale_lease_expires_by_itself(rita, ron):
    answer = make.in_review()
    review_service.lease_take(user=rita, answer=answer)
    assert not review_service.lease_take(user=ron, answer=answer)
    # Each reviewer's lease is their pass; the answer's own fields mirror the latest one.
    expired = timezone.now() - timedelta(seconds=1)
    Answer.objects.filter(pk=answer.pk).update(lease_expires_at=expired)
    ReviewPass.objects.filter(answer=answer).update(lease_expires_at=expired)
    assert review_service.lease_take(user=ron, answer=answer)
    assert not review_service.lease_renew(user=rita, answer_id=answer.pk)


@pytest.mark.django_db
def test_opening_a_review_link_does_not_lock_the_answer(client, rita, ron):
    # One reviewer opening 35 links (or a browser prefetching them) used to lease all 35.
    answers = [make.in_review() for _ in range(35)]
    client.force_login(rita)
    for answer in answers:
        page = client.get(f"/review/{answer.pk}/").content.decode()
        assert "Take this answer" in page and 'class="decide-fields" disabled' in page
    assert not Answer.objects.filter(lease_holder__isnull=False).exists()
    client.force_login(ron)
    assert client.post("/queue/next")["Location"] == f"/review/{answers[0].pk}/"
    for answer in answers[1:]:
        assert client.post(f"/review/{answer.pk}/take").status_code == 302
    assert Answer.objects.filter(lease_holder=ron).count() == 35


@pytest.mark.django_db
def test_take_this_answer_leases_it_unless_someone_else_holds_it(client, rita, ron):
    answer = make.in_review()
    client.force_login(rita)
    assert client.post(f"/review/{answer.pk}/take")["Location"] == f"/review/{answer.pk}/"
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert "Take this answer" not in page and 'class="decide-fields" disabled' not in page
    client.force_login(ron)
    response = client.post(f"/review/{answer.pk}/take", follow=True)
    assert "rita is reviewing this answer" in response.content.decode()
    assert Answer.objects.get(pk=answer.pk).lease_holder == rita


@pytest.mark.django_db
def test_skip_hands_the_next_answer_and_keeps_the_skipped_one_from_me_for_the_lease_length(
    client, rita, ron
):
    first, second = make.in_review(), make.in_review()
    client.force_login(rita)
    assert client.post("/queue/next")["Location"] == f"/review/{first.pk}/"
    assert client.post(f"/review/{first.pk}/skip")["Location"] == f"/review/{second.pk}/"
    assert Answer.objects.get(pk=first.pk).lease_holder is None
    client.post(f"/review/{second.pk}/skip")
    response = client.post("/queue/next", follow=True)  # both skipped: nothing for me now
    assert "Nothing left to review here" in response.content.decode()
    client.force_login(ron)
    # others still get it, worst first
    assert client.post("/queue/next")["Location"] == f"/review/{first.pk}/"
    # The lease length later, the skipped answers come back to me.
    later = timezone.now() + timedelta(seconds=Policy.current().lease_seconds + 1)
    assert review_service.skipped_recently(user=rita, now=later) == []
    assert sorted(review_service.skipped_recently(user=rita)) == [first.pk, second.pk]


@pytest.mark.django_db
def test_n_on_an_undecided_answer_i_hold_opens_another_and_gives_mine_back_with_my_decisions_kept(
    client, rita, ron
):
    first, second = make.in_review(), make.in_review()
    client.force_login(rita)
    assert client.post("/queue/next")["Location"] == f"/review/{first.pk}/"
    claim = make.flagged(first)
    client.post(
        f"/review/{first.pk}/claims/{claim.pk}/decide", {"decision": "confirm", "version": 0}
    )
    assert Answer.objects.get(pk=first.pk).review_status == "in_review"  # decided, not finished
    page = client.get(f"/review/{first.pk}/").content.decode()
    # `n` says which answer it leaves
    assert f'<input type="hidden" name="leaving" value="{first.pk}">' in page
    # `n` from the answer I hold: the next one, not this one again (my own lease used to come
    # first).
    assert client.post("/queue/next", {"leaving": first.pk})["Location"] == f"/review/{second.pk}/"
    first.refresh_from_db()
    claim.refresh_from_db()
    assert (first.lease_holder, first.review_status) == (None, "in_review")
    assert (claim.decision, claim.decided_by, claim.decision_mode) == ("confirm", rita, "explicit")
    # moving on is not a skip
    assert not AuditEvent.objects.filter(action="answer.skipped").exists()
    # Back in the queue, worst first, for anyone: my decision is on it.
    client.force_login(ron)
    assert client.post("/queue/next")["Location"] == f"/review/{first.pk}/"
    assert "confirm by rita" in client.get(f"/review/{first.pk}/").content.decode()
    # Nothing else for me: the queue says so, and the answer I left stays in the queue.
    client.force_login(rita)
    response = client.post("/queue/next", {"leaving": second.pk}, follow=True)
    assert (
        f"No other answer to review here; answer {second.pk}, which you left, is back in the queue."
        in (response.content.decode())
    )
    assert Answer.objects.get(pk=second.pk).lease_holder is None


@pytest.mark.django_db
def test_admins_see_skips_counted_per_reviewer_on_the_queue(client, rita, ron):
    answer = make.in_review()
    for user in (rita, rita, ron):
        review_service.answer_skip(user=user, answer=answer)
    client.force_login(make.user("ada", "admin"))
    page = client.get("/queue/").content.decode()
    assert "skips today: <b>2</b> rita, <b>1</b> ron" in page
    client.force_login(rita)
    assert "skips today" not in client.get("/queue/").content.decode()


@pytest.mark.django_db
def test_the_lease_is_renewed_while_the_page_is_open_and_released_on_leave(client, rita):
    answer = make.in_review()
    client.force_login(rita)
    client.post(f"/review/{answer.pk}/take")
    assert client.post(f"/review/{answer.pk}/lease").status_code == 204
    assert client.post(f"/review/{answer.pk}/release", {"beacon": "1"}).status_code == 204
    answer.refresh_from_db()
    assert answer.lease_holder is None
    assert client.post(f"/review/{answer.pk}/lease").status_code == 409


# --- deciding ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_reviewer_cannot_decide_on_an_answer_someone_else_holds(client, rita, ron):
    answer = make.in_review()
    review_service.lease_take(user=rita, answer=answer)
    client.force_login(ron)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert "rita is reviewing this answer" in page
    claim = make.flagged(answer)
    with pytest.raises(LeaseHeld):
        review_service.claim_decide(
            user=ron, claim=claim, decision="confirm", label=None, note="", expected_version=0
        )


@pytest.mark.django_db
def test_confirming_the_last_flagged_claim_leaves_finishing_to_the_reviewer(client, rita):
    answer = make.in_review()
    claim = make.flagged(answer)
    supported = answer.claims.get(label="SUPPORTED")
    client.force_login(rita)
    client.post(f"/review/{answer.pk}/take")
    response = client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide",
        {"decision": "confirm", "version": 0, "note": "right"},
    )
    assert response.status_code == 302
    claim.refresh_from_db()
    answer.refresh_from_db()
    assert (claim.human_label, claim.decision, claim.decided_by, claim.version) == (
        "CONTRADICTED",
        "confirm",
        rita,
        1,
    )
    assert (answer.review_status, answer.lease_holder) == ("in_review", rita)  # not finished yet
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert "All flagged claims decided: finish (<kbd>f</kbd>) or look at the others." in page
    assert f'action="/review/{answer.pk}/claims/{supported.pk}/decide"' in page  # still decidable
    response = client.post(f"/review/{answer.pk}/finish", follow=True)
    assert f"Answer {answer.pk} adjudicated: Ungrounded. Next: n" in response.content.decode()
    answer.refresh_from_db()
    supported.refresh_from_db()
    assert (answer.review_status, answer.adjudicated_verdict, answer.lease_holder) == (
        "adjudicated",
        "UNGROUNDED",
        None,
    )
    assert (supported.decision, supported.decision_mode) == ("confirm", "bulk")
    assert Review.objects.get(claim=claim).note == "right"
    assert AuditEvent.objects.filter(action="claim.confirm", object_id=str(claim.pk)).count() == 1
    assert AuditEvent.objects.filter(action="answer.adjudicated").count() == 1


@pytest.mark.django_db
def test_confirm_the_rest_and_finish_is_one_request_one_outcome_one_message(client, rita):
    # A flagged claim before a SUPPORTED one: bulk-confirming the flagged claim used to adjudicate
    # the answer mid-loop, and the next claim's confirm then answered 409 "not waiting for review".
    answer = make.in_review(
        answer=(
            "A 30-day pass costs $75.00. Riders aged 65 and older pay a reduced fare of $1.00 per"
            " ride."
        )
    )
    assert list(answer.claims.order_by("position").values_list("label", flat=True)) == [
        "CONTRADICTED",
        "SUPPORTED",
    ]
    client.force_login(rita)
    client.post(f"/review/{answer.pk}/take")
    response = client.post(f"/review/{answer.pk}/finish", headers={"HX-Request": "true"})
    assert response.status_code == 200
    page = response.content.decode()
    assert (
        page.count("adjudicated: Ungrounded. Next: n") == 1 and "not waiting for review" not in page
    )
    assert set(Claim.objects.filter(answer=answer).values_list("decision_mode", flat=True)) == {
        "bulk"
    }
    assert (
        AuditEvent.objects.filter(action="answer.adjudicated", object_id=str(answer.pk)).count()
        == 1
    )
    # a second submission
    again = client.post(f"/review/{answer.pk}/finish", headers={"HX-Request": "true"})
    assert again.status_code == 409 and Review.objects.filter(answer=answer).count() == 2


@pytest.mark.django_db
def test_overturning_stores_the_human_label_and_the_adjudicated_verdict_follows_it(client, rita):
    answer = make.in_review()
    claim = make.flagged(answer)
    client.force_login(rita)
    client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide",
        {"overturn_to": "UNSUPPORTED", "version": 0},
        headers={"HX-Request": "true"},
    )
    client.post(f"/review/{answer.pk}/finish", headers={"HX-Request": "true"})
    claim.refresh_from_db()
    answer.refresh_from_db()
    assert (claim.label, claim.human_label, claim.decision) == (
        "CONTRADICTED",
        "UNSUPPORTED",
        "overturn",
    )
    assert answer.adjudicated_verdict == "MOSTLY_GROUNDED"  # the judge said UNGROUNDED


@pytest.mark.django_db
def test_a_stale_decision_is_refused_with_a_conflict_and_the_current_state(client, rita):
    answer = make.in_review()
    claim = make.flagged(answer)
    client.force_login(rita)
    client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide",
        {"overturn_to": "CONTRADICTED", "version": 0},
        headers={"HX-Request": "true"},
    )
    review_service.decision_undo(user=rita, answer=answer)  # version is now 2: reopened, undecided
    response = client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide",
        {"decision": "confirm", "version": 0},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 409
    assert "was not saved" in response.content.decode()
    assert Review.objects.filter(decision="confirm").count() == 0


@pytest.mark.django_db(transaction=True)
def test_two_decisions_on_one_claim_at_once_one_wins_one_conflicts_one_audit_event():
    rita = make.user("rita", "reviewer")
    answer = make.in_review()
    claim = make.flagged(answer)
    review_service.lease_take(user=rita, answer=answer)
    barrier, outcomes = threading.Barrier(2), []

    def decide(label):
        fresh = Claim.objects.select_related("answer").get(pk=claim.pk)
        barrier.wait()
        try:
            review_service.claim_decide(
                user=rita,
                claim=fresh,
                decision="overturn",
                label=label,
                note="",
                expected_version=0,
            )
            outcomes.append("won")
        except DecisionConflict:
            outcomes.append("conflict")
        finally:
            connection.close()

    threads = [
        threading.Thread(target=decide, args=(label,))
        for label in ("CONTRADICTED", "PARTIALLY_SUPPORTED")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "won"]
    assert Review.objects.count() == 1
    assert AuditEvent.objects.filter(action="claim.overturn").count() == 1
    assert Claim.objects.get(pk=claim.pk).version == 1


@pytest.mark.django_db
def test_undo_reverts_my_last_decision_and_reopens_an_adjudicated_answer(client, rita):
    answer = make.in_review()
    claim = make.flagged(answer)
    supported = answer.claims.get(label="SUPPORTED")
    client.force_login(rita)
    client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide",
        {"overturn_to": "CONTRADICTED", "version": 0},
    )
    client.post(f"/review/{answer.pk}/finish")
    assert Answer.objects.get(pk=answer.pk).review_status == "adjudicated"
    # Undoing reopens an answer whose client has its verdict: the first undo only asks.
    asked = client.post(f"/review/{answer.pk}/undo", headers={"HX-Request": "true"})
    assert asked.status_code == 200 and 'id="reopen-confirm"' in asked.content.decode()
    assert Answer.objects.get(pk=answer.pk).review_status == "adjudicated"
    assert not AuditEvent.objects.filter(action="answer.reopened").exists()
    # the last decision: the finish (its bulk confirm)
    client.post(f"/review/{answer.pk}/undo", {"reopen": "1"})
    answer.refresh_from_db()
    assert (answer.review_status, answer.adjudicated_verdict, answer.lease_holder) == (
        "in_review",
        "",
        rita,
    )
    assert (
        AuditEvent.objects.filter(
            action="answer.reopened", object_id=str(answer.pk), actor=rita
        ).count()
        == 1
    )
    assert Claim.objects.get(pk=supported.pk).decision_mode == ""
    client.post(f"/review/{answer.pk}/undo")
    claim.refresh_from_db()
    assert (claim.human_label, claim.decision, claim.version) == ("", "", 2)
    assert [r.decision for r in Review.objects.order_by("id")] == [
        "overturn",
        "confirm",
        "undo",
        "undo",
    ]
    # Redo: decide again, as a reviewer would after an undo.
    client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide", {"decision": "confirm", "version": 2}
    )
    assert Claim.objects.get(pk=claim.pk).human_label == "CONTRADICTED"


@pytest.mark.django_db
def test_one_undo_after_finishing_reverts_the_whole_finish_and_keeps_my_explicit_decisions(
    client, rita
):
    answer = make.in_review(
        answer="Riders aged 65 and older pay a reduced fare of $1.00 per ride. "
        "Proof of age, such as a state ID, must be shown when boarding. A 30-day pass costs $75.00."
    )
    labels = dict(answer.claims.values_list("cid", "label"))
    assert sorted(labels.values()) == ["CONTRADICTED", "SUPPORTED", "SUPPORTED"], labels
    claim = make.flagged(answer)
    client.force_login(rita)
    client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide", {"decision": "confirm", "version": 0}
    )
    client.post(f"/review/{answer.pk}/finish")
    assert Answer.objects.get(pk=answer.pk).review_status == "adjudicated"
    client.post(f"/review/{answer.pk}/undo", {"reopen": "1"})
    answer.refresh_from_db()
    assert (answer.review_status, answer.lease_holder) == ("in_review", rita)
    modes = dict(Claim.objects.filter(answer=answer).values_list("cid", "decision_mode"))
    assert modes == {cid: "explicit" if cid == claim.cid else "" for cid in labels}
    assert Review.objects.filter(decision="undo").count() == 2


@pytest.mark.django_db
def test_undo_with_nothing_to_undo_says_so(client, rita):
    answer = make.in_review()
    client.force_login(rita)
    response = client.post(f"/review/{answer.pk}/undo", headers={"HX-Request": "true"})
    assert response.status_code == 409
    assert "no decision on this answer to undo" in response.content.decode()


@pytest.mark.django_db
def test_a_reviewer_adds_a_claim_the_judge_missed_by_offsets_or_by_text(client, rita):
    answer = make.in_review()
    client.force_login(rita)
    start = answer.answer.index("reduced fare")
    client.post(
        f"/review/{answer.pk}/add-claim",
        {"start": start, "end": start + 12, "label": "PARTIALLY_SUPPORTED"},
    )
    client.post(
        f"/review/{answer.pk}/add-claim",
        {"text": "A 30-day pass", "label": "UNSUPPORTED", "note": "n"},
    )
    added = list(Claim.objects.filter(origin="reviewer").order_by("id"))
    assert [(c.text, c.human_label, c.cid) for c in added] == [
        ("reduced fare", "PARTIALLY_SUPPORTED", "r1"), ("A 30-day pass", "UNSUPPORTED", "r2")
    ]
    assert answer.answer[added[1].answer_start:added[1].answer_end] == "A 30-day pass"
    response = client.post(
        f"/review/{answer.pk}/add-claim",
        {"text": "not in the answer", "label": "UNSUPPORTED"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 409


@pytest.mark.django_db
def test_finish_confirms_the_rest_and_adjudicates_an_audit_sample(client, rita):
    answer = make.in_review(answer="Riders aged 65 and older pay a reduced fare of $1.00 per ride.")
    client.force_login(rita)
    client.post(f"/review/{answer.pk}/finish")
    answer.refresh_from_db()
    assert (answer.review_status, answer.adjudicated_verdict) == ("adjudicated", "GROUNDED")
    assert set(Claim.objects.values_list("decision", flat=True)) == {"confirm"}


@pytest.mark.django_db
def test_progress_counts_my_explicit_decisions_and_everyones_today(client, rita, ron):
    first, second = make.in_review(), make.in_review()
    review_service.lease_take(user=rita, answer=first)
    review_service.claim_decide(
        user=rita,
        claim=make.flagged(first),
        decision="confirm",
        label=None,
        note="",
        expected_version=0,
    )
    review_service.lease_take(user=ron, answer=second)
    review_service.claim_decide(
        user=ron,
        claim=make.flagged(second),
        decision="confirm",
        label=None,
        note="",
        expected_version=0,
    )
    review_service.answer_finish(user=ron, answer=second)  # a bulk confirm: not a decision ron made
    progress = review_service.review_progress(user=rita)
    assert (progress.remaining, progress.mine_today, progress.everyone_today) == (1, 1, 2)


# --- the review page --------------------------------------------------------------------------


def _segments_text(page: str, container_id: str) -> str:
    block = re.search(
        rf'<p class="answer untrusted" id="{container_id}" hx-disable>(.*?)</p>', page, re.S
    ).group(1)
    return html.unescape(re.sub(r"<[^>]+>", "", block))


@pytest.mark.django_db
def test_highlights_land_on_exact_offsets_with_overlapping_adjacent_claims_and_html(client, rita):
    text = 'Fares are <b>$2</b> & "free" for <script>alert(1)</script> kids.'
    answer = make.in_review(answer=text)
    run = answer.judged_by
    Claim.objects.filter(run=run).delete()
    spans = [(0, 19, "CONTRADICTED"), (10, 29, "UNSUPPORTED"), (29, 60, "PARTIALLY_SUPPORTED")]
    for position, (start, end, label) in enumerate(spans):
        Claim.objects.create(
            run=run,
            answer=answer,
            position=position,
            cid=f"c{position + 1}",
            text=text[start:end],
            answer_start=start,
            answer_end=end,
            label=label,
        )
    client.force_login(rita)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in page and "<b>$2</b>" not in page
    assert _segments_text(page, "answer-text") == text
    claims = {c.cid: c.pk for c in Claim.objects.filter(run=run)}
    segs = re.findall(r'data-claims="([\d ]+)" data-start="(\d+)">([^<]*)<', page)
    by_start = {int(start): (ids.split(), html.unescape(body)) for ids, start, body in segs}
    assert by_start[0] == ([str(claims["c1"])], text[0:10])
    assert by_start[10] == ([str(claims["c1"]), str(claims["c2"])], text[10:19])  # the overlap
    assert by_start[19] == ([str(claims["c2"])], text[19:29])
    assert by_start[29] == ([str(claims["c3"])], text[29:60])  # adjacent, not merged


@pytest.mark.django_db
def test_the_page_shows_evidence_match_quality_and_marks_an_unverified_quote(client, rita):
    answer = make.in_review()
    claim = answer.claims.get(label="SUPPORTED")
    Evidence.objects.create(
        claim=claim, passage_pid="P1", position=5, quote="a quote nobody wrote", match="not_found"
    )
    client.force_login(rita)
    page = client.get(f"/review/{answer.pk}/?claim={claim.pk}").content.decode()
    assert "unverified quote" in page
    assert 'class="match match-exact"' in page
    run = JudgeRun.objects.get(answer=answer)
    assert f"{run.profile}@{run.prompt_version}" in page and run.model in page
    # the selected claim's evidence is highlighted server-side too
    assert 'evidence-seg sel' in page


@pytest.mark.django_db
def test_the_closest_text_of_an_unsupported_claim_is_labelled_apart_from_real_evidence(
    client, rita
):
    # c1 SUPPORTED (P1 states it), c2 CONTRADICTED (P2's closest sentence)
    answer = make.in_review()
    client.force_login(rita)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    passage = lambda pid: page.split(f'id="passage-{pid}"')[1].split("</article>")[0]  # noqa: E731
    assert "evidence-closest" not in passage("P1") and 'title="evidence"' in passage("P1")
    assert 'evidence-closest' in passage(
        "P2"
    ) and 'title="closest text, does not support the claim"' in passage("P2")
    card = page.split(f'id="claim-{make.flagged(answer).pk}"')[1].split("</li>")[0]
    assert '<span class="closest-tag">closest text, does not support the claim</span>' in card


def _marked(html_part: str) -> list[str]:
    """The text of each differing-word mark, in order."""
    return [
        html.unescape(text)
        for text in re.findall(r'<mark class="diff" title="[^"]*">([^<]*)</mark>', html_part)
    ]


@pytest.mark.django_db
def test_the_words_the_judge_found_differing_go_from_judge_to_store_to_both_highlights(
    client, rita
):
    answer = make.in_review()  # c2: "A 30-day pass costs $75.00." where P2 says $92.00
    claim = make.flagged(answer)
    (ev,) = claim.evidence.all()
    passage = answer.passages.get(pid="P2")
    # Stored as offsets into the passage and the answer, inside the evidence and the claim spans.
    (difference,) = ev.differences
    assert difference["kind"] == "number"
    assert passage.text[slice(*difference["span"])] == "92.00"
    assert answer.answer[slice(*difference["answer_span"])] == "75.00"
    assert ev.start <= difference["span"][0] < difference["span"][1] <= ev.end
    assert (
        claim.answer_start
        <= difference["answer_span"][0]
        < difference["answer_span"][1]
        <= claim.answer_end
    )
    # nothing differs there
    assert answer.claims.get(label="SUPPORTED").evidence.get().differences == []
    # The API's result carries them.
    api_claim = next(c for c in selectors.answer_state(answer)["claims"] if c["id"] == claim.cid)
    assert api_claim["evidence"][0]["differences"] == [difference]
    # The page marks them inside the claim's highlight and inside the closest text's, labelled.
    client.force_login(rita)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    answer_html = page.split('id="answer-text"')[1].split("</p>")[0]
    passage_html = page.split('id="passage-P2"')[1].split("</article>")[0]
    assert _marked(answer_html) == ["75.00"] and _marked(passage_html) == ["92.00"]
    assert re.search(
        rf'class="seg claim-seg label-contradicted[^"]*"[^>]*data-claims="{claim.pk}"[^>]*>'
        r'<mark class="diff" title="differs from the closest passage text'
        r' \(number\)">75\.00</mark></span>',
        answer_html,
    )
    assert re.search(
        rf'class="seg evidence-seg evidence-closest[^"]*" data-claims="{claim.pk}"[^>]*>'
        rf'<mark class="diff" title="differs from claim {claim.cid}'
        r' \(number\)">92\.00</mark></span>',
        passage_html,
    )
    # marks add no text: offsets still hold
    assert _segments_text(page, "answer-text") == answer.answer
    assert page.count('class="legend diff-legend"') == 2
    # A judge that gives no differences (the LLM profiles): nothing extra on the page.
    Evidence.objects.filter(claim__answer=answer).update(differences=[])
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert '<mark class="diff"' not in page and "diff-legend" not in page


@pytest.mark.django_db
def test_a_difference_outside_its_evidence_is_refused_before_anything_is_stored():
    answer = Answer.objects.get(pk=make.in_review().pk)
    output = judges.judge(judges.JudgeRequest.model_validate(fare_payload()), judges.JudgeConfig())
    claim = next(c for c in output.result.claims if c.label == "CONTRADICTED")
    start, end = claim.evidence[0].span
    claim.evidence[0].differences[0].span = (start, end + 1)  # ends after its evidence
    with pytest.raises(judges.JudgeError, match="difference span .* is outside its evidence span"):
        check_spans(answer, output)


@pytest.mark.django_db
def test_keyboard_shortcuts_are_shown_on_the_page(client, rita):
    answer = make.in_review()
    client.force_login(rita)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    for key in ("j", "k", "c", "o", "e", "u", "n", "?"):
        assert f"<kbd>{key}</kbd>" in page


@pytest.mark.django_db
def test_admins_manage_users_and_api_tokens_in_the_django_admin(client):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("create_reviewer", "ada", "--admin", stdout=out, stderr=StringIO())
    client.post("/accounts/login/", {"username": "ada", "password": out.getvalue().strip()})
    assert client.get("/admin/auth/user/").status_code == 200
    assert client.get("/admin/reviewapp/apiclient/").status_code == 200
    assert client.get("/admin/reviewapp/policy/").status_code == 200
    # policy is read-only there
    assert client.get("/admin/reviewapp/policy/add/").status_code == 403


@pytest.mark.django_db
def test_an_admin_creates_an_api_token_shown_once_and_revokes_it(client, api):
    admin_user = User.objects.create_superuser("root", password="pw-root-123")
    client.force_login(admin_user)
    response = client.post("/admin/reviewapp/apiclient/add/", {"name": "bot-2"}, follow=True)
    token = re.search(r"(cdk_[\w-]+)", response.content.decode()).group(1)
    assert api.post(fare_payload(), token=token).status_code == 202
    from reviewapp.models import ApiClient

    bot = ApiClient.objects.get(name="bot-2")
    client.post(
        "/admin/reviewapp/apiclient/", {"action": "revoke_tokens", "_selected_action": [bot.pk]}
    )
    assert api.post(fare_payload(external_id="x2"), token=token).status_code == 401


@pytest.mark.django_db
def test_an_answer_posted_with_no_passages_is_accepted_flagged_and_says_so(api, client, rita):
    response = api.post(fare_payload(passages=[], external_id="nothing-retrieved"))
    assert response.status_code == 202
    answer = Answer.objects.get(public_id=response.json()["id"])
    answer_judge(answer_id=answer.pk)
    answer.refresh_from_db()
    assert answer.review_status == "in_review"
    assert set(answer.claims.values_list("label", flat=True)) == {"UNSUPPORTED"}
    client.force_login(rita)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert "No passages were retrieved for this answer" in page
    assert api.get(answer.public_id).json()["verdict"] == "UNGROUNDED"


@pytest.mark.django_db
def test_the_navigation_shows_admin_pages_by_role_not_by_is_staff(client, rita):
    admin_links = ('href="/policy/"', 'href="/exports/"', 'href="/webhooks/"', 'href="/examples/"')
    client.force_login(rita)
    page = client.get("/queue/").content.decode()
    assert not any(link in page for link in admin_links)
    client.force_login(make.user("ada", "admin"))  # an admin who is not Django staff
    page = client.get("/queue/").content.decode()
    assert all(link in page for link in admin_links)
    assert 'href="/admin/"' not in page
