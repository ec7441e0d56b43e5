"""alert.miss_rate: evaluated after an audited answer is finished or a target is saved, and
recorded once per crossing (reviewapp/labels/alerts.py)."""

from __future__ import annotations

import pytest

from reviewapp import enqueue
from reviewapp.labels.alerts import MISS_RATE, miss_rate_evaluate
from reviewapp.models import AlertState, ApiClient, AuditEvent, Policy, WebhookDelivery
from reviewapp.policy.service import policy_create, policy_values
from reviewapp.review import service as review_service
from tests import factories as make
from tests.test_miss_rate import fixed_case  # noqa: F401  (a fixture: 17.6% [3.9%-53.3%])


def _target(target: float | None) -> Policy:
    values = policy_values(Policy.current()) | {"miss_rate_target": target}
    return policy_create(user=make.admin(f"ada{Policy.current().version}"), values=values,
                         note=f"target {target}")


def test_the_alert_fires_once_per_crossing_and_clears_when_the_bound_falls_under(
    fixed_case,
):  # noqa: F811
    assert miss_rate_evaluate() == "unchanged"  # no target yet
    _target(0.2)  # the upper bound, 53.3%, passes it
    assert miss_rate_evaluate() == "fired"
    assert miss_rate_evaluate() == "unchanged"  # still above: not again
    event = AuditEvent.objects.get(action=MISS_RATE)
    assert event.after["target"] == 0.2 and event.after["high"] == pytest.approx(0.53336, abs=1e-5)
    assert (event.after["audited"], event.after["missed"]) == (10, 2)
    _target(0.6)
    assert miss_rate_evaluate() == "cleared"
    assert not AlertState.objects.get(name=MISS_RATE).active
    _target(0.2)
    assert miss_rate_evaluate() == "fired"
    assert AuditEvent.objects.filter(action=MISS_RATE).count() == 2


def test_each_crossing_makes_one_delivery_per_endpoint_that_chose_it_and_none_elsewhere(
        fixed_case):  # noqa: F811
    _, chose = make.webhook_endpoint(events=[MISS_RATE])
    quiet = ApiClient.objects.create(name="quiet", token_hash="q" * 64, token_prefix="cdk_q")
    make.webhook_endpoint(client=quiet)
    _target(0.2)
    miss_rate_evaluate()
    miss_rate_evaluate()
    [delivery] = WebhookDelivery.objects.all()
    assert (delivery.endpoint, delivery.answer, delivery.event) == (chose, None, MISS_RATE)
    assert delivery.payload["data"]["miss_rate"]["high"] == pytest.approx(0.53336, abs=1e-5)


@pytest.mark.django_db
def test_finishing_an_audited_answer_and_saving_a_target_schedule_the_check(
        django_capture_on_commit_callbacks, monkeypatch):
    checks = []
    monkeypatch.setattr(enqueue, "evaluate_miss_rate_later", lambda: checks.append("check"))
    rita = make.user("rita", "reviewer")
    audited = make.in_review(
        answer="Riders aged 65 and older pay a reduced fare of $1.00 per ride."
    )
    with django_capture_on_commit_callbacks(execute=True):
        review_service.answer_finish(user=rita, answer=audited)
    assert checks == ["check"]
    flagged = make.judged()  # sent to review by its CONTRADICTED claim: not the audit sample
    with django_capture_on_commit_callbacks(execute=True):
        review_service.answer_finish(user=rita, answer=flagged)
    assert checks == ["check"]
    with django_capture_on_commit_callbacks(execute=True):
        _target(0.02)
    with django_capture_on_commit_callbacks(execute=True):
        _target(0.02)  # the same target: nothing to check
    assert checks == ["check", "check"]
