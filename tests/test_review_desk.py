"""The reviewer's desk (issue 30): drafts that survive, a selection that only moves forward,
reopening as a confirmed and announced action, the time each decision took, and finishing onto
the next answer. The browser side is tests/test_review_desk_browser.py."""

from __future__ import annotations

import pytest

from reviewapp.review import selectors
from reviewapp.models import (
    Answer,
    AuditEvent,
    Claim,
    NoteDraft,
    Review,
    ReviewPass,
    WebhookDelivery,
)
from reviewapp.review import service as review_service
from reviewapp.review import views as review_views
from reviewapp.review.service import ReopenUnconfirmed
from tests import factories as make

HTMX = {"HX-Request": "true"}


def six_claims() -> Answer:
    """Six claims in order, the even ones CONTRADICTED (a changed number), the odd ones
    SUPPORTED."""
    sentences = [f"Route {n} buses run every {n + 4} minutes." for n in range(1, 7)]
    said = [
        s.replace(f"every {n + 4} ", f"every {n + 14} ") if n % 2 == 0 else s
        for n, s in enumerate(sentences, 1)
    ]
    answer = make.judged(" ".join(said), passages=[{"id": "P1", "text": " ".join(sentences)}])
    assert answer.review_status == "in_review" and answer.claims.count() == 6
    return answer


def _claims(answer: Answer) -> list[Claim]:
    return list(selectors.shown_claims_for_review(answer).order_by("position"))


def _decide(client, answer: Answer, claim: Claim, **fields):
    claim.refresh_from_db()
    return client.post(f"/review/{answer.pk}/claims/{claim.pk}/decide",
                       {"decision": "confirm", "version": claim.version} | fields, headers=HTMX)


# --- drafts -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_typed_note_is_kept_as_a_draft_and_shown_again_after_a_reload(client, rita):
    answer = make.in_review()
    claim = make.flagged(answer)
    client.force_login(rita)
    client.post("/queue/next")
    response = client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/draft", {"note": "P2 says $92 <b>not</b> $75"}
    )
    assert response.status_code == 204
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert "P2 says $92 &lt;b&gt;not&lt;/b&gt; $75</textarea>" in page  # escaped, in its box
    assert "draft kept: goes with your decision" in page
    # Another reviewer's page does not show it: a draft is its author's alone.
    client.force_login(make.user("other", "reviewer"))
    assert "P2 says $92" not in client.get(f"/review/{answer.pk}/").content.decode()


@pytest.mark.django_db
def test_a_decision_takes_the_note_box_and_the_draft_goes(client, rita):
    answer = make.in_review()
    claim = make.flagged(answer)
    client.force_login(rita)
    client.post("/queue/next")
    client.post(f"/review/{answer.pk}/claims/{claim.pk}/draft", {"note": "checked P2"})
    assert _decide(client, answer, claim, note="checked P2").status_code == 200
    assert Claim.objects.get(pk=claim.pk).note == "checked P2"
    assert not NoteDraft.objects.exists()


@pytest.mark.django_db
def test_finishing_confirms_the_rest_with_their_drafts_and_saves_an_edited_note_of_a_decided_claim(
    client, rita
):
    answer = six_claims()
    c1, c2, c3, *_ = _claims(answer)
    client.force_login(rita)
    client.post("/queue/next")
    _decide(client, answer, c2, note="first thought")
    # decided: an edit
    client.post(f"/review/{answer.pk}/claims/{c2.pk}/draft", {"note": "second thought"})
    client.post(f"/review/{answer.pk}/claims/{c3.pk}/draft", {"note": "typed, never decided"})
    assert client.post(f"/review/{answer.pk}/finish").status_code == 302
    answer.refresh_from_db()
    assert answer.review_status == "adjudicated"
    notes = dict(Claim.objects.filter(answer=answer).values_list("cid", "note"))
    assert (notes["c2"], notes["c3"], notes["c1"]) == ("second thought", "typed, never decided", "")
    c3_review = Review.objects.get(claim=c3)
    assert (c3_review.decision_mode, c3_review.note) == ("bulk", "typed, never decided")
    # The edit is a decision of its own: a Review row and an audit event with the new note.
    assert list(Review.objects.filter(claim=c2).order_by("id").values_list("note", flat=True)) == [
        "first thought", "second thought"]
    assert (
        AuditEvent.objects.filter(
            action="claim.confirm", object_id=str(c2.pk), note="second thought"
        ).count()
        == 1
    )
    assert not NoteDraft.objects.exists()


@pytest.mark.django_db
def test_save_note_edits_a_decided_claims_note_and_refuses_an_undecided_one(client, rita):
    answer = make.in_review()
    claim, supported = make.flagged(answer), answer.claims.get(label="SUPPORTED")
    client.force_login(rita)
    client.post("/queue/next")
    _decide(client, answer, claim, overturn_to="UNSUPPORTED", note="")
    response = client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/note", {"note": "no such pass"}, headers=HTMX
    )
    assert response.status_code == 200
    claim.refresh_from_db()
    assert (claim.human_label, claim.decision, claim.note) == (
        "UNSUPPORTED",
        "overturn",
        "no such pass",
    )
    refused = client.post(
        f"/review/{answer.pk}/claims/{supported.pk}/note", {"note": "x"}, headers=HTMX
    )
    assert refused.status_code == 409 and "decide it first" in refused.content.decode()


@pytest.mark.django_db
def test_a_draft_the_note_field_cannot_hold_is_refused_naming_the_note(client, rita):
    answer = make.in_review()
    client.force_login(rita)
    response = client.post(
        f"/review/{answer.pk}/claims/{make.flagged(answer).pk}/draft", {"note": "a\x00b"}
    )
    assert response.status_code == 400 and "note" in response.content.decode().lower()
    assert client.post(f"/review/{answer.pk}/claims/999999/draft", {"note": "x"}).status_code == 404


# --- the selection -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_after_a_decision_the_selection_moves_to_the_next_claim_in_order_never_back(client, rita):
    answer = six_claims()
    claims = _claims(answer)
    client.force_login(rita)
    client.post("/queue/next")
    # c j c j ...: each decision selects the claim right after it, flagged or not, decided or not.
    for claim, following in zip(claims, claims[1:]):
        assert _decide(client, answer, claim).context["selected"] == following.pk
    # the last stays
    assert _decide(client, answer, claims[-1]).context["selected"] == claims[-1].pk
    # deciding c2 again after c6: forward from c2, not back to c1
    _decide(client, answer, claims[1])
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert "<b>6/6</b> decided" in page and "<b>0</b> flagged left" in page


# --- reopening ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_reopening_an_adjudicated_answer_asks_first_is_audited_and_tells_the_client(client, rita):
    bot, endpoint = make.webhook_endpoint(events=("answer.adjudicated",))
    answer = make.in_review(client=bot)
    client.force_login(rita)
    client.post("/queue/next")
    client.post(f"/review/{answer.pk}/finish")
    assert WebhookDelivery.objects.filter(answer=answer, event="answer.adjudicated").count() == 1
    with pytest.raises(ReopenUnconfirmed):
        review_service.decision_undo(user=rita, answer=Answer.objects.get(pk=answer.pk))
    plain = client.post(f"/review/{answer.pk}/undo")  # no JavaScript: the page asks
    assert plain.status_code == 302 and plain["Location"].endswith("?confirm_reopen=1")
    assert "Reopen and undo" in client.get(plain["Location"]).content.decode()
    assert Answer.objects.get(pk=answer.pk).review_status == "adjudicated"
    client.post(f"/review/{answer.pk}/undo", {"reopen": "1"}, headers=HTMX)
    answer.refresh_from_db()
    assert answer.review_status == "in_review"
    assert (
        AuditEvent.objects.filter(
            action="answer.reopened", object_id=str(answer.pk), actor=rita
        ).count()
        == 1
    )
    reopened = WebhookDelivery.objects.get(answer=answer, event="answer.reopened")
    assert (
        reopened.endpoint == endpoint
        and reopened.payload["data"]["answer"]["review"]["status"] == "in_review"
    )
    assert reopened.payload["data"]["answer"]["id"] == str(answer.public_id)


# --- time spent and what finishing opens ----------------------------------------------------------


@pytest.mark.django_db
def test_each_explicit_decision_records_its_time_and_a_bulk_one_none(client, rita):
    answer = make.in_review()
    client.force_login(rita)
    client.post("/queue/next")
    _decide(client, answer, make.flagged(answer))
    client.post(f"/review/{answer.pk}/finish")
    spent = dict(Review.objects.filter(answer=answer).values_list("decision_mode", "time_spent_ms"))
    assert spent["bulk"] is None and 0 <= spent["explicit"] < 60_000


@pytest.mark.django_db
def test_finishing_opens_the_next_answer_unless_the_reviewer_stays(client, rita):
    first, second = make.in_review(), make.in_review()
    client.force_login(rita)
    client.post("/queue/next")
    response = client.post(f"/review/{first.pk}/finish", {"then": "next"}, headers=HTMX)
    assert response.status_code == 204 and response["HX-Redirect"] == f"/review/{second.pk}/"
    assert Answer.objects.get(pk=second.pk).lease_holder == rita
    stayed = client.post(f"/review/{second.pk}/finish", {"then": "stay"}, headers=HTMX)
    assert (
        stayed.status_code == 200 and f"Answer {second.pk} adjudicated" in stayed.content.decode()
    )


# --- smaller defects ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_added_claim_snaps_to_whole_words_and_keeps_its_category(client, rita):
    answer = make.in_review()
    client.force_login(rita)
    client.post("/queue/next")
    start = answer.answer.index("reduced fare")
    # "uced f"
    client.post(
        f"/review/{answer.pk}/add-claim",
        {"start": start + 3, "end": start + 9, "label": "UNSUPPORTED", "category": "price"},
    )
    added = Claim.objects.get(origin="reviewer")
    assert (added.text, added.category) == ("reduced fare", "price")
    refused = client.post(
        f"/review/{answer.pk}/add-claim",
        {"start": start, "end": start + 7, "label": "UNSUPPORTED", "category": "weather"},
        headers=HTMX,
    )
    assert refused.status_code == 409 and "Choose a category" in refused.content.decode()


@pytest.mark.django_db
def test_an_undone_decision_is_not_counted_as_decided_today(client, rita):
    answer = make.in_review()
    client.force_login(rita)
    client.post("/queue/next")
    _decide(client, answer, make.flagged(answer))
    assert review_service.review_progress(user=rita).mine_today == 1
    client.post(f"/review/{answer.pk}/undo")
    assert review_service.review_progress(user=rita).mine_today == 0


@pytest.mark.django_db
def test_partial_support_is_not_labelled_as_text_that_does_not_support(client, rita):
    answer = make.in_review()
    Claim.objects.filter(pk=make.flagged(answer).pk).update(label="PARTIALLY_SUPPORTED")
    client.force_login(rita)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert (
        "supports part of the claim" in page
        and "closest text, does not support the claim</span> <b>" not in page
    )


@pytest.mark.django_db
def test_the_adjudication_list_names_the_disputed_claims(client):
    from tests.test_double_review import _double

    answer = _double()
    claim = make.flagged(answer)
    for name, label in (("alice", "UNSUPPORTED"), ("bob", "CONTRADICTED")):
        user = make.user(name, "reviewer")
        review_service.lease_next(user=user)
        review_service.claim_decide(
            user=user, claim=claim, decision="overturn", label=label, note="", expected_version=0
        )
        review_service.answer_finish(user=user, answer=answer)
    client.force_login(make.user("lee", "lead"))
    response = client.get("/adjudication/")
    # c1 was settled, in bulk
    assert [row.disputed for row in response.context["rows"]] == [[claim.cid]]
    assert f"<td>{claim.cid}</td>" in response.content.decode()


@pytest.mark.django_db
def test_assigning_more_than_a_page_asks_first_and_a_reviewer_must_be_chosen(client, monkeypatch):
    bob = make.user("bob", "reviewer")
    client.force_login(make.user("lee", "lead"))
    ids = [make.in_review().pk for _ in range(2)]
    unchosen = client.post("/assign", {"back": "/answers/"})
    assert unchosen.status_code == 400 and "reviewer" in unchosen.content.decode()
    monkeypatch.setattr(review_views, "ASSIGN_PAGE", 1)  # two answers make more than a page here
    asked = client.post("/assign", {"reviewer": "bob", "back": "/answers/"})
    assert asked.status_code == 400 and "more than one page (1)" in asked.content.decode()
    assert not ReviewPass.objects.filter(reviewer=bob).exists()
    assert (
        client.post(
            "/assign", {"reviewer": "bob", "back": "/answers/", "confirm_many": "1"}
        ).status_code
        == 302
    )
    assert set(ReviewPass.objects.filter(reviewer=bob).values_list("answer_id", flat=True)) == set(
        ids
    )


@pytest.mark.django_db
def test_not_judged_yet_counts_answers_waiting_for_the_judge_not_golden_records(client, rita):
    Answer.objects.create(
        client=None, answer="golden", status="judged", metadata={"golden": "demo"}
    )
    make.ingested()  # queued for the judge (no worker here)
    client.force_login(rita)
    assert selectors.queue_counts()["not_judged"] == 1
    assert "<b>1</b> not judged yet" in client.get("/queue/").content.decode()


@pytest.mark.django_db
def test_an_overturn_carries_a_reason_from_the_fixed_list_into_the_export_and_a_skip_its_own(
    client, rita
):
    from reviewapp.labels.exports import ExportFilters, export_stream
    import json

    answer = make.in_review()
    claim = make.flagged(answer)
    client.force_login(rita)
    client.post("/queue/next")
    refused = _decide(client, answer, claim, overturn_to="UNSUPPORTED", reason="vibes")
    assert refused.status_code == 409 and "reason is one of" in refused.content.decode()
    _decide(
        client,
        answer,
        claim,
        overturn_to="UNSUPPORTED",
        reason="not_in_passages",
        note="no pass price in P2",
    )
    assert Review.objects.get(claim=claim).reason == "not_in_passages"
    client.post(f"/review/{answer.pk}/finish")
    rows = [
        json.loads(line) for line in b"".join(export_stream("jsonl", ExportFilters())).splitlines()
    ]
    row = next(r for r in rows if r["claim_id"] == claim.cid)
    assert [(r["reason"], r["note"]) for r in row["reviews"]] == [
        ("not_in_passages", "no pass price in P2")
    ]
    other = make.in_review()
    client.post("/queue/next")
    assert client.post(f"/review/{other.pk}/skip", {"reason": "domain"}).status_code == 302
    assert (
        AuditEvent.objects.get(action="answer.skipped", object_id=str(other.pk)).after["reason"]
        == "domain"
    )
    assert client.post(f"/review/{other.pk}/skip", {"reason": "bored"}).status_code == 400
