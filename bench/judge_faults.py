"""What the openai backend does about each way an LLM call fails, against the fake server.

Prints a table (fault, attempts, outcome, seconds) and one normalized result per profile; each
fault's row is also recorded in bench/results/latest.json.
A figure-printing script, not a test: `python bench/judge_faults.py`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import record  # noqa: E402
from judges import JudgeConfig, JudgeError, JudgeRequest, judge  # noqa: E402
from judges.profiles import list_profiles  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402
from tests.judges.conftest import FARE_POLICY, PASSES  # noqa: E402
from tests.judges.factories import ANSWER, CANNED  # noqa: E402

REQUEST = JudgeRequest.model_validate(
    {
        "question": "How much do seniors pay?",
        "passages": [
            {
                "id": "P1",
                "text": FARE_POLICY,
                "agency": "Metro",
                "title": "Fare Policy",
                "section": "4.2",
                "source_url": "https://metro.example/fares",
                "fetched_at": "2026-08-16",
            },
            {"id": "P2", "text": PASSES, "agency": "Metro", "title": "Passes"},
        ],
        "answer": ANSWER,
    }
)
GOOD = json.dumps(CANNED["claim_verification"])

FAULTS = [
    ("valid JSON", [Reply.ok(GOOD)], {}),
    ("JSON in fences after prose", [Reply.fenced(GOOD)], {}),
    ("malformed JSON, then valid", [Reply.ok("{'claims': [}"), Reply.ok(GOOD)], {}),
    ("schema-invalid, then valid", [Reply.ok('{"claims": [{"claim_id": 1}]}'), Reply.ok(GOOD)], {}),
    ("truncated (finish_reason=length), then valid", [Reply.truncated(GOOD), Reply.ok(GOOD)], {}),
    ("malformed twice", [Reply.ok("not json"), Reply.ok("still not json")], {}),
    (
        "429 with Retry-After 1s, then valid",
        [Reply.status(429, retry_after=1.0), Reply.ok(GOOD)],
        {},
    ),
    ("500, 503, then valid", [Reply.status(500), Reply.status(503), Reply.ok(GOOD)], {}),
    ("500 storm", [Reply.status(500)] * 20, {}),
    (
        "429 storm past the retry budget",
        [Reply.status(429, retry_after=2.0)] * 20,
        {"retry_budget_s": 5.0},
    ),
    ("slower than the timeout, then valid", [Reply.slow(5.0), Reply.ok(GOOD)], {"timeout_s": 1.0}),
    ("connection dropped, then valid", [Reply.drop_connection(), Reply.ok(GOOD)], {}),
    ("refusal", [Reply.refusal("I can't help with that.")], {}),
    ("401 bad key", [Reply.status(401)], {}),
]


def config(fake: FakeOpenAI, profile="claim_verification", **overrides) -> JudgeConfig:
    values = dict(
        backend="openai",
        profile=profile,
        model="fake-judge",
        base_url=fake.base_url,
        api_key="k",
        timeout_s=10.0,
        retry_budget_s=30.0,
        max_attempts=5,
        backoff_cap_s=2.0,
    )
    return JudgeConfig(**(values | overrides))


def run_faults() -> None:
    print(f"{'fault':46} {'attempts':>8}  {'outcome':58} {'seconds':>7}")
    for name, replies, overrides in FAULTS:
        with FakeOpenAI() as fake:
            fake.enqueue(*replies)
            started = time.monotonic()
            try:
                result = judge(REQUEST, config(fake, **overrides)).result
                outcome, attempts = (
                    f"judged: {result.verdict}, score {result.grounding_score}",
                    result.judge.attempts,
                )
            except JudgeError as error:
                kind = "transient" if error.transient else "permanent"
                outcome, attempts = f"failed ({kind}): {str(error)[:42]}", error.attempts
            seconds = time.monotonic() - started
            print(f"{name:46} {attempts:>8}  {outcome:58} {seconds:7.2f}")
            # No target: the figure is how long the backend spent on the fault; the outcome says
            # what it did.
            record(f"judge fault: {name}", seconds, "s", None, higher_is_better=False,
                   command="python bench/judge_faults.py", attempts=attempts, outcome=outcome)
    with FakeOpenAI(supported_formats={"json_object"}, default=Reply.ok(GOOD)) as fake:
        started = time.monotonic()
        judge(REQUEST, config(fake))
        judge(REQUEST, config(fake))
        print(
            f"{'no json_schema support (two answers)':46} {len(fake.requests):>8} "
            f" {'judged; formats sent: ' + ','.join(fake.response_formats_seen):58}"
            f" {time.monotonic() - started:7.2f}"
        )


def run_profiles() -> None:
    for name, versions in list_profiles():
        with FakeOpenAI(default=Reply.ok(json.dumps(CANNED[name]))) as fake:
            result = judge(REQUEST, config(fake, profile=f"{name}@{versions[-1]}")).result
        print(f"\n=== {name}@{versions[-1]} ===")
        print(
            json.dumps(
                result.model_dump(mode="json", exclude={"judge": {"latency_ms"}}),
                ensure_ascii=False,
            )
        )


if __name__ == "__main__":
    run_faults()
    run_profiles()
