"""`python -m judges`, run as a user would: a subprocess with the repo root as working directory."""

import json
import os
import subprocess
import sys

import pytest

GROUNDED_REQUEST = {
    "passages": [{"text": "The regular adult fare is $2.75 per ride. Seniors pay $1.35 per ride."}],
    "answer": "The regular adult fare is $2.75 per ride. Seniors pay $1.35 per ride.",
}
HALF_GROUNDED_REQUEST = GROUNDED_REQUEST | {
    "answer": "The regular adult fare is $2.75 per ride. A day pass costs $9.",
}


@pytest.fixture
def run(repo_root, tmp_path):
    def run_judges(*args: str, request=None, stdin=None, env=None) -> subprocess.CompletedProcess:
        if request is not None:
            path = tmp_path / "request.json"
            path.write_text(
                request if isinstance(request, str) else json.dumps(request), encoding="utf-8"
            )
            args = tuple(str(path) if arg == "REQUEST" else arg for arg in args)
        command = [sys.executable, "-m", "judges", *args]
        environment = {
            k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))
        } | (env or {})
        return subprocess.run(
            command,
            cwd=repo_root,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            env=environment,
        )

    return run_judges


def test_check_prints_the_normalized_result_and_exits_0(run):
    finished = run("check", "--input", "REQUEST", request=GROUNDED_REQUEST)
    assert finished.returncode == 0, finished.stderr
    result = json.loads(finished.stdout)
    assert result["verdict"] == "GROUNDED"
    assert result["grounding_score"] == 1.0
    assert result["claims"][0]["evidence"][0]["passage_id"] == "P1"
    assert result["judge"]["backend"] == "offline"


def test_check_reads_the_request_from_stdin(run):
    finished = run(
        "check", "--input", "-", "--backend", "offline", stdin=json.dumps(GROUNDED_REQUEST)
    )
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout)["verdict"] == "GROUNDED"


def test_check_exits_1_when_the_score_is_under_fail_under(run):
    finished = run(
        "check", "--input", "REQUEST", "--fail-under", "0.95", request=HALF_GROUNDED_REQUEST
    )
    assert finished.returncode == 1
    assert json.loads(finished.stdout)["grounding_score"] == 0.5


def test_check_exits_0_when_the_score_meets_fail_under(run):
    finished = run(
        "check", "--input", "REQUEST", "--fail-under", "0.5", request=HALF_GROUNDED_REQUEST
    )
    assert finished.returncode == 0


def test_check_exits_2_and_names_the_bad_field(run):
    request = {"passages": [{"id": "P1"}], "answer": "Seniors pay $1."}
    finished = run("check", "--input", "REQUEST", request=request)
    assert finished.returncode == 2
    assert "passages[0].text" in finished.stderr
    assert finished.stdout == ""


def test_check_exits_2_on_invalid_json_or_a_missing_file(run, tmp_path):
    assert run("check", "--input", "REQUEST", request="{not json").returncode == 2
    missing = run("check", "--input", str(tmp_path / "missing.json"))
    assert missing.returncode == 2
    assert "missing.json" in missing.stderr


def test_check_exits_3_when_the_judge_fails(run):
    finished = run("check", "--input", "REQUEST", "--backend", "openai", request=GROUNDED_REQUEST)
    assert finished.returncode == 3
    assert "openai" in finished.stderr


def test_profiles_lists_every_profile_with_its_versions(run):
    finished = run("profiles")
    assert finished.returncode == 0
    lines = finished.stdout.splitlines()
    assert "fare_policy v1 v2 v3 (backend openai; latest v3)" in lines
    assert {line.split()[0] for line in lines} == {
        "claim_audit",
        "claim_verification",
        "fare_policy",
        "sentence_map",
        "offline",
    }


def _fake_env(fake) -> dict[str, str]:
    return {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test", "JUDGE_MODEL": "fake-judge"}


def test_check_uses_the_openai_backend_when_an_endpoint_is_set(run):
    from tests.fake_openai import FakeOpenAI, Reply

    reply = {
        "grounded": False,
        "unsupported_claims": ["A day pass costs $9."],
        "reasoning": "No day pass price.",
    }
    with FakeOpenAI(default=Reply.ok(json.dumps(reply))) as fake:
        finished = run(
            "check",
            "--input",
            "REQUEST",
            "--profile",
            "fare_policy@v3",
            "--fail-under",
            "0.9",
            request=HALF_GROUNDED_REQUEST,
            env=_fake_env(fake),
        )
        assert len(fake.requests) == 1
    assert finished.returncode == 1, finished.stderr  # judged, below --fail-under
    result = json.loads(finished.stdout)
    assert result["judge"] | {"latency_ms": 0} == {
        "profile": "fare_policy",
        "prompt_version": "v3",
        "examples": None,
        "backend": "openai",
        "model": "fake-judge",
        "latency_ms": 0,
        "attempts": 1,
        "usage": {"prompt_tokens": 100, "completion_tokens": 50},
    }
    assert [c["label"] for c in result["claims"]] == ["SUPPORTED", "UNSUPPORTED"]


def test_check_exits_3_when_the_model_refuses(run):
    from tests.fake_openai import FakeOpenAI, Reply

    with FakeOpenAI(default=Reply.refusal("No.")) as fake:
        finished = run("check", "--input", "REQUEST", request=GROUNDED_REQUEST, env=_fake_env(fake))
    assert finished.returncode == 3
    assert "refused" in finished.stderr


def test_check_exits_2_for_an_unknown_profile(run):
    finished = run("check", "--input", "REQUEST", "--backend", "openai", "--profile", "nope",
                   request=GROUNDED_REQUEST, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert finished.returncode == 2
    assert "unknown judge profile 'nope'" in finished.stderr


EXAMPLES = {"tag": "ex2", "items": [
    {"claim": "A day pass costs $7.", "passage": "Day passes are not sold.", "label": "UNSUPPORTED",
     "judge_label": "PARTIALLY_SUPPORTED", "reason": "No passage prices a day pass."}]}


def test_check_carries_an_examples_file_into_the_prompt_and_the_identity(run, tmp_path):
    from tests.fake_openai import FakeOpenAI, Reply

    (tmp_path / "set.json").write_text(json.dumps(EXAMPLES), encoding="utf-8")
    reply = {
        "grounded": False,
        "unsupported_claims": ["A day pass costs $9."],
        "reasoning": "No day pass price.",
    }
    with FakeOpenAI(default=Reply.ok(json.dumps(reply))) as fake:
        finished = run(
            "check",
            "--input",
            "REQUEST",
            "--profile",
            "fare_policy@v3",
            "--examples",
            str(tmp_path / "set.json"),
            request=HALF_GROUNDED_REQUEST,
            env=_fake_env(fake),
        )
        sent = fake.requests[0]["messages"][1]["content"]
    assert finished.returncode == 0, finished.stderr
    judge_info = json.loads(finished.stdout)["judge"]
    assert (judge_info["prompt_version"], judge_info["examples"]) == ("v3+ex2", "ex2")
    assert "worked example 1>>>\nClaim: A day pass costs $7.\n" in sent


def test_a_bad_examples_file_is_bad_input_naming_the_field(run, tmp_path):
    (tmp_path / "set.json").write_text(
        json.dumps({"tag": "ex2", "items": [{"claim": "c", "passage": "p", "label": "MAYBE"}]})
    )
    finished = run(
        "check",
        "--input",
        "REQUEST",
        "--backend",
        "openai",
        "--examples",
        str(tmp_path / "set.json"),
        request=GROUNDED_REQUEST,
    )
    assert finished.returncode == 2
    assert "items[0].label" in finished.stderr and "set.json" in finished.stderr
