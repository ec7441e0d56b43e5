"""The one entry point reviewapp (and the CLI) call to judge an answer.

Backends plug in here; nothing in `judges` knows about Django or the database.
"""

from __future__ import annotations

import time

from judges.budget import BudgetSpent, within_cpu_budget
# The types the engine and its backends exchange live in judges.types and judges.config (backends
# import them from there, the engine imports the backends); re-exported for the engine's callers.
from judges.config import Backend, JudgeConfig
from judges.examples import versioned
from judges.types import JudgeError, JudgeIdentity, JudgeInfo, JudgeOutput, JudgeRequest

__all__ = [
    "Backend",
    "JudgeConfig",
    "JudgeError",
    "JudgeIdentity",
    "JudgeOutput",
    "identify",
    "judge",
]


def identify(config: JudgeConfig) -> JudgeIdentity:
    if config.backend == "offline":
        from judges.backends.offline.judge import OFFLINE_MODEL, OFFLINE_PROFILE, OFFLINE_VERSION

        return JudgeIdentity(OFFLINE_PROFILE, OFFLINE_VERSION, "offline", OFFLINE_MODEL)
    profile = _profile(config)
    tag = config.examples.tag if config.examples else None
    return JudgeIdentity(
        profile.name, versioned(profile.version, config.examples), config.backend, config.model, tag
    )


def _profile(config: JudgeConfig):
    from judges.profiles import UnknownProfile, get_profile

    try:
        return get_profile(config.profile)
    except UnknownProfile as exc:
        raise JudgeError(str(exc), transient=False) from None


def judge(request: JudgeRequest, config: JudgeConfig) -> JudgeOutput:
    """Judge with the configured backend, then add the deterministic checks' findings
    (judges.checks) to its result. `raw_output` stays what the backend produced. Both together
    spend at most `config.cpu_budget_s` of CPU, else the judging fails (permanently: the same input
    would cost as much again)."""
    try:
        return within_cpu_budget(config.cpu_budget_s, lambda: _judge_and_check(request, config))
    except BudgetSpent as exc:
        raise JudgeError(str(exc), transient=False) from None


def _judge_and_check(request: JudgeRequest, config: JudgeConfig) -> JudgeOutput:
    from judges.checks import apply_checks

    output = _judge_with_backend(request, config)
    return JudgeOutput(result=apply_checks(request, output.result), raw_output=output.raw_output)


def _judge_with_backend(request: JudgeRequest, config: JudgeConfig) -> JudgeOutput:
    if not request.passages:
        return _judge_without_passages(request, config)
    if config.backend == "offline":
        from judges.backends.offline.judge import judge_offline

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
    from judges.backends.offline.judge import judge_offline

    started = time.perf_counter()
    result = judge_offline(request)
    claims = [
        (
            claim.model_copy(update={"explanation": NO_PASSAGES})
            if claim.label != "SUPPORTED"
            else claim
        )
        for claim in result.claims
    ]
    identity = identify(config)
    result = result.model_copy(
        update={
            "claims": claims,
            "rewrite_note": NO_PASSAGES if claims else result.rewrite_note,
            "judge": JudgeInfo(
                profile=identity.profile,
                prompt_version=identity.prompt_version,
                examples=identity.examples,
                backend=identity.backend,
                model=identity.model,
                latency_ms=round((time.perf_counter() - started) * 1000),
                attempts=0,
            ),
        }
    )
    return JudgeOutput(result=result, raw_output=result.model_dump_json())
