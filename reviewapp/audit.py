from __future__ import annotations

from typing import Any

from django.db import models

from reviewapp.models import AuditEvent


def audit_record(
    *,
    actor_label: str,
    action: str,
    obj: models.Model,
    actor=None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    note: str = "",
) -> AuditEvent:
    return AuditEvent.objects.create(
        actor=actor,
        actor_label=actor_label,
        action=action,
        object_type=obj._meta.model_name,
        object_id=str(obj.pk),
        before=before,
        after=after,
        note=note,
    )
