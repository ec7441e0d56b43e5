"""End to end on real parts: the API, Postgres, Redis and a real `celery worker` subprocess."""

import pytest

from reviewapp.models import Answer, Claim, JudgeRun, Policy
from reviewapp.judging.tasks import judge_answer
from tests import factories as make
from tests.conftest import wait_for
from tests.factories import fare_payload
from tests.fake_openai import Reply
from tests.judges.factories import GOOD, GOOD_ANSWER, GOOD_PASSAGE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


def _judged(api, answer_id):
    body = api.get(answer_id).json()
    return body if body["status"] in ("judged", "failed") else None


def test_a_posted_answer_is_judged_by_the_worker_and_returned_by_get(api, celery_worker):
    answer_id = api.post(fare_payload()).json()["id"]
    body = wait_for(lambda: _judged(api, answer_id))

    assert body["status"] == "judged"
    assert body["verdict"] in ("MOSTLY_GROUNDED", "UNGROUNDED")
    assert 0 <= body["grounding_score"] < 1
    claims = body["claims"]
    # P2 says $92.00, not $75.00
    assert [c["label"] for c in claims] == [
        "SUPPORTED",
        "CONTRADICTED",
    ]
    answer_text = fare_payload()["answer"]
    for claim in claims:
        start, end = claim["answer_span"]
        assert answer_text[start:end] == claim["text"]
    evidence = claims[0]["evidence"][0]
    passage_text = fare_payload()["passages"][0]["text"]
    assert evidence["passage_id"] == "P1"
    assert passage_text[evidence["span"][0] : evidence["span"][1]] == evidence["quote"]
    assert body["safe_answer"] == "Riders aged 65 and older pay a reduced fare of $1.00 per ride."
    assert body["judge"]["backend"] == "offline"
    assert body["review"] == {"status": "in_review", "reason": body["review"]["reason"]}
    assert "CONTRADICTED" in body["review"]["reason"]

    run = JudgeRun.objects.get(answer__public_id=answer_id)
    assert run.status == "succeeded" and run.is_current and run.raw_output
    assert Claim.objects.filter(run=run).count() == 2


def test_a_grounded_answer_is_auto_passed_or_sampled(api, celery_worker):
    payload = fare_payload(answer="Riders aged 65 and older pay a reduced fare of $1.00 per ride.")
    answer_id = api.post(payload).json()["id"]
    body = wait_for(lambda: _judged(api, answer_id))
    assert body["verdict"] == "GROUNDED"
    assert body["grounding_score"] == 1.0
    assert body["review"]["status"] in ("auto_passed", "in_review")
    assert body["review"]["reason"] in ("passed policy", "audit sample")
    assert Answer.objects.get(public_id=answer_id).policy == Policy.current()


def test_a_message_queued_under_the_former_task_name_is_still_judged(
    api, celery_worker, monkeypatch
):
    """A message a previous release queued names "reviewapp.tasks.judge_answer": it still runs."""
    from celery import current_app

    from reviewapp import enqueue

    # only the old-name message
    monkeypatch.setattr(enqueue, "judge_answer_later", lambda answer_id: None)
    answer_id = api.post(fare_payload()).json()["id"]
    pk = Answer.objects.get(public_id=answer_id).pk
    assert Answer.objects.get(pk=pk).status == "queued"
    current_app.send_task("reviewapp.tasks.judge_answer", (pk,))
    body = wait_for(lambda: _judged(api, answer_id))
    assert body["status"] == "judged"
    assert [c["label"] for c in body["claims"]] == ["SUPPORTED", "CONTRADICTED"]


def test_a_task_delivered_three_times_produces_one_claim_set(api, celery_worker):
    answer_id = api.post(fare_payload()).json()["id"]
    pk = Answer.objects.get(public_id=answer_id).pk  # the task takes the primary key
    judge_answer.delay(pk)  # two more deliveries of the same task, racing the first
    judge_answer.delay(pk)
    wait_for(lambda: _judged(api, answer_id))
    # Deliveries that arrive after the verdict must find nothing to do.
    judge_answer.delay(pk)
    wait_for(
        lambda: not JudgeRun.objects.filter(answer__public_id=answer_id, status="running").exists(),
        timeout=5,
    )

    import time

    time.sleep(1.5)  # give the worker time to process the late delivery before counting
    runs = JudgeRun.objects.filter(answer__public_id=answer_id)
    assert runs.count() == 1
    assert Claim.objects.filter(answer__public_id=answer_id).count() == 2


def test_the_openai_backend_judges_through_the_worker_and_records_the_run(
    api, celery_worker, fake_llm
):
    make.openai_policy()
    fake_llm.enqueue(
        Reply.status(429, retry_after=0.1), Reply.ok(GOOD, prompt_tokens=400, completion_tokens=80)
    )
    answer_id = api.post(
        fare_payload(answer=GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}])
    ).json()["id"]
    body = wait_for(lambda: _judged(api, answer_id))

    assert body["status"] == "judged"
    assert [c["label"] for c in body["claims"]] == ["SUPPORTED", "UNSUPPORTED"]
    assert (
        body["judge"]["profile"] == "claim_verification" and body["judge"]["model"] == "fake-judge"
    )
    run = JudgeRun.objects.get(answer__public_id=answer_id)
    assert (run.backend, run.attempts, run.prompt_tokens, run.completion_tokens) == (
        "openai",
        2,
        400,
        80,
    )
    assert run.raw_output == GOOD
    assert run.config_key == "claim_verification@v1/openai/fake-judge"


def test_a_judge_that_fails_leaves_a_failed_run_with_its_error(api, celery_worker, fake_llm):
    make.openai_policy()
    fake_llm.enqueue(Reply.refusal("I cannot evaluate this content."))
    answer_id = api.post(fare_payload()).json()["id"]
    body = wait_for(lambda: _judged(api, answer_id))

    assert body["status"] == "failed"
    assert "refused" in body["error"] and "cannot evaluate" in body["error"]
    assert body["claims"] == []
    assert body["review"] == {"status": "in_review", "reason": "judge failed"}
    run = JudgeRun.objects.get(answer__public_id=answer_id)
    assert run.status == "failed" and not run.is_current
    assert "refused" in run.error


def test_an_llm_reply_with_a_nul_is_judged_by_the_worker_and_never_left_judging(
    api, celery_worker, fake_llm
):
    make.openai_policy()
    fake_llm.enqueue(Reply.ok(GOOD.replace("Stated in P1.", "Stated\\u0000 in P1.\x00")))
    answer_id = api.post(
        fare_payload(answer=GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}])
    ).json()["id"]
    body = wait_for(lambda: _judged(api, answer_id))

    assert body["status"] == "judged"
    assert body["claims"][0]["explanation"] == "Stated in P1."
    run = JudgeRun.objects.get(answer__public_id=answer_id)
    assert (run.status, run.raw_output) == ("succeeded", GOOD)
    assert len(fake_llm.requests) == 1  # judged once: no retries, no sweeper re-calls


def test_a_reroute_job_runs_on_the_worker_and_reports_progress(api, celery_worker):
    from reviewapp.models import Job
    from reviewapp.judging.jobs import job_start_reroute

    answer_id = api.post(fare_payload()).json()["id"]
    wait_for(lambda: _judged(api, answer_id))
    make.next_policy(
        score_threshold=0,
        blocking_labels=[],
        critical_categories=[],
        audit_sample_rate=0,
        note="pass everything",
    )
    admin = make.user("ada")
    job = job_start_reroute(user=admin)
    job = wait_for(lambda: Job.objects.filter(pk=job.pk, status="done").first())
    assert (job.done, job.changed) == (1, 1)
    assert Answer.objects.get(public_id=answer_id).review_status == "auto_passed"


def test_the_worker_judges_with_the_policys_example_set_and_the_api_reports_it(
    api, celery_worker, fake_llm
):
    from reviewapp.labels.examples import example_set_create

    overturned = make.claim(
        make.answer(),
        "CONTRADICTED",
        "UNSUPPORTED",
        span=(19, 47),
        reviewer=make.user("rho", "reviewer"),
        note="No passage prices the monthly pass.",
    )
    example_set = example_set_create(
        user=make.admin("root"), profile="claim_verification", claim_ids=[overturned.pk]
    )
    make.openai_policy(example_set=example_set, note="calibrated on overturns")
    fake_llm.enqueue(Reply.ok(GOOD))
    answer_id = api.post(
        fare_payload(answer=GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}])
    ).json()["id"]
    body = wait_for(lambda: _judged(api, answer_id))

    assert body["status"] == "judged", body["error"]
    assert (body["judge"]["prompt_version"], body["judge"]["examples"]) == ("v1+ex1", "ex1")
    run = JudgeRun.objects.get(answer__public_id=answer_id)
    assert (run.example_set_id, run.config_key) == (
        example_set.pk,
        "claim_verification@v1+ex1/openai/fake-judge",
    )
    sent = fake_llm.requests[0]["messages"][1]["content"]
    assert "worked example 1>>>\nClaim: A monthly pass costs $75.00.\n" in sent
    assert "Reviewers' reason: No passage prices the monthly pass." in sent
