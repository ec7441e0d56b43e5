"""The judging service in-process, against real Postgres: claiming, failures, retries,
constraints."""

import threading
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

import judges
from judges import JudgeError
from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Policy
from reviewapp.judging.service import AnswerBusy, TransientJudgeFailure, answer_judge
from tests import factories as make
from tests.judges.factories import GOOD, GOOD_ANSWER, GOOD_PASSAGE


@pytest.mark.django_db
def test_it_judges_an_answer_once_and_a_second_delivery_does_nothing():
    answer = make.ingested()
    run = answer_judge(answer_id=answer.pk)
    assert run.status == "succeeded"
    assert answer_judge(answer_id=answer.pk) is None
    assert JudgeRun.objects.count() == 1
    assert Claim.objects.count() == 2
    answer.refresh_from_db()
    assert (answer.status, answer.judged_by) == ("judged", run)
    assert answer.judging_token is None


@pytest.mark.django_db(transaction=True)
def test_two_deliveries_at_once_produce_one_claim_set():
    answer = make.ingested()
    barrier = threading.Barrier(4)
    outcomes = []

    def deliver():
        barrier.wait()
        try:
            outcomes.append(answer_judge(answer_id=answer.pk))
        except AnswerBusy:
            outcomes.append("busy")
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(isinstance(o, JudgeRun) for o in outcomes) == 1
    assert JudgeRun.objects.count() == 1
    assert Claim.objects.values("run").distinct().count() == 1


@pytest.mark.django_db
def test_a_delivery_finding_the_answer_claimed_elsewhere_is_told_when_to_retry():
    answer = make.ingested()
    Answer.objects.filter(pk=answer.pk).update(
        status="judging", judging_until=timezone.now() + timedelta(seconds=90)
    )
    with pytest.raises(AnswerBusy) as busy:
        answer_judge(answer_id=answer.pk)
    assert 80 < busy.value.retry_in <= 90


@pytest.mark.django_db
def test_an_expired_claim_is_taken_over_and_the_abandoned_run_is_closed():
    answer = make.ingested()
    stale = JudgeRun.objects.create(
        answer=answer,
        profile="offline",
        prompt_version="v1",
        backend="offline",
        model="rules",
        config_key="x",
    )
    Answer.objects.filter(pk=answer.pk).update(
        status="judging", judging_until=timezone.now() - timedelta(seconds=1)
    )
    run = answer_judge(answer_id=answer.pk)
    assert run.status == "succeeded"
    stale.refresh_from_db()
    assert stale.status == "failed" and "abandoned" in stale.error


@pytest.mark.django_db
def test_a_crashing_judge_leaves_a_failed_run_holding_the_error(monkeypatch):
    def crash(request, config):
        raise RuntimeError("parser exploded on claim 3")

    monkeypatch.setattr(judges, "judge", crash)
    answer = make.ingested()
    run = answer_judge(answer_id=answer.pk)
    run.refresh_from_db()
    answer.refresh_from_db()
    assert run.status == "failed"
    assert run.error == "RuntimeError: parser exploded on claim 3"
    assert answer.status == "failed"
    assert (answer.review_status, answer.routing_reason) == ("in_review", "judge failed")
    assert Claim.objects.count() == 0


@pytest.mark.django_db
def test_a_transient_failure_gives_the_answer_back_for_a_retry(monkeypatch):
    def rate_limited(request, config):
        raise JudgeError("429 Too Many Requests", transient=True, attempts=3)

    monkeypatch.setattr(judges, "judge", rate_limited)
    answer = make.ingested()
    with pytest.raises(TransientJudgeFailure):
        answer_judge(answer_id=answer.pk, last_try=False)
    answer.refresh_from_db()
    assert answer.status == "queued" and answer.judging_token is None
    run = JudgeRun.objects.get()
    assert (run.status, run.error_is_transient, run.attempts) == ("failed", True, 3)

    monkeypatch.undo()
    assert answer_judge(answer_id=answer.pk).status == "succeeded"  # the retry judges it


@pytest.mark.django_db
def test_a_transient_failure_on_the_last_try_fails_the_answer(monkeypatch):
    monkeypatch.setattr(
        judges, "judge", lambda r, c: (_ for _ in ()).throw(JudgeError("timeout", transient=True))
    )
    answer = make.ingested()
    answer_judge(answer_id=answer.pk, last_try=True)
    answer.refresh_from_db()
    assert answer.status == "failed"


@pytest.mark.django_db
def test_a_result_with_a_span_outside_the_answer_is_refused_not_stored(monkeypatch):
    real_judge = judges.judge

    def bad_spans(request, config):
        output = real_judge(request, config)
        output.result.claims[0].answer_span = (0, len(request.answer) + 10)
        return output

    monkeypatch.setattr(judges, "judge", bad_spans)
    answer = make.ingested()
    run = answer_judge(answer_id=answer.pk)
    run.refresh_from_db()
    assert run.status == "failed" and "outside the answer" in run.error
    assert Claim.objects.count() == 0


@pytest.mark.django_db
def test_a_rerun_of_the_same_configuration_supersedes_the_previous_run():
    answer = make.ingested()
    first = answer_judge(answer_id=answer.pk)
    Answer.objects.filter(pk=answer.pk).update(status="queued")
    second = answer_judge(answer_id=answer.pk)
    first.refresh_from_db()
    assert (first.is_current, second.is_current) == (False, True)
    assert Claim.objects.filter(run=first).count() == Claim.objects.filter(run=second).count() == 2


@pytest.mark.django_db
def test_a_result_whose_claim_was_taken_over_meanwhile_writes_nothing(monkeypatch):
    """The result, its claims and the current-run switch are stored only if the answer is still
    held by this delivery: the previous current run stays current, the late run is failed."""
    import uuid

    answer = make.ingested()
    first = answer_judge(answer_id=answer.pk)
    Answer.objects.filter(pk=answer.pk).update(status="queued")
    real_judge = judges.judge
    other = uuid.uuid4()

    def taken_over_meanwhile(request, config):
        output = real_judge(request, config)
        # another delivery took over
        Answer.objects.filter(pk=answer.pk).update(judging_token=other)
        return output

    monkeypatch.setattr(judges, "judge", taken_over_meanwhile)
    late = answer_judge(answer_id=answer.pk)
    first.refresh_from_db()
    late.refresh_from_db()
    answer.refresh_from_db()
    assert late.status == "failed" and late.error.startswith("superseded") and not late.is_current
    assert first.is_current and first.status == "succeeded"
    assert (
        Claim.objects.filter(run=late).count() == 0 and Claim.objects.filter(run=first).count() == 2
    )
    assert (answer.status, answer.judging_token, answer.judged_by_id) == (
        "judging",
        other,
        first.pk,
    )


@pytest.mark.django_db
def test_reruns_of_one_configuration_leave_exactly_one_current_run():
    answer = make.ingested()
    runs = []
    for _ in range(4):
        runs.append(answer_judge(answer_id=answer.pk))
        Answer.objects.filter(pk=answer.pk).update(status="queued")
    current = JudgeRun.objects.filter(answer=answer, is_current=True)
    assert list(current.values_list("pk", flat=True)) == [runs[-1].pk]
    assert Evidence.objects.filter(claim__run=runs[-1]).exists()


@pytest.mark.django_db
def test_the_database_refuses_two_current_runs_of_one_configuration():
    answer = make.ingested()
    fields = dict(
        answer=answer,
        profile="p",
        prompt_version="v1",
        backend="offline",
        model="m",
        config_key="k",
        status="succeeded",
        is_current=True,
    )
    JudgeRun.objects.create(**fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgeRun.objects.create(**fields)


@pytest.mark.django_db
def test_the_database_refuses_a_claim_span_past_the_end_of_its_answer():
    answer = make.ingested()
    run = JudgeRun.objects.create(
        answer=answer,
        profile="p",
        prompt_version="v1",
        backend="offline",
        model="m",
        config_key="k",
    )
    end = len(answer.answer)
    Claim.objects.create(
        run=run,
        answer=answer,
        position=0,
        cid="c1",
        text="t",
        answer_start=0,
        answer_end=end,
        label="SUPPORTED",
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        Claim.objects.create(run=run, answer=answer, position=1, cid="c2", text="t", answer_start=0,
                             answer_end=end + 1, label="SUPPORTED")
    with pytest.raises(IntegrityError), transaction.atomic():
        Claim.objects.create(run=run, answer=answer, position=2, cid="c3", text="t", answer_start=5,
                             answer_end=4, label="SUPPORTED")


@pytest.mark.django_db
def test_the_database_refuses_an_evidence_span_past_the_end_of_its_passage():
    answer = make.ingested()
    passage = answer.passages.get(pid="P2")
    run = JudgeRun.objects.create(
        answer=answer,
        profile="p",
        prompt_version="v1",
        backend="offline",
        model="m",
        config_key="k",
    )
    claim = Claim.objects.create(
        run=run, answer=answer, position=0, cid="c1", text="t", label="SUPPORTED"
    )
    Evidence.objects.create(
        claim=claim,
        passage=passage,
        passage_pid="P2",
        position=0,
        quote="q",
        start=0,
        end=len(passage.text),
        match="exact",
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        Evidence.objects.create(
            claim=claim,
            passage=passage,
            passage_pid="P2",
            position=1,
            quote="q",
            start=0,
            end=len(passage.text) + 1,
            match="exact",
        )
    with pytest.raises(IntegrityError), transaction.atomic():  # a found quote must have a span
        Evidence.objects.create(
            claim=claim, passage=passage, passage_pid="P2", position=2, quote="q", match="exact"
        )


@pytest.mark.django_db
def test_history_rows_cannot_be_changed_or_deleted():
    from reviewapp.models import Policy

    policy = Policy.current()
    policy.note = "edited"
    with pytest.raises(ValueError, match="append-only"):
        policy.save()
    with pytest.raises(ValueError, match="append-only"):
        policy.delete()


def _judge_with_claims(settings, fake_llm, count: int) -> tuple[Answer, int]:
    """Judge (openai backend, fake LLM) an answer of `count` sentences that the reply splits into
    `count` claims with two quotes each; return the answer and the SQL queries the service ran."""
    import json

    from django.test.utils import CaptureQueriesContext

    from tests.fake_openai import Reply

    sentences = [f"Fare option {i} costs ${i}.25 per ride." for i in range(count)]
    claims = [{"id": f"c{i}", "text": sentence, "label": "SUPPORTED", "category": "price",
               "quotes": [{"passage_id": "P1", "quote": sentence.rstrip(".")},
                          {"passage_id": "P2", "quote": f"option {i} costs ${i}.25"}],
               "explanation": "P1 and P2 state it."} for i, sentence in enumerate(sentences)]
    fake_llm.enqueue(
        Reply.ok(
            json.dumps(
                {
                    "claims": claims,
                    "fabrications": [],
                    "omissions": [],
                    "counts": {
                        "total": count,
                        "supported": count,
                        "partially_supported": 0,
                        "contradicted": 0,
                        "unsupported": 0,
                    },
                    "verdict": "GROUNDED",
                    "rewrite_note": "",
                }
            )
        )
    )
    settings.OPENAI_BASE_URL = fake_llm.base_url
    make.openai_policy("claim_audit")
    text = " ".join(sentences)
    answer = make.ingested(
        answer=text, passages=[{"text": text}, {"text": text.lower() + " " + text}]
    )
    with CaptureQueriesContext(connection) as queries:
        run = answer_judge(answer_id=answer.pk)
    assert run.status == "succeeded", run.error
    return answer, len(queries.captured_queries)


@pytest.mark.django_db
def test_storing_a_result_costs_the_same_queries_for_5_claims_as_for_50(settings, fake_llm):
    # Claims and evidence go in with one bulk insert each: no query per claim or per quote.
    few, few_queries = _judge_with_claims(settings, fake_llm, 5)
    many, many_queries = _judge_with_claims(settings, fake_llm, 50)
    assert (
        Claim.objects.filter(answer=few).count(),
        Evidence.objects.filter(claim__answer=few).count(),
    ) == (5, 10)
    assert (
        Claim.objects.filter(answer=many).count(),
        Evidence.objects.filter(claim__answer=many).count(),
    ) == (50, 100)
    assert many_queries == few_queries
    # claim; answer, passages, policy; the run; then savepoint, 5 writes, release (a transaction
    # outside tests)
    assert few_queries <= 12, few_queries


def _judge_with_the_fake_llm(settings, fake_llm, content: str) -> tuple[Answer, JudgeRun]:
    from tests.fake_openai import Reply

    fake_llm.enqueue(Reply.ok(content))
    settings.OPENAI_BASE_URL = fake_llm.base_url
    make.openai_policy()
    answer = make.ingested(GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}])
    run = answer_judge(answer_id=answer.pk)
    run.refresh_from_db()
    answer.refresh_from_db()
    return answer, run


@pytest.mark.django_db
@pytest.mark.parametrize("unstorable", ["\x00", "\\u0000", "\ud800", "\\ud800"])
def test_an_llm_reply_with_a_nul_is_cleaned_and_stored(settings, fake_llm, unstorable):
    answer, run = _judge_with_the_fake_llm(
        settings, fake_llm, GOOD.replace("Stated in P1.", f"Stated{unstorable} in P1.")
    )
    assert (run.status, answer.status, answer.judged_by_id) == ("succeeded", "judged", run.pk)
    assert run.raw_output == GOOD
    assert Claim.objects.get(run=run, cid="c1").explanation == "Stated in P1."


def _with_a_nul_in_the_first_explanation(monkeypatch) -> None:
    """A judge whose result still holds a NUL (as a judge that does not clean its text would)."""
    real_judge = judges.judge

    def unclean(request, config):
        output = real_judge(request, config)
        output.result.claims[0].explanation += "\x00"
        return output

    monkeypatch.setattr(judges, "judge", unclean)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "client", [False, True], ids=["without a client", "with a client's webhook event"]
)
def test_a_result_the_database_refuses_fails_the_run_with_its_reason_at_once(monkeypatch, client):
    from reviewapp.api.clients import api_client_create

    _with_a_nul_in_the_first_explanation(monkeypatch)
    owner = api_client_create(name="acme")[0] if client else None
    answer = make.ingested(client=owner)
    run = answer_judge(answer_id=answer.pk)
    run.refresh_from_db()
    answer.refresh_from_db()
    assert run.status == "failed" and not run.is_current and not run.error_is_transient
    assert run.error == (
        "storing the result failed: DataError: unsupported Unicode escape sequence: "
        "\\u0000 cannot be converted to text."
    )
    assert (answer.status, answer.judging_token) == ("failed", None)
    assert (answer.review_status, answer.routing_reason) == ("in_review", "judge failed")
    assert Claim.objects.count() == 0
    # nothing left for a retry or the sweeper to do
    assert answer_judge(answer_id=answer.pk) is None


@pytest.mark.django_db
def test_a_transient_database_error_while_storing_keeps_the_retry_path(monkeypatch):
    from django.db import OperationalError

    from reviewapp.judging import service as judging

    def connection_lost(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(judging, "run_record_success", connection_lost)
    answer = make.ingested()
    with pytest.raises(OperationalError):
        answer_judge(answer_id=answer.pk)
    answer.refresh_from_db()
    run = JudgeRun.objects.get()
    assert answer.status == "judging"  # the task retries, with the same id, and takes it over
    assert run.status == "running" and run.error == ""


def _run_fields(run):
    return (
        run.profile,
        run.prompt_version,
        run.backend,
        run.model,
        run.config_key,
        run.example_set_id,
        run.status,
    )


@pytest.mark.django_db
def test_the_usual_run_starts_with_the_claim_and_is_the_run_start_run_makes(monkeypatch):
    from django.test.utils import CaptureQueriesContext

    from reviewapp.judging import service

    # what earlier tests in this process left is not this test's
    monkeypatch.setattr(service, "_in_force", None)
    # A deployment always has a policy (migration 0001's); a transactional test's flush empties the
    # table.
    Policy.current()
    # started on its own: this process learns the usual run
    first = answer_judge(answer_id=make.ingested().pk)
    second_answer = make.ingested()
    with CaptureQueriesContext(connection) as queries:
        second = answer_judge(answer_id=second_answer.pk)
    assert not [
        q["sql"]
        for q in queries.captured_queries
        if "INSERT INTO reviewapp_judgerun" in q["sql"] and "WITH held" not in q["sql"]
    ], service._in_force
    second.refresh_from_db()
    assert _run_fields(second) == _run_fields(first) and second.status == "succeeded"
    second_answer.refresh_from_db()
    assert (
        second.started_at == second_answer.judged_by.started_at
        and second_answer.judged_by_id == second.pk
    )


@pytest.mark.django_db
def test_a_new_policy_or_a_requested_profile_does_not_get_the_usual_run(settings, fake_llm):
    from reviewapp.models import Policy

    settings.OPENAI_BASE_URL = fake_llm.base_url  # its replies do not matter: the run's judge does
    settings.JUDGE_MAX_ATTEMPTS = 1
    # the usual run: the first policy's
    assert answer_judge(answer_id=make.ingested().pk).backend == "offline"
    Policy.objects.create(
        version=Policy.current().version + 1,
        judge_backend="openai",
        judge_profile="claim_audit",
        note="another judge",
    )
    after_change = answer_judge(answer_id=make.ingested().pk)
    assert (after_change.backend, after_change.profile) == ("openai", "claim_audit")
    own_profile = answer_judge(answer_id=make.ingested(profile="fare_policy").pk)
    assert (own_profile.backend, own_profile.profile) == ("openai", "fare_policy")
    again = answer_judge(answer_id=make.ingested().pk)  # started with its hold now
    assert _run_fields(again)[:6] == _run_fields(after_change)[:6]


def _policy_reads(queries) -> list[str]:
    """The statements that read the policy table on their own (the hold's subquery for the newest
    policy's key rides on the hold's UPDATE)."""
    return [q["sql"] for q in queries.captured_queries
            if q["sql"].startswith("SELECT") and 'FROM "reviewapp_policy"' in q["sql"]]


@pytest.mark.django_db
def test_the_worker_reads_each_policy_once_through_its_one_cache(monkeypatch):
    from django.test.utils import CaptureQueriesContext

    from reviewapp.judging import service

    monkeypatch.setattr(service, "_in_force", None)
    Policy.current()
    answer_judge(answer_id=make.ingested().pk)  # this process reads the policy
    with CaptureQueriesContext(connection) as same_policy:
        answer_judge(answer_id=make.ingested().pk)
    assert _policy_reads(same_policy) == []
    newer = make.next_policy(note="a newer policy", score_threshold=0.5)
    with CaptureQueriesContext(connection) as new_policy:
        run = answer_judge(answer_id=make.ingested().pk)
    assert len(_policy_reads(new_policy)) == 1
    run.answer.refresh_from_db()
    assert run.answer.policy_id == newer.pk and service._in_force.policy.pk == newer.pk
