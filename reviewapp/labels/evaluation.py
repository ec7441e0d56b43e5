"""Measure a judge inside ClaimDesk: on a golden set, or on the answers reviewers adjudicated.

The figures and the table are judges.eval's own (build_report, format_report), so they mean what
`python -m judges eval` prints. What differs is where truth and predictions come from:

* a golden set: truth from the record stored at import; the prediction from a run of the
  asked-for judge on that answer, reused when a current run of that configuration exists,
  otherwise judged here, in-process, and stored as a side run (never shown, never routed);
* adjudicated answers: truth from the decided claims (hallucinated when any decided claim's
  human label is not SUPPORTED; spans are those claims' answer spans); the prediction from the
  judge claims of the answer's shown run, or, when a judge is named, from a run of that judge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Prefetch

import judges
from judges import JudgeConfig, JudgeError, JudgeIdentity
from judges.eval import Outcome, Record, parse_record
from judges.types import JudgeInfo, JudgeResult
from reviewapp.labels.exports import human_truth
from reviewapp.models import Answer, Claim, Evidence, JudgeRun, Policy
from reviewapp.api.selectors import claim_as_result
from reviewapp.labels.examples import (
    ExampleSetError, example_set_in_force, example_set_named, example_set_of, worked_examples_for,
)
from reviewapp.labels.golden import golden_answers
from reviewapp.judging.service import (
    check_spans,
    endpoint_settings,
    judge_request_for,
    mark_run_failed,
    run_record_success,
    storing_failed,
)

GATE_METRICS = (
    "response.precision", "response.recall", "response.f1", "response.balanced_accuracy",
    "span.precision", "span.recall", "span.f1", "sentence.balanced_accuracy",
)
HEADER_FIELDS = ("tag", "agency", "title", "section", "source_url", "fetched_at")


def evaluation_config(*, profile: str | None = None, backend: str | None = None,
                      examples: str | None = None) -> JudgeConfig:
    """The asked-for judge; what is not asked for comes from the policy, then the settings.

    `examples`: "none" (the plain prompt), a set's name ("fare_policy@v3+ex2": its profile version
    too), or None: the policy's set when it was made for the profile judged. Raises ExampleSetError.
    """
    policy = Policy.current()
    profile = profile or policy.judge_profile or settings.JUDGE_PROFILE
    if examples == "none":
        example_set = None
    elif examples:
        example_set = example_set_named(examples)
        if profile.partition("@")[0] != example_set.profile:
            raise ExampleSetError(f"{example_set} is for {example_set.profile}, not {profile}")
    else:
        example_set = example_set_in_force(policy, profile)
    return JudgeConfig(
        backend=backend or policy.judge_backend or settings.JUDGE_BACKEND,
        profile=example_set.base_spec if example_set else profile,
        examples=worked_examples_for(example_set) if example_set else None,
        model=policy.judge_model or settings.JUDGE_MODEL,
        **endpoint_settings(),  # the same endpoint, patience and fleet rate limit as the workers'
    )


# --- runs --------------------------------------------------------------------------------------


def run_or_reuse(
    answer: Answer, config: JudgeConfig, identity: JudgeIdentity
) -> tuple[JudgeRun | None, str]:
    """The current run of this judge on the answer, judging it first if there is none.
    Returns (run, "") or (None, the judge's error)."""
    key = JudgeRun.make_config_key(
        identity.profile, identity.prompt_version, identity.backend, identity.model
    )
    run = JudgeRun.objects.filter(answer=answer, config_key=key, is_current=True).first()
    if run is not None:
        return run, ""
    run = JudgeRun.objects.create(
        answer=answer,
        profile=identity.profile,
        prompt_version=identity.prompt_version,
        backend=identity.backend,
        model=identity.model,
        config_key=key,
        example_set=example_set_of(identity),
    )
    try:  # the judge call stays outside any transaction: it may wait on the network
        output = judges.judge(judge_request_for(answer), config)
        check_spans(answer, output)
    except JudgeError as exc:
        mark_run_failed(
            run, str(exc), transient=exc.transient, attempts=exc.attempts, raw_output=exc.raw_output
        )
        return None, str(exc)
    try:
        with transaction.atomic():
            run_record_success(answer, run, output)
    except (
        Exception
    ) as exc:  # a result the database refuses fails its side run, not the whole evaluation
        reason = storing_failed(exc, answer.pk)
        mark_run_failed(run, reason, attempts=output.result.judge.attempts)
        return None, reason
    return run, ""


def stored_result(run: JudgeRun) -> JudgeResult:
    """A stored run as the judge's result: its judge claims (not those reviewers added) and
    findings."""
    claims = run.claims.filter(origin=Claim.Origin.JUDGE).order_by("position").prefetch_related(
        Prefetch("evidence", queryset=Evidence.objects.order_by("position")))
    return JudgeResult(
        verdict=run.verdict,
        grounding_score=run.grounding_score,
        claims=[claim_as_result(claim) for claim in claims],
        fabrications=run.findings.get("fabrications", []),
        judge=JudgeInfo(profile=run.profile, prompt_version=run.prompt_version, backend=run.backend,
                        model=run.model, latency_ms=run.latency_ms or 0, attempts=run.attempts or 1,
                        examples=run.prompt_version.partition("+")[2] or None),
    )


def _outcome(record: Record, run: JudgeRun | None, error: str) -> Outcome:
    if run is None:
        return Outcome(record, error=error)
    return Outcome(record, result=stored_result(run), seconds=(run.latency_ms or 0) / 1000)


# --- truth -------------------------------------------------------------------------------------


def _passages(answer: Answer) -> list[dict[str, str]]:
    return [
        {"id": p.pid, "text": p.text} | {f: getattr(p, f) for f in HEADER_FIELDS if getattr(p, f)}
        for p in answer.passages.all()
    ]


def golden_record(answer: Answer) -> Record:
    labels = answer.metadata
    return parse_record({
        "id": answer.external_id, "dataset": labels["dataset"], "task_type": labels["task_type"],
        "question": answer.question or None, "passages": _passages(answer), "answer": answer.answer,
        "hallucinated": labels["hallucinated"], "spans": labels["spans"],
        "sentence_labels": labels["sentence_labels"], "meta": labels.get("meta") or {},
    })


def adjudicated_record(answer: Answer, decided: list[Claim]) -> Record:
    """The reviewers' labels in the golden format (the same record `export_labels --format golden`
    writes)."""
    hallucinated, spans = human_truth(
        answer.answer,
        [
            (c.human_label, [c.answer_start, c.answer_end] if c.answer_start is not None else None)
            for c in decided
        ],
    )
    return parse_record({
        "id": f"claimdesk-{answer.pk}", "dataset": "ClaimDesk", "task_type": "rag_qa",
        "question": answer.question or None, "passages": _passages(answer), "answer": answer.answer,
        "hallucinated": hallucinated, "spans": spans, "sentence_labels": None,
    })


# --- outcomes ----------------------------------------------------------------------------------

Progress = Callable[[int], None]


def golden_outcomes(
    *, name: str, config: JudgeConfig, progress: Progress | None = None
) -> Iterator[Outcome]:
    identity = judges.identify(config)
    answers = golden_answers(name).prefetch_related("passages").order_by("pk")
    for done, answer in enumerate(answers.iterator(chunk_size=200), start=1):
        yield _outcome(golden_record(answer), *run_or_reuse(answer, config, identity))
        if progress:
            progress(done)


def adjudicated_outcomes(
    *, config: JudgeConfig | None = None, progress: Progress | None = None
) -> Iterator[Outcome]:
    """With no config, each answer's shown run is the prediction (answers whose judge failed have
    none and are left out)."""
    identity = judges.identify(config) if config else None
    answers = Answer.objects.filter(review_status=Answer.ReviewStatus.ADJUDICATED).order_by("pk")
    if config is None:
        answers = answers.filter(judged_by__isnull=False).select_related("judged_by")
    answers = answers.prefetch_related(
        "passages",
        Prefetch(
            "claims", queryset=Claim.objects.exclude(decision="").order_by("pk"), to_attr="decided"
        ),
    )
    for done, answer in enumerate(answers.iterator(chunk_size=200), start=1):
        run, error = (
            (answer.judged_by, "") if config is None else run_or_reuse(answer, config, identity)
        )
        yield _outcome(adjudicated_record(answer, answer.decided), run, error)
        if progress:
            progress(done)


def judges_named(outcomes: list[Outcome]) -> tuple[str, str]:
    """(profile@version, backend) of the runs scored, joined when they differ."""
    infos = [o.result.judge for o in outcomes if o.result is not None]
    profiles = sorted({f"{i.profile}@{i.prompt_version}" for i in infos})
    return ", ".join(profiles) or "-", ", ".join(sorted({i.backend for i in infos})) or "-"


# --- gates -------------------------------------------------------------------------------------


def parse_gate(text: str) -> tuple[str, float]:
    """METRIC=VALUE; a bare metric name (f1) means the response-level one."""
    metric, sep, value = text.partition("=")
    metric = metric.strip() if "." in metric else f"response.{metric.strip()}"
    if not sep or metric not in GATE_METRICS:
        raise ValueError(
            f"{text!r}: expected METRIC=VALUE with METRIC one of {', '.join(GATE_METRICS)}"
        )
    try:
        return metric, float(value)
    except ValueError:
        raise ValueError(f"{text!r}: {value!r} is not a number") from None


def gate_failures(report: dict[str, Any], gates: list[tuple[str, float]]) -> list[str]:
    """One line per gate the report does not meet; a metric the data cannot measure fails its
    gate."""
    failures = []
    for metric, threshold in gates:
        group, name = metric.split(".")
        value = (report.get(group) or {}).get(name)
        if value is None:
            failures.append(f"{metric} not measured (no {group} labels); gate {threshold:g}")
        elif value < threshold:
            failures.append(f"{metric} {value:.3f} < {threshold:g}")
    return failures
