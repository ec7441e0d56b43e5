"""The Django admin's user pages for the ClaimDesk `admin` role: it manages reviewers and admins,
and nothing lets it reach above them (superuser flag, permissions, a superuser's password)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission, User

from reviewapp.models import AuditEvent
from tests import factories as make

pytestmark = pytest.mark.django_db


def _change_form(user: User, **overrides) -> dict:
    """Every field Django's full user form posts, so a form that accepted them would be valid."""
    data = {
        "username": user.username,
        "first_name": "",
        "last_name": "",
        "email": "",
        "is_active": "on",
        "is_staff": "on",
        "is_superuser": "on",
        "groups": [g.pk for g in user.groups.all()],
        "user_permissions": [Permission.objects.get(codename="change_group").pk],
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
        "initial-date_joined_0": "2026-01-01",
        "initial-date_joined_1": "00:00:00",
        "last_login_0": "",
        "last_login_1": "",
    }
    data.update(overrides)
    return data


def test_an_admin_who_posts_the_superuser_flag_for_itself_stays_an_admin(client):
    ada = make.admin()
    client.force_login(ada)
    response = client.post(f"/admin/auth/user/{ada.pk}/change/", _change_form(ada))
    assert response.status_code == 302, response.content[:2000]
    ada.refresh_from_db()
    assert not ada.is_superuser
    assert not ada.user_permissions.exists()


def test_an_admins_user_form_offers_no_superuser_flag_or_permissions(client):
    ada = make.admin()
    rita = make.user("rita")
    client.force_login(ada)
    page = client.get(f"/admin/auth/user/{rita.pk}/change/").content.decode()
    assert 'name="groups"' in page
    assert 'name="is_superuser"' not in page and 'name="user_permissions"' not in page


def test_an_admin_cannot_set_a_superusers_password(client):
    root = User.objects.create_superuser("root", password="root-secret-123")
    client.force_login(make.admin())
    response = client.post(
        f"/admin/auth/user/{root.pk}/password/",
        {"password1": "taken-over-987", "password2": "taken-over-987", "usable_password": "true"},
    )
    assert response.status_code in (403, 404)
    root.refresh_from_db()
    assert root.check_password("root-secret-123")


def test_an_admin_can_neither_see_nor_delete_a_superuser(client):
    root = User.objects.create_superuser("root", password="root-secret-123")
    client.force_login(make.admin())
    assert "root" not in client.get("/admin/auth/user/").content.decode()
    client.post(f"/admin/auth/user/{root.pk}/delete/", {"post": "yes"})
    assert User.objects.filter(pk=root.pk, is_superuser=True).exists()


def test_a_superuser_still_gets_the_full_user_form(client):
    root = User.objects.create_superuser("root", password="root-secret-123")
    rita = make.user("rita")
    client.force_login(root)
    assert (
        'name="is_superuser"' in client.get(f"/admin/auth/user/{rita.pk}/change/").content.decode()
    )


def test_an_admin_making_a_reviewer_an_admin_is_audited_and_makes_them_staff(client):
    ada = make.admin()
    rita = make.user("rita", "reviewer")
    client.force_login(ada)
    form = _change_form(rita, groups=[Group.objects.get(name="admin").pk])
    assert client.post(f"/admin/auth/user/{rita.pk}/change/", form).status_code == 302
    rita.refresh_from_db()
    assert rita.is_staff and not rita.is_superuser
    event = AuditEvent.objects.get(action="user.roles_changed", object_id=str(rita.pk))
    assert (event.actor, event.before, event.after) == (
        ada,
        {"roles": ["reviewer"]},
        {"roles": ["admin"]},
    )
