"""Exports are reads (reviewapp.labels.exports); who exported what is recorded here."""

from __future__ import annotations

from typing import Any

from reviewapp.models import AuditEvent


def export_audit(*, actor, actor_label: str, fmt: str, details: dict[str, Any]) -> AuditEvent:
    """Adjudicated labels leave the system: keep who took which rows (filters, counts; never the
    rows)."""
    return AuditEvent.objects.create(actor=actor, actor_label=actor_label, action="labels.exported",
                                     object_type="export", object_id=fmt, after=details)
