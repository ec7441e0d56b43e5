"""Risk-based audit sampling: the policy's rates by score band and confidence, the inclusion
probability stored on each audited answer by the worker and the re-route job, and the form."""

from __future__ import annotations

import pytest

from reviewapp.judging import jobs as jobs_service
from reviewapp.models import Answer, Job, Policy
from reviewapp.policy.routing import audit_probability, decide_route, in_audit_sample
from tests import factories as make

GROUNDED = "Riders aged 65 and older pay a reduced fare of $1.00 per ride."
RISKY = Policy(
    score_threshold=0.8,
    audit_sample_rate=0.02,
    audit_near_rate=0.3,
    audit_near_margin=0.1,
    audit_confidence_below=0.6,
    blocking_labels=[],
    critical_categories=[],
)


@pytest.mark.parametrize("score, claims, expected", [
    (0.85, [("SUPPORTED", "price", 0.9)], 0.3),  # within 0.1 above the 0.8 threshold
    (0.90, [("SUPPORTED", "price", 0.9)], 0.02),  # at the band's edge: far
    (1.00, [("SUPPORTED", "price", 0.5)], 0.3),  # far, but a claim the judge is unsure of
    (1.00, [("SUPPORTED", "price", None), ("SUPPORTED", "other")], 0.02),  # no confidence given
])
def test_the_audit_probability_is_higher_near_the_threshold_and_for_unsure_claims(
    score, claims, expected
):
    assert audit_probability(RISKY, score, claims) == expected


def test_a_near_rate_at_or_below_the_base_rate_leaves_one_rate_for_all():
    flat = Policy(
        score_threshold=0.8, audit_sample_rate=0.05, audit_near_rate=0.0, audit_near_margin=0.5
    )
    assert audit_probability(flat, 0.81, []) == 0.05


def test_an_audited_route_carries_its_probability_and_others_carry_none():
    drawn = next(i for i in range(1000) if in_audit_sample(i, 0.3) and not in_audit_sample(i, 0.02))
    sure = [("SUPPORTED", "price", 0.9)]
    near = decide_route(policy=RISKY, answer_id=drawn, grounding_score=0.85, claims=sure)
    far = decide_route(policy=RISKY, answer_id=drawn, grounding_score=0.95, claims=sure)
    flagged = decide_route(policy=RISKY, answer_id=drawn, grounding_score=0.5, claims=[])
    assert (near.reason, near.audit_probability) == ("audit sample", 0.3)
    assert (far.review_status, far.audit_probability) == ("auto_passed", None)
    assert (flagged.reason, flagged.audit_probability) == ("score 0.50 < 0.80", None)


def test_the_drawn_share_in_each_band_is_near_its_rate():
    near = [
        decide_route(policy=RISKY, answer_id=i, grounding_score=0.85, claims=[])
        for i in range(20_000)
    ]
    far = [
        decide_route(policy=RISKY, answer_id=i, grounding_score=0.99, claims=[])
        for i in range(20_000)
    ]
    assert 0.29 < sum(r.reason == "audit sample" for r in near) / 20_000 < 0.31
    assert 0.015 < sum(r.reason == "audit sample" for r in far) / 20_000 < 0.025


@pytest.mark.django_db
def test_the_worker_stores_each_audited_answers_inclusion_probability():
    # Everything near the threshold is audited (rate 1): the offline judge scores GROUNDED 1.0.
    make.next_policy(
        score_threshold=0.5,
        audit_sample_rate=0.0,
        audit_near_rate=1.0,
        audit_near_margin=0.6,
        note="audit all near",
    )
    audited = make.judged(GROUNDED)
    assert (audited.review_status, audited.routing_reason, audited.audit_probability) == (
        "in_review", "audit sample", 1.0)
    make.next_policy(
        score_threshold=0.5,
        audit_sample_rate=0.0,
        audit_near_rate=1.0,
        audit_near_margin=0.1,
        note="far above: base rate 0",
    )
    passed = make.judged(GROUNDED)
    assert (passed.review_status, passed.audit_probability) == ("auto_passed", None)
    assert Answer.objects.get(pk=audited.pk).audit_probability == 1.0


@pytest.mark.django_db
def test_the_reroute_job_stores_the_probability_of_the_policy_it_applies():
    make.next_policy(score_threshold=0.5, audit_sample_rate=0.0, note="no audit")
    answer = make.judged(GROUNDED)
    assert (answer.review_status, answer.audit_probability) == ("auto_passed", None)
    make.next_policy(
        score_threshold=0.5,
        audit_sample_rate=0.0,
        audit_near_rate=1.0,
        audit_near_margin=0.6,
        note="audit all near",
    )
    job = Job.objects.create(kind=Job.Kind.REROUTE, total=1, params={})
    jobs_service.job_run(job_id=job.pk)
    answer.refresh_from_db()
    assert (answer.review_status, answer.routing_reason, answer.audit_probability) == (
        "in_review", "audit sample", 1.0)


@pytest.fixture
def admin_client(client, db):
    client.force_login(make.admin())
    return client


@pytest.mark.django_db
def test_the_policy_form_saves_the_sampling_fields_and_names_a_bad_one(admin_client):
    current = Policy.current()
    form = make.policy_form(
        current,
        audit_near_rate=0.25,
        audit_near_margin=0.1,
        audit_confidence_below=0.7,
        miss_rate_target=0.02,
        note="sample near the threshold",
    )
    assert admin_client.post("/policy/", form).status_code == 302
    saved = Policy.current()
    assert (saved.audit_near_rate, saved.audit_near_margin, saved.audit_confidence_below,
            saved.miss_rate_target) == (0.25, 0.1, 0.7, 0.02)
    page = admin_client.get("/policy/").content.decode()
    assert 'name="audit_near_rate"' in page and "audit_near_rate</b>: 0.0 → 0.25" in page
    bad = admin_client.post("/policy/", form | {"audit_near_rate": "1.5"})
    assert bad.status_code == 400 and Policy.current().version == saved.version
    assert "Ensure this value is less than or equal to 1" in bad.content.decode()
    preview = admin_client.post(
        "/policy/preview", form | {"miss_rate_target": "-1"}
    ).content.decode()
    assert "No preview: miss_rate_target:" in preview


@pytest.mark.django_db
def test_a_form_posted_without_the_sampling_fields_keeps_one_rate_and_no_target(admin_client):
    admin_client.post("/policy/", make.policy_form(Policy.current(), note="an older page"))
    saved = Policy.current()
    assert (saved.audit_near_rate, saved.audit_near_margin, saved.miss_rate_target) == (
        0.0,
        0.05,
        None,
    )
