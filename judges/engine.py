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
    timeout_s: float = 60.0


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
    profile, _, version = config.profile.partition("@")
    return JudgeIdentity(profile, version or "latest", config.backend, config.model)


def judge(request: JudgeRequest, config: JudgeConfig) -> JudgeOutput:
    if config.backend == "offline":
        from judges.offline import judge_offline

        result = judge_offline(request)
        return JudgeOutput(result=result, raw_output=result.model_dump_json())
    raise JudgeError(f"judge backend {config.backend!r} is not available in this build", transient=False)
