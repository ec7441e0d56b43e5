"""The `openai` backend: a profile's prompt sent to any OpenAI-compatible chat endpoint
(OpenAI, vLLM, Ollama, llama.cpp server) through the `openai` package.

What it does about every way such a call fails:

* structured output: asks for `json_schema`; an endpoint that refuses it is asked with
  `json_object`, then plain text, and the answer is remembered per endpoint (per process);
* transient faults (connection errors, timeouts, 408, 409, 429, 5xx) are retried with
  exponential backoff and full jitter, honouring Retry-After, bounded in attempts and in total
  time; what is still failing then is a *transient* JudgeError, so the task can retry later;
* permanent faults (401, 403, 404, other 4xx, a refusal) fail at once;
* malformed, truncated or schema-invalid output gets one repair request that shows the model
  its error, at a slightly higher temperature (seed 002); a second bad reply is a permanent
  JudgeError holding that reply;
* text no database can store (NUL, lone UTF-16 surrogates, written out or as JSON escapes) is
  removed from the reply before it is parsed, so it reaches neither the result nor the raw output.

Temperature is 0 for the judgment itself. Usage, latency and attempts are summed over every
request made for the answer.

With a fleet-wide rate limit configured (judges.ratelimit), every attempt first waits for a slot;
with a fleet-wide in-flight limit, it then waits for one of its slots and holds it for the HTTP
request only (not while backing off). Both waits are spent from the same retry budget, so a
saturated limit ends in a transient JudgeError (the task retries later) instead of a job that hangs.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
import orjson

from judges.examples import versioned
from judges.profiles.base import OutputError, Profile
from judges.ratelimit import (
    InFlightLimit,
    RateLimiter,
    RateLimitTimeout,
    RateLimitUnavailable,
    Ticket,
    estimate_tokens,
    in_flight_limit_for,
    limiter_for,
)
from judges.config import JudgeConfig
from judges.types import JudgeError, JudgeInfo, JudgeOutput, JudgeRequest, JudgeResult, Usage

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
FORMATS = ("json_schema", "json_object", "text")
REPAIR_TEMPERATURE = 0.2
REPAIR_INSTRUCTION = (
    "Your reply could not be used: {error}\n"
    "Reply again with only the JSON object the instructions ask for: no prose, no code fences."
)

# Which response_format each endpoint accepts, learnt from its refusals; shared by all threads.
_format_by_endpoint: dict[str, str] = {}
_clients: dict[tuple[str, str], openai.OpenAI] = {}
_lock = threading.Lock()
_JSON_BODY = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class _Reply:
    text: str
    truncated: bool  # the endpoint stopped at its token limit (finish_reason=length)


@dataclass
class _Call:
    """Bookkeeping for all requests made to judge one answer."""

    deadline: float
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)


def judge_openai(request: JudgeRequest, config: JudgeConfig, profile: Profile) -> JudgeOutput:
    if not config.base_url:
        raise JudgeError(
            "the openai backend needs an endpoint: set OPENAI_BASE_URL", transient=False
        )
    started = time.monotonic()
    call = _Call(deadline=started + config.retry_budget_s)
    prompt = profile.render(request, examples=config.examples)
    messages = prompt.messages

    reply = _complete(config, profile, messages, temperature=0.0, call=call)
    try:
        normalized = _parse(profile, reply, request)
    except OutputError as first_error:
        messages = [
            *messages,
            {"role": "assistant", "content": reply.text},
            {"role": "user", "content": REPAIR_INSTRUCTION.format(error=first_error)},
        ]
        reply = _complete(config, profile, messages, temperature=REPAIR_TEMPERATURE, call=call)
        try:
            normalized = _parse(profile, reply, request)
        except OutputError as second_error:
            raise JudgeError(
                f"invalid judge output after one repair request: {second_error} (first reply:"
                f" {first_error})",
                transient=False,
                attempts=call.attempts,
                raw_output=reply.text,
            ) from None

    result = JudgeResult(
        verdict=normalized.verdict,
        grounding_score=normalized.grounding_score,
        claims=normalized.claims,
        fabrications=normalized.fabrications,
        omissions=normalized.omissions,
        rewrite_note=normalized.rewrite_note,
        judge=JudgeInfo(
            profile=profile.name,
            prompt_version=versioned(profile.version, config.examples),
            examples=config.examples.tag if config.examples else None,
            backend="openai",
            model=config.model,
            latency_ms=round((time.monotonic() - started) * 1000),
            attempts=call.attempts,
            usage=call.usage,
        ),
    )
    return JudgeOutput(result=result, raw_output=reply.text)


def _parse(profile: Profile, reply: _Reply, request: JudgeRequest):
    if reply.truncated:
        raise OutputError(
            "the reply was cut off at the token limit (finish_reason=length); answer more briefly"
        )
    return profile.normalize(profile.parse(reply.text, request), request)


def _client(config: JudgeConfig) -> openai.OpenAI:
    key = (config.base_url, config.api_key or "")
    with _lock:
        client = _clients.get(key)
        if client is None:
            # Retries are ours (bounded in total time, logged as attempts), not the library's.
            client = openai.OpenAI(
                base_url=config.base_url, api_key=config.api_key or "not-needed", max_retries=0
            )
            _clients[key] = client
    return client


def _response_format(kind: str, profile: Profile) -> dict[str, Any]:
    if kind == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": profile.schema_name,
                    "schema": profile.output_schema,
                    "strict": True,
                },
            }
        }
    if kind == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def _refuses_response_format(exc: openai.APIStatusError) -> bool:
    text = f"{exc.message} {exc.body}".lower()
    return exc.status_code in (400, 422) and any(
        word in text
        for word in ("response_format", "json_schema", "json_object", "structured output")
    )


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) * scale, 0.0)
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None


def _complete(
    config: JudgeConfig, profile: Profile, messages: list[dict], *, temperature: float, call: _Call
) -> _Reply:
    """One chat completion, retried on transient faults within the call's time budget."""
    client = _client(config)
    failures = 0
    while True:
        kind = _format_by_endpoint.get(config.base_url, FORMATS[0])
        remaining = call.deadline - time.monotonic()
        if remaining <= 0:
            raise JudgeError(
                f"gave up after {call.attempts} attempts: retry budget of"
                f" {config.retry_budget_s:.0f}s spent",
                transient=True,
                attempts=call.attempts,
            )
        ticket = _wait_for_rate_limit(config, call, messages)
        # The body before the slot: a slot is held only while the endpoint works.
        body = orjson.dumps(
            {
                "model": config.model,
                "messages": messages,
                "temperature": temperature,
                **_response_format(kind, profile),
            }
        )
        try:
            with _in_flight_slot(config, call):
                remaining = call.deadline - time.monotonic()
                call.attempts += 1
                # The client's plain POST, not chat.completions.create(): the same request, retries
                # and errors (APIStatusError, APIConnectionError), but no walk of the messages to
                # "transform" them, no pydantic models built from the reply, and the body encoded by
                # orjson: together about 2.5 ms less CPU per call, on workers that are CPU-bound.
                http_response = client.post(
                    "/chat/completions",
                    cast_to=httpx2.Response,
                    content=body,
                    options={
                        "timeout": max(min(config.timeout_s, remaining), 0.001),
                        "headers": _JSON_BODY,
                    },
                )
        except openai.APIStatusError as exc:
            if _refuses_response_format(exc) and kind != FORMATS[-1]:
                with _lock:
                    _format_by_endpoint[config.base_url] = FORMATS[FORMATS.index(kind) + 1]
                continue  # not a failure: the endpoint told us what it cannot do
            if exc.status_code not in RETRYABLE_STATUS:
                raise JudgeError(
                    f"endpoint answered {exc.status_code}: {exc.message}",
                    transient=False,
                    attempts=call.attempts,
                ) from None
            failures = _wait_before_retry(
                config, call, failures, f"HTTP {exc.status_code}", _retry_after(exc)
            )
            continue
        except openai.APIConnectionError as exc:  # includes timeouts
            reason = (
                "timed out"
                if isinstance(exc, openai.APITimeoutError)
                else f"connection failed: {exc}"
            )
            failures = _wait_before_retry(config, call, failures, reason, None)
            continue
        completion = _completion(http_response)
        usage = completion.get("usage")
        if ticket is not None and isinstance(usage, dict):
            _limiter(config).settle(
                ticket, (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
            )
        return _reply_text(completion, call)


def _limiter(config: JudgeConfig) -> RateLimiter | None:
    if not (config.rate_limit_rpm or config.rate_limit_tpm) or not config.rate_limit_redis_url:
        return None
    # Providers limit per key and model; the endpoint and model name stand for both here.
    return limiter_for(
        config.rate_limit_redis_url,
        key=f"judges:llm-rate:{config.base_url}|{config.model}",
        rpm=config.rate_limit_rpm,
        tpm=config.rate_limit_tpm,
    )


def _wait_for_rate_limit(config: JudgeConfig, call: _Call, messages: list[dict]) -> Ticket | None:
    limiter = _limiter(config)
    if limiter is None:
        return None
    with _fleet_limit_failure(call):
        return limiter.acquire(estimate_tokens(messages), deadline=call.deadline)


@contextmanager
def _fleet_limit_failure(call: _Call) -> Iterator[None]:
    """A fleet limit that outlasts the call's budget, or cannot be asked, fails the call
    transiently: the task retries later."""
    try:
        yield
    except (RateLimitTimeout, RateLimitUnavailable) as exc:
        raise JudgeError(f"gave up after {call.attempts} attempts: {exc}", transient=True,
                         attempts=call.attempts) from None


LEASE_MARGIN_SECONDS = 5.0  # an in-flight slot outlives its request's timeout by this much


def _in_flight_limit(config: JudgeConfig) -> InFlightLimit | None:
    if not config.max_in_flight or not config.rate_limit_redis_url:
        return None
    return in_flight_limit_for(
        config.rate_limit_redis_url,
        key=f"judges:llm-in-flight:{config.base_url}|{config.model}",
        limit=config.max_in_flight,
        lease_s=config.timeout_s + LEASE_MARGIN_SECONDS,
    )


@contextmanager
def _in_flight_slot(config: JudgeConfig, call: _Call) -> Iterator[None]:
    """Hold one of the fleet's in-flight slots for the block (no limit configured: just run it)."""
    limit = _in_flight_limit(config)
    if limit is None:
        yield
        return
    with _fleet_limit_failure(call):
        slot = limit.acquire(deadline=call.deadline)
    try:
        yield
    finally:
        limit.release(slot)


def _wait_before_retry(
    config: JudgeConfig, call: _Call, failures: int, reason: str, retry_after: float | None
) -> int:
    failures += 1
    if failures >= config.max_attempts:
        raise JudgeError(
            f"gave up after {call.attempts} attempts: {reason}",
            transient=True,
            attempts=call.attempts,
        )
    delay = (
        retry_after
        if retry_after is not None
        else random.uniform(0, min(config.backoff_cap_s, 0.5 * 2**failures))
    )
    if time.monotonic() + delay >= call.deadline:
        raise JudgeError(
            f"gave up after {call.attempts} attempts: {reason}, and waiting {delay:.1f}s more would"
            " exceed the retry budget",
            transient=True,
            attempts=call.attempts,
        )
    time.sleep(delay)
    return failures


def _completion(http_response) -> dict:
    """The reply's JSON body. A body that is not a JSON object counts as a reply without choices
    (it fails parsing, which earns the one repair request)."""
    try:
        completion = orjson.loads(http_response.content)
    except orjson.JSONDecodeError:
        try:  # orjson refuses lone surrogate escapes, which clean_model_text() removes later
            completion = json.loads(http_response.content)
        except ValueError:
            return {}
    return completion if isinstance(completion, dict) else {}


# A NUL or a lone surrogate, as a character or as the JSON escape the model wrote inside its JSON
# (an escape only where the backslash before it is not itself escaped); a surrogate pair is text.
_UNSTORABLE = re.compile(
    r"[\x00\ud800-\udfff]"
    r"|(?<!\\)((?:\\\\)*)\\u(?:0000|d[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})"
    r"|(?<!\\ud[89ab][0-9a-f]{2}\\u)d[c-f][0-9a-f]{2})",
    re.IGNORECASE,
)


def clean_model_text(text: str) -> str:
    """The model's text without what PostgreSQL cannot store in text or JSON columns."""
    return _UNSTORABLE.sub(lambda match: match.group(1) or "", text)


def _reply_text(completion: dict, call: _Call) -> _Reply:
    usage = completion.get("usage")
    if isinstance(usage, dict):
        call.usage.prompt_tokens += usage.get("prompt_tokens") or 0
        call.usage.completion_tokens += usage.get("completion_tokens") or 0
    choices = completion.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        return _Reply("", truncated=False)  # fails parsing, which earns the one repair request
    choice = choices[0]
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    refusal = message.get("refusal")
    if refusal:
        refusal = clean_model_text(str(refusal))
        raise JudgeError(
            f"the model refused to judge: {refusal}",
            transient=False,
            attempts=call.attempts,
            raw_output=refusal,
        )
    content = message.get("content")
    text = clean_model_text(content) if isinstance(content, str) else ""
    return _Reply(text, truncated=choice.get("finish_reason") == "length")
