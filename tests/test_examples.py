"""Worked examples from overturned claims: the admin page that freezes them into a set, the policy
that selects a set, and the judge runs that carry it (over real HTTP to the fake LLM)."""

import json

import pytest

from reviewapp.models import AuditEvent, Claim, ExampleSet, JudgeRun, Policy, WorkedExample
from reviewapp.labels.examples import example_set_create, passage_excerpt
from reviewapp.judging.service import answer_judge
from tests import factories as make
from tests.fake_openai import Reply
from tests.judges.factories import GOOD, GOOD_ANSWER, GOOD_PASSAGE

pytestmark = pytest.mark.django_db

@pytest.fixture
def ada(client):
    user = make.admin()
    client.force_login(user)
    return user


@pytest.fixture
def overturned():
    """Three overturned claims (one with located evidence, one with a hostile text) and a confirmed
    one."""
    rita = make.user("rita", "reviewer")
    first = make.answer(profile="claim_audit", version="v1")
    with_quote = make.claim(
        first,
        "UNSUPPORTED",
        "SUPPORTED",
        reviewer=rita,
        span=(0, 18),
        quote=("reduced fare of $1.00 per ride", "exact"),
        note="P1 gives the senior fare.",
    )
    confirmed = make.claim(first, "CONTRADICTED", "CONTRADICTED", reviewer=rita, span=(19, 47))
    second = make.answer(
        text="Seniors ride for $1.00 <script>alert(1)</script>.",
        profile="fare_policy",
        version="v3",
    )
    hostile = make.claim(second, "SUPPORTED", "UNSUPPORTED", reviewer=rita, span=(0, 48))
    third = make.answer(profile="claim_audit", version="v1")
    plain = make.claim(
        third, "CONTRADICTED", "PARTIALLY_SUPPORTED", reviewer=rita, span=(19, 47), note=""
    )
    return {"with_quote": with_quote, "confirmed": confirmed, "hostile": hostile, "plain": plain}


def test_the_page_lists_overturned_claims_only_filterable_by_profile(client, ada, overturned):
    page = client.get("/examples/").content.decode()
    for key in ("with_quote", "hostile", "plain"):
        assert f'name="claim" value="{overturned[key].pk}"' in page
    assert f'value="{overturned["confirmed"].pk}"' not in page
    assert (
        "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    )

    page = client.get("/examples/", {"profile": "fare_policy"}).content.decode()
    assert f'value="{overturned["hostile"].pk}"' in page
    assert (
        f'value="{overturned["with_quote"].pk}"' not in page
        and "<b>1</b> overturned claim judged by fare_policy" in page
    )


def test_picking_two_claims_creates_a_set_with_exactly_those_frozen(client, ada, overturned):
    picked = [overturned["plain"], overturned["with_quote"]]
    response = client.post(
        "/examples/",
        {
            "profile": "claim_audit",
            "note": "senior fares",
            "claim": [c.pk for c in picked],
            f"reason-{picked[0].pk}": "  The pass price differs only in part.  ",
            f"reason-{picked[1].pk}": "",
            f"reason-{overturned['hostile'].pk}": "not picked, ignored",
        },
    )
    created = ExampleSet.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/examples/{created.pk}/"
    assert (created.profile, created.base_version, created.sequence, str(created)) == (
        "claim_audit", "v1", 1, "claim_audit@v1+ex1")
    assert (created.created_by, created.note) == (ada, "senior fares")
    rows = list(
        created.examples.values_list(
            "source_claim",
            "claim_text",
            "judge_label",
            "human_label",
            "reason",
            "passage_pid",
            "passage_excerpt",
        )
    )
    assert rows == [
        (
            picked[0].pk,
            "A monthly pass costs $75.00.",
            "CONTRADICTED",
            "PARTIALLY_SUPPORTED",
            "The pass price differs only in part.",
            "P1",
            make.PASSAGE,
        ),
        (
            picked[1].pk,
            "Seniors pay $1.00.",
            "UNSUPPORTED",
            "SUPPORTED",
            "P1 gives the senior fare.",
            "P1",
            make.PASSAGE,
        ),
    ]
    assert AuditEvent.objects.get(action="example_set.created").after == {
        "set": "claim_audit@v1+ex1", "claims": [c.pk for c in picked]}

    # The source claims change afterwards (an undo, an edited note, a re-decision): the set does
    # not.
    Claim.objects.filter(pk=picked[1].pk).update(
        text="changed", human_label="", note="rewritten", label="SUPPORTED"
    )
    Claim.objects.filter(pk=picked[0].pk).delete()
    rows_after = list(
        created.examples.values_list("claim_text", "judge_label", "human_label", "reason")
    )
    assert rows_after == [(r[1], r[2], r[3], r[4]) for r in rows]
    assert created.examples.first().source_claim is None

    page = client.get(f"/examples/{created.pk}/").content.decode()
    assert (
        "claim_audit@v1+ex1" in page
        and "Seniors pay $1.00." in page
        and "Its source claim no longer exists" in page
    )


def test_a_second_set_for_the_profile_is_its_next_version(ada, overturned):
    one = example_set_create(user=ada, profile="fare_policy", claim_ids=[overturned["hostile"].pk])
    two = example_set_create(user=ada, profile="fare_policy@v2", claim_ids=[overturned["plain"].pk])
    other = example_set_create(user=ada, profile="claim_audit", claim_ids=[overturned["plain"].pk])
    assert [str(s) for s in (one, two, other)] == [
        "fare_policy@v3+ex1",
        "fare_policy@v2+ex2",
        "claim_audit@v1+ex1",
    ]


@pytest.mark.parametrize("pick,message", [
    ([], "Pick at least one overturned claim."),
    (["confirmed"], "Not overturned claims"),
    (["plain", "nonsense"], "Unknown claim ids."),
])
def test_a_bad_pick_is_refused_with_a_message_and_keeps_the_ticks(
    client, ada, overturned, pick, message
):
    ids = [overturned[key].pk if key in overturned else key for key in pick]
    response = client.post("/examples/", {"profile": "claim_audit", "claim": ids, "note": ""})
    assert response.status_code == 400 and message in response.content.decode()
    assert not ExampleSet.objects.exists()
    if "plain" in pick:
        assert (
            f'value="{overturned["plain"].pk}" id="claim-{overturned["plain"].pk}" checked'
            in response.content.decode()
        )


def test_more_examples_than_a_prompt_carries_are_refused(ada, overturned):
    from reviewapp.labels.examples import ExampleSetError

    with pytest.raises(ExampleSetError, match="at most 8"):
        example_set_create(user=ada, profile="claim_audit", claim_ids=list(range(1, 10)))
    with pytest.raises(ExampleSetError, match="unknown judge profile"):
        example_set_create(user=ada, profile="nope", claim_ids=[overturned["plain"].pk])
    with pytest.raises(
        ExampleSetError, match=f"shorten the one for claim {overturned['plain'].pk}"
    ):
        example_set_create(user=ada, profile="claim_audit", claim_ids=[overturned["plain"].pk],
                           reasons={overturned["plain"].pk: "x" * 601})
    assert not ExampleSet.objects.exists()


def test_the_set_page_shows_user_text_escaped(client, ada, overturned):
    example_set = example_set_create(
        user=ada,
        profile="fare_policy",
        claim_ids=[overturned["hostile"].pk],
        reasons={overturned["hostile"].pk: "<b>bold</b> claim"},
    )
    page = client.get(f"/examples/{example_set.pk}/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "&lt;b&gt;bold&lt;/b&gt; claim" in page


def test_without_located_evidence_the_excerpt_comes_from_the_passage_sharing_most_words(overturned):
    row = make.answer(text="A monthly pass costs $75.00 at stations.")
    row.passages.create(
        pid="P2",
        position=1,
        text="Fares change often. " * 20
        + "A monthly pass costs $92.00. "
        + "Ask staff for help. " * 20,
    )
    claim = make.claim(
        row, "CONTRADICTED", "UNSUPPORTED", span=(0, 40), reviewer=make.user("ro", "reviewer")
    )
    pid, excerpt = passage_excerpt(claim)
    assert pid == "P2" and "A monthly pass costs $92.00." in excerpt
    assert excerpt.startswith("…") and excerpt.endswith("…") and len(excerpt) < 400


def test_non_admins_cannot_see_or_create_sets(client, overturned):
    example_set = example_set_create(
        user=make.admin("root"), profile="claim_audit", claim_ids=[overturned["plain"].pk]
    )
    for url in ("/examples/", f"/examples/{example_set.pk}/"):
        assert client.get(url).status_code == 302  # strangers sign in first
    client.force_login(make.user("rex", "reviewer"))
    for url in ("/examples/", f"/examples/{example_set.pk}/"):
        assert client.get(url).status_code == 403
    assert (
        client.post(
            "/examples/", {"profile": "claim_audit", "claim": [overturned["with_quote"].pk]}
        ).status_code
        == 403
    )
    assert ExampleSet.objects.count() == 1 and WorkedExample.objects.count() == 1


# --- the policy selects a set -------------------------------------------------------------------


def test_the_policy_refuses_a_set_its_judge_would_not_carry(client, ada, overturned, settings):
    settings.OPENAI_BASE_URL = (
        "http://127.0.0.1:9/v1"  # an openai judge needs an endpoint (never called here)
    )
    example_set = example_set_create(
        user=ada, profile="fare_policy", claim_ids=[overturned["hostile"].pk]
    )
    current = Policy.current()
    cases = [
        (
            {"judge_backend": "openai", "judge_profile": "claim_audit"},
            "was made for fare_policy@v3; the judge profile is claim_audit@v1",
        ),
        (
            {"judge_backend": "openai", "judge_profile": "fare_policy@v2"},
            "the judge profile is fare_policy@v2",
        ),
        (
            {"judge_backend": "offline", "judge_profile": "fare_policy"},
            "The offline judge reads no prompt",
        ),
    ]
    for changes, message in cases:
        response = client.post(
            "/policy/", make.policy_form(current, example_set=example_set.pk, **changes)
        )
        assert response.status_code == 400 and message in response.content.decode()
    assert Policy.objects.count() == 1

    response = client.post(
        "/policy/",
        make.policy_form(
            current,
            example_set=example_set.pk,
            judge_backend="openai",
            judge_profile="fare_policy",
            note="calibrate on overturns",
        ),
    )
    assert response.status_code == 302
    assert Policy.current().example_set == example_set
    event = AuditEvent.objects.filter(action="policy.created").get()
    assert (event.before["example_set"], event.after["example_set"]) == (None, "fare_policy@v3+ex1")
    page = client.get("/policy/").content.decode()
    assert "example_set</b>: — → fare_policy@v3+ex1" in page
    assert f'Worked examples: <a href="/examples/{example_set.pk}/">fare_policy@v3+ex1</a>' in page
    assert "<b>In force</b>" in client.get(f"/examples/{example_set.pk}/").content.decode()


@pytest.fixture
def openai_settings(settings, fake_llm):
    settings.OPENAI_BASE_URL = fake_llm.base_url
    settings.OPENAI_API_KEY = "test-key"
    settings.JUDGE_MODEL = "fake-judge"
    settings.JUDGE_RETRY_BUDGET_SECONDS = 10
    return fake_llm


def test_a_run_under_a_policy_with_a_set_carries_it_and_names_it(ada, overturned, openai_settings):
    fake = openai_settings
    example_set = example_set_create(
        user=ada,
        profile="claim_verification",
        claim_ids=[overturned["hostile"].pk, overturned["with_quote"].pk],
    )
    fake.enqueue(Reply.ok(GOOD), Reply.ok(GOOD))
    make.openai_policy()
    plain = answer_judge(answer_id=make.ingested(GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}]).pk)
    make.openai_policy(example_set=example_set)
    carried = answer_judge(
        answer_id=make.ingested(GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}]).pk
    )

    assert (plain.status, carried.status) == ("succeeded", "succeeded")
    assert (plain.example_set, plain.prompt_version, plain.config_key) == (
        None, "v1", "claim_verification@v1/openai/fake-judge")
    assert (carried.example_set, carried.prompt_version, carried.config_key) == (
        example_set, "v1+ex1", "claim_verification@v1+ex1/openai/fake-judge")
    without, with_examples = (request["messages"][1]["content"] for request in fake.requests)
    assert "worked example" not in without
    # Each example sits in a data block of the request the LLM received, its text escaped nowhere:
    # it is data.
    assert (
        "worked example 1>>>\nClaim: Seniors ride for $1.00 <script>alert(1)</script>\n"
        in with_examples
    )
    assert "worked example 2>>>\nClaim: Seniors pay $1.00.\nPassage excerpt: " in with_examples
    assert "Reviewers' reason: P1 gives the senior fare." in with_examples
    assert "Worked examples from human reviewers" in fake.requests[1]["messages"][0]["content"]


def test_a_client_asking_for_another_profile_gets_its_plain_prompt(
    ada, overturned, openai_settings
):
    fake = openai_settings
    example_set = example_set_create(
        user=ada, profile="claim_verification", claim_ids=[overturned["plain"].pk]
    )
    make.openai_policy(example_set=example_set)
    reply = {
        "grounded": False,
        "unsupported_claims": ["Monthly passes cost $20."],
        "reasoning": "no price",
    }
    fake.enqueue(Reply.ok(json.dumps(reply)))
    run = answer_judge(
        answer_id=make.ingested(
            GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}], profile="fare_policy"
        ).pk
    )
    assert (run.status, run.profile, run.prompt_version, run.example_set) == (
        "succeeded",
        "fare_policy",
        "v3",
        None,
    )
    assert "worked example" not in fake.requests[0]["messages"][1]["content"]


def test_evaluate_measures_a_named_set_or_the_plain_prompt(
    ada, overturned, openai_settings, capsys
):
    from django.core.management import CommandError, call_command

    fake = openai_settings
    example_set = example_set_create(
        user=ada, profile="claim_verification", claim_ids=[overturned["plain"].pk]
    )
    reply = json.dumps(
        {
            "claims": [
                {
                    "claim_id": "c1",
                    "claim_text": "Seniors pay $1.00.",
                    "verification_status": "SUPPORTED",
                    "source_passage_id": "P1",
                    "source_text": "reduced fare of $1.00 per ride",
                    "explanation": "P1.",
                },
                {
                    "claim_id": "c2",
                    "claim_text": "A monthly pass costs $75.00.",
                    "verification_status": "UNSUPPORTED",
                    "source_passage_id": None,
                    "source_text": None,
                    "explanation": "No price.",
                },
            ],
            "grounding_score": 0.5,
            "total_claims": 2,
            "supported_claims": 1,
            "unsupported_claims": 1,
            "contradicted_claims": 0,
        }
    )
    fake.enqueue(*[Reply.ok(reply)] * 6)
    for examples in (
        "claim_verification@v1+ex1",
        "none",
    ):  # overturned's three answers are adjudicated
        call_command(
            "evaluate",
            "--backend",
            "openai",
            "--profile",
            "claim_verification",
            "--examples",
            examples,
        )
    assert "claim_verification@v1+ex1" in capsys.readouterr().out

    side_runs = JudgeRun.objects.filter(profile="claim_verification")
    assert sorted(side_runs.values_list("prompt_version", "example_set")) == [("v1", None)] * 3 + [
        ("v1+ex1", example_set.pk)] * 3
    carried = [r for r in fake.requests if "worked example 1>>>" in r["messages"][1]["content"]]
    assert len(carried) == 3 and len(fake.requests) == 6
    with pytest.raises(CommandError, match="no example set named 'claim_verification@v1\\+ex9'"):
        call_command("evaluate", "--backend", "openai", "--examples", "claim_verification@v1+ex9")


def test_a_rejudge_job_can_carry_a_set_beside_the_answers_own_run(
    client, ada, overturned, openai_settings
):
    from reviewapp.models import Job
    from reviewapp.judging import jobs as jobs_service
    fake = openai_settings
    example_set = example_set_create(
        user=ada, profile="claim_verification", claim_ids=[overturned["plain"].pk]
    )
    answer = make.ingested(GOOD_ANSWER, passages=[{"text": GOOD_PASSAGE}])
    answer_judge(answer_id=answer.pk)  # the answer's own run, by the offline judge
    form = {
        "limit": 1,
        "profile": "claim_verification",
        "backend": "offline",
        "model": "",
        "example_set": example_set.pk,
    }
    refused = client.post("/policy/rejudge", form)
    assert not Job.objects.exists()
    assert (
        refused.status_code == 400
        and "The offline judge reads no prompt" in refused.content.decode()
    )

    client.post("/policy/rejudge", form | {"backend": "openai"})
    job = Job.objects.get()
    assert (job.params["profile"], job.params["example_set"]) == (
        "claim_verification@v1",
        example_set.pk,
    )
    fake.enqueue(Reply.ok(GOOD))
    jobs_service.answer_rejudge(job_id=job.pk, answer_id=answer.pk)
    side = JudgeRun.objects.get(job=job)
    assert (side.status, side.prompt_version, side.example_set) == (
        "succeeded",
        "v1+ex1",
        example_set,
    )
    assert JudgeRun.objects.get(answer=answer, job=None).example_set is None
    assert "worked example 1>>>" in fake.requests[0]["messages"][1]["content"]


def test_a_set_downloads_as_the_json_the_judges_cli_reads(client, ada, overturned):
    from judges.examples import WorkedExamples

    example_set = example_set_create(
        user=ada, profile="claim_audit", claim_ids=[overturned["with_quote"].pk]
    )
    response = client.get(f"/examples/{example_set.pk}/set.json")
    assert response["Content-Disposition"] == 'attachment; filename="claim_audit@v1+ex1.json"'
    loaded = WorkedExamples.model_validate(json.loads(response.content))
    assert loaded.tag == "ex1" and [(i.claim, i.label, i.judge_label) for i in loaded.items] == [
        ("Seniors pay $1.00.", "SUPPORTED", "UNSUPPORTED")]
    client.force_login(make.user("rex", "reviewer"))
    assert client.get(f"/examples/{example_set.pk}/set.json").status_code == 403
