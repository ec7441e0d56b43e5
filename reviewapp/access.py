"""Who may do what. Every view and htmx partial goes through one of these decorators.

Strangers are sent to sign in; signed-in users without the role get 403.
"""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

REVIEWER, LEAD, ADMIN = "reviewer", "lead", "admin"
# A lead settles disagreements between reviewers; a lead and an admin are reviewers too.
ROLES = (REVIEWER, LEAD, ADMIN)


def roles(user) -> frozenset[str]:
    if not user.is_authenticated:
        return frozenset()
    if user.is_superuser:
        return frozenset(ROLES)
    cached = getattr(user, "_claimdesk_roles", None)
    if cached is None:
        names = set(user.groups.values_list("name", flat=True))
        cached = frozenset(names & set(ROLES) | ({REVIEWER} if names & {LEAD, ADMIN} else set()))
        user._claimdesk_roles = cached  # one query per request
    return cached


def is_reviewer(user) -> bool:
    return REVIEWER in roles(user)


def is_lead(user) -> bool:
    return LEAD in roles(user)


def is_admin(user) -> bool:
    return ADMIN in roles(user)


def is_lead_or_admin(user) -> bool:
    """Who oversees reviewers (the adjudication lane, assignment, progress): leads, and admins."""
    return bool(roles(user) & {LEAD, ADMIN})


def _requires(check):
    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not check(request.user):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


reviewer_required = _requires(is_reviewer)
lead_required = _requires(is_lead)
admin_required = _requires(is_admin)
lead_or_admin_required = _requires(is_lead_or_admin)


def role_flags(request) -> dict[str, bool]:
    """Template context: the navigation shows a page's link to those the page lets in (the role,
    not Django's is_staff, which the pages do not look at)."""
    user = getattr(request, "user", None)
    if user is None:
        return {"is_reviewer": False, "is_lead": False, "is_admin": False}
    return {"is_reviewer": is_reviewer(user), "is_lead": is_lead(user), "is_admin": is_admin(user)}
