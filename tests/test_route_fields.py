"""Applying a route to an answer is stated once (Route.answer_fields): the worker's one-statement
SQL, the answer it keeps in memory, a failed answer and the re-route job all write those fields."""

from __future__ import annotations

import pytest

from reviewapp.judging.jobs import job_run, job_start_reroute
from reviewapp.judging.service import answer_fail
from reviewapp.models import Answer, Claim, Policy
from reviewapp.policy.routing import decide_route, judge_failed_route
from tests import factories as make

pytestmark = pytest.mark.django_db


def _stored(answer_id: int, names) -> dict:
    return Answer.objects.filter(pk=answer_id).values(*names).get()


def _route_of(answer: Answer, policy: Policy):
    claims = Claim.objects.filter(run_id=answer.judged_by_id, origin=Claim.Origin.JUDGE)
    return decide_route(policy=policy, answer_id=answer.pk, grounding_score=answer.grounding_score,
                        claims=list(claims.values_list("label", "category", "confidence")))


def test_the_worker_stores_the_fields_of_the_route_it_decided():
    answer = make.judged()
    policy = Policy.current()
    fields = _route_of(answer, policy).answer_fields(policy_id=policy.pk, blind=policy.blind)
    assert _stored(answer.pk, fields) == fields
    assert fields["review_status"] == "in_review" and "CONTRADICTED" in fields["routing_reason"]


def test_a_failed_answer_stores_the_fields_of_the_failure_route():
    answer = make.ingested()
    assert answer_fail(answer_id=answer.pk)
    policy = Policy.current()
    fields = judge_failed_route(policy, answer.pk).answer_fields(
        policy_id=policy.pk, blind=policy.blind
    )
    assert _stored(answer.pk, fields) == fields


def test_the_reroute_job_stores_the_fields_of_the_new_route(django_capture_on_commit_callbacks):
    answer = make.judged()
    policy = make.next_policy(score_threshold=0.0, blocking_labels=[], critical_categories=[],
                              audit_sample_rate=0.0)
    with django_capture_on_commit_callbacks(execute=False):
        job = job_start_reroute(user=make.admin())
    job_run(job_id=job.pk)
    fields = _route_of(answer, policy).answer_fields(policy_id=policy.pk, blind=policy.blind)
    assert fields["review_status"] == "auto_passed"
    assert _stored(answer.pk, fields) == fields


def test_a_long_escalation_reason_is_cut_to_the_column():
    route = judge_failed_route(Policy.current(), 1)
    fields = route.answer_fields(policy_id=1, blind=True, reason="escalated to x: " + "y" * 400)
    assert len(fields["routing_reason"]) == Answer._meta.get_field("routing_reason").max_length
