"""Policy changes: every change is a new version, with who, when and why."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from reviewapp.models import Policy
from reviewapp.quality.forms import GOLD_FIELDS
from reviewapp.audit import audit_record
from reviewapp import enqueue

POLICY_FIELDS = (
    "score_threshold",
    "blocking_labels",
    "critical_categories",
    "critical_single_claim_blocks",
    "audit_sample_rate",
    "audit_near_rate",
    "audit_near_margin",
    "audit_confidence_below",
    "miss_rate_target",
    "lease_seconds",
    "reviewers_per_answer",
    "multi_review_scope",
    "multi_review_share",
    "blind",
    "supported_confidence_floor",
    "judge_profile",
    "judge_backend",
    "judge_model",
    "escalation_profile",
    "escalation_backend",
    "escalation_model",
    "escalation_margin",
    "example_set",
    "guidelines",
    *GOLD_FIELDS,
)
GUIDELINES_MAX_CHARS = 20_000


def policy_values(policy: Policy) -> dict[str, Any]:
    return {field: getattr(policy, field) for field in POLICY_FIELDS}


def _recorded(policy: Policy) -> dict[str, Any]:
    """policy_values as JSON for the audit trail (the example set by its name, e.g.
    fare_policy@v3+ex2)."""
    values = policy_values(policy)
    values["example_set"] = str(values["example_set"]) if values["example_set"] else None
    return values


def policy_diff(old: Policy | None, new: Policy) -> list[tuple[str, Any, Any]]:
    """(field, old value, new value) for each field that changed."""
    before = policy_values(old) if old else {}
    return [
        (field, before.get(field), value)
        for field, value in policy_values(new).items()
        if before.get(field) != value
    ]


def shown_value(value: Any) -> str:
    """A policy value as the history reads it: lists as words, empty as what then applies."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    return str(value) if value != "" else "(the setting)"


def _shown_guidelines(text: str | None) -> str:
    """Guidelines in a history row: their length and first words (the page shows them whole)."""
    if not text:
        return "none"
    words = " ".join(text.split())
    return f"{len(text.split())} words: {words[:60]}{'…' if len(words) > 60 else ''}"


def policy_diff_shown(old: Policy | None, new: Policy) -> list[tuple[str, str, str]]:
    """policy_diff as the history shows it; a change only in how "empty" is spelt is no change."""
    shown = [
        (
            (field, _shown_guidelines(before), _shown_guidelines(after))
            if field == "guidelines"
            else (field, shown_value(before), shown_value(after))
        )
        for field, before, after in policy_diff(old, new)
    ]
    return [(field, before, after) for field, before, after in shown
            if before != after and not (before == "—" and after in ("(the setting)", "none"))]


def policy_create(*, user, values: dict[str, Any], note: str) -> Policy:
    """A new version: `values` over the current version's (under the same lock as its number, so a
    guidelines edit, which names only the guidelines, never undoes a routing change saved
    meanwhile)."""
    if not note.strip():
        raise ValueError("Say why the policy changes: the note is required.")
    for attempt in range(3):  # two admins saving at once: the version number decides, then retry
        try:
            with transaction.atomic():
                current = Policy.current()
                merged = policy_values(current) | values
                policy = Policy.objects.create(
                    version=current.version + 1,
                    created_by=user,
                    note=note.strip(),
                    **{f: merged[f] for f in POLICY_FIELDS},
                )
                audit_record(
                    actor=user,
                    actor_label=user.get_username(),
                    action="policy.created",
                    obj=policy,
                    before=_recorded(current),
                    after=_recorded(policy),
                    note=note.strip(),
                )
                if (
                    policy.miss_rate_target != current.miss_rate_target
                ):  # a new target: check alert.miss_rate
                    transaction.on_commit(enqueue.evaluate_miss_rate_later, robust=True)
                return policy
        except IntegrityError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def policy_rollback(*, user, version: int, note: str) -> Policy:
    """Roll back = a new version carrying an old version's values."""
    old = Policy.objects.get(version=version)
    return policy_create(
        user=user, values=policy_values(old), note=f"Roll back to v{version}. {note}".strip()
    )


def guidelines_update(*, user, text: str, note: str) -> Policy:
    """New annotation guidelines: a policy version like any change (audited, in the history, rolled
    back with the rest); the routing values stay as they are."""
    text = text.replace("\r\n", "\n").strip()
    if len(text) > GUIDELINES_MAX_CHARS:
        raise ValueError(f"guidelines: at most {GUIDELINES_MAX_CHARS:,} characters.")
    if text == Policy.current().guidelines:
        raise ValueError("guidelines: unchanged; edit them before saving.")
    return policy_create(user=user, values={"guidelines": text}, note=note)
