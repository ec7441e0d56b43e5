"""The MCP server (issue 33 item 3) through the SDK's own client, over both transports: streamable
HTTP against the live server at /mcp, and stdio against `manage.py mcp` as a subprocess, in process
(on the test database) and forwarding to the live server (CLAIMDESK_URL). Answers are judged by the
session's real celery worker; the offline judge needs no LLM."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from reviewapp.mcp.bridge import connect
from reviewapp.models import Answer, ApiClient
from tests import factories as make
from tests.conftest import _test_database_url, run_coroutine

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"check_answer", "get_answer", "find_answers", "queue_status", "flagged_claims"}
# The README's example (its "MCP" section): one passage, one claim it supports and one it
# contradicts.
README = (ROOT / "README.md").read_text()
README_EXAMPLE = json.loads(re.search(r"`check_answer` with\n`(\{.*?\})`:", README, re.S).group(1))

live = [pytest.mark.django_db(transaction=True)]
pytestmark = live


@asynccontextmanager
async def over_http(url: str, token: str):
    async with connect(f"{url}/mcp", token) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@asynccontextmanager
async def over_stdio(**env: str):
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "manage.py"), "mcp"],
        cwd=str(ROOT),
        env=os.environ | env,
    )
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def in_process_env(token: str) -> dict[str, str]:
    return {"CLAIMDESK_TOKEN": token, "DATABASE_URL": _test_database_url(), "CLAIMDESK_URL": ""}


def _result(call) -> dict:
    assert not call.isError, call.content
    return call.structuredContent


def _check_example(session_factory):
    async def go():
        async with session_factory() as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            result = _result(
                await session.call_tool("check_answer", README_EXAMPLE | {"wait_seconds": 20})
            )
            again = _result(await session.call_tool("get_answer", {"answer_id": result["id"]}))
            return tools, result, again
    return run_coroutine(go())


def _assert_judged_example(tools, result, again):
    assert set(tools) == TOOLS
    schema = tools["check_answer"].inputSchema
    assert {"answer", "passages"} <= set(schema["required"]) and "wait_seconds" in schema[
        "properties"
    ]
    assert result["status"] == "judged" and result["verdict"] in ("MOSTLY_GROUNDED", "UNGROUNDED")
    assert [c["label"] for c in result["claims"]] == ["SUPPORTED", "CONTRADICTED"]
    assert (
        result["claims"][0]["evidence"][0]["quote"]
        == "Riders aged 65 and older pay $1.00 per ride."
    )
    assert result["safe_answer"] == "Riders aged 65 and older pay $1.00 per ride."
    assert again["id"] == result["id"] and again["verdict"] == result["verdict"]


@pytest.mark.worker
def test_over_http_the_sdk_lists_the_tools_and_check_answer_returns_the_verdict(
    live_server, api_token, celery_worker
):
    _assert_judged_example(*_check_example(lambda: over_http(live_server.url, api_token)))
    assert Answer.objects.get().client.name == "fares-bot"


@pytest.mark.worker
def test_over_stdio_in_process_the_same_tools_judge_the_same_example(api_token, celery_worker):
    _assert_judged_example(*_check_example(lambda: over_stdio(**in_process_env(api_token))))


@pytest.mark.worker
def test_over_stdio_forwarding_to_a_remote_claimdesk_the_same_tools_answer(
    live_server, api_token, celery_worker
):
    env = {"CLAIMDESK_TOKEN": api_token, "CLAIMDESK_URL": live_server.url}
    _assert_judged_example(*_check_example(lambda: over_stdio(**env)))


def _calls(session_factory, *calls):
    async def go():
        async with session_factory() as session:
            return [await session.call_tool(name, arguments) for name, arguments in calls]
    return run_coroutine(go())


BAD_ARGUMENTS = [
    ("check_answer", README_EXAMPLE | {"passages": [{"title": "no text"}]}, "passages.0.text"),
    (
        "check_answer",
        README_EXAMPLE | {"passages": [{"kind": "tool", "output": "x"}]},
        "passages.0.tool_name",
    ),
    ("check_answer", README_EXAMPLE | {"answer": " "}, "answer"),
    ("check_answer", README_EXAMPLE | {"profile": "no_such_profile"}, "profile"),
    ("check_answer", README_EXAMPLE | {"wait_seconds": 99}, "wait_seconds"),
    ("get_answer", {"answer_id": "42"}, "answer_id"),
    ("find_answers", {"status": "done"}, "status"),
    ("find_answers", {"cursor": "bogus"}, "cursor"),
    ("flagged_claims", {"limit": 0}, "limit"),
]


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_bad_argument_is_an_mcp_error_naming_it(live_server, api_token, transport):
    factory = ((lambda: over_http(live_server.url, api_token)) if transport == "http"
               else (lambda: over_stdio(**in_process_env(api_token))))
    results = _calls(factory, *[(name, arguments) for name, arguments, _ in BAD_ARGUMENTS])
    for (name, _, field), result in zip(BAD_ARGUMENTS, results):
        assert result.isError, (name, field)
        assert result.content[0].text.startswith(f"invalid argument {field}: "), (
            field,
            result.content[0].text,
        )
    assert not Answer.objects.exists()


def test_the_http_endpoint_refuses_a_missing_or_wrong_token_and_all_but_post(
    live_server, api_token
):
    import httpx

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer cdk_wrong"}):
        reply = httpx.post(f"{live_server.url}/mcp", json=body, headers=headers)
        assert reply.status_code == 401 and reply.headers["WWW-Authenticate"].startswith("Bearer")
    # Stateless: no server-to-client stream to GET, no session to DELETE.
    for method in ("GET", "DELETE"):
        reply = httpx.request(
            method, f"{live_server.url}/mcp", headers={"Authorization": f"Bearer {api_token}"}
        )
        assert reply.status_code == 405 and reply.headers["Allow"] == "POST"


def test_stdio_refuses_to_start_without_a_valid_token(api_token):
    import subprocess

    for token in ("", "cdk_wrong"):
        done = subprocess.run(
            [sys.executable, "manage.py", "mcp"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=os.environ | in_process_env(token),
            timeout=60,
        )
        assert done.returncode != 0 and "CLAIMDESK_TOKEN" in done.stderr


def test_queue_status_and_flagged_claims_show_only_this_clients_open_work(live_server, api_token):
    mine = ApiClient.objects.get(name="fares-bot")
    other = ApiClient.objects.create(name="other", token_hash="x" * 64)
    waiting = make.in_review(client=mine)  # c2 CONTRADICTED: P2 says $92.00, not $75.00
    make.in_review(client=other)
    status, flagged, found = (
        _result(call)
        for call in _calls(
            lambda: over_http(live_server.url, api_token),
            ("queue_status", {}),
            ("flagged_claims", {"limit": 5}),
            ("find_answers", {"status": "judged"}),
        )
    )

    assert status["review"]["in_review"] == 1 and status["judging"]["judged"] == 1
    assert status["oldest_waiting_since"] == waiting.created_at.isoformat()
    assert [c["label"] for c in flagged["claims"]] == ["CONTRADICTED"]
    claim = flagged["claims"][0]
    assert claim["answer_id"] == str(waiting.public_id) and "$75.00" in claim["claim"]
    assert claim["evidence"] and claim["evidence"][0]["passage_id"] == "P2"
    assert [a["id"] for a in found["answers"]] == [str(waiting.public_id)]
    json.dumps(flagged)  # plain JSON, as any MCP client reads it


def test_check_answer_past_the_tokens_cap_of_waits_answers_at_once_without_a_verdict(
    live_server, api_token, settings
):
    # No worker runs here: a wait would last its full 20 s. With no wait allowed for the token
    # (issue 28's cap, shared with the API's ?wait), the answer comes back queued at once.
    settings.API_WAITS_PER_TOKEN = 0
    started = time.monotonic()
    [result] = _calls(lambda: over_http(live_server.url, api_token),
                      ("check_answer", README_EXAMPLE | {"wait_seconds": 20}))
    assert not result.isError, result.content
    assert _result(result)["status"] == "queued"
    assert time.monotonic() - started < 10
