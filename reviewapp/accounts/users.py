"""A user's ClaimDesk roles (the reviewer and admin groups): one place that changes them, keeps the
staff flag in step and records the change, whether an admin edited the user or a sign-in through
the identity provider brought new groups."""

from __future__ import annotations

from django.contrib.auth.models import Group, User

from reviewapp.access import ADMIN, ROLES
from reviewapp.audit import audit_record

def role_names(user: User) -> list[str]:
    return sorted(user.groups.filter(name__in=ROLES).values_list("name", flat=True))


def user_roles_set(*, user: User, roles: set[str], actor_label: str, actor=None) -> bool:
    """Give the user exactly these roles; True when they changed."""
    before = role_names(user)
    wanted = [Group.objects.get_or_create(name=name)[0] for name in sorted(roles & set(ROLES))]
    user.groups.remove(
        *Group.objects.filter(name__in=ROLES).exclude(pk__in=[group.pk for group in wanted])
    )
    user.groups.add(*wanted)
    return user_roles_changed(user=user, before=before, actor_label=actor_label, actor=actor)


def user_roles_changed(*, user: User, before: list[str], actor_label: str, actor=None) -> bool:
    """After the user's groups changed: the staff flag follows the admin role (the admin site lets
    in staff; never set by hand), and a change of roles is an AuditEvent."""
    after = role_names(user)
    if not user.is_superuser and user.is_staff != (ADMIN in after):
        User.objects.filter(pk=user.pk).update(is_staff=ADMIN in after)
        user.is_staff = ADMIN in after
    if before == after:
        return False
    audit_record(actor=actor, actor_label=actor_label, action="user.roles_changed", obj=user,
                 before={"roles": before}, after={"roles": after})
    return True
