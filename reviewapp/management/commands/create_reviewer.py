import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from reviewapp.access import ADMIN, LEAD, REVIEWER
from reviewapp.audit import audit_record


class Command(BaseCommand):
    help = (
        "Create a reviewer (or, with --lead, a lead; with --admin, an admin) and print their"
        " password once."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument(
            "--admin", action="store_true", help="may also manage policy, exports, users and tokens"
        )
        parser.add_argument(
            "--lead",
            action="store_true",
            help="may also settle reviewers' disagreements and assign answers",
        )

    @transaction.atomic
    def handle(self, *args, name: str, admin: bool, lead: bool, **options):
        User = get_user_model()
        if User.objects.filter(username=name).exists():
            raise CommandError(f"a user named {name!r} already exists")
        password = secrets.token_urlsafe(12)
        user = User.objects.create_user(username=name, password=password, is_staff=admin)
        role = ADMIN if admin else LEAD if lead else REVIEWER
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        audit_record(
            actor_label="cli:create_reviewer", action="user.created", obj=user, after={"role": role}
        )
        self.stdout.write(password)
        self.stderr.write(
            f"{role.capitalize()} {name!r} created. The password above is shown this once."
        )
