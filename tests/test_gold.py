"""Gold answers (issue 32, item 1): marking, serving a copy among live answers that nothing tells
apart, scoring against the gold labels, pausing below the policy's threshold (banner, webhook,
second look), and gold decisions kept out of the label exports but exported as reviewer quality."""

from __future__ import annotations

import io
import json

import pytest
from django.urls import reverse

from reviewapp.labels.exports import ExportFilters, decided_claims, export_stream
from reviewapp.labels.reviewer_agreement import every_current_decision
from reviewapp.models import (
    ApiClient,
    Answer,
    AuditEvent,
    GoldAnswer,
    GoldCopy,
    Policy,
    ReviewerPause,
    WebhookDelivery,
)
from reviewapp.quality import selectors as quality, service as gold_service
from reviewapp.quality.service import GoldError
from reviewapp.review import service as review_service
from tests import factories as make

pytestmark = pytest.mark.django_db
S, C = "SUPPORTED", "CONTRADICTED"


@pytest.fixture(autouse=True)
def _fewer_resamples(settings):
    settings.AGREEMENT_RESAMPLES = 200


@pytest.fixture
def lead(db):
    return make.user("leo", "lead")


def adjudicated(by, **fields) -> Answer:
    """The fare answer reviewed by `by`: c1 SUPPORTED and c2 CONTRADICTED ($75.00; P2 says
    $92.00), both confirmed."""
    answer = make.in_review(**fields)
    assert review_service.lease_take(user=by, answer=answer)
    review_service.answer_finish(user=by, answer=answer)
    answer.refresh_from_db()
    assert answer.review_status == "adjudicated"
    return answer


def gold_policy(**fields) -> Policy:
    return make.next_policy(
        **(
            {"gold_rate": 1.0, "gold_min_claims": 2, "gold_pause_below": 0.8, "note": "gold on"}
            | fields
        )
    )


def finish(user, answer: Answer, overturn_to: str | None = None) -> None:
    """Decide the flagged claim (confirm, or overturn to `overturn_to`) and finish."""
    claim = answer.claims.exclude(label=S).get()
    decision = "overturn" if overturn_to else "confirm"
    review_service.claim_decide(
        user=user,
        claim=claim,
        decision=decision,
        label=overturn_to,
        note="",
        expected_version=claim.version,
    )
    review_service.answer_finish(user=user, answer=answer)


def test_a_lead_marks_an_adjudicated_answer_gold_with_its_human_labels(lead, rita):
    answer = adjudicated(lead)
    gold = gold_service.gold_mark(user=lead, answer=answer)
    assert [(e["cid"], e["label"]) for e in gold.labels] == [("c1", S), ("c2", C)]
    assert AuditEvent.objects.filter(action="answer.gold_marked", object_id=str(answer.pk)).exists()
    with pytest.raises(GoldError, match="lead or an admin"):
        gold_service.gold_mark(user=rita, answer=answer)
    with pytest.raises(GoldError, match="adjudicated"):
        gold_service.gold_mark(user=lead, answer=make.in_review())


def test_the_mark_button_is_on_an_adjudicated_answers_page_for_leads_only(client, lead, rita):
    answer = adjudicated(lead)
    client.force_login(rita)
    assert "Mark as gold" not in client.get(reverse("review", args=[answer.pk])).content.decode()
    assert client.post(reverse("gold_mark", args=[answer.pk])).status_code == 403
    client.force_login(lead)
    assert "Mark as gold" in client.get(reverse("review", args=[answer.pk])).content.decode()
    client.post(reverse("gold_mark", args=[answer.pk]))
    assert GoldAnswer.objects.get(answer=answer).active
    page = client.get(reverse("review", args=[answer.pk])).content.decode()
    assert "Remove from gold" in page
    client.post(reverse("gold_mark", args=[answer.pk]), {"remove": "1"})
    assert not GoldAnswer.objects.get(answer=answer).active


def test_next_item_hands_a_fresh_undecided_copy_leased_to_that_reviewer_alone(
    lead, rita, ron, client
):
    source = adjudicated(lead)
    gold_service.gold_mark(user=lead, answer=source)
    gold_policy()
    served = review_service.lease_next(user=rita)
    assert (
        served.pk != source.pk
        and served.answer == source.answer
        and served.review_status == "in_review"
    )
    assert [(c.cid, c.label, c.human_label) for c in served.claims.order_by("position")] == [
        ("c1", S, ""),
        ("c2", C, ""),
    ]
    assert list(served.passages.values_list("text", flat=True)) == list(
        source.passages.values_list("text", flat=True)
    )
    assert review_service.holds_lease(user=rita, answer=served)
    # Nobody else gets it, from the queue or by its URL; rita never gets the same gold answer twice.
    assert not review_service.lease_take(user=ron, answer=served)
    own = review_service.lease_next(user=ron)  # his own copy of it
    assert own.pk != served.pk and GoldCopy.objects.get(answer=own).reviewer == ron
    review_service.lease_release(user=rita, answer_id=served.pk)
    # her unfinished copy, not a second one
    assert review_service.lease_next(user=rita).pk == served.pk
    assert GoldCopy.objects.filter(reviewer=rita).count() == 1
    # A reviewer who reviewed the source is never handed it.
    assert not quality.GoldAnswer.objects.filter(pk__in=gold_service.unseen_gold(lead)).exists()


def test_a_gold_copys_page_and_queue_show_nothing_a_live_answers_do_not(lead, rita, client):
    source = adjudicated(lead)
    gold_service.gold_mark(user=lead, answer=source)
    live = make.in_review()
    gold_policy()
    served = review_service.lease_next(user=rita)
    assert review_service.lease_take(user=rita, answer=live)
    client.force_login(rita)
    pages = [client.get(reverse("review", args=[a.pk])).content.decode() for a in (served, live)]
    for page in pages:
        assert "gold" not in page.lower()
    # The same page, but for the answer's id and the lease's times.
    assert pages[0].count("<form") == pages[1].count("<form")
    queue = client.get(reverse("queue")).content.decode()
    assert f"/review/{served.pk}/" not in queue and f"/review/{live.pk}/" in queue


def test_wrong_decisions_on_gold_past_the_minimum_pause_the_reviewer(lead, rita, client):
    _, endpoint = make.webhook_endpoint(events=("reviewer.paused",))
    first, second = adjudicated(lead), adjudicated(lead)
    for answer in (first, second):
        gold_service.gold_mark(user=lead, answer=answer)
    live = make.in_review()
    gold_policy()
    finish(rita, review_service.lease_next(user=rita))  # right: 2/2, a good window
    make.next_policy(gold_rate=0.0, gold_min_claims=2, gold_pause_below=0.8, note="gold off")
    assert review_service.lease_next(user=rita).pk == live.pk
    finish(rita, live, overturn_to=S)  # a live decision after the good window
    gold_policy()
    finish(rita, review_service.lease_next(user=rita), overturn_to=S)  # wrong on c2: 1/2 < 80%
    pause = ReviewerPause.objects.get(reviewer=rita, resumed_at__isnull=True)
    assert (pause.accuracy, pause.claims, pause.threshold) == (0.5, 2, 0.8)
    # its c2 and the bulk c1
    assert [r.answer_id for r in quality.second_look(pause)] == [
        live.pk,
        live.pk,
    ]
    # Paused: no live answer, nor a lease on one; told why.
    waiting = make.in_review()
    assert review_service.lease_next(user=rita) is None
    assert not review_service.lease_take(user=rita, answer=waiting)
    # The webhook, without an answer, with the figures.
    delivery = WebhookDelivery.objects.get(endpoint=endpoint, event="reviewer.paused")
    assert delivery.answer is None
    data = delivery.payload["data"]
    assert (
        data["reviewer"]["username"] == "rita"
        and data["gold_accuracy"] == 0.5
        and data["gold_claims"] == 2
    )
    assert data["second_look_decisions"] == 2
    # Leads see a banner on every page; reviewers do not.
    client.force_login(lead)
    page = client.get(reverse("queue")).content.decode()
    assert (
        'id="paused-banner"' in page
        and "rita" in page
        and reverse("second_look", args=[pause.pk]) in page
    )
    reviewers = client.get(reverse("reviewers")).content.decode()
    assert 'id="gold-rita"' in reviewers and "3/4" in reviewers and "paused" in reviewers
    client.force_login(rita)
    assert 'id="paused-banner"' not in client.get(reverse("queue")).content.decode()
    # A lead resumes her: back in the live queue.
    client.force_login(lead)
    client.post(reverse("reviewer_resume", args=[pause.pk]), {"note": "looked again"})
    assert review_service.lease_next(user=rita).pk == waiting.pk


def test_gold_figures_per_reviewer_label_and_category(lead, rita):
    answer = adjudicated(lead)
    gold_service.gold_mark(user=lead, answer=answer)
    gold_policy(gold_min_claims=10)
    finish(rita, review_service.lease_next(user=rita), overturn_to=S)
    (q,) = quality.gold_quality()
    assert (q.reviewer, q.claims, q.correct, q.accuracy.value) == ("rita", 2, 1, 0.5)
    assert [(label, n, f.value) for label, n, f in q.by_label] == [(S, 1, 1.0), (C, 1, 0.0)]
    assert q.pause is None  # fewer gold claims than the minimum


def test_gold_decisions_stay_out_of_label_exports_and_go_to_the_gold_export(lead, rita, client):
    answer = adjudicated(lead)
    gold_service.gold_mark(user=lead, answer=answer)
    gold_policy(gold_min_claims=10)
    served = review_service.lease_next(user=rita)
    finish(rita, served, overturn_to=S)
    assert not decided_claims(ExportFilters()).filter(answer=served).exists()
    lines = [
        json.loads(line) for line in b"".join(export_stream("jsonl", ExportFilters())).splitlines()
    ]
    assert {row["answer_id"] for row in lines} == {answer.pk}
    assert all(
        d.claim_id not in set(served.claims.values_list("pk", flat=True))
        for d in every_current_decision()
    )
    client.force_login(make.admin())
    body = b"".join(client.get(reverse("gold_export")).streaming_content).decode()
    rows = [json.loads(line) for line in body.splitlines()]
    assert [
        (r["reviewer"], r["claim_id"], r["gold_label"], r["reviewer_label"], r["correct"])
        for r in rows
    ] == [("rita", "c1", S, S, True), ("rita", "c2", C, S, False)]


def test_a_gold_copy_tells_no_client(lead, rita, client, api_token):
    bot = ApiClient.objects.get(name="fares-bot")
    _, endpoint = make.webhook_endpoint(
        events=("answer.judged", "answer.adjudicated", "answer.reopened"), client=bot
    )
    answer = adjudicated(lead, client=bot)
    gold_service.gold_mark(user=lead, answer=answer)
    gold_policy(gold_min_claims=10)
    served = review_service.lease_next(user=rita)
    assert served.client == bot  # the page says whose answer it is, as for a live one
    sent = WebhookDelivery.objects.count()
    finish(rita, served)
    review_service.decision_undo(user=rita, answer=served, reopen=True)  # reopened: no event either
    assert WebhookDelivery.objects.count() == sent
    listed = client.get("/api/v1/answers", headers={"Authorization": f"Bearer {api_token}"})
    assert [a["id"] for a in listed.json()["results"]] == [str(answer.public_id)]


def test_the_policy_page_saves_the_gold_fields(client):
    client.force_login(make.admin())
    form = make.policy_form(
        Policy.current(), gold_rate="0.05", gold_pause_below="0.7", gold_min_claims="30"
    )
    assert client.post(reverse("policy"), form).status_code == 302
    current = Policy.current()
    assert (current.gold_rate, current.gold_pause_below, current.gold_min_claims) == (0.05, 0.7, 30)
    bad = client.post(reverse("policy"), make.policy_form(current, gold_rate="2"))
    assert bad.status_code == 400 and 'id="error-gold_rate"' in bad.content.decode()


def test_a_golden_set_import_marks_its_records_gold_with_labels_from_their_spans(rita, tmp_path):
    from django.core.management import call_command

    from tests.test_golden import _record, golden_file

    path = golden_file(tmp_path, bad_line=False)
    with path.open("a") as extra:  # hallucinated, but no span says which claim: not gold
        extra.write(json.dumps(_record("g4", "Seniors ride free on Sundays.", True)) + "\n")
    out, err = io.StringIO(), io.StringIO()
    call_command("import_golden", str(path), "--gold", stdout=out, stderr=err)
    assert "gold: 3 marked, 1 skipped" in out.getvalue()
    assert "g4: not gold: hallucinated at answer level only" in err.getvalue()
    wrong = GoldAnswer.objects.get(answer__external_id="g2")
    assert wrong.source == "import" and wrong.run.answer_id == wrong.answer_id
    labels = {e["cid"]: e["label"] for e in wrong.labels}
    assert "CONTRADICTED" in labels.values() and "SUPPORTED" in labels.values()
    # Handed out like a page-marked one, with a routing reason as a live answer has, no golden
    # metadata.
    gold_policy(gold_min_claims=100)
    served = review_service.lease_next(user=rita)
    assert served.routing_reason and served.metadata == {} and served.claims.count() >= 1
    assert GoldCopy.objects.get(answer=served).gold.source == "import"
