"""Double review (issue 21): several reviewers per answer, blind passes, consensus, a lead's
adjudication, assignment, and the export of every reviewer's decision."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest
from django.db import connection

from reviewapp.labels.exports import ExportFilters, export_stream
from reviewapp.models import Answer, AuditEvent, Claim, Policy, Review, ReviewPass
from reviewapp.review import service as review_service
from reviewapp.judging.jobs import job_run, job_start_reroute
from reviewapp.policy.service import policy_create, policy_values
from reviewapp.review.service import ReviewError, consensus
from reviewapp.policy.routing import decide_route
from tests import factories as make


def _policy(**changes) -> Policy:
    """A new policy version (as an admin saves it) with these changes."""
    admin = make.user("policy-admin", "admin")
    values = policy_values(Policy.current()) | changes
    return policy_create(user=admin, values=values, note="double review")


def _double(n: int = 2, **overrides) -> Answer:
    """An answer the judge flagged (c1 SUPPORTED, c2 CONTRADICTED), routed under a policy asking n
    reviews."""
    if Policy.current().reviewers_per_answer != n:
        _policy(reviewers_per_answer=n)
    answer = make.in_review(**overrides)
    assert (answer.review_status, answer.reviews_required, answer.reviews_blind) == (
        "in_review",
        n,
        True,
    )
    return answer


def _jsonl() -> list[dict]:
    return [
        json.loads(line) for line in b"".join(export_stream("jsonl", ExportFilters())).splitlines()
    ]


@pytest.fixture
def alice(db):
    return make.user("alice", "reviewer")


@pytest.fixture
def bob(db):
    return make.user("bob", "reviewer")


@pytest.fixture
def lee(db):
    return make.user("lee", "lead")


# --- the flow the issue must show ----------------------------------------------------------------


@pytest.mark.django_db
def test_two_blind_reviewers_disagree_and_a_lead_decides(client, alice, bob, lee):
    answer = _double()
    claim, supported = make.flagged(answer), answer.claims.get(label="SUPPORTED")
    # A decides and finishes.
    client.force_login(alice)
    assert client.post("/queue/next")["Location"] == f"/review/{answer.pk}/"
    client.post(f"/review/{answer.pk}/claims/{claim.pk}/decide",
                {"overturn_to": "UNSUPPORTED", "version": 0, "note": "alice: no such pass price"})
    response = client.post(f"/review/{answer.pk}/finish", follow=True)
    assert "it waits for another reviewer" in response.content.decode()
    answer.refresh_from_db()
    claim.refresh_from_db()
    assert answer.review_status == "in_review" and (claim.human_label, claim.consensus_method) == (
        "",
        "",
    )
    # A is not handed it again.
    assert "Nothing left to review here" in client.post("/queue/next", follow=True).content.decode()
    assert not review_service.lease_take(user=alice, answer=answer)
    # B is handed it and sees none of A's decisions.
    client.force_login(bob)
    assert client.post("/queue/next")["Location"] == f"/review/{answer.pk}/"
    page = client.get(f"/review/{answer.pk}/")
    text = page.content.decode()
    assert (
        "alice" not in text
        and "no such pass price" not in text
        and "Reviewers disagree" not in text
    )
    assert all((c.human_label, c.pass_decisions) == ("", []) for c in page.context["claims"])
    assert "blind: you see the judge's labels and your own decisions" in text
    # B disagrees on the claim (confirms the judge's CONTRADICTED) and finishes.
    client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide",
        {"decision": "confirm", "version": 0, "note": "bob: P2 says $92"},
    )
    response = client.post(f"/review/{answer.pk}/finish", follow=True)
    assert "the reviewers disagree, so a lead decides" in response.content.decode()
    # The answer is in the adjudication lane, not adjudicated: no verdict, no event.
    answer.refresh_from_db()
    claim.refresh_from_db()
    supported.refresh_from_db()
    assert (answer.review_status, answer.adjudicated_verdict) == ("adjudicating", "")
    assert not AuditEvent.objects.filter(action="answer.adjudicated").exists()
    assert claim.human_label == "" and (supported.human_label, supported.consensus_method) == (
        "SUPPORTED",
        "bulk",
    )
    # out of the reviewers' queue
    assert not Answer.objects.filter(review_status="in_review").exists()
    # Reviewers cannot settle it; the lead sees both decisions and notes side by side and decides.
    with pytest.raises(ReviewError, match="lead"):
        review_service.claim_decide(
            user=bob, claim=claim, decision="confirm", label=None, note="", expected_version=0
        )
    client.force_login(lee)
    assert f'href="/review/{answer.pk}/"' in client.get("/adjudication/").content.decode()
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert (
        "Reviewers disagree" in page
        and "alice: no such pass price" in page
        and "bob: P2 says $92" in page
    )
    assert client.post(f"/review/{answer.pk}/take").status_code == 302
    client.post(
        f"/review/{answer.pk}/claims/{claim.pk}/decide",
        {"overturn_to": "UNSUPPORTED", "version": 0, "note": "lead"},
    )
    response = client.post(f"/review/{answer.pk}/finish", follow=True)
    assert f"Answer {answer.pk} adjudicated" in response.content.decode()
    answer.refresh_from_db()
    claim.refresh_from_db()
    assert (answer.review_status, claim.human_label, claim.consensus_method, claim.decided_by) == (
        "adjudicated", "UNSUPPORTED", "lead", lee)
    assert (
        AuditEvent.objects.filter(action="answer.adjudicated", object_id=str(answer.pk)).count()
        == 1
    )
    # The export holds A's, B's and the lead's decisions, and how the label was reached.
    row = next(r for r in _jsonl() if r["claim_id"] == claim.cid)
    assert (row["human_label"], row["consensus_method"], row["reviewer"]) == (
        "UNSUPPORTED",
        "lead",
        "lee",
    )
    assert [
        (r["reviewer"], r["stage"], r["label"], r["decision_mode"], r["note"])
        for r in row["reviews"]
    ] == [
        ("alice", "review", "UNSUPPORTED", "explicit", "alice: no such pass price"),
        ("bob", "review", "CONTRADICTED", "explicit", "bob: P2 says $92"),
        ("lee", "adjudication", "UNSUPPORTED", "explicit", "lead"),
    ]
    other = next(r for r in _jsonl() if r["claim_id"] == supported.cid)
    # Both reviewers accepted it by finishing, nobody looked: never `unanimous`, its method says so.
    assert other["consensus_method"] == "bulk" and [
        r["decision_mode"] for r in other["reviews"]
    ] == ["bulk", "bulk"]
    # The lead's progress view: each reviewer against the final label (explicit decisions only).
    agreement = client.get("/reviewers/").context["agreement_by_reviewer"]
    assert (agreement["alice"].claims, agreement["alice"].agreed) == (1, 1)
    assert (agreement["bob"].claims, agreement["bob"].agreed) == (1, 0)


@pytest.mark.django_db
def test_a_blind_reviewer_sees_only_their_own_comments_until_they_finish(client, alice, bob):
    answer = _double()
    client.force_login(alice)
    client.post("/queue/next")
    assert client.post(
        f"/review/{answer.pk}/comments/add", {"body": "alice thinks P2 is stale"}
    ).status_code in (200, 302)
    client.post(f"/review/{answer.pk}/finish")
    client.force_login(bob)
    client.post("/queue/next")
    page = client.get(f"/review/{answer.pk}/")
    assert (
        "alice thinks P2 is stale" not in page.content.decode()
        and page.context["comments_hidden"] == 1
    )
    thread = client.get(
        f"/review/{answer.pk}/comments", headers={"HX-Request": "true"}
    ).content.decode()
    assert "alice thinks P2 is stale" not in thread  # nor in the partial htmx refreshes
    client.post(f"/review/{answer.pk}/finish")
    assert (
        "alice thinks P2 is stale" in client.get(f"/review/{answer.pk}/comments").content.decode()
    )


@pytest.mark.django_db
def test_when_every_reviewer_agrees_the_answer_is_adjudicated_unanimously(alice, bob):
    answer = _double()
    for user in (alice, bob):
        assert review_service.lease_next(user=user).pk == answer.pk
        review_service.claim_decide(
            user=user,
            claim=make.flagged(answer),
            decision="overturn",
            label="UNSUPPORTED",
            note="",
            expected_version=0,
        )
        review_service.answer_finish(user=user, answer=answer)
    answer.refresh_from_db()
    assert (answer.review_status, answer.adjudicated_verdict) == ("adjudicated", "MOSTLY_GROUNDED")
    methods = dict(Claim.objects.filter(answer=answer).values_list("cid", "consensus_method"))
    assert methods == {"c1": "bulk", "c2": "unanimous"}  # c1: both confirmed it by finishing only
    assert (
        make.flagged(answer).human_label == "UNSUPPORTED" and make.flagged(answer).decided_by == bob
    )
    assert AuditEvent.objects.filter(action="answer.adjudicated").count() == 1


@pytest.mark.django_db
def test_with_three_reviewers_two_agreeing_is_a_majority(alice, bob):
    carol = make.user("carol", "reviewer")
    answer = _double(3)
    for user, label in ((alice, "UNSUPPORTED"), (bob, "CONTRADICTED"), (carol, "UNSUPPORTED")):
        assert review_service.lease_next(user=user).pk == answer.pk
        review_service.claim_decide(
            user=user,
            claim=make.flagged(answer),
            decision="overturn",
            label=label,
            note="",
            expected_version=0,
        )
        review_service.answer_finish(user=user, answer=answer)
    answer.refresh_from_db()
    assert answer.review_status == "adjudicated"
    assert (make.flagged(answer).human_label, make.flagged(answer).consensus_method) == (
        "UNSUPPORTED",
        "majority",
    )


def test_the_consensus_rule():
    assert consensus(["SUPPORTED", "SUPPORTED"], required=2) == ("SUPPORTED", "unanimous")
    assert consensus(["SUPPORTED", "UNSUPPORTED"], required=2) is None
    assert consensus(["SUPPORTED", "UNSUPPORTED", "SUPPORTED"], required=3) == (
        "SUPPORTED",
        "majority",
    )
    assert consensus(["SUPPORTED", "UNSUPPORTED", "CONTRADICTED"], required=3) is None
    assert consensus(["SUPPORTED"], required=2) is None  # a decision missing settles nothing


# --- queue and leases
# ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_skip_counts_as_not_reviewed(alice, bob):
    carol = make.user("carol", "reviewer")
    answer = _double()
    assert review_service.lease_next(user=alice).pk == answer.pk
    review_service.answer_skip(user=alice, answer=answer)
    assert ReviewPass.objects.get(answer=answer, reviewer=alice).status == "skipped"
    # not back to the skipper for the lease length
    assert review_service.lease_next(user=alice) is None
    assert review_service.lease_next(user=bob).pk == answer.pk
    assert review_service.lease_next(user=carol).pk == answer.pk  # alice's place went back
    assert review_service.lease_next(user=make.user("dan", "reviewer")) is None  # both places taken


@pytest.mark.django_db
def test_two_reviewers_hold_one_answer_at_once_and_each_undoes_only_their_own(alice, bob):
    answer = _double()
    claim = make.flagged(answer)
    for user in (alice, bob):
        review_service.lease_next(user=user)
        assert review_service.holds_lease(user=user, answer=answer)
    review_service.claim_decide(
        user=alice,
        claim=claim,
        decision="overturn",
        label="UNSUPPORTED",
        note="",
        expected_version=0,
    )
    review_service.claim_decide(
        user=bob, claim=claim, decision="confirm", label=None, note="", expected_version=0
    )
    review_service.decision_undo(user=alice, answer=answer)  # her overturn
    mine = {
        r.reviewer.username: r.final_label
        for r in review_service.selectors.current_decisions(answer.pk)
    }
    assert mine == {"bob": "CONTRADICTED"}
    with pytest.raises(review_service.DecisionConflict):  # alice's own version moved on: 2 rows
        review_service.claim_decide(
            user=alice, claim=claim, decision="confirm", label=None, note="", expected_version=0
        )
    review_service.claim_decide(
        user=alice, claim=claim, decision="confirm", label=None, note="", expected_version=2
    )
    assert Claim.objects.get(pk=claim.pk).human_label == ""  # no final label while passes are open


@pytest.mark.django_db
def test_a_finished_blind_pass_cannot_be_reopened_while_another_is_open(client, alice, bob):
    # The attack: finish, read the co-reviewer's decisions and note (no longer blind), undo the
    # finish, copy them, finish again: the claim would be recorded `unanimous`.
    answer = _double()
    claim = make.flagged(answer)
    for user in (alice, bob):
        review_service.lease_next(user=user)
    review_service.claim_decide(user=bob, claim=claim, decision="overturn", label="UNSUPPORTED",
                                note="bob's reason", expected_version=0)
    review_service.claim_decide(
        user=alice, claim=claim, decision="confirm", label=None, note="", expected_version=0
    )
    review_service.answer_finish(user=alice, answer=answer)
    client.force_login(alice)
    # what she saw
    assert "bob&#x27;s reason" in client.get(f"/review/{answer.pk}/").content.decode()
    with pytest.raises(ReviewError, match="your review stays as you finished it"):
        review_service.decision_undo(user=alice, answer=answer)
    with pytest.raises(ReviewError):
        review_service.claim_decide(
            user=alice,
            claim=claim,
            decision="overturn",
            label="UNSUPPORTED",
            note="",
            expected_version=1,
        )
    response = client.post(f"/review/{answer.pk}/undo", follow=True)
    assert "your review stays as you finished it" in response.content.decode()
    assert ReviewPass.objects.get(answer=answer, reviewer=alice).status == "finished"
    review_service.answer_finish(user=bob, answer=answer)
    assert Claim.objects.get(pk=claim.pk).consensus_method != "unanimous"
    assert Answer.objects.get(pk=answer.pk).review_status == "adjudicating"


@pytest.mark.django_db
def test_after_consensus_reopening_is_a_leads_audited_action(client, alice, bob, lee):
    answer = _double()
    claim = make.flagged(answer)
    for user in (alice, bob):
        review_service.lease_next(user=user)
        review_service.claim_decide(
            user=user, claim=claim, decision="confirm", label=None, note="", expected_version=0
        )
        review_service.answer_finish(user=user, answer=answer)
    answer.refresh_from_db()
    assert (
        answer.review_status == "adjudicated"
        and Claim.objects.get(pk=claim.pk).consensus_method == "unanimous"
    )
    with pytest.raises(ReviewError):
        review_service.decision_undo(user=alice, answer=answer)
    client.force_login(alice)
    assert client.post(f"/review/{answer.pk}/reopen").status_code == 403  # a reviewer
    client.force_login(lee)
    client.post(f"/review/{answer.pk}/reopen")
    answer.refresh_from_db()
    assert (answer.review_status, answer.lease_holder) == ("adjudicating", lee)
    event = AuditEvent.objects.get(action="answer.reopened")
    assert (
        event.actor == lee
        and event.before["adjudicated_verdict"]
        and event.after == {"review_status": "adjudicating"}
    )
    claim.refresh_from_db()
    review_service.claim_decide(
        user=lee,
        claim=claim,
        decision="overturn",
        label="UNSUPPORTED",
        note="lee",
        expected_version=claim.version,
    )
    review_service.answer_finish(user=lee, answer=answer)
    answer.refresh_from_db()
    assert (
        answer.review_status == "adjudicated"
        and Claim.objects.get(pk=claim.pk).consensus_method == "lead"
    )


@pytest.mark.django_db
def test_a_lead_who_reviewed_an_answer_cannot_adjudicate_it_another_lead_must(bob, lee):
    answer = _double()
    claim = make.flagged(answer)
    for user in (lee, bob):
        review_service.lease_next(user=user)
    review_service.claim_decide(
        user=lee, claim=claim, decision="overturn", label="UNSUPPORTED", note="", expected_version=0
    )
    review_service.claim_decide(
        user=bob, claim=claim, decision="confirm", label=None, note="", expected_version=0
    )
    for user in (lee, bob):
        review_service.answer_finish(user=user, answer=answer)
    answer.refresh_from_db()
    assert answer.review_status == "adjudicating"
    assert not review_service.can_take(user=lee, answer=answer)
    with pytest.raises(ReviewError, match="another lead settles"):
        review_service.claim_decide(
            user=lee,
            claim=claim,
            decision="overturn",
            label="UNSUPPORTED",
            note="mine",
            expected_version=claim.version,
        )
    assert Claim.objects.get(pk=claim.pk).consensus_method == ""
    assert review_service.lease_take(user=make.user("olga", "lead"), answer=answer)


@pytest.mark.django_db
def test_with_blind_off_a_reviewer_sees_the_others_decisions_before_finishing(client, alice, bob):
    _policy(reviewers_per_answer=2, blind=False)
    answer = make.in_review()
    assert answer.reviews_blind is False
    review_service.lease_next(user=alice)
    review_service.claim_decide(
        user=alice,
        claim=make.flagged(answer),
        decision="overturn",
        label="UNSUPPORTED",
        note="alice thinks so",
        expected_version=0,
    )
    client.force_login(bob)
    client.post("/queue/next")
    assert "alice thinks so" in client.get(f"/review/{answer.pk}/").content.decode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("reviewers", [2, 3])
def test_reviewers_leasing_at_once_give_every_answer_exactly_n_distinct_reviewers(reviewers):
    _policy(reviewers_per_answer=2)
    users = [make.user(f"r{i}", "reviewer") for i in range(reviewers)]
    answers = [make.in_review() for _ in range(50)]
    barrier, errors = threading.Barrier(reviewers), []

    def work(user):
        barrier.wait()
        try:
            while (answer := review_service.lease_next(user=user)) is not None:
                review_service.answer_finish(user=user, answer=answer)
        except Exception as exc:  # noqa: BLE001 - reported below, with the thread's user
            errors.append((user.username, repr(exc)))
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    finished = Counter(
        ReviewPass.objects.filter(status="finished").values_list("answer_id", flat=True)
    )
    assert finished == {a.pk: 2 for a in answers}
    assert set(
        Answer.objects.filter(pk__in=[a.pk for a in answers]).values_list(
            "review_status", flat=True
        )
    ) == {"adjudicated"}
    assert (
        Review.objects.filter(stage="review").values("answer", "reviewer").distinct().count() == 100
    )


# --- assignment and progress
# -------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_lead_assigns_answers_and_the_reviewer_gets_them_first(client, alice, bob, lee):
    worse, assigned = make.in_review(), make.in_review()
    Answer.objects.filter(pk=worse.pk).update(priority=999)
    client.force_login(lee)
    response = client.post(
        "/assign",
        {"reviewer": "bob", "answer": assigned.pk, "back": f"/review/{assigned.pk}/"},
        follow=True,
    )
    assert "Assigned 1 of 1 answer to bob." in response.content.decode()
    assert review_service.lease_next(user=bob).pk == assigned.pk  # before the worse one
    assert review_service.lease_next(user=alice).pk == worse.pk  # bob's place is his
    assert not review_service.lease_take(user=alice, answer=assigned)
    client.force_login(bob)
    assert [a.pk for a in client.get("/queue/?mine=1").context["rows"]] == [assigned.pk]


@pytest.mark.django_db
def test_a_lead_assigns_the_filtered_answers_and_sees_each_reviewers_progress(
    client, alice, bob, lee
):
    first, second = make.in_review(), make.in_review(question="What does a bicycle permit cost?")
    client.force_login(lee)
    client.post("/assign?q=bicycle", {"reviewer": "alice", "back": "/answers/?q=bicycle"})
    assert list(ReviewPass.objects.values_list("answer_id", "reviewer__username")) == [
        (second.pk, "alice")
    ]
    review_service.lease_next(user=alice)
    review_service.answer_finish(user=alice, answer=second)
    review_service.lease_next(user=bob)
    review_service.answer_skip(user=bob, answer=first)
    page = client.get("/reviewers/")
    rows = {r.username: (r.assigned, r.done, r.skipped) for r in page.context["rows"]}
    assert rows == {"alice": (0, 1, 0), "bob": (0, 0, 1)}
    assert "<th>Agreement</th>" not in page.content.decode()  # the column waits for its figures
    assert client.post("/assign", {"reviewer": "nobody"}).status_code == 400
    client.force_login(alice)
    assert client.post("/assign", {"reviewer": "bob", "answer": first.pk}).status_code == 403


# --- policy
# ------------------------------------------------------------------------------------------


def test_the_scope_decides_which_answers_get_several_reviewers():
    base = dict(
        score_threshold=0.95,
        blocking_labels=["CONTRADICTED"],
        critical_categories=["price"],
        critical_single_claim_blocks=True,
        audit_sample_rate=1.0,
        reviewers_per_answer=3,
    )
    critical = [("CONTRADICTED", "price")]
    plain = [("CONTRADICTED", "other")]
    audited = [("SUPPORTED", "other")]

    def reviews(claims, **policy):
        route = decide_route(
            policy=Policy(**base | policy), answer_id=7, grounding_score=1.0, claims=claims
        )
        return route.reviews

    assert [reviews(c, multi_review_scope="all") for c in (critical, plain, audited)] == [3, 3, 3]
    assert [reviews(c, multi_review_scope="critical") for c in (critical, plain, audited)] == [
        3,
        1,
        1,
    ]
    assert [reviews(c, multi_review_scope="audit") for c in (critical, plain, audited)] == [1, 1, 3]
    assert reviews(critical, multi_review_share=0.0) == 1
    shared = [
        decide_route(
            policy=Policy(**base | {"multi_review_share": 0.3}),
            answer_id=i,
            grounding_score=1.0,
            claims=plain,
        ).reviews
        for i in range(2000)
    ]
    assert 0.25 < shared.count(3) / 2000 < 0.35


@pytest.mark.django_db
def test_the_policy_form_checks_preview_and_history_show_the_double_review_fields(client):
    client.force_login(make.user("ada", "admin"))
    current = Policy.current()
    page = client.post(
        "/policy/", make.policy_form(current, reviewers_per_answer=4)
    ).content.decode()
    assert (
        'id="error-reviewers_per_answer" role="alert">Ensure this value is less than or equal to 3.'
        in page
    )
    page = client.post(
        "/policy/", make.policy_form(current, reviewers_per_answer=2, multi_review_share=0)
    ).content.decode()
    assert (
        "With a share of 0 no answer gets several reviewers" in page and Policy.objects.count() == 1
    )
    make.in_review()
    preview = client.post(
        "/policy/preview",
        make.policy_form(
            current, reviewers_per_answer=2, multi_review_scope="all", multi_review_share=1, note=""
        ),
    ).content.decode()
    assert "Reviewed by several reviewers: <b>0</b> now, <b>1</b> under this policy." in preview
    client.post(
        "/policy/",
        make.policy_form(
            current,
            reviewers_per_answer=2,
            multi_review_scope="critical",
            multi_review_share=0.5,
            blind="on",
        ),
    )
    new = Policy.current()
    assert (
        new.version,
        new.reviewers_per_answer,
        new.multi_review_scope,
        new.multi_review_share,
        new.blind,
    ) == (2, 2, "critical", 0.5, True)
    page = client.get("/policy/").content.decode()
    assert "<li><b>reviewers_per_answer</b>: 1 → 2</li>" in page
    assert "<li><b>multi_review_scope</b>: all → critical</li>" in page


@pytest.mark.django_db
def test_a_policy_change_leaves_answers_already_routed_and_reroute_spares_started_ones(alice):
    started, waiting = make.in_review(), make.in_review()
    review_service.lease_take(user=alice, answer=started)
    _policy(reviewers_per_answer=2)
    assert Answer.objects.get(pk=waiting.pk).reviews_required == 1  # routed before the change
    job_run(job_id=job_start_reroute(user=make.user("ada", "admin")).pk)  # the worker's part, here
    assert dict(Answer.objects.values_list("pk", "reviews_required")) == {
        started.pk: 1,
        waiting.pk: 2,
    }


# --- what the client hears
# ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_client_hears_once_at_the_final_label_and_reads_adjudicating_meanwhile(alice, bob, lee):
    from reviewapp.api import selectors
    from reviewapp.models import WebhookDelivery
    from reviewapp.api.schemas import AnswerState

    _policy(reviewers_per_answer=2)
    answer = make.judged(client=make.webhook_endpoint()[0])
    claim = make.flagged(answer)
    for user, label in ((alice, "UNSUPPORTED"), (bob, "CONTRADICTED")):
        review_service.lease_next(user=user)
        review_service.claim_decide(
            user=user,
            claim=claim,
            decision="overturn",
            label=label,
            note=user.username,
            expected_version=0,
        )
        review_service.answer_finish(user=user, answer=answer)
    answer.refresh_from_db()
    state = AnswerState.model_validate(selectors.answer_state(answer))  # the API's GET: no 500
    assert state.review.status == "adjudicating"
    assert not WebhookDelivery.objects.filter(event="answer.adjudicated").exists()
    review_service.lease_take(user=lee, answer=answer)
    review_service.claim_decide(
        user=lee,
        claim=Claim.objects.get(pk=claim.pk),
        decision="confirm",
        label=None,
        note="P2: $92",
        expected_version=0,
    )
    review_service.answer_finish(user=lee, answer=answer)
    decisions = {
        d["claim_id"]: d
        for d in WebhookDelivery.objects.get(event="answer.adjudicated").payload["data"][
            "adjudication"
        ]["decisions"]
    }
    settled = decisions[claim.cid]
    assert (settled["human_label"], settled["consensus_method"]) == ("CONTRADICTED", "lead")
    assert [(r["stage"], r["label"], r["note"]) for r in settled["reviews"]] == [
        ("review", "UNSUPPORTED", "alice"),
        ("review", "CONTRADICTED", "bob"),
        ("adjudication", "CONTRADICTED", "P2: $92"),
    ]
    # reviewers' names stay in ClaimDesk
    assert all("reviewer" not in r for r in settled["reviews"])


# --- how a final label was reached, under undo
# ----------------------------------------------------------


@pytest.mark.django_db
def test_one_review_sets_single_and_undo_clears_it(alice):
    answer = make.in_review()
    claim = make.flagged(answer)
    review_service.claim_decide(
        user=alice, claim=claim, decision="confirm", label=None, note="", expected_version=0
    )
    assert Claim.objects.get(pk=claim.pk).consensus_method == "single"
    review_service.decision_undo(user=alice, answer=answer)
    assert (
        Claim.objects.get(pk=claim.pk).human_label,
        Claim.objects.get(pk=claim.pk).consensus_method,
    ) == ("", "")


@pytest.mark.django_db
def test_a_leads_undo_gives_a_claim_back_what_the_reviewers_settled(alice, bob, lee):
    answer = _double()
    claim, supported = make.flagged(answer), answer.claims.get(label="SUPPORTED")
    for user, label in ((alice, "UNSUPPORTED"), (bob, "CONTRADICTED")):
        review_service.lease_next(user=user)
        review_service.claim_decide(
            user=user, claim=claim, decision="overturn", label=label, note="", expected_version=0
        )
        review_service.answer_finish(user=user, answer=answer)
    answer.refresh_from_db()
    assert review_service.lease_take(user=lee, answer=answer)
    with pytest.raises(ReviewError, match="Decide c2 first"):  # the claim the reviewers disagree on
        review_service.answer_finish(user=lee, answer=answer)
    supported.refresh_from_db()
    review_service.claim_decide(
        user=lee,
        claim=supported,
        decision="overturn",
        label="PARTIALLY_SUPPORTED",
        note="",
        expected_version=supported.version,
    )
    assert Claim.objects.get(pk=supported.pk).consensus_method == "lead"
    review_service.decision_undo(user=lee, answer=answer)
    supported.refresh_from_db()
    assert (supported.human_label, supported.consensus_method) == ("SUPPORTED", "bulk")
    with pytest.raises(ReviewError, match="a lead settles it now"):
        review_service.decision_undo(user=alice, answer=answer)


@pytest.mark.django_db
def test_after_a_decision_the_next_selected_claim_is_one_the_reviewer_has_still_to_decide(
    client, alice
):
    answer = _double(
        answer=(
            "Riders aged 65 and older pay a reduced fare of $1.50 per ride. A 30-day pass costs"
            " $75.00."
        )
    )
    first, second = answer.claims.exclude(label="SUPPORTED").order_by("position")[:2]
    client.force_login(alice)
    client.post("/queue/next")
    url = f"/review/{answer.pk}/claims/{{}}/decide"
    response = client.post(
        url.format(first.pk), {"decision": "confirm", "version": 0}, headers={"HX-Request": "true"}
    )
    assert response.context["selected"] == second.pk
    # Her last flagged claim decided: the selection stays, not back on one she decided already
    # (the claims' shared state says nothing is decided until everyone has finished).
    response = client.post(
        url.format(second.pk), {"decision": "confirm", "version": 0}, headers={"HX-Request": "true"}
    )
    assert response.context["selected"] == second.pk
