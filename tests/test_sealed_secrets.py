"""Webhook signing secrets are sealed at rest (reviewapp/sealed.py): a database dump alone does not
hold them, the app still signs with them, and a SECRET_KEY rotation with a fallback loses nothing.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from reviewapp import sealed
from reviewapp.models import WebhookEndpoint
from reviewapp.webhooks import service as webhooks_service
from tests import factories as make
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db


def _stored(endpoint) -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT secret, previous_secret FROM reviewapp_webhookendpoint WHERE id = %s",
            [endpoint.pk],
        )
        return cursor.fetchone()


def test_the_database_holds_the_secret_sealed_and_the_app_reads_it_plain():
    _, endpoint = make.webhook_endpoint()
    plain = endpoint.secret
    stored, previous = _stored(endpoint)
    assert stored.startswith(sealed.PREFIX) and plain not in stored and plain[6:] not in stored
    assert previous == ""
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).secret == plain
    assert WebhookEndpoint.objects.values_list("secret", flat=True).get(pk=endpoint.pk) == plain


def test_a_rotation_seals_both_secrets_and_each_seal_differs():
    client, endpoint = make.webhook_endpoint()
    old = endpoint.secret
    registered = webhooks_service.endpoint_register(
        client=client, url=endpoint.url, events=endpoint.events, rotate_secret=True
    )
    stored, previous = _stored(endpoint)
    assert previous.startswith(sealed.PREFIX) and old not in previous
    assert stored.startswith(sealed.PREFIX) and registered.secret not in stored
    fresh = WebhookEndpoint.objects.get(pk=endpoint.pk)
    assert (fresh.secret, fresh.previous_secret) == (registered.secret, old)
    assert sealed.seal(old) != sealed.seal(old)  # random IV: equal secrets do not show as equal


def test_after_a_secret_key_rotation_the_fallback_opens_it_and_reseal_moves_it_to_the_new_key(
    settings,
):
    _, endpoint = make.webhook_endpoint()
    plain = endpoint.secret
    before, _ = _stored(endpoint)
    old_key = settings.SECRET_KEY
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "a-brand-new-secret-key-" + "x" * 40, [
        old_key
    ]
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).secret == plain

    call_command("reseal_secrets", stdout=open("/dev/null", "w"))
    after, _ = _stored(endpoint)
    assert after != before
    settings.SECRET_KEY_FALLBACKS = []  # the old key can go now
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).secret == plain


def test_a_secret_no_key_opens_fails_the_attempt_with_a_reason_and_is_not_sealed_twice(
    settings, private_ok
):
    with Receiver() as receiver:
        _, endpoint = make.webhook_endpoint(url=receiver.url)
        before, _ = _stored(endpoint)
        settings.SECRET_KEY = "an-unrelated-secret-key-" + "y" * 40  # changed without a fallback
        delivery = make.webhook_delivery(endpoint)
        outcome = webhooks_service.delivery_send(delivery_id=delivery.pk)
        assert receiver.received == []  # nothing sent unsigned or signed with the wrong key
    assert outcome.status == "pending"
    [attempt] = delivery.attempt_rows.all()
    assert "SECRET_KEY_FALLBACKS" in attempt.error
    fresh = WebhookEndpoint.objects.get(pk=endpoint.pk)
    assert fresh.secret_hint == "(unreadable: SECRET_KEY changed)"
    fresh.save()  # saving what did not open keeps it as it was, not sealed twice
    assert _stored(endpoint)[0] == before


@pytest.mark.django_db(transaction=True)
def test_migration_0011_seals_the_secrets_stored_in_clear_and_reverses():
    from reviewapp.models import ApiClient

    call_command("migrate", "reviewapp", "0010", verbosity=0)
    try:
        client = ApiClient.objects.create(
            name="legacy-bot", token_hash="z" * 64, token_prefix="cdk_z"
        )
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO reviewapp_webhookendpoint (client_id, url, secret, previous_secret,"
                " events, active, created_at, updated_at) VALUES (%s, 'https://h.example.com/',"
                " 'whsec_legacy', 'whsec_older', '[]', true, now(), now()) RETURNING id",
                [client.pk],
            )
            [pk] = cursor.fetchone()
    finally:
        call_command("migrate", "reviewapp", verbosity=0)
    endpoint = WebhookEndpoint.objects.get(pk=pk)
    stored = _stored(endpoint)
    assert all(value.startswith(sealed.PREFIX) for value in stored)
    assert (endpoint.secret, endpoint.previous_secret) == ("whsec_legacy", "whsec_older")

    call_command("migrate", "reviewapp", "0010", verbosity=0)
    try:
        assert _stored(endpoint) == ("whsec_legacy", "whsec_older")
    finally:
        call_command("migrate", "reviewapp", verbosity=0)
