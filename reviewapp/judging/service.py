"""Judging one answer: hold it, record a run, call the judge, store claims, route.

Exactly-once, whatever the broker does: a delivery must first *hold* the answer with a
conditional UPDATE (queued -> judging, with a random token and an expiry), and its results only
land if the answer is still held by that token when they are written. A second delivery of
the same task finds the answer held or already judged and does nothing; a delivery that
outlives its hold (its worker was killed, the hold expired, another took over) writes nothing.

The hold's token is the Celery task id when there is one. The broker hands the *same* message
out again only when its earlier delivery is dead (its worker process was lost and the message
rejected back, or it went unacknowledged past the visibility timeout, which is longer than the hard
time limit) or when that delivery retried itself: so a delivery that finds its own task id on the
hold takes it over at once instead of waiting for the hold to expire. Each takeover from a dead
holder counts in `lost_count`; past JUDGE_MAX_LOST the answer fails to a human (a poison answer
that kills its worker must not loop forever).
"""

from __future__ import annotations

import functools
import logging
import random
import time
import uuid
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

import judges
from judges import JudgeConfig, JudgeError, JudgeIdentity, JudgeOutput, JudgeRequest
from judges import types
from judges.ratelimit import RateLimitTimeout, RateLimitUnavailable, in_flight_limit_for
from reviewapp import store
from reviewapp.api import selectors
from reviewapp.db.errors import is_transient
from reviewapp.models import Answer, Evidence, JudgeRun, Policy
from reviewapp.labels.examples import example_set_in_force, example_set_of, worked_examples_for
from reviewapp.policy.routing import decide_route, escalation_due, judge_failed_route
from reviewapp.sessions import selectors as session_selectors
from reviewapp.judging.waiting import judged_announce
from reviewapp.webhooks.service import event_record

log = logging.getLogger(__name__)


class TransientJudgeFailure(Exception):
    """The judge failed for a reason worth retrying later (rate limit, outage, timeout)."""


class AnswerBusy(Exception):
    """Another delivery holds the answer; try again once its hold may have expired."""

    def __init__(self, retry_in: float):
        super().__init__(f"answer is being judged elsewhere; retry in {retry_in:.0f}s")
        self.retry_in = retry_in


class ClientAtLimit(Exception):
    """The answer's client has JUDGE_CLIENT_CONCURRENCY answers being judged already: this one was
    given back (queued) and waits its turn."""

    def __init__(self, retry_in: float):
        super().__init__(
            f"its client's other answers are being judged; look again in {retry_in:.1f}s"
        )
        self.retry_in = retry_in


class HoldLost(Exception):
    """Our hold on the answer expired and another delivery took it over."""


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
        "max_in_flight": settings.JUDGE_MAX_IN_FLIGHT,
        "cpu_budget_s": settings.JUDGE_CPU_BUDGET_SECONDS,
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


def passages_of(answer: Answer) -> list[tuple]:
    """passage_rows() of the answer, from its prefetched passages when the caller loaded them
    (re-judge jobs and evaluations do), else from the database; then those of the session's earlier
    turns the judge reads too (with_earlier_turns)."""
    prefetched = getattr(answer, "_prefetched_objects_cache", {}).get("passages")
    if prefetched is not None:
        rows = [
            tuple(getattr(passage, column) for column in store.PASSAGE_COLUMNS)
            for passage in prefetched
        ]
    else:
        rows = store.passage_rows(answer.pk)
    return with_earlier_turns(answer, rows)


def with_earlier_turns(answer: Answer, passages: list[tuple]) -> list[tuple]:
    """The answer's passages and, in a session, the passages its earlier turns retrieved (prior-turn
    context a claim may rest on, ids `turn<N>:<id>`; sessions.selectors.earlier_turn_passages)."""
    if not answer.session_id:
        return passages
    return [*passages, *session_selectors.earlier_turn_passages(answer, passages)]


def judge_request_for(answer: Answer, passages: list[tuple] | None = None) -> JudgeRequest:
    """`passages`: the answer's passage_rows(), when the caller has them already."""
    if passages is None:
        passages = passages_of(answer)
    return JudgeRequest.model_validate(
        {
            "question": answer.question,
            "answer": answer.answer,
            "prior_turns": answer.prior_turns,
            "passages": [
                {
                    "id": pid,
                    "text": text,
                    "tag": tag or None,
                    "agency": agency or None,
                    "title": title or None,
                    "section": section or None,
                    "source_url": source_url or None,
                    "fetched_at": fetched_at or None,
                }
                for _, pid, text, tag, agency, title, section, source_url, fetched_at in passages
            ],
        }
    )


def answer_judge(*, answer_id: int, last_try: bool = True, delivery_id: str | None = None,
                 retry_in: float = 0.0) -> JudgeRun | None:
    """Judge the answer unless another delivery already did or is doing it.

    `delivery_id` is the Celery task id (the hold's token); `retry_in` is how soon a transient
    failure will be retried, so the sweeper leaves the answer alone until then.
    Raises AnswerBusy (retry later), ClientAtLimit (enqueue again later: not a failure),
    TransientJudgeFailure (retry later; unless `last_try`, when the answer is failed instead).
    Returns the run, or None when there was nothing to do.
    """
    token = _token(delivery_id)
    held = _hold(answer_id, token)
    if held is None:
        _explain_not_held(answer_id)
        return None

    taken_over, answer, policy_key, passages, started = held
    passages = with_earlier_turns(answer, passages)
    policy = policy_in_force(policy_key)
    if taken_over:
        # Runs left 'running' by the delivery whose hold was taken over (its worker died) are over.
        abandon_running_runs([answer.pk])
    config = judge_config_for(answer, policy)
    if answer.lost_count > settings.JUDGE_MAX_LOST:
        run, _ = (started, None) if started else start_run(answer, config)
        _fail(
            answer,
            run,
            token,
            f"gave up: the worker judging it was lost {answer.lost_count} times",
            transient=False,
            last_try=True,
            attempts=0,
        )
        return run
    with _client_turn(answer, token):
        if started is not None:  # only a configuration the judges identified becomes the usual run
            run, config_error = started, None
        else:
            run, config_error = start_run(answer, config)
            _remember_usual_run(answer, policy_key, run, config_error)
        return _judge_held(
            answer,
            policy,
            config,
            passages,
            token,
            run,
            config_error,
            last_try=last_try,
            retry_in=retry_in,
        )


def _judge_held(
    answer: Answer,
    policy: Policy,
    config: JudgeConfig,
    passages: list[tuple],
    token: uuid.UUID,
    run: JudgeRun,
    config_error: JudgeError | None,
    *,
    last_try: bool,
    retry_in: float,
) -> JudgeRun:
    answer_id = answer.pk
    try:
        output = run_judge(answer, config, config_error, passages)
    except (JudgeError, SoftTimeLimitExceeded) as exc:
        transient = isinstance(exc, SoftTimeLimitExceeded) or exc.transient
        message = (
            "judge timed out (soft time limit)"
            if isinstance(exc, SoftTimeLimitExceeded)
            else str(exc)
        )
        _fail(
            answer,
            run,
            token,
            message,
            transient=transient,
            last_try=last_try,
            retry_in=retry_in,
            attempts=getattr(exc, "attempts", 1),
            raw_output=getattr(exc, "raw_output", ""),
        )
        return run
    except Exception as exc:  # a bug in a judge must not leave the answer stuck in 'judging'
        log.exception("judge crashed on answer %s", answer_id)
        _fail(
            answer,
            run,
            token,
            f"{type(exc).__name__}: {exc}",
            transient=False,
            last_try=True,
            attempts=1,
        )
        return run
    escalation = _escalate(answer, policy, output, passages)
    try:
        _succeed(answer, run, token, output, policy, escalation, passages)
    except HoldLost:
        mark_run_failed(
            run, "superseded: the hold on the answer expired and another delivery took over"
        )
    except Exception as exc:  # whatever refused the result, the answer must not stay 'judging'
        reason = storing_failed(exc, answer_id)
        if escalation:  # none of it was stored: the escalation's run fails with the same reason
            mark_run_failed(escalation[0], reason, attempts=escalation[1].result.judge.attempts)
        _fail(
            answer,
            run,
            token,
            reason,
            transient=False,
            last_try=True,
            attempts=output.result.judge.attempts,
        )
    return run


@contextmanager
def _client_turn(answer: Answer, token: uuid.UUID):
    """Fairness between clients: at most JUDGE_CLIENT_CONCURRENCY of one client's answers are
    judged at once across the fleet (a lease each in Redis, judges.ratelimit.InFlightLimit), so
    one client's flood cannot take every worker thread. An answer past the limit is given back
    (queued) at once rather than hold a thread waiting; raises ClientAtLimit."""
    limit = settings.JUDGE_CLIENT_CONCURRENCY
    if not limit or answer.client_id is None:
        yield
        return
    # A lease as long as the hold: a slot held by a worker that died frees when its hold would.
    slots = in_flight_limit_for(
        settings.JUDGE_RATE_LIMIT_REDIS_URL,
        key=f"claimdesk:judging:client:{answer.client_id}",
        limit=limit,
        lease_s=settings.JUDGE_HOLD_SECONDS,
    )
    try:
        slot = slots.acquire(deadline=time.monotonic())
    except RateLimitTimeout:
        wait = settings.JUDGE_CLIENT_WAIT_SECONDS * random.uniform(0.8, 1.2)
        _give_back(answer, token, wait)
        raise ClientAtLimit(wait) from None
    except RateLimitUnavailable as exc:  # judging goes on unfair rather than not at all
        log.warning("judging answer %s without its client's concurrency limit: %s", answer.pk, exc)
        yield
        return
    try:
        yield
    finally:
        slots.release(slot)


def _give_back(answer: Answer, token: uuid.UUID, retry_in: float) -> None:
    """Give the answer back so the next delivery can hold it; the expiry tells the sweeper one is
    due then, so it does not enqueue a second one before."""
    now = timezone.now()
    _owned(answer, token).update(status=Answer.Status.QUEUED, judging_token=None,
                                 judging_until=now + timedelta(seconds=retry_in), updated_at=now)


def storing_failed(exc: Exception, answer_id: int) -> str:
    """The reason a judged result could not be stored, for its run's error. A result the database
    refuses (text it cannot hold, a broken constraint) would be refused again on every retry, so
    the run fails at once; a transient database error is raised again, for the task to retry."""
    if is_transient(exc):
        raise exc
    log.exception("storing the result of answer %s failed", answer_id)
    # PostgreSQL's message and detail, without its CONTEXT line (which quotes the refused data).
    diag = getattr(exc.__cause__, "diag", None)
    parts = (
        [diag.message_primary, diag.message_detail]
        if diag is not None and diag.message_primary
        else [str(exc)]
    )
    return f"storing the result failed: {type(exc).__name__}: " + ": ".join(
        part.strip() for part in parts if part
    )


def start_run(
    answer: Answer, config: JudgeConfig, *, job=None
) -> tuple[JudgeRun, JudgeError | None]:
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
    now = timezone.now()
    run = JudgeRun(
        answer=answer,
        job=job,
        example_set=example_set_of(identity),
        profile=identity.profile,
        prompt_version=identity.prompt_version,
        backend=identity.backend,
        model=identity.model,
        config_key=JudgeRun.make_config_key(
            identity.profile, identity.prompt_version, identity.backend, identity.model
        ),
        started_at=now,
    )
    # a plain INSERT rather than save(): one round trip, the rest the table's defaults
    store.run_insert(run)
    return run, run_error


def run_judge(answer: Answer, config: JudgeConfig, config_error: JudgeError | None,
              passages: list[tuple] | None = None) -> JudgeOutput:
    if config_error:
        raise config_error
    if passages is None:
        passages = passages_of(answer)
    request = judge_request_for(answer, passages)
    _release_pooled_connection()
    output = judges.judge(request, config)
    check_spans(answer, output, passages)
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


def _escalate(answer: Answer, policy: Policy, first: JudgeOutput,
              passages: list[tuple] | None = None) -> tuple[JudgeRun, JudgeOutput] | None:
    config = escalation_config_for(answer, policy)
    if config is None or not escalation_due(
            policy=policy, answer_id=answer.pk, grounding_score=first.result.grounding_score,
            claims=[(c.label, c.category, c.confidence) for c in first.result.claims]):
        return None
    run, config_error = start_run(answer, config)
    try:
        return run, run_judge(answer, config, config_error, passages)
    except (JudgeError, SoftTimeLimitExceeded, Exception) as exc:  # the first judge's result stands
        mark_run_failed(
            run,
            f"escalation failed: {exc}",
            transient=getattr(exc, "transient", False),
            attempts=getattr(exc, "attempts", 1),
            raw_output=getattr(exc, "raw_output", ""),
        )
        return None


def _token(delivery_id: str | None) -> uuid.UUID:
    try:
        return uuid.UUID(delivery_id) if delivery_id else uuid.uuid4()
    except ValueError:  # a task id that is not a UUID (set by hand): no takeover, just a hold
        return uuid.uuid4()


def abandon_running_runs(answer_ids: list[int]) -> int:
    """Close the runs still `running` on these answers: the worker judging them was lost (the
    redelivery that takes an answer over, or the sweeper giving it back as queued, says so). That
    worker will never finish them (were it only slow, its result is dropped as superseded)."""
    return JudgeRun.objects.filter(answer_id__in=answer_ids, status=JudgeRun.Status.RUNNING).update(
        status=JudgeRun.Status.FAILED,
        error="abandoned: the worker judging it was lost",
        finished_at=timezone.now(),
    )


def _hold(answer_id: int, token: uuid.UUID) -> store.Held | None:
    """Hold a queued answer, else take over one being judged by a dead holder: its hold expired,
    or it carries our own token, i.e. an earlier delivery of this same message died (the broker
    re-sends a message only once its earlier delivery is gone). A take-over counts as a lost
    delivery, and only a take-over can find runs a lost delivery left behind. Else None.
    A queued answer's run starts with its hold when it is the usual run (_usual_run)."""
    now = timezone.now()
    return store.answer_hold(
        answer_id,
        token,
        now,
        now + timedelta(seconds=settings.JUDGE_HOLD_SECONDS),
        run=_usual_run(),
    )


@dataclass(frozen=True)
class _InForce:
    """The newest policy as this process last read it, by the key the hold reads (its id and the
    inserting transaction), and the run it gave an answer naming no profile of its own (the
    usual run), with the settings that chose that run's judge beside it."""

    key: str
    policy: Policy
    usual: tuple[tuple, dict] | None = None  # (judge settings, _USUAL_FIELDS of the run)


# The one cache of the policy on the worker path. Policies are append-only: a row never changes,
# and a new policy is a new row with a new key, so a cached policy is as good as a fresh read
# while its key is the one the hold reads. The same choice gives the same run (profiles are
# code), so the next hold can insert the usual run in its own statement, one round trip less,
# while that policy is still the newest (store.answer_hold checks in the SQL).
_in_force: _InForce | None = None
_USUAL_FIELDS = ("profile", "prompt_version", "backend", "model", "config_key", "example_set_id")


def policy_in_force(key: str | None) -> Policy:
    """The newest policy, by the key _hold() read (None: there is none yet)."""
    global _in_force
    if key is None:
        return Policy.current()  # recreates version 1 (an emptied table)
    cached = _in_force
    if cached is None or cached.key != key:
        policy = Policy.objects.select_related("example_set").get(pk=int(key.partition("/")[0]))
        cached = _in_force = _InForce(key, policy)
    return cached.policy


def _judge_settings() -> tuple:
    return settings.JUDGE_PROFILE, settings.JUDGE_BACKEND, settings.JUDGE_MODEL


def _usual_run() -> tuple[str, JudgeRun] | None:
    cached = _in_force
    # With per-client turns a held answer can be given back before its run would start.
    if cached is None or cached.usual is None or settings.JUDGE_CLIENT_CONCURRENCY:
        return None
    judge_settings, fields = cached.usual
    return (cached.key, JudgeRun(**fields)) if judge_settings == _judge_settings() else None


def _remember_usual_run(answer: Answer, policy_key: str | None, run: JudgeRun,
                        config_error: JudgeError | None) -> None:
    global _in_force
    cached = _in_force
    if (config_error is None and cached is not None and cached.key == policy_key
            and not answer.requested_profile and run.job_id is None):
        usual = (_judge_settings(), {name: getattr(run, name) for name in _USUAL_FIELDS})
        _in_force = replace(cached, usual=usual)


def _explain_not_held(answer_id: int) -> None:
    row = Answer.objects.filter(pk=answer_id).values("status", "judging_until").first()
    if row is None:
        log.warning("judge_answer: answer %s does not exist", answer_id)
    elif row["status"] == Answer.Status.JUDGING:
        retry_in = max((row["judging_until"] - timezone.now()).total_seconds(), 1.0)
        raise AnswerBusy(retry_in)
    # judged or failed already: a duplicate delivery; nothing to do.


def _owned(answer: Answer, token: uuid.UUID):
    return Answer.objects.filter(pk=answer.pk, judging_token=token, status=Answer.Status.JUDGING)


def check_spans(answer: Answer, output: JudgeOutput, passages: list[tuple] | None = None) -> None:
    """Refuse results whose spans point outside their text rather than store broken offsets."""
    passages = {
        row[1]: len(row[2]) for row in (passages_of(answer) if passages is None else passages)
    }
    for claim in output.result.claims:
        if claim.answer_span and not 0 <= claim.answer_span[0] <= claim.answer_span[1] <= len(
            answer.answer
        ):
            raise JudgeError(
                f"claim {claim.id}: answer_span {list(claim.answer_span)} is outside the answer"
            )
        for ev in claim.evidence:
            limit = passages.get(ev.passage_id)
            if ev.span and (limit is None or not 0 <= ev.span[0] <= ev.span[1] <= limit):
                raise JudgeError(
                    f"claim {claim.id}: evidence span {list(ev.span)} is outside passage"
                    f" {ev.passage_id}"
                )
            for difference in ev.differences if ev.span else ():
                _check_difference(claim, ev, difference)


def _check_difference(claim: types.Claim, ev: types.Evidence, difference: types.Difference) -> None:
    """A differing word sits inside the highlights it is marked in: the evidence span and the
    claim's answer span."""
    if difference.span and not ev.span[0] <= difference.span[0] <= difference.span[1] <= ev.span[1]:
        raise JudgeError(
            f"claim {claim.id}: difference span {list(difference.span)} is outside its evidence"
            f" span {list(ev.span)}"
        )
    if difference.answer_span and not (
        claim.answer_span
        and claim.answer_span[0]
        <= difference.answer_span[0]
        <= difference.answer_span[1]
        <= claim.answer_span[1]
    ):
        raise JudgeError(
            f"claim {claim.id}: difference answer_span {list(difference.answer_span)} is outside"
            " the claim's answer_span"
        )


def _succeed(
    answer: Answer,
    run: JudgeRun,
    token: uuid.UUID,
    output: JudgeOutput,
    policy: Policy,
    escalation: tuple[JudgeRun, JudgeOutput] | None = None,
    passages: list[tuple] | None = None,
) -> None:
    # With an escalation, both runs are stored and the stronger judge's result is the one shown.
    shown_run, shown = escalation or (run, output)
    result = shown.result
    now = timezone.now()
    route = decide_route(
        policy=policy,
        answer_id=answer.pk,
        grounding_score=result.grounding_score,
        claims=[(c.label, c.category, c.confidence) for c in result.claims],
    )
    reason = (
        f"escalated to {shown_run.profile}@{shown_run.prompt_version} ({shown_run.model}):"
        f" {route.reason}"
        if escalation
        else route.reason
    )
    # The answer's update rides on the statement storing the shown run, and says whether the
    # answer was still ours: if not, none of it is written.
    routed = route.answer_fields(policy_id=policy.pk, blind=policy.blind, reason=reason)
    judged = store.Judged(token=token, at=now, **routed)
    rows = result_rows(result, passages)
    # One statement stores the result and judges the answer, atomic on its own; a transaction only
    # when there is more: the escalation's first run, or a webhook event row for the answer's
    # client. Inside a caller's transaction, a savepoint, so that a refused write leaves that
    # transaction usable.
    with (
        transaction.atomic()
        if escalation or answer.client_id is not None or connection.in_atomic_block
        else nullcontext()
    ):
        if escalation:
            run_record_success(answer, run, output, rows=result_rows(output.result, passages))
        if not run_record_success(answer, shown_run, shown, then=judged, rows=rows):
            # nothing of this run was written; an escalation's first run is rolled back
            raise HoldLost()
        answer.status, answer.verdict, answer.grounding_score = (
            Answer.Status.JUDGED,
            result.verdict,
            result.grounding_score,
        )
        answer.judged_by, answer.judged_at, answer.judging_token, answer.judging_until = (
            shown_run,
            now,
            None,
            None,
        )
        answer.updated_at = now
        for name, value in routed.items():
            setattr(answer, name, value)
        # The API's view of the answer as committed, from what was just written, for a waiting
        # request and a webhook to send without reading it back; built only if one wants it.
        state = functools.cache(
            lambda: selectors.answer_state_json(answer, claims=selectors.claims_as_results(*rows))
        )
        event_record(answer=answer, event="answer.judged", state=state)
        judged_announce(answer.pk, state)


def result_rows(result, passages: list[tuple] | None = None) -> tuple[list[dict], list[dict]]:
    """A result's claims and evidence as the store writes them (store.CLAIM_WRITTEN and
    EVIDENCE_WRITTEN by attname, the evidence with its claim's position). With the `passages` the
    judge read (passage_rows() rows), each evidence names its passage's row too (`passage_row`):
    the store needs it for a passage of an earlier turn, which is not the answer's own."""
    row_ids = {pid: row_id for row_id, pid, *_ in passages or ()}
    # Only an id the judge invented can be longer than a real one; it matches no passage anyway.
    pid_length = Evidence._meta.get_field("passage_pid").max_length
    claim_rows = [
        {
            "position": position,
            "cid": c.id,
            "text": c.text,
            "answer_start": c.answer_span[0] if c.answer_span else None,
            "answer_end": c.answer_span[1] if c.answer_span else None,
            "label": c.label,
            "category": c.category,
            "explanation": c.explanation,
            "confidence": c.confidence,
        }
        for position, c in enumerate(result.claims)
    ]
    evidence_rows = [
        {
            "claim_position": position,
            "passage_pid": ev.passage_id[:pid_length],
            "position": index,
            "quote": ev.quote,
            "passage_row": row_ids.get(ev.passage_id),
            "start": ev.span[0] if ev.span else None,
            "end": ev.span[1] if ev.span else None,
            "match": ev.match if ev.span else "not_found",
            # Differing words are marked inside the evidence's highlight: none without a span.
            "differences": [d.model_dump(mode="json") for d in ev.differences] if ev.span else [],
        }
        for position, claim in enumerate(result.claims)
        for index, ev in enumerate(claim.evidence)
    ]
    return claim_rows, evidence_rows


def run_record_success(
    answer: Answer,
    run: JudgeRun,
    output: JudgeOutput,
    *,
    then: store.Judged | None = None,
    rows: tuple[list[dict], list[dict]] | None = None,
):
    """Store a successful run and its claims. The run becomes the current one of its
    configuration; other configurations' runs stay current beside it.

    One statement, whatever the number of claims, so atomic on its own: the switch of the current
    run, the run's result, its claims and their evidence. With `then`, the answer is judged by the
    run first if still ours, and the rest written only then: returns the answer's id (None when it
    was not ours, and nothing was written), or True without `then`. `rows`: result_rows(), when
    the caller has them."""
    result = output.result
    judge = result.judge
    run.status = JudgeRun.Status.SUCCEEDED
    run.is_current = True
    run.finished_at = timezone.now()
    run.latency_ms = judge.latency_ms
    run.attempts = judge.attempts
    run.prompt_tokens = judge.usage.prompt_tokens
    run.completion_tokens = judge.usage.completion_tokens
    run.raw_output = output.raw_output
    run.verdict = result.verdict
    run.grounding_score = result.grounding_score
    run.findings = result.model_dump(
        mode="json", include={"fabrications", "omissions", "rewrite_note"}
    )
    claim_rows, evidence_rows = rows or result_rows(result, passages_of(answer))
    return store.result_write(run, claim_rows, evidence_rows, judged=then)


def mark_run_failed(
    run: JudgeRun, error: str, *, transient: bool = False, attempts: int = 1, raw_output: str = ""
):
    JudgeRun.objects.filter(pk=run.pk).update(
        status=JudgeRun.Status.FAILED,
        error=error,
        error_is_transient=transient,
        attempts=attempts,
        raw_output=raw_output,
        finished_at=timezone.now(),
    )


def _fail(
    answer,
    run,
    token,
    error: str,
    *,
    transient: bool,
    last_try: bool,
    attempts: int,
    raw_output: str = "",
    retry_in: float = 0.0,
):
    mark_run_failed(run, error, transient=transient, attempts=attempts, raw_output=raw_output)
    if transient and not last_try:
        _give_back(answer, token, retry_in)  # for the retry, or any other delivery
        raise TransientJudgeFailure(error)
    answer_fail(answer_id=answer.pk, owned_by=token)


def answer_fail(*, answer_id: int, owned_by: uuid.UUID | None = None) -> bool:
    """Fail the answer and route it to a human, if it is still ours (or, without a token, still
    queued or judging: the sweeper giving up). Its reason is on its latest failed run."""
    now = timezone.now()
    if owned_by is not None:
        rows = Answer.objects.filter(
            pk=answer_id, judging_token=owned_by, status=Answer.Status.JUDGING
        )
    else:
        rows = Answer.objects.filter(
            pk=answer_id, status__in=[Answer.Status.QUEUED, Answer.Status.JUDGING]
        )
    policy = Policy.current()
    route = judge_failed_route(policy, answer_id)
    with transaction.atomic():
        failed = rows.update(
            status=Answer.Status.FAILED,
            judging_token=None,
            judging_until=None,
            updated_at=now,
            **route.answer_fields(policy_id=policy.pk, blind=policy.blind),
        )
        if failed:  # the client hears about a final failure too (status "failed", with the error)
            event_record(answer=Answer.objects.get(pk=answer_id), event="answer.judged")
            judged_announce(answer_id)
    return bool(failed)
