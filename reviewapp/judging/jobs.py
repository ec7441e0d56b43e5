"""Admin background jobs: re-route waiting answers under the current policy; re-judge answers
with another judge configuration (old runs are kept, so versions can be compared)."""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from judges import JudgeConfig, JudgeError
from reviewapp import enqueue
from reviewapp.models import Answer, Claim, ExampleSet, Job, JudgeRun, Policy, ReviewPass
from reviewapp.audit import audit_record
from reviewapp.labels.examples import worked_examples_for
from reviewapp.judging.service import (
    endpoint_settings,
    mark_run_failed,
    run_judge,
    run_record_success,
    start_run,
    storing_failed,
)
from reviewapp.policy.routing import decide_route, judge_failed_route

log = logging.getLogger(__name__)
BATCH = 500
# Re-routing never touches adjudicated answers: a human has decided them.
REROUTABLE = (Answer.ReviewStatus.IN_REVIEW, Answer.ReviewStatus.AUTO_PASSED)


def _enqueue(job: Job) -> None:
    transaction.on_commit(lambda: enqueue.run_job_later(job.pk), robust=True)


def job_start_reroute(*, user) -> Job:
    with transaction.atomic():
        policy = Policy.current()
        total = Answer.objects.filter(review_status__in=REROUTABLE).count()
        job = Job.objects.create(
            kind=Job.Kind.REROUTE,
            params={"policy_version": policy.version},
            total=total,
            created_by=user,
        )
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action="job.started",
            obj=job,
            after=job.params,
        )
        _enqueue(job)
    return job


def job_start_rejudge(*, user, answer_ids: list[int], profile: str, backend: str, model: str,
                      example_set: ExampleSet | None = None) -> Job:
    params = {"answer_ids": answer_ids, "profile": profile, "backend": backend, "model": model}
    if example_set:  # the set fixes the profile version it was made for
        params |= {"profile": example_set.base_spec, "example_set": example_set.pk}
    with transaction.atomic():
        job = Job.objects.create(
            kind=Job.Kind.REJUDGE, created_by=user, total=len(answer_ids), params=params
        )
        audit_record(
            actor=user,
            actor_label=user.get_username(),
            action="job.started",
            obj=job,
            after={k: v for k, v in job.params.items() if k != "answer_ids"}
            | {"answers": len(answer_ids)},
        )
        _enqueue(job)
    return job


def job_run(*, job_id: int) -> None:
    """Claim the job (queued -> running) and do it; a second delivery finds it taken."""
    if not Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING
    ):
        return
    job = Job.objects.get(pk=job_id)
    try:
        if job.kind == Job.Kind.REROUTE:
            _reroute(job)
        else:
            _fan_out_rejudge(job)
    except Exception as exc:
        log.exception("job %s failed", job_id)
        Job.objects.filter(pk=job_id).update(
            status=Job.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
        )


# The answers a re-route changed that its job row links to (the count says how many in all).
CHANGED_IDS_KEPT = 100


# Route.answer_fields the re-route job does not compare, and those an answer keeps once a reviewer
# has started it (its passes count on the number of reviews it started with).
UNCOMPARED = ("policy_id", "reviews_blind")
KEPT_ONCE_STARTED = ("reviews_required", "reviews_blind")


def _reroute(job: Job) -> None:
    policy = Policy.current()
    last_id = 0
    changed_ids: list[int] = []
    while True:
        answers = list(
            Answer.objects.filter(review_status__in=REROUTABLE, pk__gt=last_id)
            .order_by("pk")
            .only(
                "pk",
                "status",
                "grounding_score",
                "judged_by_id",
                "review_status",
                "routing_reason",
                "priority",
                "reviews_required",
                "audit_probability",
            )[:BATCH]
        )
        if not answers:
            break
        last_id = answers[-1].pk
        claims: dict[int, list[tuple[str, str, float | None]]] = {}
        for answer_id, label, category, confidence in Claim.objects.filter(
            run_id__in=[a.judged_by_id for a in answers if a.judged_by_id],
            origin=Claim.Origin.JUDGE,
        ).values_list("answer_id", "label", "category", "confidence"):
            claims.setdefault(answer_id, []).append((label, category, confidence))
        changed = []
        for answer in answers:
            route = (
                judge_failed_route(policy, answer.pk)
                if answer.judged_by_id is None
                else decide_route(
                    policy=policy,
                    answer_id=answer.pk,
                    grounding_score=answer.grounding_score or 0.0,
                    claims=claims.get(answer.pk, []),
                )
            )
            fields = route.answer_fields(policy_id=policy.pk, blind=policy.blind)
            # Every policy routes anew, so the policy is not a change; nor is blindness, not read
            # here.
            if any(
                getattr(answer, name) != value
                for name, value in fields.items()
                if name not in UNCOMPARED
            ):
                changed.append((answer, fields))
            answer.policy_id = policy.pk
        with transaction.atomic():
            # Only answers still re-routable now: one adjudicated meanwhile keeps its decision. One
            # a reviewer has started keeps the number of reviews it started with (its passes count
            # on it).
            started = ReviewPass.objects.filter(answer=OuterRef("pk"))
            for answer, fields in changed:
                routed = {
                    name: value for name, value in fields.items() if name not in KEPT_ONCE_STARTED
                }
                Answer.objects.filter(pk=answer.pk, review_status__in=REROUTABLE).update(**routed)
                Answer.objects.filter(pk=answer.pk, review_status__in=REROUTABLE).exclude(
                    Exists(started)
                ).update(**{name: fields[name] for name in KEPT_ONCE_STARTED})
            Answer.objects.filter(
                pk__in=[a.pk for a in answers], review_status__in=REROUTABLE
            ).update(policy=policy)
            changed_ids += [a.pk for a, _ in changed][:CHANGED_IDS_KEPT - len(changed_ids)]
            Job.objects.filter(pk=job.pk).update(
                done=F("done") + len(answers),
                changed=F("changed") + len(changed),
                params=job.params | {"changed_ids": changed_ids},
            )
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE, finished_at=timezone.now())


def _fan_out_rejudge(job: Job) -> None:
    for answer_id in job.params["answer_ids"]:
        enqueue.rejudge_answer_later(job.pk, answer_id)
    if not job.params["answer_ids"]:  # nothing to judge: no run will count it done
        Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE, finished_at=timezone.now())


def answer_rejudge(*, job_id: int, answer_id: int) -> None:
    """Judge one answer for a re-judge job: a side run beside the answer's own (not shown, not
    routed)."""
    job = Job.objects.get(pk=job_id)
    answer = Answer.objects.prefetch_related("passages").get(pk=answer_id)
    example_set = ExampleSet.objects.filter(pk=job.params.get("example_set")).first()
    config = JudgeConfig(
        backend=job.params["backend"], profile=job.params["profile"], model=job.params["model"],
        examples=worked_examples_for(example_set) if example_set else None,
        **endpoint_settings(),
    )
    try:
        with transaction.atomic():  # a savepoint: the unique (job, answer) row is the claim
            run, config_error = start_run(answer, config, job=job)
    except IntegrityError:
        return  # this job already judged this answer (a second delivery)
    try:
        output = run_judge(answer, config, config_error)
    except JudgeError as exc:
        mark_run_failed(
            run, str(exc), transient=exc.transient, attempts=exc.attempts, raw_output=exc.raw_output
        )
    else:
        try:
            with transaction.atomic():
                run_record_success(answer, run, output)
        except Exception as exc:  # judged, but the database refused the result
            mark_run_failed(
                run, storing_failed(exc, answer_id), attempts=output.result.judge.attempts
            )
    _count_done(job)


def _count_done(job: Job) -> None:
    Job.objects.filter(pk=job.pk).update(done=F("done") + 1)
    if Job.objects.filter(pk=job.pk, done__gte=F("total"), status=Job.Status.RUNNING).update(
            status=Job.Status.DONE, finished_at=timezone.now()):
        _report_failed_runs(job)


def _report_failed_runs(job: Job) -> None:
    """A finished re-judge whose runs failed says so: failed when none succeeded, with the first
    reason."""
    failed = job.runs.filter(status=JudgeRun.Status.FAILED)
    count = failed.count()
    if not count:
        return
    first = failed.order_by("pk").values_list("error", flat=True).first()
    status = (
        Job.Status.FAILED
        if not job.runs.exclude(status=JudgeRun.Status.FAILED).exists()
        else Job.Status.DONE
    )
    Job.objects.filter(pk=job.pk).update(
        status=status, error=f"{count} of {job.total} runs failed; the first: {first}"
    )
