"""Policy and routing: versions, preview, rollback, re-route and re-judge jobs."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

import judges
from judges.backends.offline.judge import OFFLINE_VERSION
from reviewapp.models import Answer, AuditEvent, Job, JudgeRun, Policy
from reviewapp.judging import jobs as jobs_service
from reviewapp.policy.routing import decide_route, in_audit_sample
from tests import factories as make

User = get_user_model()
GROUNDED = "Riders aged 65 and older pay a reduced fare of $1.00 per ride."


@pytest.fixture
def admin_client(client, db):
    user = make.admin()
    client.force_login(user)
    client.user = user
    return client


# --- routing ----------------------------------------------------------------------------------


def test_routing_gives_human_readable_reasons_and_countable_kinds():
    policy = Policy(
        score_threshold=0.95,
        blocking_labels=["CONTRADICTED", "UNSUPPORTED"],
        critical_categories=["price"],
        critical_single_claim_blocks=True,
        audit_sample_rate=0,
    )
    route = decide_route(policy=policy, answer_id=1, grounding_score=0.5,
                         claims=[("SUPPORTED", "other"), ("UNSUPPORTED", "price")])
    assert route.review_status == "in_review"
    assert route.reason == "score 0.50 < 0.95; 1 UNSUPPORTED claim; UNSUPPORTED price claim"
    assert route.kinds == ("score", "label:UNSUPPORTED", "critical:price")
    assert route.priority == 250  # UNSUPPORTED 200 + critical 50


@pytest.mark.parametrize(
    "score, claims, expected",
    [
        (0.95, [("SUPPORTED", "price")], ()),  # exactly at the threshold passes
        (0.9499, [("SUPPORTED", "price")], ("score",)),
        (1.0, [("PARTIALLY_SUPPORTED", "other")], ()),  # not a blocking label, not critical
        (1.0, [("PARTIALLY_SUPPORTED", "price")], ("critical:price",)),
        (1.0, [("CONTRADICTED", "other")], ("label:CONTRADICTED",)),
        (0.5, [("UNSUPPORTED", "age"), ("CONTRADICTED", "age")],
         ("score", "label:CONTRADICTED", "label:UNSUPPORTED", "critical:age")),
    ],
)
def test_each_routing_rule_and_their_combinations_at_the_boundaries(score, claims, expected):
    policy = Policy(
        score_threshold=0.95,
        blocking_labels=["CONTRADICTED", "UNSUPPORTED"],
        critical_categories=["price", "age"],
        critical_single_claim_blocks=True,
        audit_sample_rate=0,
    )
    route = decide_route(policy=policy, answer_id=7, grounding_score=score, claims=claims)
    assert route.kinds == expected
    assert route.review_status == ("in_review" if expected else "auto_passed")


def test_critical_categories_do_not_block_alone_when_the_policy_says_so():
    policy = Policy(score_threshold=0, blocking_labels=[], critical_categories=["price"],
                    critical_single_claim_blocks=False, audit_sample_rate=0)
    assert decide_route(policy=policy, answer_id=7, grounding_score=1.0,
                        claims=[("PARTIALLY_SUPPORTED", "price")]).review_status == "auto_passed"


def test_low_confidence_supported_claims_go_to_review_only_when_the_policy_says_so():
    claims = [
        ("SUPPORTED", "price", 0.42),
        ("SUPPORTED", "other", None),
        ("SUPPORTED", "other", 0.9),
    ]
    off = Policy(score_threshold=0, blocking_labels=[], critical_categories=[], audit_sample_rate=0)
    assert (
        decide_route(policy=off, answer_id=7, grounding_score=1.0, claims=claims).review_status
        == "auto_passed"
    )
    on = Policy(score_threshold=0, blocking_labels=[], critical_categories=[], audit_sample_rate=0,
                supported_confidence_floor=0.6)
    route = decide_route(policy=on, answer_id=7, grounding_score=1.0, claims=claims)
    assert (route.review_status, route.reason, route.kinds) == (
        "in_review", "1 SUPPORTED claim below confidence 0.60", ("confidence",))


@pytest.mark.django_db
def test_the_confidence_floor_is_saved_previewed_and_routes_new_answers(admin_client):
    # "Riders pay ... per ride" is in the passage, not word for word: SUPPORTED, below full
    # confidence.
    # With no audit sample in force: the default one sends 5% of answers to review by their id,
    # and an answer already sent would not "newly" go to review.
    admin_client.post(
        "/policy/",
        make.policy_form(Policy.current(), audit_sample_rate=0) | {"note": "no audit sample"},
    )
    paraphrase = make.judged("Older riders pay a reduced fare of $1.00 for each trip.")
    claim = paraphrase.claims.get()
    assert claim.label == "SUPPORTED" and claim.confidence < 0.9
    current = Policy.current()
    assert current.audit_sample_rate == 0
    form = make.policy_form(
        current,
        blocking_labels=[],
        critical_categories=[],
        score_threshold=0.0,
        audit_sample_rate=0,
        supported_confidence_floor=0.9,
    )
    page = admin_client.post("/policy/preview", form).content.decode()
    assert f"#{paraphrase.pk}" in page.split("Would newly go to review")[1]
    admin_client.post("/policy/", form | {"note": "look at paraphrases"})
    assert Policy.current().supported_confidence_floor == 0.9
    again = make.judged("Older riders pay a reduced fare of $1.00 for each trip.")
    assert again.review_status == "in_review" and "below confidence 0.90" in again.routing_reason


def test_the_audit_sample_is_deterministic_per_answer_and_near_its_rate():
    picked = [in_audit_sample(answer_id, 0.05) for answer_id in range(20_000)]
    assert picked == [in_audit_sample(answer_id, 0.05) for answer_id in range(20_000)]
    assert 0.04 < sum(picked) / len(picked) < 0.06


# --- the policy page --------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_policy_page_is_for_admins_only(client):
    assert client.get("/policy/").status_code == 302
    reviewer = make.user("rita", "reviewer")
    client.force_login(reviewer)
    for url in ("/policy/", "/jobs/1/"):
        assert client.get(url).status_code == 403
    for url in ("/policy/preview", "/policy/1/rollback", "/policy/reroute", "/policy/rejudge"):
        assert client.post(url).status_code == 403


@pytest.mark.django_db
def test_saving_needs_a_note_and_makes_a_new_version_with_an_audit_event(admin_client):
    current = Policy.current()
    response = admin_client.post(
        "/policy/", make.policy_form(current, note="", score_threshold=0.8)
    )
    assert response.status_code == 400 and Policy.objects.count() == 1
    admin_client.post(
        "/policy/", make.policy_form(current, note="fewer false alarms", score_threshold=0.8)
    )
    new = Policy.current()
    assert (new.version, new.score_threshold, new.created_by, new.note) == (
        2,
        0.8,
        admin_client.user,
        "fewer false alarms",
    )
    event = AuditEvent.objects.get(action="policy.created")
    assert (event.before["score_threshold"], event.after["score_threshold"]) == (0.95, 0.8)
    page = admin_client.get("/policy/").content.decode()
    assert "score_threshold</b>: 0.95 → 0.8" in page


@pytest.mark.django_db
def test_the_preview_counts_answers_each_policy_sends_to_review_with_examples(admin_client):
    grounded, flagged = make.judged(GROUNDED), make.judged(
        GROUNDED + " A 30-day pass costs $75.00."
    )
    current = Policy.current()
    response = admin_client.post(
        "/policy/preview",
        make.policy_form(
            current,
            blocking_labels=[],
            critical_categories=[],
            score_threshold=0.1,
            audit_sample_rate=0,
        ),
    )
    page = response.content.decode()
    assert "<b>2</b> answers judged" in page.replace("Of ", "")
    assert f"#{flagged.pk}" in page  # would newly auto-pass
    # The grounded answer is in review today only when the default 5% audit sample drew it.
    sampled = in_audit_sample(grounded.pk, 0.05)
    assert f"Would newly auto-pass ({2 if sampled else 1})" in page
    assert (f"#{grounded.pk}" in page.split("Would newly auto-pass")[1]) == sampled


@pytest.mark.django_db
def test_rollback_is_a_new_version_with_the_old_values(admin_client):
    current = Policy.current()
    admin_client.post("/policy/", make.policy_form(current, score_threshold=0.5))
    admin_client.post("/policy/1/rollback", {"note": "too lax"})
    latest = Policy.current()
    assert (latest.version, latest.score_threshold) == (3, 0.95)
    assert latest.note.startswith("Roll back to v1.")


# --- jobs -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_reroute_applies_the_current_policy_to_waiting_answers_but_not_adjudicated_ones(
    admin_client,
):
    flagged = make.judged(GROUNDED + " A 30-day pass costs $75.00.")
    decided = make.judged(GROUNDED + " A 30-day pass costs $75.00.")
    Answer.objects.filter(pk=decided.pk).update(review_status="adjudicated")
    admin_client.post(
        "/policy/",
        make.policy_form(
            Policy.current(),
            blocking_labels=[],
            critical_categories=[],
            score_threshold=0.0,
            audit_sample_rate=0,
            note="only failures",
        ),
    )
    admin_client.post("/policy/reroute")
    job = Job.objects.get()
    # what the worker does (tested end to end in test_judging_worker)
    jobs_service.job_run(job_id=job.pk)
    job.refresh_from_db()
    flagged.refresh_from_db()
    assert (job.status, job.done, job.changed) == ("done", job.total, 1)
    assert (flagged.review_status, flagged.routing_reason, flagged.policy.version) == (
        "auto_passed",
        "passed policy",
        2,
    )
    assert Answer.objects.get(pk=decided.pk).review_status == "adjudicated"
    progress = admin_client.get(f"/jobs/{job.pk}/")
    assert progress.status_code == 286  # done: htmx stops polling


@pytest.mark.django_db
def test_after_a_routing_change_the_policy_page_offers_to_reroute_the_answers_routed_before(
    admin_client,
):
    make.judged(GROUNDED + " A 30-day pass costs $75.00.")
    assert 'id="reroute-now"' not in admin_client.get("/policy/").content.decode()
    admin_client.post(
        "/policy/", make.policy_form(Policy.current(), score_threshold=0.5, note="looser")
    )
    page = admin_client.get("/policy/").content.decode()
    assert (
        'id="reroute-now"' in page
        and "<b>1</b> answer waiting or auto-passed was routed under an older" in page
    )
    admin_client.post("/policy/reroute")
    jobs_service.job_run(job_id=Job.objects.get().pk)
    assert 'id="reroute-now"' not in admin_client.get("/policy/").content.decode()


@pytest.mark.django_db
def test_rejudge_keeps_the_old_run_and_adds_a_side_run_once(admin_client):
    answer = make.judged(GROUNDED)
    admin_client.post(
        "/policy/rejudge", {"limit": 10, "profile": "", "backend": "offline", "model": ""}
    )
    job = Job.objects.get()
    assert job.total == 1
    jobs_service.answer_rejudge(job_id=job.pk, answer_id=answer.pk)
    # a second delivery does nothing
    jobs_service.answer_rejudge(job_id=job.pk, answer_id=answer.pk)
    answer.refresh_from_db()
    runs = JudgeRun.objects.filter(answer=answer)
    assert runs.count() == 2
    side = runs.get(job=job)
    assert side.status == "succeeded" and side.claims.exists()
    assert answer.judged_by != side  # the answer still shows its own run
    job.refresh_from_db()
    # job_run was not called here; done counts the answer
    assert (job.done, job.status) == (
        1,
        "queued",
    )
    # The job's row links to the answers it ran on (their review pages list the side run).
    assert (
        f'<a href="/review/{answer.pk}/">#{answer.pk}</a>'
        in admin_client.get(f"/jobs/{job.pk}/").content.decode()
    )


@pytest.mark.django_db
def test_a_rejudge_whose_result_the_database_refuses_fails_its_run_and_counts_done(
    admin_client, monkeypatch
):
    answer = make.judged(GROUNDED)
    real_judge = judges.judge

    def unclean(request, config):  # a result still holding a NUL, which PostgreSQL refuses
        output = real_judge(request, config)
        output.result.claims[0].explanation += "\x00"
        return output

    monkeypatch.setattr(judges, "judge", unclean)
    admin_client.post(
        "/policy/rejudge", {"limit": 10, "profile": "", "backend": "offline", "model": ""}
    )
    job = Job.objects.get()
    jobs_service.answer_rejudge(job_id=job.pk, answer_id=answer.pk)
    side = JudgeRun.objects.get(answer=answer, job=job)
    assert side.status == "failed" and side.error.startswith("storing the result failed: DataError")
    assert not side.claims.exists()
    job.refresh_from_db()
    assert job.done == 1


@pytest.mark.django_db
def test_the_previews_counts_equal_what_the_reroute_then_does(admin_client):
    answers = [make.judged(GROUNDED), make.judged(GROUNDED + " A 30-day pass costs $75.00."),
               make.judged(GROUNDED + " Monthly passes cost $30.")]
    values = make.policy_form(
        Policy.current(),
        score_threshold=0.6,
        blocking_labels=["CONTRADICTED"],
        critical_categories=[],
        audit_sample_rate=0,
        note="stricter on contradictions only",
    )
    from reviewapp.policy import selectors

    candidate = Policy(
        **{k: v for k, v in values.items() if k != "note"} | {"critical_single_claim_blocks": True}
    )
    preview = selectors.routing_preview(current=Policy.current(), candidate=candidate, days=7)
    admin_client.post("/policy/", values)
    admin_client.post("/policy/reroute")
    jobs_service.job_run(job_id=Job.objects.get().pk)
    in_review = Answer.objects.filter(
        pk__in=[a.pk for a in answers], review_status="in_review"
    ).count()
    assert preview["review_candidate"] == in_review


@pytest.mark.django_db
def test_escalation_rejudges_a_flagged_answer_and_shows_the_second_run():
    Policy.objects.create(version=2, escalation_profile="claim_audit", escalation_backend="offline",
                          escalation_model="stronger", note="escalate")
    answer = make.judged(GROUNDED + " A 30-day pass costs $75.00.")
    runs = list(JudgeRun.objects.filter(answer=answer).order_by("id"))
    assert len(runs) == 2 and all(r.status == "succeeded" for r in runs)
    assert answer.judged_by == runs[1]
    assert answer.routing_reason.startswith("escalated to offline@")
    assert runs[0].claims.exists() and runs[1].claims.exists()
    reviewer = make.user("rita", "reviewer")
    client = Client()
    client.force_login(reviewer)
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert "Other judge runs on this answer (1)" in page and "offline@v" in page


@pytest.mark.django_db
def test_an_escalated_result_the_database_refuses_fails_both_runs_and_the_answer(monkeypatch):
    Policy.objects.create(version=2, escalation_profile="claim_audit", escalation_backend="offline",
                          escalation_model="stronger", note="escalate")
    real_judge = judges.judge

    def unclean(request, config):  # the stronger judge's result still holds a NUL
        output = real_judge(request, config)
        if config.model == "stronger":
            output.result.claims[0].explanation += "\x00"
        return output

    monkeypatch.setattr(judges, "judge", unclean)
    answer = make.judged(GROUNDED + " A 30-day pass costs $75.00.")
    runs = list(JudgeRun.objects.filter(answer=answer).order_by("id"))
    assert [r.status for r in runs] == ["failed", "failed"]
    assert all(r.error.startswith("storing the result failed: DataError") for r in runs)
    assert (answer.status, answer.routing_reason) == ("failed", "judge failed")
    assert not answer.claims.exists()


@pytest.mark.django_db
def test_no_escalation_for_a_clean_answer_far_from_the_threshold():
    Policy.objects.create(
        version=2,
        escalation_backend="offline",
        escalation_margin=0.01,
        audit_sample_rate=0,
        note="escalate",
    )
    answer = make.judged(GROUNDED)
    assert JudgeRun.objects.filter(answer=answer).count() == 1


@pytest.mark.django_db
def test_a_failed_escalation_leaves_the_first_result_and_records_the_failure():
    Policy.objects.create(
        version=2, escalation_profile="no_such_profile", escalation_backend="openai", note="bad"
    )
    answer = make.judged(GROUNDED + " A 30-day pass costs $75.00.")
    first, second = JudgeRun.objects.filter(answer=answer).order_by("id")
    assert answer.judged_by == first and answer.status == "judged"
    assert second.status == "failed" and "escalation failed" in second.error


# --- judge configurations that would not run as chosen ------------------------------------------


REJUDGE = {"limit": 10, "profile": "", "backend": "offline", "model": ""}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "changes, field, message",
    [
        (
            {"profile": "sentence_map"},
            "profile",
            f"The offline backend judges by its own rules (offline@{OFFLINE_VERSION})",
        ),
        ({"model": "gpt-4o-mini"}, "model", "The offline backend calls no model"),
        ({"backend": "openai", "profile": "claim_audit"}, "backend", "OPENAI_BASE_URL is not set"),
    ],
)
def test_a_rejudge_the_judge_would_not_run_as_chosen_is_refused_beside_its_field(
    admin_client, settings, changes, field, message
):
    settings.OPENAI_BASE_URL = None
    make.judged(GROUNDED)
    response = admin_client.post("/policy/rejudge", REJUDGE | changes)
    assert response.status_code == 400 and not Job.objects.exists()
    form = response.context["rejudge_form"]
    assert message in " ".join(form.errors[field])
    assert message in response.content.decode()


@pytest.mark.django_db
def test_the_policy_refuses_an_openai_judge_without_an_endpoint_and_a_profile_for_the_offline_one(
    admin_client, settings
):
    settings.OPENAI_BASE_URL = None
    current = Policy.current()
    cases = [
        ({"judge_backend": "openai"}, "judge_backend", "OPENAI_BASE_URL is not set"),
        (
            {"judge_backend": "offline", "judge_profile": "sentence_map"},
            "judge_profile",
            "reads no profile",
        ),
        ({"judge_model": "gpt-4o"}, "judge_model", "calls no model"),
        ({"escalation_backend": "openai"}, "escalation_backend", "OPENAI_BASE_URL is not set"),
    ]
    for changes, field, message in cases:
        response = admin_client.post("/policy/", make.policy_form(current, **changes))
        assert response.status_code == 400, changes
        assert message in " ".join(response.context["form"].errors[field])
    assert Policy.objects.count() == 1


@pytest.mark.django_db
def test_a_rejudge_whose_runs_all_fail_reports_the_job_failed_with_the_reason(
    admin_client, settings, fake_llm
):
    from tests.fake_openai import Reply

    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = fake_llm.base_url, "test-key"
    answers = [make.judged(GROUNDED), make.judged(GROUNDED)]
    fake_llm.default = Reply.status(400, message="model not found")
    response = admin_client.post(
        "/policy/rejudge", REJUDGE | {"backend": "openai", "profile": "claim_verification"}
    )
    assert response.status_code == 302
    job = Job.objects.get()
    Job.objects.filter(pk=job.pk).update(status="running")  # what job_run does before fanning out
    for answer in answers:
        jobs_service.answer_rejudge(job_id=job.pk, answer_id=answer.pk)
    job.refresh_from_db()
    assert (job.done, job.status) == (2, "failed")
    assert job.error.startswith("2 of 2 runs failed; the first:") and "model not found" in job.error
    line = admin_client.get(f"/jobs/{job.pk}/").content.decode()
    assert "2 of 2 runs failed" in line and "failed</span>" in line


@pytest.mark.django_db
def test_the_offline_rejudge_names_no_model_and_leaves_golden_answers_out_unless_asked(
    admin_client,
):
    from reviewapp.labels.golden import golden_answers

    posted = make.judged(GROUNDED)
    golden = make.judged(GROUNDED)
    Answer.objects.filter(pk=golden.pk).update(metadata={"golden": "fares"})
    assert list(golden_answers("fares").values_list("pk", flat=True)) == [golden.pk]
    admin_client.post("/policy/rejudge", REJUDGE)
    admin_client.post("/policy/rejudge", REJUDGE | {"include_golden": "on"})
    without, with_golden = Job.objects.order_by("pk")
    assert without.params["answer_ids"] == [posted.pk]
    assert sorted(with_golden.params["answer_ids"]) == sorted([posted.pk, golden.pk])
    assert without.params["model"] == ""
    page = admin_client.get("/policy/").content.decode()
    assert (
        "the offline judge" in page
        and "gpt-4o-mini)" not in page.split('<ul class="jobs">')[1].split("</ul>")[0]
    )


# --- the form's messages and the history ---------------------------------------------------------


@pytest.mark.django_db
def test_an_invalid_preview_value_puts_its_message_beside_the_field_and_clears_the_old_preview(
    admin_client,
):
    current = Policy.current()
    page = admin_client.post(
        "/policy/preview", make.policy_form(current, score_threshold=1.7)
    ).content.decode()
    beside = page.split('id="error-score_threshold"')[1].split("</span>")[0]
    assert 'hx-swap-oob="true"' in beside and "less than or equal to 1" in beside
    assert "No preview: score_threshold:" in page and "answers judged" not in page
    fixed = admin_client.post(
        "/policy/preview", make.policy_form(current, score_threshold=0.9)
    ).content.decode()
    # the message goes away
    assert 'id="error-score_threshold" role="alert" hx-swap-oob="true"></span>' in fixed
    assert "answers judged" in fixed


@pytest.mark.django_db
def test_the_history_shows_values_not_python_lists_or_empty_entries(admin_client):
    current = Policy.current()
    admin_client.post(
        "/policy/",
        make.policy_form(current, blocking_labels=["CONTRADICTED"], note="only contradictions"),
    )
    admin_client.post(
        "/policy/", make.policy_form(current, blocking_labels=[], note="nothing blocks")
    )
    history = admin_client.get("/policy/").content.decode().split('class="history-table"')[1]
    assert "blocking_labels</b>: CONTRADICTED → none" in history
    assert "[" not in history and "→ </li>" not in history
    assert "judge_profile" not in history  # empty in every version: never listed as a change
