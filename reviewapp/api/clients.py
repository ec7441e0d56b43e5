from __future__ import annotations

import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from reviewapp.models import ApiClient
from reviewapp.audit import audit_record


def _token_fields(token: str) -> dict[str, str]:
    return {
        "token_hash": ApiClient.hash_token(token),
        "token_prefix": token[: len(ApiClient.TOKEN_PREFIX) + 4],
    }


@transaction.atomic
def api_client_create(
    *, name: str, actor_label: str = "system", actor=None
) -> tuple[ApiClient, str]:
    """Create a client and return it with its token. The token is shown once and never stored."""
    token = ApiClient.new_token()
    client = ApiClient.objects.create(name=name, **_token_fields(token))
    audit_record(
        actor=actor,
        actor_label=actor_label,
        action="api_client.created",
        obj=client,
        after={"name": name},
    )
    return client, token


@transaction.atomic
def api_client_rotate_token(*, client: ApiClient, actor_label: str = "system", actor=None) -> str:
    """Give the client a new token; the old one stops working at once."""
    token = ApiClient.new_token()
    ApiClient.objects.filter(pk=client.pk).update(**_token_fields(token), revoked_at=None)
    audit_record(
        actor=actor, actor_label=actor_label, action="api_client.token_rotated", obj=client
    )
    _forget_now_and_at_commit()
    return token


@transaction.atomic
def api_client_revoke(*, client: ApiClient, actor_label: str = "system", actor=None) -> None:
    """The client's token stops working (in this process at once, in the others within
    API_CLIENT_CACHE_SECONDS)."""
    ApiClient.objects.filter(pk=client.pk).update(revoked_at=timezone.now())
    audit_record(actor=actor, actor_label=actor_label, action="api_client.revoked", obj=client)
    _forget_now_and_at_commit()


# token hash -> (client, when it was read). Only tokens that matched a live client get in, so a
# stranger's guesses cannot grow it; the clients are a handful of RAG systems.
_authenticated: dict[str, tuple[ApiClient, float]] = {}
_clock = time.monotonic


def forget_authenticated_clients() -> None:
    _authenticated.clear()


def _forget_now_and_at_commit() -> None:
    # Now, for requests later in this transaction; again at commit, since a concurrent request may
    # have read (and kept) the row as it was before the commit.
    forget_authenticated_clients()
    transaction.on_commit(forget_authenticated_clients)


def api_client_authenticate(token: str) -> ApiClient | None:
    # Every API request starts here: the client is reused for API_CLIENT_CACHE_SECONDS instead of
    # a SELECT per request. The price is that long for a revocation made in another process.
    token_hash = ApiClient.hash_token(token)
    cached = _authenticated.get(token_hash)
    if cached is not None and _clock() - cached[1] < settings.API_CLIENT_CACHE_SECONDS:
        client = cached[0]
    else:
        client = ApiClient.objects.filter(token_hash=token_hash, revoked_at__isnull=True).first()
        if client is None:
            _authenticated.pop(token_hash, None)
            return None
        if settings.API_CLIENT_CACHE_SECONDS:
            _authenticated[token_hash] = (client, _clock())
    now = timezone.now()
    # Only touch the row once a minute: last-used is for humans, not worth a write per request.
    if client.last_used_at is None or (now - client.last_used_at).total_seconds() > 60:
        ApiClient.objects.filter(pk=client.pk).update(last_used_at=now)
        client.last_used_at = now
    return client
