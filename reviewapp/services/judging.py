"""Judging one answer: claim it, record a run, call the judge, store claims, route.

Exactly-once, whatever the broker does: a delivery must first *claim* the answer with a
conditional UPDATE (queued -> judging, with a random token and an expiry), and its results only
land if the answer is still claimed by that token when they are written. A second delivery of
the same task finds the answer claimed or already judged and does nothing; a delivery that
outlives its claim (its worker was killed, the claim expired, another took over) writes nothing.

The claim's token is the Celery task id when there is one. The broker hands the *same* message
out again only when its earlier delivery is dead (its worker process was lost and the message
rejected back, or it went unacknowledged past the visibility timeout, which is longer than the hard
time limit) or when that delivery retried itself: so a delivery that finds its own task id on the
claim takes it over at once instead of waiting for the claim to expire. Each takeover from a dead
holder counts in `lost_count`; past JUDGE_MAX_LOST the answer fails to a human (a poison answer
that kills its worker must not loop forever).
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

import judges
from judges import JudgeConfig, JudgeError, JudgeIdentity, JudgeOutput, JudgeRequest
from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Policy
from reviewapp.services.examples import example_set_in_force, example_set_of, worked_examples_for
from reviewapp.services.routing import decide_route, judge_failed_route
from reviewapp.services.webhooks import event_record

log = logging.getLogger(__name__)


class TransientJudgeFailure(Exception):
    """The judge failed for a reason worth retrying later (rate limit, outage, timeout)."""


class AnswerBusy(Exception):
    """Another delivery holds the answer; try again once its claim may have expired."""

    def __init__(self, retry_in: float):
        super().__init__(f"answer is being judged elsewhere; retry in {retry_in:.0f}s")
        self.retry_in = retry_in


class ClaimLost(Exception):
    """Our claim on the answer expired and another delivery took it over."""


def endpoint_settings() -> dict:
    """Where and how patiently to call the LLM: the same for every judge configuration."""
    return {
        "base_url": settings.OPENAI_BASE_URL,
        "api_key": settings.OPENAI_API_KEY,
        "timeout_s": settings.JUDGE_TIMEOUT_SECONDS,
        "retry_budget_s": settings.JUDGE_RETRY_BUDGET_SECONDS,
        "max_attempts": settings.JUDGE_MAX_ATTEMPTS,
        "rate_limit_rpm": settings.JUDGE_RATE_LIMIT_RPM,
        "rate_limit_tpm": settings.JUDGE_RATE_LIMIT_TPM,
        "rate_limit_redis_url": settings.JUDGE_RATE_LIMIT_REDIS_URL,
    }


def judge_config_for(answer: Answer, policy: Policy) -> JudgeConfig:
    profile = answer.requested_profile or policy.judge_profile or settings.JUDGE_PROFILE
    example_set = example_set_in_force(policy, profile)
    return JudgeConfig(
        backend=policy.judge_backend or settings.JUDGE_BACKEND,
        # Pinned to the version the examples were picked for, even if a newer one appears later.
        profile=example_set.base_spec if example_set else profile,
        model=policy.judge_model or settings.JUDGE_MODEL,
        examples=worked_examples_for(example_set) if example_set else None,
        **endpoint_settings(),
    )


def judge_request_for(answer: Answer) -> JudgeRequest:
    return JudgeRequest.model_validate(
        {
            "question": answer.question,
            "answer": answer.answer,
            "prior_turns": answer.prior_turns,
            "passages": [
                {
                    "id": p.pid,
                    "text": p.text,
                    **{
                        field: getattr(p, field) or None
                        for field in ("tag", "agency", "title", "section", "source_url", "fetched_at")
                    },
                }
                for p in answer.passages.all()
            ],
        }
    )


def answer_judge(*, answer_id: int, last_try: bool = True, delivery_id: str | None = None,
                 retry_in: float = 0.0) -> JudgeRun | None:
    """Judge the answer unless another delivery already did or is doing it.

    `delivery_id` is the Celery task id (the claim's token); `retry_in` is how soon a transient
    failure will be retried, so the sweeper leaves the answer alone until then.
    Raises AnswerBusy (retry later), TransientJudgeFailure (retry later; unless `last_try`,
    when the answer is failed instead). Returns the run, or None when there was nothing to do.
    """
    token = _token(delivery_id)
    claimed = _claim(answer_id, token)
    if not claimed:
        _explain_unclaimed(answer_id)
        return None

    answer = Answer.objects.prefetch_related("passages").get(pk=answer_id)
    policy = Policy.current()
    if claimed == TAKEN_OVER:
        # Runs left 'running' by the delivery whose claim was taken over (its worker died) are over.
        abandon_running_runs(answer)
    config = judge_config_for(answer, policy)
    if answer.lost_count > settings.JUDGE_MAX_LOST:
        run, _ = start_run(answer, config)
        _fail(answer, run, token, f"gave up: the worker judging it was lost {answer.lost_count} times",
              transient=False, last_try=True, attempts=0)
        return run
    run, config_error = start_run(answer, config)
    try:
        output = run_judge(answer, config, config_error)
    except (JudgeError, SoftTimeLimitExceeded) as exc:
        transient = isinstance(exc, SoftTimeLimitExceeded) or exc.transient
        message = "judge timed out (soft time limit)" if isinstance(exc, SoftTimeLimitExceeded) else str(exc)
        _fail(answer, run, token, message, transient=transient, last_try=last_try, retry_in=retry_in,
              attempts=getattr(exc, "attempts", 1), raw_output=getattr(exc, "raw_output", ""))
        return run
    except Exception as exc:  # a bug in a judge must not leave the answer stuck in 'judging'
        log.exception("judge crashed on answer %s", answer_id)
        _fail(answer, run, token, f"{type(exc).__name__}: {exc}", transient=False, last_try=True, attempts=1)
        return run
    escalation = _escalate(answer, policy, output)
    try:
        _succeed(answer, run, token, output, policy, escalation)
    except ClaimLost:
        mark_run_failed(run, "superseded: the claim on the answer expired and another delivery took over")
    return run


def start_run(answer: Answer, config: JudgeConfig, *, job=None) -> tuple[JudgeRun, JudgeError | None]:
    """Record the run before the (possibly slow, possibly failing) judge call.

    A configuration the judges cannot identify (an unknown profile) is still recorded; its error
    is returned, to fail the run when the judge would have been called. The run names the example
    set its prompt carries (none for the offline judge, which reads no prompt)."""
    try:
        identity = judges.identify(config)
    except JudgeError as exc:  # e.g. an unknown profile: recorded, and fails when the judge runs
        identity = JudgeIdentity(config.profile, "unknown", config.backend, config.model)
        run_error = exc
    else:
        run_error = None
    run = JudgeRun.objects.create(
        answer=answer,
        job=job,
        example_set=example_set_of(identity),
        profile=identity.profile,
        prompt_version=identity.prompt_version,
        backend=identity.backend,
        model=identity.model,
        config_key=JudgeRun.make_config_key(identity.profile, identity.prompt_version, identity.backend, identity.model),
    )
    return run, run_error


def run_judge(answer: Answer, config: JudgeConfig, config_error: JudgeError | None) -> JudgeOutput:
    if config_error:
        raise config_error
    request = judge_request_for(answer)
    _release_pooled_connection()
    output = judges.judge(request, config)
    check_spans(answer, output)
    return output


def _release_pooled_connection() -> None:
    """Give the database connection back to the pool for the LLM call, which takes seconds
    while the database work around it takes milliseconds: otherwise every waiting thread holds a
    connection, and a 64-thread worker needs 64. Without a pool, closing would cost a reconnect
    per answer, so the connection stays; inside a transaction it must stay too."""
    if getattr(connection, "pool", None) is not None and not connection.in_atomic_block:
        connection.close()


# --- escalation (seed 002: a stronger judge for the hard cases, before a human) -----------------


def escalation_config_for(answer: Answer, policy: Policy) -> JudgeConfig | None:
    if not (policy.escalation_backend or policy.escalation_profile):
        return None
    base = judge_config_for(answer, policy)
    return JudgeConfig(
        backend=policy.escalation_backend or base.backend,
        profile=policy.escalation_profile or base.profile,
        model=policy.escalation_model or base.model,
        **endpoint_settings(),
    )


def escalation_due(policy: Policy, answer_id: int, result) -> bool:
    """The first judge flagged the answer, or scored it within the margin of the threshold."""
    route = decide_route(policy=policy, answer_id=answer_id, grounding_score=result.grounding_score,
                         claims=[(c.label, c.category) for c in result.claims])
    flagged = route.review_status == "in_review" and route.kinds != ("audit",)
    return flagged or abs(result.grounding_score - policy.score_threshold) <= policy.escalation_margin


def _escalate(answer: Answer, policy: Policy, first: JudgeOutput) -> tuple[JudgeRun, JudgeOutput] | None:
    config = escalation_config_for(answer, policy)
    if config is None or not escalation_due(policy, answer.pk, first.result):
        return None
    run, config_error = start_run(answer, config)
    try:
        return run, run_judge(answer, config, config_error)
    except (JudgeError, SoftTimeLimitExceeded, Exception) as exc:  # the first judge's result stands
        mark_run_failed(run, f"escalation failed: {exc}", transient=getattr(exc, "transient", False),
                        attempts=getattr(exc, "attempts", 1), raw_output=getattr(exc, "raw_output", ""))
        return None


def _token(delivery_id: str | None) -> uuid.UUID:
    try:
        return uuid.UUID(delivery_id) if delivery_id else uuid.uuid4()
    except ValueError:  # a task id that is not a UUID (set by hand): no takeover, just a claim
        return uuid.uuid4()


def abandon_running_runs(answer: Answer) -> None:
    JudgeRun.objects.filter(answer=answer, status=JudgeRun.Status.RUNNING).update(
        status=JudgeRun.Status.FAILED, error="abandoned: the worker judging it was lost", finished_at=timezone.now()
    )


FRESH, TAKEN_OVER = "fresh", "taken over"


def _claim(answer_id: int, token: uuid.UUID) -> str | None:
    """Claim a queued answer (FRESH), else one being judged by a dead holder (TAKEN_OVER): its claim
    expired, or it carries our own token, i.e. an earlier delivery of this same message died (the
    broker re-sends a message only once its earlier delivery is gone). Else None.

    Two conditional UPDATEs rather than one, so the common case needs no look for runs a lost
    delivery left behind: only a take-over can find one. A take-over counts as a lost delivery."""
    now = timezone.now()
    claim = {
        "status": Answer.Status.JUDGING,
        "claim_token": token,
        "claim_expires_at": now + timedelta(seconds=settings.JUDGE_CLAIM_SECONDS),
        "updated_at": now,
    }
    answers = Answer.objects.filter(pk=answer_id)
    if answers.filter(status=Answer.Status.QUEUED).update(**claim):
        return FRESH
    expired = Q(claim_expires_at__lt=now) | Q(claim_expires_at__isnull=True)
    dead_holder = expired | Q(claim_token=token)
    if answers.filter(Q(status=Answer.Status.JUDGING) & dead_holder).update(**claim, lost_count=F("lost_count") + 1):
        return TAKEN_OVER
    return None


def _explain_unclaimed(answer_id: int) -> None:
    row = Answer.objects.filter(pk=answer_id).values("status", "claim_expires_at").first()
    if row is None:
        log.warning("judge_answer: answer %s does not exist", answer_id)
    elif row["status"] == Answer.Status.JUDGING:
        retry_in = max((row["claim_expires_at"] - timezone.now()).total_seconds(), 1.0)
        raise AnswerBusy(retry_in)
    # judged or failed already: a duplicate delivery; nothing to do.


def _owned(answer: Answer, token: uuid.UUID):
    return Answer.objects.filter(pk=answer.pk, claim_token=token, status=Answer.Status.JUDGING)


def check_spans(answer: Answer, output: JudgeOutput) -> None:
    """Refuse results whose spans point outside their text rather than store broken offsets."""
    passages = {p.pid: len(p.text) for p in answer.passages.all()}
    for claim in output.result.claims:
        if claim.answer_span and not 0 <= claim.answer_span[0] <= claim.answer_span[1] <= len(answer.answer):
            raise JudgeError(f"claim {claim.id}: answer_span {list(claim.answer_span)} is outside the answer")
        for ev in claim.evidence:
            limit = passages.get(ev.passage_id)
            if ev.span and (limit is None or not 0 <= ev.span[0] <= ev.span[1] <= limit):
                raise JudgeError(f"claim {claim.id}: evidence span {list(ev.span)} is outside passage {ev.passage_id}")


def _succeed(answer: Answer, run: JudgeRun, token: uuid.UUID, output: JudgeOutput, policy: Policy,
             escalation: tuple[JudgeRun, JudgeOutput] | None = None) -> None:
    # With an escalation, both runs are stored and the stronger judge's result is the one shown.
    shown_run, shown = escalation or (run, output)
    result = shown.result
    now = timezone.now()
    route = decide_route(
        policy=policy,
        answer_id=answer.pk,
        grounding_score=result.grounding_score,
        claims=[(c.label, c.category) for c in result.claims],
    )
    reason = f"escalated to {shown_run.profile}@{shown_run.prompt_version} ({shown_run.model}): {route.reason}" if escalation else route.reason
    with transaction.atomic():
        run_record_success(answer, run, output)
        if escalation:
            run_record_success(answer, shown_run, shown)
        updated = _owned(answer, token).update(
            status=Answer.Status.JUDGED,
            verdict=result.verdict,
            grounding_score=result.grounding_score,
            judged_by=shown_run,
            judged_at=now,
            claim_token=None,
            claim_expires_at=None,
            review_status=route.review_status,
            routing_reason=reason[:300],
            priority=route.priority,
            policy=policy,
            updated_at=now,
        )
        if not updated:
            raise ClaimLost()  # rolls back the claims written above
        event_record(answer=answer, event="answer.judged")


def run_record_success(answer: Answer, run: JudgeRun, output: JudgeOutput) -> None:
    """Store a successful run and its claims (call inside a transaction). The run becomes the
    current one of its configuration; other configurations' runs stay current beside it."""
    result = output.result
    JudgeRun.objects.filter(answer=answer, config_key=run.config_key, is_current=True).update(is_current=False)
    run.status = JudgeRun.Status.SUCCEEDED
    run.is_current = True
    run.finished_at = timezone.now()
    run.latency_ms = result.judge.latency_ms
    run.attempts = result.judge.attempts
    run.prompt_tokens = result.judge.usage.prompt_tokens
    run.completion_tokens = result.judge.usage.completion_tokens
    run.raw_output = output.raw_output
    run.verdict = result.verdict
    run.grounding_score = result.grounding_score
    run.findings = result.model_dump(mode="json", include={"fabrications", "omissions", "rewrite_note"})
    # Only what a result changes: the row was inserted moments ago by start_run.
    run.save(update_fields=["status", "is_current", "finished_at", "latency_ms", "attempts", "prompt_tokens",
                            "completion_tokens", "raw_output", "verdict", "grounding_score", "findings"])
    _store_claims(answer, run, result)


def _store_claims(answer: Answer, run: JudgeRun, result) -> None:
    passages = {p.pid: p for p in answer.passages.all()}
    claims = Claim.objects.bulk_create(
        Claim(
            run=run,
            answer=answer,
            position=position,
            cid=claim.id,
            text=claim.text,
            answer_start=claim.answer_span[0] if claim.answer_span else None,
            answer_end=claim.answer_span[1] if claim.answer_span else None,
            label=claim.label,
            category=claim.category,
            explanation=claim.explanation,
            confidence=claim.confidence,
        )
        for position, claim in enumerate(result.claims)
    )
    Evidence.objects.bulk_create(
        Evidence(
            claim=row,
            passage=passages.get(ev.passage_id),
            # Only an id the judge invented can be longer than a real one; it matches no passage anyway.
            passage_pid=ev.passage_id[: Evidence._meta.get_field("passage_pid").max_length],
            position=position,
            quote=ev.quote,
            start=ev.span[0] if ev.span else None,
            end=ev.span[1] if ev.span else None,
            match=ev.match if ev.span else "not_found",
        )
        for row, claim in zip(claims, result.claims)
        for position, ev in enumerate(claim.evidence)
    )


def mark_run_failed(run: JudgeRun, error: str, *, transient: bool = False, attempts: int = 1, raw_output: str = ""):
    JudgeRun.objects.filter(pk=run.pk).update(
        status=JudgeRun.Status.FAILED,
        error=error,
        error_is_transient=transient,
        attempts=attempts,
        raw_output=raw_output,
        finished_at=timezone.now(),
    )


def _fail(answer, run, token, error: str, *, transient: bool, last_try: bool, attempts: int, raw_output: str = "",
          retry_in: float = 0.0):
    mark_run_failed(run, error, transient=transient, attempts=attempts, raw_output=raw_output)
    now = timezone.now()
    if transient and not last_try:
        # Give the answer back so the retry (or any other delivery) can claim it; the expiry
        # tells the sweeper a retry is due then, so it does not enqueue a second one before.
        _owned(answer, token).update(status=Answer.Status.QUEUED, claim_token=None,
                                     claim_expires_at=now + timedelta(seconds=retry_in), updated_at=now)
        raise TransientJudgeFailure(error)
    answer_fail(answer_id=answer.pk, owned_by=token)


def answer_fail(*, answer_id: int, owned_by: uuid.UUID | None = None) -> bool:
    """Fail the answer and route it to a human, if it is still ours (or, without a token, still
    queued or judging: the sweeper giving up). Its reason is on its latest failed run."""
    now = timezone.now()
    if owned_by is not None:
        rows = Answer.objects.filter(pk=answer_id, claim_token=owned_by, status=Answer.Status.JUDGING)
    else:
        rows = Answer.objects.filter(pk=answer_id, status__in=[Answer.Status.QUEUED, Answer.Status.JUDGING])
    route = judge_failed_route()
    with transaction.atomic():
        failed = rows.update(
            status=Answer.Status.FAILED,
            claim_token=None,
            claim_expires_at=None,
            review_status=route.review_status,
            routing_reason=route.reason,
            priority=route.priority,
            policy=Policy.current(),
            updated_at=now,
        )
        if failed:  # the client hears about a final failure too (status "failed", with the error)
            event_record(answer=Answer.objects.get(pk=answer_id), event="answer.judged")
    return bool(failed)
