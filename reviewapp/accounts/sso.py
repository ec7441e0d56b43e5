"""Single sign-on with OpenID Connect: mozilla-django-oidc runs the code flow (state, nonce, PKCE,
the ID token's signature); this module decides who the account is and which roles it has.

An account is its issuer's subject (`sub`), never its e-mail: a provider account that shares an
e-mail address with a local user does not become that user. Roles come from the groups claim at
every sign-in, so a group removed at the provider removes the role at the next one.
"""

from __future__ import annotations

import hashlib
import logging

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from reviewapp.access import ADMIN, LEAD, REVIEWER
from reviewapp.accounts.users import user_roles_set

log = logging.getLogger(__name__)

# Local user names cannot hold ":" (Django's username validator), so these never meet a local user.
USERNAME_PREFIX = "sso:"


def roles_from_claims(claims: dict) -> set[str]:
    groups = claims.get(settings.OIDC_GROUPS_CLAIM) or []
    groups = (
        {groups}
        if isinstance(groups, str)
        else {str(group) for group in groups if isinstance(group, str | int)}
    )
    roles = set()
    if groups & set(settings.OIDC_ADMIN_GROUPS):
        roles |= {ADMIN, REVIEWER}
    if groups & set(settings.OIDC_LEAD_GROUPS):
        roles |= {LEAD, REVIEWER}
    if groups & set(settings.OIDC_REVIEWER_GROUPS):
        roles.add(REVIEWER)
    return roles


def username_for(claims: dict) -> str:
    """Readable when the provider gives a name, always unique per subject."""
    subject = str(claims.get("sub") or "")
    if not subject:
        raise SuspiciousOperation("the provider's claims have no subject (sub)")
    shown = str(claims.get("preferred_username") or claims.get("email") or "")[:80]
    digest = hashlib.sha256(subject.encode()).hexdigest()[:12]
    return f"{USERNAME_PREFIX}{shown}#{digest}" if shown else f"{USERNAME_PREFIX}{digest}"


class RoleMappingBackend(OIDCAuthenticationBackend):
    def authenticate(self, request, **kwargs):
        # A token that fails a check (signature, nonce, audience) ends on the refusal page, as an
        # account without a role does, not on a bare 400.
        try:
            return super().authenticate(request, **kwargs)
        except SuspiciousOperation as exc:
            log.warning("single sign-on refused: %s", exc)
            return None

    def verify_token(self, token, **kwargs) -> dict:
        # The library checks the signature, expiry and nonce but not the audience: an ID token made
        # for another client of the same provider is not ours.
        payload = super().verify_token(token, **kwargs)
        audience = payload.get("aud")
        if settings.OIDC_RP_CLIENT_ID not in (
            [audience] if isinstance(audience, str) else audience or []
        ):
            raise SuspiciousOperation("the ID token was issued for another client (aud)")
        return payload

    def verify_claims(self, claims: dict) -> bool:
        # An account without a mapped group is refused before any user is made for it.
        return bool(claims.get("sub")) and bool(roles_from_claims(claims))

    def filter_users_by_claims(self, claims: dict):
        return User.objects.filter(username=username_for(claims))

    def create_user(self, claims: dict) -> User:
        user = User.objects.create_user(
            username_for(claims), email=str(claims.get("email") or "")[:254]
        )
        user.set_unusable_password()  # signs in through the provider only
        user.save(update_fields=["password"])
        return self.update_user(user, claims)

    def update_user(self, user: User, claims: dict) -> User:
        user_roles_set(
            user=user,
            roles=roles_from_claims(claims),
            actor_label=f"sso:{settings.OIDC_PROVIDER_NAME}",
        )
        return user


def _enabled() -> None:
    if not settings.SSO_ENABLED:
        raise Http404("single sign-on is not configured (OIDC_RP_CLIENT_ID)")


def sso_start(request: HttpRequest) -> HttpResponse:
    """To the provider's sign-in page (with state, nonce and a PKCE challenge kept in the
    session)."""
    _enabled()
    return OIDCAuthenticationRequestView.as_view()(request)


def sso_callback(request: HttpRequest) -> HttpResponse:
    """Back from the provider: the code is exchanged and the account signed in, or sent to
    `denied`."""
    _enabled()
    return OIDCAuthenticationCallbackView.as_view()(request)


def sso_denied(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "registration/sso_denied.html",
        {"provider": settings.OIDC_PROVIDER_NAME},
        status=403,
    )
