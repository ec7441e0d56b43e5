"""The fake OpenAI-compatible server (tests/fake_openai.py), exercised through the real `openai`
client.

No Django, no database: everything here is plain HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest

from tests.fake_openai import DEFAULT_CONTENT, MODEL_ID, FakeOpenAI, Reply

REPO_ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [
    {"role": "system", "content": "You are a judge."},
    {"role": "user", "content": "Judge this."},
]


@pytest.fixture(scope="module")
def _shared_client():
    """One openai client for the whole module (building one costs ~50 ms); tests re-point it."""
    with openai.OpenAI(
        base_url="http://127.0.0.1:9/v1", api_key="test", max_retries=0, timeout=5.0
    ) as c:
        yield c


@pytest.fixture(scope="module")
def _shared_fake():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake(_shared_fake):
    _shared_fake.reset()
    yield _shared_fake
    _shared_fake.reset()


@pytest.fixture
def client_for(_shared_client):
    """client_for(server, **options): the real openai client pointed at `server`."""

    def build(server: FakeOpenAI, **options) -> openai.OpenAI:
        return _shared_client.with_options(base_url=server.base_url, **options)

    return build


@pytest.fixture
def client(fake, client_for):
    return client_for(fake)


def ask(client: openai.OpenAI, **kwargs):
    kwargs.setdefault("model", "gpt-4o-mini")
    kwargs.setdefault("messages", MESSAGES)
    return client.chat.completions.create(**kwargs)


def raw_request(server: FakeOpenAI, method: str, path: str, data: bytes | None = None):
    """(status, parsed JSON body) of a plain urllib request, bypassing the openai client."""
    url = server.base_url.removesuffix("/v1") + path
    req = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def in_parallel(n: int, fn):
    """Run fn() in n threads released together; return their results or exceptions."""
    barrier = threading.Barrier(n)
    results: list = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = fn()
        except Exception as exc:  # noqa: BLE001 - collected for the assertions
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    return results


# -- reply kinds
# ------------------------------------------------------------------------------------


def test_ok_reply_delivers_content_usage_and_the_requested_model(fake, client):
    fake.enqueue(Reply.ok('{"verdict": "GROUNDED"}', prompt_tokens=321, completion_tokens=12))

    completion = ask(client)

    choice = completion.choices[0]
    assert choice.message.content == '{"verdict": "GROUNDED"}'
    assert choice.message.refusal is None
    assert choice.finish_reason == "stop"
    assert completion.model == "gpt-4o-mini"
    assert completion.id.startswith("chatcmpl-")
    assert completion.object == "chat.completion"
    usage = completion.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (321, 12, 333)


def test_ok_reply_json_encodes_non_string_content(fake, client):
    fake.enqueue(Reply.ok({"verdict": "UNGROUNDED", "claims": []}))

    assert json.loads(ask(client).choices[0].message.content) == {
        "verdict": "UNGROUNDED",
        "claims": [],
    }


def test_fenced_reply_puts_the_json_in_a_json_code_fence_after_a_line_of_prose(fake, client):
    fake.enqueue(Reply.fenced('{"a": 1}'))

    content = ask(client).choices[0].message.content

    prose, fence = content.split("\n", 1)
    assert prose.strip() and "{" not in prose
    assert fence == '```json\n{"a": 1}\n```'


def test_truncated_reply_carries_the_first_half_and_finish_reason_length(fake, client):
    fake.enqueue(Reply.truncated('{"claims": [1, 2, 3, 4]}'))

    choice = ask(client).choices[0]

    assert choice.finish_reason == "length"
    assert choice.message.content == '{"claims": [1, 2, 3, 4]}'[:12]


def test_refusal_reply_sets_message_refusal_and_leaves_content_null(fake, client):
    fake.enqueue(Reply.refusal("No can do."))

    message = ask(client).choices[0].message

    assert message.content is None
    assert message.refusal == "No can do."


def test_status_429_raises_rate_limit_error_whose_response_carries_retry_after(fake, client):
    fake.enqueue(Reply.status(429, retry_after=0.2))

    with pytest.raises(openai.RateLimitError) as caught:
        ask(client)

    headers = caught.value.response.headers
    assert headers["retry-after"] == "0.2"
    assert headers["retry-after-ms"] == "200"
    assert caught.value.body["type"] == "rate_limit_error"
    assert caught.value.code == "rate_limit_exceeded"


def test_openai_client_retries_honour_the_fractional_retry_after(fake, client_for):
    fake.enqueue(Reply.status(429, retry_after=0.2), Reply.ok("second time lucky"))

    started = time.monotonic()
    completion = ask(client_for(fake, max_retries=1))
    elapsed = time.monotonic() - started

    assert completion.choices[0].message.content == "second time lucky"
    assert len(fake.requests) == 2
    assert 0.2 <= elapsed < 1.0


def test_status_500_raises_internal_server_error_with_an_openai_error_body(fake, client):
    fake.enqueue(Reply.status(500, message="boom"))

    with pytest.raises(openai.InternalServerError) as caught:
        ask(client)

    assert caught.value.status_code == 500
    assert set(caught.value.body) >= {"message", "type", "code"}
    assert caught.value.body["message"] == "boom"


def test_slow_reply_beyond_the_client_timeout_raises_api_timeout_error(fake, client_for):
    fake.enqueue(Reply.slow(2))

    with pytest.raises(openai.APITimeoutError):
        ask(client_for(fake, timeout=0.5))


def test_slow_reply_sends_its_then_reply_or_the_default_after_the_wait(fake, client):
    fake.enqueue(Reply.slow(0.05, then=Reply.ok("late")), Reply.slow(0.05))

    assert ask(client).choices[0].message.content == "late"
    assert ask(client).choices[0].message.content == DEFAULT_CONTENT


def test_reject_response_format_raises_bad_request_mentioning_response_format(fake, client):
    fake.enqueue(Reply.reject_response_format("json_schema"))

    with pytest.raises(openai.BadRequestError) as caught:
        ask(
            client,
            response_format={"type": "json_schema", "json_schema": {"name": "r", "schema": {}}},
        )

    assert "response_format" in str(caught.value)
    assert "json_schema" in caught.value.body["message"]
    assert caught.value.body["param"] == "response_format"


def test_drop_connection_raises_api_connection_error(fake, client):
    fake.enqueue(Reply.drop_connection())

    with pytest.raises(openai.APIConnectionError) as caught:
        ask(client)

    assert not isinstance(caught.value, openai.APITimeoutError)
    assert ask(client).choices[0].message.content == DEFAULT_CONTENT  # the server is still fine


# -- server behaviour
# -------------------------------------------------------------------------------


def test_supported_formats_rejects_json_schema_but_accepts_json_object(client_for):
    with FakeOpenAI(supported_formats={"json_object"}) as fake:
        client = client_for(fake)
        fake.enqueue(Reply.ok('{"ok": true}'))

        with pytest.raises(openai.BadRequestError, match="response_format"):
            ask(
                client,
                response_format={"type": "json_schema", "json_schema": {"name": "r", "schema": {}}},
            )
        assert fake.pending == 1
        completion = ask(client, response_format={"type": "json_object"})
        plain = ask(client)

    assert completion.choices[0].message.content == '{"ok": true}'
    assert plain.choices[0].message.content == DEFAULT_CONTENT
    assert fake.response_formats_seen == ["json_schema", "json_object", None]


def test_script_is_consumed_in_order_then_the_default_answers(client, fake):
    fake.enqueue(Reply.ok("first"), Reply.ok("second"))
    fake.enqueue(Reply.ok("third"))

    contents = [ask(client).choices[0].message.content for _ in range(5)]

    assert contents == ["first", "second", "third", DEFAULT_CONTENT, DEFAULT_CONTENT]


def test_default_may_be_a_function_of_the_request_body(client_for):
    def echo_model(body: dict) -> Reply:
        return Reply.ok(f"you asked {body['model']} at temperature {body.get('temperature')}")

    with FakeOpenAI(default=echo_model) as fake:
        content = ask(client_for(fake), model="judge-7b", temperature=0).choices[0].message.content

    assert content == "you asked judge-7b at temperature 0"


def test_requests_and_headers_are_recorded_in_order(fake, client):
    ask(client, temperature=0, response_format={"type": "json_object"})
    ask(client, model="other", messages=[{"role": "user", "content": "again"}])

    first, second = fake.requests
    assert first["temperature"] == 0
    assert first["messages"] == MESSAGES
    assert first["response_format"] == {"type": "json_object"}
    assert first["model"] == "gpt-4o-mini"
    assert second["messages"] == [{"role": "user", "content": "again"}]
    assert "temperature" not in second
    assert fake.response_formats_seen == ["json_object", None]
    assert fake.request_headers[0]["authorization"] == "Bearer test"
    assert len(fake.request_headers) == 2


def test_reset_clears_script_and_recorded_requests(fake, client):
    fake.enqueue(Reply.ok("consumed"), Reply.ok("dropped by reset"))
    assert ask(client).choices[0].message.content == "consumed"

    fake.reset()

    assert fake.requests == [] and fake.request_headers == [] and fake.pending == 0
    assert ask(client).choices[0].message.content == DEFAULT_CONTENT


def test_max_concurrency_refuses_requests_beyond_the_limit_with_429_and_retry_after(client_for):
    with FakeOpenAI(latency=0.3, max_concurrency=2) as fake:
        client = client_for(fake)
        results = in_parallel(4, lambda: ask(client))

    ok = [r for r in results if isinstance(r, openai.types.chat.ChatCompletion)]
    refused = [r for r in results if isinstance(r, openai.RateLimitError)]
    assert (len(ok), len(refused)) == (2, 2), results
    assert refused[0].response.headers["retry-after"] == "0.3"
    assert fake.concurrency_rejections == 2
    assert len(fake.requests) == 4


def test_peak_concurrency_counts_requests_in_flight_at_once(client_for):
    with FakeOpenAI(latency=0.3) as fake:
        client = client_for(fake)
        results = in_parallel(3, lambda: ask(client))

    assert all(isinstance(r, openai.types.chat.ChatCompletion) for r in results), results
    assert fake.peak_concurrency == 3


def test_models_endpoint_lists_the_fake_judge_model(client):
    assert [m.id for m in client.models.list()] == [MODEL_ID]


def test_unknown_path_is_a_404_json_error(fake):
    status, body = raw_request(fake, "POST", "/v1/embeddings", b"{}")

    assert status == 404
    assert set(body["error"]) >= {"message", "type", "code"}


def test_malformed_json_body_is_a_400_and_is_not_recorded(fake):
    status, body = raw_request(fake, "POST", "/v1/chat/completions", b"{not json")

    assert status == 400
    assert "JSON" in body["error"]["message"]
    assert fake.requests == []


def test_streaming_requests_are_refused_with_400(fake, client):
    with pytest.raises(openai.BadRequestError, match="[Ss]tream"):
        ask(client, stream=True)


# -- command line
# -----------------------------------------------------------------------------------


def test_cli_serves_the_content_file_and_stops_on_sigterm(tmp_path):
    reply = tmp_path / "reply.json"
    reply.write_text('{"verdict": "GROUNDED"}')
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_openai", "--port", "0", "--latency", "0.01",
         "--max-concurrency", "4", "--content-file", str(reply)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on http://127.0.0.1:") and line.endswith("/v1"), line
        base_url = line.removeprefix("listening on ")

        with openai.OpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=5) as client:
            completion = ask(client)
        assert completion.choices[0].message.content == '{"verdict": "GROUNDED"}'

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
        assert "1 requests" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
