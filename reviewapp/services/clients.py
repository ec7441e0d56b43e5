from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from reviewapp.models import ApiClient
from reviewapp.services.audit import audit_record


def _token_fields(token: str) -> dict[str, str]:
    return {"token_hash": ApiClient.hash_token(token), "token_prefix": token[: len(ApiClient.TOKEN_PREFIX) + 4]}


@transaction.atomic
def api_client_create(*, name: str, actor_label: str = "system", actor=None) -> tuple[ApiClient, str]:
    """Create a client and return it with its token. The token is shown once and never stored."""
    token = ApiClient.new_token()
    client = ApiClient.objects.create(name=name, **_token_fields(token))
    audit_record(actor=actor, actor_label=actor_label, action="api_client.created", obj=client, after={"name": name})
    return client, token


@transaction.atomic
def api_client_rotate_token(*, client: ApiClient, actor_label: str = "system", actor=None) -> str:
    """Give the client a new token; the old one stops working at once."""
    token = ApiClient.new_token()
    ApiClient.objects.filter(pk=client.pk).update(**_token_fields(token), revoked_at=None)
    audit_record(actor=actor, actor_label=actor_label, action="api_client.token_rotated", obj=client)
    return token


def api_client_authenticate(token: str) -> ApiClient | None:
    client = ApiClient.objects.filter(token_hash=ApiClient.hash_token(token), revoked_at__isnull=True).first()
    if client is None:
        return None
    now = timezone.now()
    # Only touch the row once a minute: last-used is for humans, not worth a write per request.
    if client.last_used_at is None or (now - client.last_used_at).total_seconds() > 60:
        ApiClient.objects.filter(pk=client.pk).update(last_used_at=now)
        client.last_used_at = now
    return client
