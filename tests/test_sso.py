"""Single sign-on end to end against tests/oidc_provider.py (real HTTP, the code flow with PKCE):
groups map to roles, an account in no mapped group is refused with 403, and nothing else changes."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx2 as httpx
import pytest
from django.contrib.auth.models import User

from reviewapp.access import roles
from reviewapp.models import AuditEvent
from tests.oidc_provider import OIDCProvider

pytestmark = pytest.mark.django_db

BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend",
            "reviewapp.accounts.sso.RoleMappingBackend"]


@pytest.fixture
def provider(settings):
    with OIDCProvider() as running:
        for name, value in running.settings().items():
            setattr(settings, name, value)
        settings.AUTHENTICATION_BACKENDS = BACKENDS
        settings.OIDC_REVIEWER_GROUPS = ["rag-reviewers"]
        settings.OIDC_ADMIN_GROUPS = ["rag-admins"]
        settings.OIDC_LEAD_GROUPS = ["rag-leads"]
        settings.OIDC_PROVIDER_NAME = "Acme ID"
        yield running


def _sign_in(client, provider, *, next_url: str = ""):
    """The browser's trip: ClaimDesk -> the provider's sign-in -> ClaimDesk's callback."""
    start = client.get("/accounts/sso/start" + (f"?next={next_url}" if next_url else ""))
    assert start.status_code == 302 and start["Location"].startswith(
        provider.base_url + "/authorize?"
    )
    asked = parse_qs(urlsplit(start["Location"]).query)
    assert asked["code_challenge_method"] == ["S256"] and asked["nonce"] and asked["state"]
    at_provider = httpx.get(start["Location"], follow_redirects=False)
    back = urlsplit(at_provider.headers["Location"])
    return client.get(back.path, {k: v[0] for k, v in parse_qs(back.query).items()})


def test_a_provider_account_in_the_reviewer_group_signs_in_as_a_reviewer(client, provider):
    provider.sign_in_as(
        sub="u-123", preferred_username="rita", email="rita@acme.test", groups=["rag-reviewers"]
    )
    response = _sign_in(client, provider, next_url="/answers/")
    assert response.status_code == 302 and response["Location"] == "/answers/"
    user = User.objects.get(username__startswith="sso:rita#")
    assert not user.has_usable_password() and not user.is_staff
    assert client.get("/queue/").status_code == 200
    assert client.get("/policy/").status_code == 403  # a reviewer, not an admin
    event = AuditEvent.objects.get(action="user.roles_changed", object_id=str(user.pk))
    assert (event.before, event.after, event.actor_label) == (
        {"roles": []},
        {"roles": ["reviewer"]},
        "sso:Acme ID",
    )


def test_the_admin_group_makes_an_admin_and_losing_it_at_the_provider_demotes_at_the_next_sign_in(
    client, provider
):
    provider.sign_in_as(sub="u-9", email="ada@acme.test", groups=["rag-admins"])
    _sign_in(client, provider)
    assert client.get("/policy/").status_code == 200
    user = User.objects.get(email="ada@acme.test")
    assert user.is_staff and not user.is_superuser

    client.logout()
    provider.sign_in_as(sub="u-9", email="ada@acme.test", groups=["rag-reviewers"])
    _sign_in(client, provider)
    user.refresh_from_db()
    assert client.get("/policy/").status_code == 403 and not user.is_staff
    assert User.objects.filter(email="ada@acme.test").count() == 1  # the same account, by subject


def test_an_account_in_no_mapped_group_gets_403_and_no_user_is_made(client, provider):
    provider.sign_in_as(sub="u-7", email="mallory@acme.test", groups=["everyone"])
    response = _sign_in(client, provider)
    assert response.status_code == 302 and response["Location"] == "/accounts/sso/denied"
    denied = client.get(response["Location"])
    assert (
        denied.status_code == 403 and b"no group that maps to reviewer or admin" in denied.content
    )
    assert not User.objects.filter(email="mallory@acme.test").exists()
    assert client.get("/queue/").status_code == 302  # still signed out


def test_a_provider_account_with_a_local_users_email_does_not_become_that_user(client, provider):
    local = User.objects.create_superuser("root", email="root@acme.test", password="pw-root-123")
    provider.sign_in_as(sub="attacker", email="root@acme.test", groups=["rag-reviewers"])
    _sign_in(client, provider)
    assert client.get("/policy/").status_code == 403  # not the superuser
    assert User.objects.filter(email="root@acme.test").count() == 2 and local.username == "root"


def test_an_id_token_made_for_another_client_is_refused(client, provider):
    provider.audience = "some-other-app"
    provider.sign_in_as(sub="u-1", email="rita@acme.test", groups=["rag-reviewers"])
    response = _sign_in(client, provider)
    assert (
        response["Location"] == "/accounts/sso/denied"
        and not User.objects.filter(email="rita@acme.test").exists()
    )


def test_the_sign_in_page_offers_the_provider_and_password_sign_in_still_works(client, provider):
    page = client.get("/accounts/login/")
    assert b"Sign in with Acme ID" in page.content and b'name="password"' in page.content
    User.objects.create_user("pat", password="pw-pat-123")
    assert (
        client.post("/accounts/login/", {"username": "pat", "password": "pw-pat-123"}).status_code
        == 302
    )


def test_without_configuration_the_sso_urls_are_404_and_the_page_offers_no_button(client, settings):
    settings.SSO_ENABLED = False
    assert client.get("/accounts/sso/start").status_code == 404
    assert client.get("/accounts/sso/callback?code=x&state=y").status_code == 404
    assert b"Sign in with" not in client.get("/accounts/login/").content


def test_the_lead_group_makes_a_lead_who_is_also_a_reviewer_but_not_an_admin(client, provider):
    provider.sign_in_as(sub="u-77", email="lea@acme.test", groups=["rag-leads"])
    _sign_in(client, provider)
    user = User.objects.get(email="lea@acme.test")
    assert roles(user) == frozenset({"lead", "reviewer"})
    assert client.get("/queue/").status_code == 200 and client.get("/policy/").status_code == 403
