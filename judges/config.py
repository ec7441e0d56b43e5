"""How to judge: the backend, profile and model, their endpoint and limits (judges.engine reads it).

Apart from judges.types because it carries worked examples (judges.examples), which are built on
the types: here each of the three imports only the one before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from judges.examples import WorkedExamples

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
    # CPU seconds the judging of one answer may spend in its thread (judges.budget), backend and
    # checks together; past it the judging fails (a permanent JudgeError). 0: no budget.
    cpu_budget_s: float = 0.0
