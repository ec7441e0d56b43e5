"""The README's examples say what the demo does: the curl example's reply, the judge pages name."""

import json
import re
from pathlib import Path
from uuid import UUID

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from judges.backends.offline.judge import OFFLINE_PROFILE, OFFLINE_VERSION
from reviewapp.models import Answer
from reviewapp.judging.service import answer_judge

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
pytestmark = pytest.mark.django_db


def test_the_curl_example_posts_and_gets_what_the_readme_shows(api):
    body = re.search(
        r"curl -s -X POST http://127\.0\.0\.1:8000/api/v1/answers .*?-d '(.*?)'", README, re.S
    ).group(1)
    shown = re.search(r"# 202 (\{.*?\})\n", README).group(1)
    reply = api.post(json.loads(body))
    assert reply.status_code == 202
    data = reply.json()
    assert (
        sorted(json.loads(shown)) == sorted(data) and data["status"] == json.loads(shown)["status"]
    )
    assert str(UUID(data["id"])) == data["id"] and data["url"].endswith(
        f"/api/v1/answers/{data['id']}"
    )
    # the GET names the id the POST printed, not a fixed one
    assert "/api/v1/answers/<that id>" in README
    assert api.get(data["id"]).status_code == 200


def test_the_judge_the_readme_names_is_the_one_the_pages_show(client, settings, api):
    # the demo: nothing configured
    settings.OPENAI_BASE_URL, settings.JUDGE_BACKEND = (
        None,
        "offline",
    )
    name = f"{OFFLINE_PROFILE}@{OFFLINE_VERSION}"
    # stays true as the judge moves on
    assert f"show the judge as `{OFFLINE_PROFILE}@` and its version" in README
    reply = api.post(
        {
            "question": "Senior fare?",
            "passages": [{"text": "Riders aged 65 and older pay $1.00."}],
            "answer": "Riders aged 65 and older pay $1.50.",
        }
    )
    answer = Answer.objects.get(public_id=reply.json()["id"])
    answer_judge(answer_id=answer.pk)
    admin = get_user_model().objects.create_user("ada", password="pw-ada-123", is_staff=True)
    admin.groups.add(
        Group.objects.get_or_create(name="admin")[0],
        Group.objects.get_or_create(name="reviewer")[0],
    )
    client.force_login(admin)
    assert f'<td data-label="Judge">{name}</td>' in client.get("/queue/").content.decode()
    policy = client.get("/policy/").content.decode()
    assert f'New answers are judged by <b id="judge-in-force">{name} (offline)</b>' in policy
    assert (
        "(the JUDGE_BACKEND setting: offline)" in policy
        and "gpt-4o-mini" not in policy.split("judge-in-force")[1][:40]
    )
