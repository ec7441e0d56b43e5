from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ReviewAppConfig(AppConfig):
    name = "reviewapp"
    verbose_name = "ClaimDesk"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Permissions exist only after every app has migrated, so roles get theirs here.
        post_migrate.connect(_grant_role_permissions, sender=self)
        from axes.signals import user_locked_out

        from reviewapp.accounts.signin import audit_lockout

        user_locked_out.connect(audit_lockout, dispatch_uid="claimdesk-audit-lockout")
        # Register the Celery tasks in every process (the worker's autodiscovery finds them
        # imported): reviewapp/enqueue.py sends them by name, so services never import them.
        import reviewapp.judging.tasks  # noqa: F401
        import reviewapp.labels.tasks  # noqa: F401
        import reviewapp.webhooks.tasks  # noqa: F401


# Admins manage users (reviewers and admins: reviewapp/admin.py), groups and API tokens in the
# Django admin, and may read the rest.
ADMIN_PERMISSIONS = {
    ("auth", "user"): ("add", "change", "delete", "view"),
    ("auth", "group"): ("view",),
    ("reviewapp", "apiclient"): ("add", "change", "view"),
    ("reviewapp", "answer"): ("view",),
    ("reviewapp", "judgerun"): ("view",),
    ("reviewapp", "policy"): ("view",),
    ("reviewapp", "auditevent"): ("view",),
    # Sign-in failures and lockouts (django-axes): deleting an attempt lifts its lockout.
    ("axes", "accessattempt"): ("view", "delete"),
    ("axes", "accessfailurelog"): ("view",),
}


def _grant_role_permissions(sender, **kwargs):
    from django.contrib.auth.models import Group, Permission

    admin, _ = Group.objects.get_or_create(name="admin")
    Group.objects.get_or_create(name="reviewer")
    for (app_label, model), actions in ADMIN_PERMISSIONS.items():
        codenames = [f"{action}_{model}" for action in actions]
        admin.permissions.add(
            *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
        )
