"""The one entry point reviewapp (and the CLI) call to judge an answer.

Backends plug in here; nothing in `judges` knows about Django or the database.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from judges.examples import WorkedExamples, versioned
from judges.types import JudgeInfo, JudgeRequest, JudgeResult

Backend = Literal["offline", "openai"]


@dataclass(frozen=True)
class JudgeConfig:
    backend: Backend = "offline"
    profile: str = "claim_audit"
    model: str = ""
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0  # one HTTP request
    retry_budget_s: float = 120.0  # all requests for one answer, retries and repair included
    max_attempts: int = 5  # failed requests before giving up (a transient JudgeError)
    backoff_cap_s: float = 20.0
    # Worked examples from human reviewers, put in the prompt (prompt-based backends only: the
    # offline judge reads no prompt, so it ignores them and its identity says so).
    examples: WorkedExamples | None = None
    # A fleet-wide limit on LLM requests / tokens per minute (judges.ratelimit), shared through
    # Redis by every worker judging with the same endpoint and model. 0: no limit. The Redis URL
    # serves the in-flight limit below too.
    rate_limit_rpm: int = 0
    rate_limit_tpm: int = 0
    rate_limit_redis_url: str | None = None
    # At most this many requests in flight at once across the fleet, for the same endpoint and
    # model (judges.ratelimit.InFlightLimit, through the same Redis). 0: no limit.
    max_in_flight: int = 0


class JudgeError(Exception):
    """A judge call that produced no usable result.

    `transient` errors (connection trouble, 429, 5xx, timeouts) are worth retrying later;
    permanent ones (bad output after repair, refusal, misconfiguration) are not.
    """

    def __init__(self, message: str, *, transient: bool = False, attempts: int = 1, raw_output: str = ""):
        super().__init__(message)
        self.transient = transient
        self.attempts = attempts
        self.raw_output = raw_output


@dataclass(frozen=True)
class JudgeOutput:
    result: JudgeResult
    raw_output: str  # what the model (or the offline judge) produced, kept for the audit trail


@dataclass(frozen=True)
class JudgeIdentity:
    """Which judge a configuration runs, known before the call so a run can be recorded first."""

    profile: str
    prompt_version: str  # with the examples' tag when it carries examples: "v3+ex2"
    backend: str
    model: str
    examples: str | None = None  # the tag of the worked examples it carries, if any


def identify(config: JudgeConfig) -> JudgeIdentity:
    if config.backend == "offline":
        from judges.offline import OFFLINE_MODEL, OFFLINE_PROFILE, OFFLINE_VERSION

        return JudgeIdentity(OFFLINE_PROFILE, OFFLINE_VERSION, "offline", OFFLINE_MODEL)
    profile = _profile(config)
    tag = config.examples.tag if config.examples else None
    return JudgeIdentity(profile.name, versioned(profile.version, config.examples), config.backend, config.model, tag)


def _profile(config: JudgeConfig):
    from judges.profiles import UnknownProfile, get_profile

    try:
        return get_profile(config.profile)
    except UnknownProfile as exc:
        raise JudgeError(str(exc), transient=False) from None


def judge(request: JudgeRequest, config: JudgeConfig) -> JudgeOutput:
    """Judge with the configured backend, then add the deterministic checks' findings
    (judges.checks) to its result. `raw_output` stays what the backend produced."""
    from judges.checks import apply_checks

    output = _judge_with_backend(request, config)
    return JudgeOutput(result=apply_checks(request, output.result), raw_output=output.raw_output)


def _judge_with_backend(request: JudgeRequest, config: JudgeConfig) -> JudgeOutput:
    if not request.passages:
        return _judge_without_passages(request, config)
    if config.backend == "offline":
        from judges.offline import judge_offline

        result = judge_offline(request)
        return JudgeOutput(result=result, raw_output=result.model_dump_json())
    if config.backend == "openai":
        from judges.backends.openai_chat import judge_openai

        return judge_openai(request, config, _profile(config))
    raise JudgeError(f"unknown judge backend {config.backend!r}", transient=False)


NO_PASSAGES = "No passages were retrieved, so nothing supports this."


def _judge_without_passages(request: JudgeRequest, config: JudgeConfig) -> JudgeOutput:
    """With no passages every checkable claim is UNSUPPORTED whatever the judge: no model is asked
    (there is nothing to weigh the answer against, and a call would cost money and time). The
    offline judge's claim split gives the claims; the result names the configured judge, with
    zero attempts, since the run is recorded under that judge's identity."""
    from judges.offline import judge_offline

    started = time.perf_counter()
    result = judge_offline(request)
    claims = [
        claim.model_copy(update={"explanation": NO_PASSAGES}) if claim.label != "SUPPORTED" else claim
        for claim in result.claims
    ]
    identity = identify(config)
    result = result.model_copy(update={
        "claims": claims,
        "rewrite_note": NO_PASSAGES if claims else result.rewrite_note,
        "judge": JudgeInfo(
            profile=identity.profile, prompt_version=identity.prompt_version, examples=identity.examples,
            backend=identity.backend, model=identity.model,
            latency_ms=round((time.perf_counter() - started) * 1000), attempts=0,
        ),
    })
    return JudgeOutput(result=result, raw_output=result.model_dump_json())
