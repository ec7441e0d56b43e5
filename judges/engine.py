"""The one entry point reviewapp (and the CLI) call to judge an answer.

Backends plug in here; nothing in `judges` knows about Django or the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from judges.types import JudgeRequest, JudgeResult

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
    # A fleet-wide limit on LLM requests / tokens per minute (judges.ratelimit), shared through
    # Redis by every worker judging with the same endpoint and model. 0: no limit.
    rate_limit_rpm: int = 0
    rate_limit_tpm: int = 0
    rate_limit_redis_url: str | None = None


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
    prompt_version: str
    backend: str
    model: str


def identify(config: JudgeConfig) -> JudgeIdentity:
    if config.backend == "offline":
        from judges.offline import OFFLINE_MODEL, OFFLINE_PROFILE, OFFLINE_VERSION

        return JudgeIdentity(OFFLINE_PROFILE, OFFLINE_VERSION, "offline", OFFLINE_MODEL)
    profile = _profile(config)
    return JudgeIdentity(profile.name, profile.version, config.backend, config.model)


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
    if config.backend == "offline":
        from judges.offline import judge_offline

        result = judge_offline(request)
        return JudgeOutput(result=result, raw_output=result.model_dump_json())
    if config.backend == "openai":
        from judges.backends.openai_chat import judge_openai

        return judge_openai(request, config, _profile(config))
    raise JudgeError(f"unknown judge backend {config.backend!r}", transient=False)
