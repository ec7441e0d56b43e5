"""Every URL the app serves, for every role: strangers are sent to sign in (the API answers 401),
signed-in users without a role get 403, reviewers get 403 on admin pages, admins get in. A POST
without the CSRF token gets 403.

The URL patterns are read from Django's resolver, so a view added without a line in ACCESS below
fails test_every_url_pattern_has_an_access_rule.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from reviewapp.models import (
    Comparison,
    ComparisonItem,
    ExampleSet,
    Job,
    Policy,
    ReviewerPause,
    WebhookDelivery,
    WebhookEndpoint,
    WorkedExample,
)
from reviewapp.api.clients import api_client_create
from tests import factories as make
from tests.factories import fare_payload

pytestmark = pytest.mark.django_db

PUBLIC, REVIEWER, LEAD, ADMIN = "public", "reviewer", "lead", "admin"

# url name -> (who may, methods, htmx partial variants as extra headers)
ACCESS = {
    "healthz": (PUBLIC, ["get"]),
    # for monitors: hostnames and counts only (503 while no worker reports)
    "health": (
        PUBLIC,
        ["get"],
    ),
    "metrics": ("METRICS_TOKEN", ["get"]),  # a bearer token, not a session: tests/test_metrics.py
    "mcp": ("API_TOKEN", ["post"]),  # the API's bearer token, not a session: tests/test_mcp.py
    "login": (PUBLIC, ["get"]),
    "logout": (PUBLIC, ["post"]),
    "sso_start": ("SSO", ["get"]),  # 404 unless single sign-on is configured: tests/test_sso.py
    "sso_callback": ("SSO", ["get"]),
    "sso_denied": ("SSO", ["get"]),  # a 403 page
    "home": (PUBLIC, ["get"]),  # a redirect to the queue, which checks
    "answer_detail": (PUBLIC, ["get"]),  # a redirect to the review page, which checks
    "queue": (REVIEWER, ["get"]),
    "queue_next": (REVIEWER, ["post"]),
    "answers": (REVIEWER, ["get"]),
    "review": (REVIEWER, ["get"]),
    "run_compare": (REVIEWER, ["get"]),
    "decide": (REVIEWER, ["post"]),
    "undo": (REVIEWER, ["post"]),
    "note_draft": (REVIEWER, ["post"]),
    "note_edit": (REVIEWER, ["post"]),
    "evidence_mark": (REVIEWER, ["post"]),
    "reopen": (LEAD, ["post"]),  # leads; an admin gets in and is told only a lead reopens (409)
    "add_claim": (REVIEWER, ["post"]),
    "finish": (REVIEWER, ["post"]),
    "lease_take": (REVIEWER, ["post"]),
    "skip": (REVIEWER, ["post"]),
    "lease_renew": (REVIEWER, ["post"]),
    "lease_release": (REVIEWER, ["post"]),
    "answer_comments": (REVIEWER, ["get"]),
    "comment_add": (REVIEWER, ["post"]),  # leads and admins are reviewers too
    "adjudication": (LEAD, ["get"]),  # leads and admins
    "reviewers": (LEAD, ["get"]),
    "assign": (LEAD, ["post"]),
    "second_look": (LEAD, ["get"]),
    "reviewer_resume": (LEAD, ["post"]),
    # leads and admins; a refusal (not adjudicated) is a message, not a 4xx
    "gold_mark": (
        LEAD,
        ["post"],
    ),
    "gold_export": (ADMIN, ["get"]),
    "policy": (ADMIN, ["get", "post"]),
    "policy_preview": (ADMIN, ["post"]),
    "policy_rollback": (ADMIN, ["post"]),
    "policy_reroute": (ADMIN, ["post"]),
    "policy_guidelines": (ADMIN, ["post"]),
    "policy_rejudge": (ADMIN, ["post"]),
    "job_progress": (ADMIN, ["get"]),
    "exports": (ADMIN, ["get"]),
    "export_download": (ADMIN, ["get"]),
    "export_manifest": (ADMIN, ["get"]),
    "calibration": (LEAD, ["get"]),  # leads settle disagreements: they read the agreement figures
    "examples": (ADMIN, ["get", "post"]),
    "example_set": (ADMIN, ["get"]),
    "example_set_json": (ADMIN, ["get"]),
    "webhooks": (ADMIN, ["get"]),
    "webhook_retry": (ADMIN, ["post"]),
    "comparisons": (ADMIN, ["get", "post"]),
    "compare": (REVIEWER, ["get"]),
    "compare_choose": (REVIEWER, ["post"]),
    "comparison_results": (ADMIN, ["get"]),
    "comparison_export": (ADMIN, ["get"]),
}
# Included URLconfs with their own access rules, tested below on their own terms.
INCLUDED = ("api/v1/", "admin/")
# The htmx partials: the same views asked for a fragment.
PARTIALS = {
    "queue": {"HX-Request": "true", "HX-Target": "queue-table"},
    "answers": {"HX-Request": "true"},
    "job_progress": {"HX-Request": "true"},
    "review": {"HX-Request": "true"},
}


def _patterns(resolvers=None, prefix=""):
    for entry in resolvers if resolvers is not None else get_resolver().url_patterns:
        if isinstance(entry, URLResolver):
            route = prefix + str(entry.pattern)
            if route in INCLUDED:
                yield route, None
            else:
                yield from _patterns(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.name


def test_every_url_pattern_has_an_access_rule():
    found = list(_patterns())
    names = {name for _, name in found if name}
    unnamed = [route for route, name in found if name is None and route not in INCLUDED]
    assert not unnamed, f"name these URL patterns so their access can be listed: {unnamed}"
    assert names == set(
        ACCESS
    ), f"missing rules: {names - set(ACCESS)}; stale rules: {set(ACCESS) - names}"
    assert {route for route, name in found if name is None} == set(INCLUDED)


@pytest.fixture
def world():
    """One of everything a URL can point at, and a user per role."""
    answer = make.in_review()
    admin = make.user("ada", "admin")
    job = Job.objects.create(kind=Job.Kind.REROUTE, created_by=admin, total=1)
    example_set = ExampleSet.objects.create(
        profile="claim_audit", base_version="v1", sequence=1, created_by=admin
    )
    WorkedExample.objects.create(
        example_set=example_set,
        position=0,
        claim_text="A pass costs $75.00.",
        passage_excerpt="A 30-day pass costs $92.00.",
        judge_label="SUPPORTED",
        human_label="CONTRADICTED",
        reason="the pass costs $92.00",
    )
    endpoint = WebhookEndpoint.objects.create(client=api_client_create(name="hooked")[0],
                                              url="https://rag.example.org/hook", secret="whsec_x")
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint,
        answer=answer,
        event="answer.judged",
        event_id="evt_access",
        payload={},
        status="failed",
    )
    comparison = Comparison.objects.create(
        kind="pipelines", name="c", side_a="A", side_b="B", created_by=admin
    )
    item = ComparisonItem.objects.create(
        comparison=comparison, position=0, answer_a=answer, answer_b=answer, a_on_left=True
    )
    pause = ReviewerPause.objects.create(
        reviewer=admin, accuracy=0.5, claims=20, threshold=0.8, since=timezone.now()
    )
    return {
        "args": {
            "answer_id": answer.pk,
            "claim_id": make.flagged(answer).pk,
            "version": Policy.current().version,
            "job_id": job.pk,
            "set_id": example_set.pk,
            "delivery_id": delivery.pk,
            "comparison_id": comparison.pk,
            "item_id": item.pk,
            "run_id": answer.judged_by_id,
            "pause_id": pause.pk,
        },
        "users": {
            "visitor": make.user("vic"),
            REVIEWER: make.user("rita", "reviewer"),
            LEAD: make.user("lee", "lead"),
            ADMIN: admin,
        },
    }


def _url(name, args):
    from django.urls import reverse
    from django.urls.exceptions import NoReverseMatch

    for candidate in (
        [],
        ["answer_id"],
        ["answer_id", "claim_id"],
        ["version"],
        ["job_id"],
        ["set_id"],
        ["delivery_id"],
        ["comparison_id"],
        ["comparison_id", "item_id"],
        ["answer_id", "run_id"],
        ["pause_id"],
    ):
        try:
            return reverse(name, kwargs={k: args[k] for k in candidate})
        except NoReverseMatch:
            continue
    raise AssertionError(f"cannot build a URL for {name}")


def _cases(required):
    for name, (who, methods) in ACCESS.items():
        if who == required:
            for method in methods:
                yield name, method, {}
                if method == "get" and name in PARTIALS:
                    yield name, method, PARTIALS[name]


PROTECTED = list(_cases(REVIEWER)) + list(_cases(LEAD)) + list(_cases(ADMIN))
REVIEWER_ONLY = list(_cases(REVIEWER))
LEAD_ONLY = list(_cases(LEAD))
ADMIN_ONLY = list(_cases(ADMIN))


def _id(case):
    name, method, headers = case
    return f"{method.upper()} {name}{' (htmx)' if headers else ''}"


def _call(client, world, name, method, headers):
    return getattr(client, method)(_url(name, world["args"]), headers=headers)


@pytest.mark.parametrize("case", PROTECTED, ids=_id)
def test_strangers_are_sent_to_sign_in(client, world, case):
    response = _call(client, world, *case)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("case", PROTECTED, ids=_id)
def test_signed_in_users_without_a_role_get_403(client, world, case):
    client.force_login(world["users"]["visitor"])
    assert _call(client, world, *case).status_code == 403


@pytest.mark.parametrize("case", LEAD_ONLY + ADMIN_ONLY, ids=_id)
def test_reviewers_get_403_on_admin_pages(client, world, case):
    client.force_login(world["users"][REVIEWER])
    assert _call(client, world, *case).status_code == 403


def _allowed(response, method):
    if method == "get":
        return response.status_code in (200, 286)  # 286: htmx "stop polling", a rendered partial
    # A POST may redirect (plain form), answer 204 (htmx, beacons), 400 with a form's errors or
    # 409 with why it cannot be done now; never 403 or the login page.
    return response.status_code in (
        200,
        204,
        302,
        400,
        409,
    ) and "/accounts/login/" not in response.get("Location", "")


@pytest.mark.parametrize("case", REVIEWER_ONLY, ids=_id)
def test_reviewers_get_in(client, world, case):
    client.force_login(world["users"][REVIEWER])
    response = _call(client, world, *case)
    assert _allowed(response, case[1]), (response.status_code, response.get("Location"))


@pytest.mark.parametrize("case", REVIEWER_ONLY + LEAD_ONLY, ids=_id)
def test_leads_get_in_where_reviewers_do_and_on_lead_pages(client, world, case):
    client.force_login(world["users"][LEAD])
    response = _call(client, world, *case)
    assert _allowed(response, case[1]), (response.status_code, response.get("Location"))


@pytest.mark.parametrize("case", ADMIN_ONLY, ids=_id)
def test_leads_get_403_on_admin_pages(client, world, case):
    client.force_login(world["users"][LEAD])
    assert _call(client, world, *case).status_code == 403


@pytest.mark.parametrize("case", PROTECTED, ids=_id)
def test_admins_get_in_everywhere(client, world, case):
    client.force_login(world["users"][ADMIN])
    response = _call(client, world, *case)
    assert _allowed(response, case[1]), (response.status_code, response.get("Location"))


@pytest.mark.parametrize("case", list(_cases(PUBLIC)), ids=_id)
def test_public_urls_need_no_sign_in(client, world, case):
    response = _call(client, world, *case)
    if case[0] == "health":  # no worker runs here, so not ok; it still answers, without sign-in
        assert response.status_code == 503 and response.json()["ok"] is False
        return
    assert response.status_code in (200, 302)
    if response.status_code == 302:  # on to a page that checks, or home after signing out
        assert response["Location"] in (
            "/queue/",
            f"/review/{world['args']['answer_id']}/",
            "/accounts/login/",
        )


def test_the_django_admin_sends_non_staff_to_its_own_sign_in(client, world):
    for user in (None, world["users"][REVIEWER], world["users"][ADMIN]):
        if user:
            client.force_login(user)
        response = client.get("/admin/")
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_every_api_operation_answers_401_without_a_token(client, world):
    schema = client.get("/api/v1/openapi.json").json()
    operations = [(path, method) for path, item in schema["paths"].items() for method in item]
    assert len(operations) == 8
    for path, method in operations:
        url = path.replace("{answer_id}", str(world["args"]["answer_id"]))
        body = (
            {"data": json.dumps(fare_payload()), "content_type": "application/json"}
            if method in ("post", "put")
            else {}
        )
        response = getattr(client, method)(url, **body)
        assert response.status_code == 401, (method, path)
        assert response["WWW-Authenticate"] == 'Bearer realm="claimdesk"'


# --- CSRF ---------------------------------------------------------------------------------------

POSTS = [case for case in PROTECTED + list(_cases(PUBLIC)) if case[1] == "post"]


@pytest.mark.parametrize("case", POSTS, ids=_id)
def test_a_post_without_the_csrf_token_gets_403(world, case):
    name, method, headers = case
    client = Client(enforce_csrf_checks=True)
    client.force_login(world["users"][ADMIN])
    response = client.post(_url(name, world["args"]), {"note": "x"})
    assert response.status_code == 403
    assert b"CSRF" in response.content


def test_the_same_post_with_the_token_gets_through(world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world["users"][ADMIN])
    client.get("/queue/")  # sets the CSRF cookie, as a browser would
    token = client.cookies["csrftoken"].value
    response = client.post("/queue/next", headers={"X-CSRFToken": token})
    assert response.status_code == 302 and "/accounts/login/" not in response["Location"]


def test_signing_in_needs_the_csrf_token_too(world):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": "rita", "password": "pw-rita-123"})
    assert response.status_code == 403


def test_the_api_uses_its_bearer_token_not_csrf(api_token):
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/api/v1/answers",
        data=json.dumps(fare_payload()),
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert response.status_code == 202
