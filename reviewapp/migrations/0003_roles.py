"""The two roles: reviewers decide claims; admins also manage policy, exports, users and tokens."""

from django.db import migrations

ROLES = ("reviewer", "admin")


def create_roles(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLES:
        Group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [
        ("reviewapp", "0002_default_policy_and_span_triggers"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(create_roles, migrations.RunPython.noop)]
