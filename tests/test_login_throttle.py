"""Password guessing at /accounts/login/ is throttled per user name and per address (django-axes):
past the limit even the right password is refused, with a page saying how long to wait."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from reviewapp.models import AuditEvent

pytestmark = pytest.mark.django_db


def _sign_in(client: Client, username: str, password: str, address: str = "203.0.113.7"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_after_the_failure_limit_the_right_password_no_longer_signs_in(client):
    User.objects.create_user("rita", password="pw-rita-123")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _sign_in(client, "rita", "wrong-guess").status_code == 200
    assert _sign_in(client, "rita", "wrong-guess").status_code == 429  # the limit-th failure locks
    response = _sign_in(client, "rita", "pw-rita-123")
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    page = response.content.decode()
    assert f"refused for {settings.AXES_COOLOFF_TIME.seconds // 60} minutes" in page


def test_guessing_one_account_from_many_addresses_is_still_locked_out(client):
    User.objects.create_user("rita", password="pw-rita-123")
    for n in range(settings.AXES_FAILURE_LIMIT):
        _sign_in(client, "rita", "wrong-guess", address=f"198.51.100.{n + 1}")
    assert _sign_in(client, "rita", "pw-rita-123", address="192.0.2.200").status_code == 429


def test_one_address_guessing_many_accounts_is_locked_out(client):
    User.objects.create_user("rita", password="pw-rita-123")
    for n in range(settings.AXES_FAILURE_LIMIT):
        _sign_in(client, f"user{n}", "wrong-guess")
    assert _sign_in(client, "rita", "pw-rita-123").status_code == 429


def test_another_account_from_another_address_still_signs_in(client):
    User.objects.create_user("rita", password="pw-rita-123")
    User.objects.create_user("ron", password="pw-ron-123")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _sign_in(client, "rita", "wrong-guess")
    assert _sign_in(Client(), "ron", "pw-ron-123", address="192.0.2.9").status_code == 302


def test_failures_are_logged_and_a_lockout_is_audited_once(client):
    from axes.models import AccessFailureLog

    for _ in range(settings.AXES_FAILURE_LIMIT + 3):
        _sign_in(client, "rita", "wrong-guess")
    assert AccessFailureLog.objects.filter(username="rita").count() >= settings.AXES_FAILURE_LIMIT
    events = AuditEvent.objects.filter(action="login.locked_out", object_id="rita")
    assert events.count() == 1
    assert events.get().after["ip_address"] == "203.0.113.7"


# --- behind the reverse proxy (issue 28, item 7) -------------------------------------------------

PROXY = "10.0.0.5"


def _via_proxy(client: Client, username: str, password: str, address: str, proxy: str = PROXY):
    return client.post(
        "/accounts/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=proxy,
        HTTP_X_FORWARDED_FOR=address,
    )


def test_one_client_behind_the_proxy_guessing_does_not_lock_out_everyone_behind_it(
    client, settings
):
    import ipaddress

    settings.TRUSTED_PROXIES = [ipaddress.ip_network(PROXY)]
    User.objects.create_user("rita", password="pw-rita-123")
    for n in range(settings.AXES_FAILURE_LIMIT):
        _via_proxy(client, f"user{n}", "wrong-guess", "203.0.113.66")
    # the guesser
    assert _via_proxy(client, "someone", "wrong-guess", "203.0.113.66").status_code == 429
    # everyone else
    assert _via_proxy(Client(), "rita", "pw-rita-123", "198.51.100.20").status_code == 302
    locked = AuditEvent.objects.filter(action="login.locked_out")
    assert {event.after["ip_address"] for event in locked} == {"203.0.113.66"}


def test_x_forwarded_for_from_a_client_that_is_not_a_trusted_proxy_is_ignored(client, settings):
    import ipaddress

    settings.TRUSTED_PROXIES = [ipaddress.ip_network(PROXY)]
    User.objects.create_user("rita", password="pw-rita-123")
    for n in range(settings.AXES_FAILURE_LIMIT):  # a new made-up address each time, sent directly
        _via_proxy(client, f"user{n}", "wrong-guess", f"192.0.2.{n + 1}", proxy="203.0.113.99")
    assert (
        _via_proxy(client, "rita", "pw-rita-123", "192.0.2.200", proxy="203.0.113.99").status_code
        == 429
    )


def test_the_api_counts_wrong_tokens_per_client_behind_the_proxy(client, settings):
    import ipaddress

    settings.TRUSTED_PROXIES = [ipaddress.ip_network(PROXY)]
    settings.API_AUTH_FAILURE_LIMIT = "3/minute"
    from reviewapp.api.clients import api_client_create

    _, token = api_client_create(name="fares-bot")

    def get(token: str, address: str):
        return client.get(
            "/api/v1/answers",
            headers={"Authorization": f"Bearer {token}"},
            REMOTE_ADDR=PROXY,
            HTTP_X_FORWARDED_FOR=address,
        )

    for _ in range(4):
        get("wrong", "203.0.113.66")
    assert get(token, "203.0.113.66").status_code == 429
    assert get(token, "198.51.100.20").status_code == 200
    from limits import parse

    from reviewapp.api import ratelimit

    ratelimit._limiter(settings.API_RATE_LIMIT_STORAGE_URL).clear(
        parse("3/minute"), "auth-failure:203.0.113.66"
    )
