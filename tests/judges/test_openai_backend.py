"""The openai backend against the fake OpenAI-compatible server, over real HTTP, through the
real `openai` client: every way an LLM call fails, and what the judge does about it."""

from __future__ import annotations

import json
import time

import pytest

from judges import JudgeConfig, JudgeError, judge
from tests.fake_openai import FakeOpenAI, Reply
from tests.judges.factories import GOOD, openai_config

MISSING_FIELD = json.dumps(
    {"claims": [{"claim_id": "c1", "claim_text": "x"}], "grounding_score": 1}
)


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def test_a_good_reply_is_normalized_with_usage_and_one_attempt(fake, good_request):
    fake.enqueue(Reply.ok(GOOD, prompt_tokens=321, completion_tokens=45))
    output = judge(good_request, openai_config(fake))
    result = output.result
    assert [c.label for c in result.claims] == ["SUPPORTED", "UNSUPPORTED"]
    assert result.grounding_score == 0.5
    assert result.claims[0].evidence[0].match == "exact"
    assert (
        result.judge.attempts,
        result.judge.usage.prompt_tokens,
        result.judge.usage.completion_tokens,
    ) == (1, 321, 45)
    assert (result.judge.profile, result.judge.backend, result.judge.model) == (
        "claim_verification",
        "openai",
        "fake-judge",
    )
    assert output.raw_output == GOOD


def test_it_asks_at_temperature_zero_for_the_profiles_json_schema(fake, good_request):
    fake.enqueue(Reply.ok(GOOD))
    judge(good_request, openai_config(fake))
    sent = fake.requests[0]
    assert sent["temperature"] == 0
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["strict"] is True
    assert "claims" in sent["response_format"]["json_schema"]["schema"]["properties"]
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert fake.request_headers[0]["authorization"] == "Bearer test"


def test_a_fenced_reply_after_prose_is_accepted(fake, good_request):
    fake.enqueue(Reply.fenced(GOOD))
    assert judge(good_request, openai_config(fake)).result.judge.attempts == 1


@pytest.mark.parametrize(
    "bad", [Reply.ok("{not json"), Reply.ok(MISSING_FIELD), Reply.truncated(GOOD), Reply.ok("")]
)
def test_bad_output_gets_one_repair_request_showing_the_error(fake, good_request, bad):
    fake.enqueue(bad, Reply.ok(GOOD))
    result = judge(good_request, openai_config(fake)).result
    assert result.judge.attempts == 2
    repair = fake.requests[1]
    assert repair["temperature"] == pytest.approx(0.2)
    assert repair["messages"][-2]["role"] == "assistant"
    assert "could not be used" in repair["messages"][-1]["content"]


def test_a_truncated_reply_is_named_as_such_in_the_repair_request(fake, good_request):
    fake.enqueue(Reply.truncated(GOOD), Reply.ok(GOOD))
    judge(good_request, openai_config(fake))
    assert "cut off" in fake.requests[1]["messages"][-1]["content"]


def test_bad_output_twice_is_a_permanent_failure_holding_the_reply(fake, good_request):
    fake.enqueue(Reply.ok("{not json"), Reply.ok(MISSING_FIELD))
    with pytest.raises(JudgeError) as failure:
        judge(good_request, openai_config(fake))
    assert not failure.value.transient
    assert failure.value.attempts == 2
    assert failure.value.raw_output == MISSING_FIELD
    assert "after one repair" in str(failure.value)
    assert len(fake.requests) == 2


def test_a_429_is_retried_after_its_retry_after(fake, good_request):
    fake.enqueue(Reply.status(429, retry_after=0.3), Reply.ok(GOOD))
    started = time.monotonic()
    result = judge(good_request, openai_config(fake)).result
    assert time.monotonic() - started >= 0.3
    assert result.judge.attempts == 2


def test_5xx_errors_are_retried_with_backoff(fake, good_request):
    fake.enqueue(Reply.status(500), Reply.status(503), Reply.ok(GOOD))
    assert judge(good_request, openai_config(fake)).result.judge.attempts == 3


def test_persistent_5xx_ends_in_a_transient_failure_after_max_attempts(fake, good_request):
    fake.enqueue(*[Reply.status(500)] * 10)
    with pytest.raises(JudgeError) as failure:
        judge(good_request, openai_config(fake, max_attempts=3))
    assert failure.value.transient
    assert failure.value.attempts == 3
    assert len(fake.requests) == 3


def test_a_429_storm_longer_than_the_retry_budget_gives_up_in_time(fake, good_request):
    fake.enqueue(*[Reply.status(429, retry_after=0.4)] * 20)
    started = time.monotonic()
    with pytest.raises(JudgeError) as failure:
        judge(good_request, openai_config(fake, retry_budget_s=1.0, max_attempts=50))
    assert failure.value.transient
    assert time.monotonic() - started < 1.5
    assert "retry budget" in str(failure.value)


def test_a_reply_slower_than_the_timeout_is_retried(fake, good_request):
    fake.enqueue(Reply.slow(3.0, then=Reply.ok(GOOD)), Reply.ok(GOOD))
    started = time.monotonic()
    result = judge(good_request, openai_config(fake, timeout_s=0.5)).result
    assert result.judge.attempts == 2
    assert time.monotonic() - started < 2.5


def test_a_dropped_connection_is_retried(fake, good_request):
    fake.enqueue(Reply.drop_connection(), Reply.ok(GOOD))
    assert judge(good_request, openai_config(fake)).result.judge.attempts == 2


def test_a_refusal_fails_at_once_and_says_so(fake, good_request):
    fake.enqueue(Reply.refusal("I can't assist with that."))
    with pytest.raises(JudgeError) as failure:
        judge(good_request, openai_config(fake))
    assert not failure.value.transient
    assert "refused" in str(failure.value) and "can't assist" in str(failure.value)
    assert len(fake.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_fail_at_once_without_retries(fake, good_request, status):
    fake.enqueue(Reply.status(status))
    with pytest.raises(JudgeError) as failure:
        judge(good_request, openai_config(fake))
    assert not failure.value.transient
    assert str(status) in str(failure.value)
    assert len(fake.requests) == 1


def test_an_endpoint_without_json_schema_gets_json_object_and_it_is_remembered(good_request):
    with FakeOpenAI(supported_formats={"json_object"}, default=Reply.ok(GOOD)) as fake:
        judge(good_request, openai_config(fake))
        judge(good_request, openai_config(fake))
        assert fake.response_formats_seen == ["json_schema", "json_object", "json_object"]


def test_an_endpoint_with_no_structured_output_gets_plain_text(good_request):
    with FakeOpenAI(supported_formats=set(), default=Reply.ok(GOOD)) as fake:
        result = judge(good_request, openai_config(fake)).result
        assert fake.response_formats_seen == ["json_schema", "json_object", None]
        assert result.judge.attempts == 3
        assert "response_format" not in fake.requests[-1]


def test_an_unreachable_endpoint_is_a_transient_failure(good_request):
    with FakeOpenAI() as fake:
        base_url = fake.base_url
    with pytest.raises(JudgeError) as failure:
        judge(
            good_request,
            JudgeConfig(
                backend="openai",
                profile="claim_verification",
                model="m",
                base_url=base_url,
                timeout_s=0.5,
                retry_budget_s=2.0,
                max_attempts=3,
                backoff_cap_s=0.05,
            ),
        )
    assert failure.value.transient
    assert "connection" in str(failure.value)


def test_no_endpoint_configured_is_a_clear_permanent_failure(good_request):
    with pytest.raises(JudgeError, match="OPENAI_BASE_URL") as failure:
        judge(good_request, JudgeConfig(backend="openai", profile="claim_verification"))
    assert not failure.value.transient


def test_an_unknown_profile_is_a_clear_permanent_failure(fake, good_request):
    with pytest.raises(JudgeError, match="no_such_profile") as failure:
        judge(good_request, openai_config(fake, profile="no_such_profile"))
    assert not failure.value.transient
    assert fake.requests == []


# Text no database stores, as a reply carries it: a character in the content (the HTTP body's
# escape), or an escape the model wrote inside its own JSON, which the profile's parser decodes.
UNSTORABLE_REPLIES = {
    "a NUL character": GOOD.replace("Stated in P1.", "Stated\x00 in P1."),
    "a NUL escape": GOOD.replace("Stated in P1.", "Stated\\u0000 in P1."),
    "a lone surrogate character": GOOD.replace("Stated in P1.", "Stated\ud800 in P1."),
    "a lone surrogate escape": GOOD.replace("Stated in P1.", "Stated\\udc00 in P1."),
}


@pytest.mark.parametrize("content", UNSTORABLE_REPLIES.values(), ids=UNSTORABLE_REPLIES.keys())
def test_an_llm_reply_with_a_nul_or_a_lone_surrogate_is_cleaned_before_parsing(
    fake, good_request, content
):
    fake.enqueue(Reply.ok(content))
    output = judge(good_request, openai_config(fake))
    assert output.result.judge.attempts == 1  # parsed as it came, not sent back for repair
    assert output.result.claims[0].explanation == "Stated in P1."
    assert output.raw_output == GOOD


def test_a_surrogate_pair_in_a_reply_is_kept(fake, good_request):
    fake.enqueue(Reply.ok(GOOD.replace("Stated in P1.", "Stated in P1 \\ud83d\\ude00.")))
    assert (
        judge(good_request, openai_config(fake)).result.claims[0].explanation
        == "Stated in P1 \U0001f600."
    )


def test_an_escaped_backslash_before_u0000_is_text_and_kept(fake, good_request):
    fake.enqueue(Reply.ok(GOOD.replace("Stated in P1.", "Stated in P1 \\\\u0000.")))
    assert (
        judge(good_request, openai_config(fake)).result.claims[0].explanation
        == "Stated in P1 \\u0000."
    )


def test_a_refusal_with_a_nul_is_cleaned(fake, good_request):
    fake.enqueue(Reply.refusal("I cannot\x00 do that."))
    with pytest.raises(JudgeError) as failure:
        judge(good_request, openai_config(fake))
    assert failure.value.raw_output == "I cannot do that."
