from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from reviewapp.models import ApiClient
from reviewapp.services.audit import audit_record


@transaction.atomic
def api_client_create(*, name: str, actor_label: str = "system", actor=None) -> tuple[ApiClient, str]:
    """Create a client and return it with its token. The token is shown once and never stored."""
    token = ApiClient.new_token()
    client = ApiClient.objects.create(
        name=name, token_hash=ApiClient.hash_token(token), token_prefix=token[: len(ApiClient.TOKEN_PREFIX) + 4]
    )
    audit_record(actor=actor, actor_label=actor_label, action="api_client.created", obj=client, after={"name": name})
    return client, token


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
